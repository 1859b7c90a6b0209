#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
sed -i 's/with open(path) as handle:/with open(path, encoding="utf-8") as handle:/' greetings.py
