"""Regenerate tests/cassette/sse/*.json: one cassette per shared SSE fixture (run from the repo root:
``uv run python tests/cassette/make_sse_cassettes.py``). Each plays the fixture's raw reads as the
first reply of a session; when the fixture carries tool calls a short follow-up reply ends the turn."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures_shared" / "sse"
WORKSPACE = {
    "src/app.py": "print('app')\n",
    "a.txt": "alpha\n# TODO: beta\n",
    "notes.md": "# Notes\n",
}


def main() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text("utf-8"))
        first = {k: fixture[k] for k in ("reads", "reads_b64", "responses") if k in fixture}
        replies = [first] if "responses" not in first else list(first["responses"])
        if fixture["expected"]["tool_calls"]:
            replies.append({"content": "Follow-up after the tool results."})
        cassette = {
            "version": 1,
            "title": f"SSE fixture {fixture['id']}: {fixture['title']}",
            "description": f"Raw reads of tests/fixtures_shared/sse/{path.name} ({fixture['source']}).",
            "workspace": WORKSPACE,
            "sessions": [{"name": "s", "prompts": ["go"], "replies": replies}],
            "expect": {"s": {"status": "completed"}},
        }
        out = HERE / "sse" / path.name
        out.write_text(json.dumps(cassette, indent=2, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
