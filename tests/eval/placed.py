"""A Harbor task and a scripted agent for the trials in containers and Pods (tests/eval/test_container_run.py,
test_k8s_run.py, tests/security/test_eval_container_escape.py)."""

from __future__ import annotations

import json
from pathlib import Path

from paragents.llm.replay import ReplayServer, ScriptedResponse

FIXED = "def add(a, b):\n    return a + b\n"
TEST_SH = """#!/bin/bash
# where it runs, for the test to see: its user (the image's "lane"), the tests' owner and mode
mkdir -p /logs/verifier
echo "user: $(id -un)"
echo "cwd: $(pwd)"
echo "tests: $(stat -c '%U %a' /tests /tests/test.sh | tr '\\n' ' ')"
echo tamper >> /tests/test.sh 2>/dev/null && echo "tests writable" || echo "tests read-only"
cat /app/built.txt
python3 -c 'import calc; assert calc.add(2, 3) == 5' && echo 1 > /logs/verifier/reward.txt \\
  || echo 0 > /logs/verifier/reward.txt
"""


def harbor_task(root: Path, name: str, base_image: str, test_sh: str = TEST_SH) -> Path:
    """A Harbor task whose Dockerfile starts FROM ``base_image``, copies app/ and makes a file at
    image build time (only a built image has it)."""
    task = root / name
    (task / "environment" / "app").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {base_image}\nWORKDIR /app\nCOPY app/ /app/\nRUN echo made-at-build > /app/built.txt\n"
    )
    (task / "environment" / "app" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (task / "instruction.md").write_text("Fix add in /app/calc.py: it must return the sum.\n")
    (task / "task.toml").write_text(
        'version = "1.0"\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 300.0\n'
        "[environment]\nallow_internet = false\n"
    )
    (task / "tests" / "test.sh").write_text(test_sh)
    return task


def solve(server: ReplayServer, session: str) -> None:
    """The scripted agent: fix calc.py, then look at what only the built image holds."""
    for i, (name, args) in enumerate(
        [
            ("write_file", {"path": "calc.py", "content": FIXED}),
            ("run_command", {"command": "cat built.txt; pwd"}),
        ]
    ):
        server.add(
            ScriptedResponse.from_message(
                tool_calls=[{"id": f"c{i}", "name": name, "arguments": json.dumps(args)}],
                usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            ),
            session=session,
        )
    usage = {"prompt_tokens": 120, "completion_tokens": 5, "total_tokens": 125}
    server.add(ScriptedResponse.from_message("Fixed.", usage=usage), session=session)
