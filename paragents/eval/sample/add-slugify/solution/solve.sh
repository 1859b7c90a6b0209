#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
python3 - <<'EOF'
from pathlib import Path
p = Path("textutils.py")
text = p.read_text().replace("    raise NotImplementedError\n",
    "    import re\n\n    return re.sub(r\"[^a-z0-9]+\", \"-\", text.lower()).strip(\"-\")\n")
p.write_text(text)
EOF
