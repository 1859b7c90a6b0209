#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
cat > settings.json <<'EOF'
{
  "name": "inventory",
  "port": 8042,
  "debug": false,
  "owners": ["ann", "bob"],
  "retries": 3
}
EOF
