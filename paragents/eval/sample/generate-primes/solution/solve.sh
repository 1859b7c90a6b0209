#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
python3 gen_primes.py
