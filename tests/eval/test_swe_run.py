"""SWE-style tasks end to end: a local repository's base commit in a lane, the problem statement as
the prompt, the hidden test patch applied only after the agent stopped, FAIL_TO_PASS and PASS_TO_PASS
decided from pytest's summary; ``eval validate`` on the same instance (base fails, reference passes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from paragents.eval.loader import load_tasks
from paragents.eval.runner import run_eval
from paragents.eval.validate import validate_tasks
from paragents.llm.replay import ReplayServer, ScriptedResponse
from tests.eval.conftest import needs_bwrap, scripted_options
from tests.lanes.conftest import commit_all, sh

pytestmark = needs_bwrap

TEST_PATCH = """diff --git a/test_add.py b/test_add.py
new file mode 100644
--- /dev/null
+++ b/test_add.py
@@ -0,0 +1,5 @@
+from calc import add
+
+
+def test_add():
+    assert add(2, 3) == 5
"""
FIX = "\n".join(
    [
        "diff --git a/calc.py b/calc.py",
        "--- a/calc.py",
        "+++ b/calc.py",
        "@@ -1,5 +1,5 @@",
        " def add(a, b):",
        "-    return a - b",
        "+    return a + b",
        " ",  # an empty context line is one space
        " ",
        " def sub(a, b):",
        "",
    ]
)


def make_instance(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
    (repo / "test_sub.py").write_text(
        "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
    )
    commit = commit_all(repo, "init")
    (repo / "calc.py").write_text("# moved on after the base commit\n")
    commit_all(repo, "later")
    line = {
        "instance_id": "proj-1", "repo": "proj", "base_commit": commit,
        "problem_statement": "add() subtracts instead of adding.",
        "FAIL_TO_PASS": json.dumps(["test_add.py::test_add"]), "PASS_TO_PASS": ["test_sub.py::test_sub"],
        "test_patch": TEST_PATCH, "patch": FIX,
        "test_cmd": f"{sys.executable} -m pytest -rA -p no:cacheprovider",
    }  # fmt: skip
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(line) + "\n")
    return path


def edit(old: str, new: str) -> ScriptedResponse:
    args = json.dumps({"path": "calc.py", "old_string": old, "new_string": new})
    return ScriptedResponse.from_message(tool_calls=[{"id": "c1", "name": "edit_file", "arguments": args}])


async def test_a_swe_instance_is_resolved_by_its_listed_tests(solver: ReplayServer, tmp_path: Path) -> None:
    tasks = load_tasks(str(make_instance(tmp_path)))
    fix = edit("return a - b\n\n\ndef sub", "return a + b\n\n\ndef sub")
    solver.add([fix, ScriptedResponse.from_message("fixed")], session="proj-1.t1.1")
    solver.add([ScriptedResponse.from_message("I looked and changed nothing.")], session="proj-1.t1.2")
    results = await run_eval(scripted_options(tasks, tmp_path / "run", solver, trials=2, queue_replies=False))
    fixed, idle = sorted(results.trials, key=lambda t: t.trial)
    assert fixed.resolved and fixed.verifier.outcomes == {
        "test_add.py::test_add": "PASSED",
        "test_sub.py::test_sub": "PASSED",
    }
    assert not idle.resolved and idle.verifier.outcomes["test_add.py::test_add"] == "FAILED"
    # the hidden test was applied after the agent's work was taken: it is not in the kept diff
    diff = (tmp_path / "run" / "trials" / fixed.name / "diff.patch").read_text()
    assert "calc.py" in diff and "test_add.py" not in diff
    # the lane started from the base commit, not the repository's tip; the repository was only read
    assert "+    return a + b" in diff and "moved on" not in diff
    assert sh(tmp_path / "proj", "status", "--porcelain") == ""


async def test_validate_finds_the_base_failing_and_the_reference_passing(tmp_path: Path) -> None:
    tasks = load_tasks(str(make_instance(tmp_path)))
    (check,) = await validate_tasks(tasks, tmp_path / "validate")
    assert check.ok, check.problems
    assert check.base.outcomes["test_add.py::test_add"] == "FAILED"
    assert check.oracle is not None and check.oracle.reward == 1.0
