#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
python3 - <<'EOF'
from pathlib import Path
p = Path("count.py")
text = p.read_text()
text = text.replace('    parser.add_argument("file")\n',
    '    parser.add_argument("--lines", action="store_true", help="count lines instead of words")\n'
    '    parser.add_argument("file")\n')
text = text.replace("    print(len(text.split()))\n",
    "    print(text.count(\"\\n\") if args.lines else len(text.split()))\n")
p.write_text(text)
EOF
