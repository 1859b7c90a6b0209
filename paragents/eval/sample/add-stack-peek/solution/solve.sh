#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
cat >> stack.py <<'EOF'

    def peek(self):
        if not self._items:
            raise IndexError("peek at an empty stack")
        return self._items[-1]

    def is_empty(self):
        return not self._items

    def __len__(self):
        return len(self._items)
EOF
