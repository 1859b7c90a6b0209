"""MCP argument values that look like paths are paths whatever their argument is called (attack
report, escape 13); free text and URLs of other schemes are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.permissions import Policy
from paragents.permissions.mcp_paths import path_arguments


@pytest.mark.parametrize(
    ("arguments", "paths"),
    [
        ({"name": "/home/u/.ssh/id_rsa"}, ["/home/u/.ssh/id_rsa"]),
        ({"name": "~/.ssh/id_rsa"}, ["~/.ssh/id_rsa"]),
        ({"q": "~"}, ["~"]),
        ({"ref": "file:///etc/passwd"}, ["/etc/passwd"]),
        ({"opts": {"deep": ["/etc/shadow"]}}, ["/etc/shadow"]),
        ({"query": "select * from t where a = '/x'"}, []),  # free text
        ({"url": "https://example.com/a/b"}, []),
        ({"name": "relative/inside.txt"}, []),
        ({"file": "relative/inside.txt"}, ["relative/inside.txt"]),  # a named path argument
    ],
)
def test_values_that_look_like_paths(arguments: dict[str, object], paths: list[str]) -> None:
    assert path_arguments(arguments) == paths


def test_a_relative_value_naming_an_existing_file_outside_is_a_path(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "secret.txt").write_text("s\n")
    policy = Policy.load(project, cli_rules={"deny": ["Read(//" + str(tmp_path / "secret.txt")[1:] + ")"]})
    got = policy.decide("mcp__x__lookup", {"name": "../secret.txt"}, cwd=project, mode="plan", read_only=True)
    assert got.decision == "deny", got.reason
    plain = policy.decide(
        "mcp__x__lookup", {"name": "../nothing.txt"}, cwd=project, mode="plan", read_only=True
    )
    assert plain.decision == "allow", plain.reason  # no such file: a word, not a path
