#!/bin/bash
set -euo pipefail
printf '%s\n' "$GREETING" > /app/hello.txt
