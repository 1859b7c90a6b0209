"""A specialist's finding (``SQL``) and an answer in the findings JSON schema (``findings``)."""

from __future__ import annotations

import json

SQL = {
    "file": "app.py",
    "line": 2,
    "severity": "high",
    "title": "SQL query built from user input",
    "evidence": 'f"SELECT * FROM users WHERE name = {name}"',
}


def findings(*items: dict[str, object]) -> str:
    return json.dumps({"findings": list(items)})
