#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
python3 - <<'EOF'
from pathlib import Path
p = Path("emails.py")
p.write_text(p.read_text().replace("[A-Za-z0-9._-]+@", "[A-Za-z0-9._+-]+@"))
EOF
