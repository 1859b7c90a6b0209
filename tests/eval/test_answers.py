"""Answer policies: allow-safe allows only what can change nothing but the lane; a script's rules match
in order; bad scripts are one error naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.eval.answers import Ask, Verdict, allow_safe, load_policy
from paragents.eval.errors import EvalError

LANE = Path("/tmp/lane")


def ask(
    tool: str,
    *,
    sandboxed: bool | None = True,
    targets: tuple[str, ...] = (),
    unknown: bool = False,
    **args: str,
) -> Ask:
    return Ask(tool, dict(args), LANE, sandboxed, targets, unknown)


@pytest.mark.parametrize(
    ("call", "answer"),
    [
        (ask("write_file", targets=("/tmp/lane/a.py",), path="a.py"), "allow"),
        (ask("edit_file", targets=("/tmp/lane/../elsewhere/a.py",), path="../elsewhere/a.py"), "deny"),
        (ask("write_file", targets=("/app/hello.txt",), path="/app/hello.txt"), "deny"),
        (ask("run_command", targets=("/tmp/lane/x",), command="sed -i s/a/b/ x"), "allow"),
        (ask("run_command", command="python3 gen.py"), "allow"),
        (ask("run_command", targets=("/tmp/lane/cache",), command="rm -rf cache"), "deny"),
        (ask("run_command", command="find . -name '*.tmp' -delete"), "deny"),
        (ask("run_command", command="git clean -fdx"), "deny"),
        (ask("run_command", sandboxed=False, command="ls"), "deny"),
        (ask("run_command", unknown=True, command="cp $X y"), "deny"),
        (ask("run_command", command="echo 'unterminated"), "deny"),
        (ask("mcp__srv__delete", path="x"), "deny"),
    ],
)
def test_allow_safe_allows_only_what_stays_in_the_lane(call: Ask, answer: str) -> None:
    verdict = allow_safe(call)
    assert verdict.answer == answer
    if answer == "deny":
        assert verdict.note.startswith("refused by the eval's answer policy (allow-safe): ")


def test_a_script_matches_its_rules_in_order_and_falls_back_to_its_default(tmp_path: Path) -> None:
    script = tmp_path / "answers.json"
    script.write_text(
        json.dumps(
            {
                "answers": [
                    {"tool": "run_command", "command": "pytest*", "answer": "allow"},
                    {"tool": "run_command", "command": "rm *", "answer": "deny", "note": "no deleting"},
                    {"tool": "*_file", "path": "docs/*", "answer": "ask"},
                    {"tool": "write_file", "answer": "allow-safe"},
                ],
                "default": "deny",
                "budget": "one_more",
            }
        )
    )
    policy = load_policy("script", str(script))
    assert policy.decide(ask("run_command", command="pytest -q")) == Verdict("allow")
    assert policy.decide(ask("run_command", command="rm -rf /")) == Verdict("deny", "no deleting")
    assert policy.decide(ask("edit_file", path="docs/a.md")) == Verdict("ask")
    assert policy.decide(ask("write_file", targets=("/tmp/lane/a",), path="a")).answer == "allow"
    assert policy.decide(ask("write_file", targets=("/etc/a",), path="/etc/a")).answer == "deny"
    assert policy.decide(ask("run_command", command="ls")) == Verdict(
        "deny", "refused by the eval's answer script"
    )
    assert policy.budget_answer == "one_more"
    assert policy.describe()["script"]["answers"][0] == {
        "tool": "run_command",
        "command": "pytest*",
        "answer": "allow",
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON (line 1, column 2"),
        (json.dumps({"answers": [{"tool": "x", "answer": "maybe"}]}), "answers.0.answer: Input should be"),
        (
            json.dumps({"answers": [], "default": "allow", "extra": 1}),
            "extra: Extra inputs are not permitted",
        ),
        (json.dumps({"budget": "raise"}), "budget: Input should be 'stop' or 'one_more'"),
    ],
)
def test_a_bad_script_is_one_error_naming_the_file_and_field(
    tmp_path: Path, content: str, message: str
) -> None:
    script = tmp_path / "answers.json"
    script.write_text(content)
    with pytest.raises(EvalError) as caught:
        load_policy("script", str(script))
    assert message in str(caught.value) and "answers.json" in str(caught.value)


def test_policy_names_are_checked() -> None:
    with pytest.raises(EvalError, match="use deny, allow-safe or script FILE"):
        load_policy("yes")
    with pytest.raises(EvalError, match="needs a FILE"):
        load_policy("script")
    with pytest.raises(EvalError, match="no such file"):
        load_policy("script", "/nonexistent/answers.json")
    with pytest.raises(EvalError, match="takes no file"):
        load_policy("deny", "x.json")
