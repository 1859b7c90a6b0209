#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
python3 - <<'EOF'
import csv, json
rows = [dict(r, age=int(r["age"])) for r in csv.DictReader(open("people.csv"))]
open("people.json", "w").write(json.dumps(rows, indent=2) + "\n")
EOF
