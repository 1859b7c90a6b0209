#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
echo "Hello, world!" > hello.txt
