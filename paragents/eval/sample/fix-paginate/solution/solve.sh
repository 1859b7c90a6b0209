#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
python3 - <<'EOF'
from pathlib import Path
p = Path("pager.py")
p.write_text(p.read_text().replace(" - (1 if page > 1 else 0)", ""))
EOF
