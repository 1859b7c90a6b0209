#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
python3 - <<'EOF'
from pathlib import Path
p = Path("report.py")
p.write_text(p.read_text().replace("SUM(quantity)", "SUM(amount)"))
EOF
