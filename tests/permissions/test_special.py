"""find's actions, interpreter one-liners and globs that could become options (``special.py``),
pinned where mutation testing found them unpinned (docs/permissions.md)."""

from __future__ import annotations

import shlex

import pytest

from paragents.permissions.special import find_actions, glob_may_become_option, interpreter_code


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("find ! -name x -delete", (["-delete"], [], ["."])),  # ! starts the expression: path .
        ("find a ( -name x ) -delete", (["-delete"], [], ["a"])),
        ("find . -exec ls {} ; -delete", (["-exec", "-delete"], [], ["."])),  # after ; it goes on
        ("find . -exec ls {} + -fprint out", (["-exec", "-fprint"], ["out"], [])),
        ("find . -exec ls {} ; -print", (["-exec"], [], [])),
        ("find . -exec echo -delete ;", (["-exec"], [], [])),  # -delete is echo's argument
    ],
)
def test_find_actions(command: str, found: tuple[list[str], list[str], list[str]]) -> None:
    assert find_actions(tuple(shlex.split(command))) == found


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("awk -F: {print} .env", ["{print}"]),  # -F takes a separator, the program follows
        ("awk -f prog .env", []),
        ("awk -fprog .env", []),
        ("awk -- 1 f", ["1"]),
        ("deno eval x", ["x"]),
        ("deno run x", []),
    ],
)
def test_interpreter_code(command: str, code: list[str]) -> None:
    assert interpreter_code(tuple(shlex.split(command))) == code


@pytest.mark.parametrize(("command", "glob"), [("find ?x", "?x"), ("find [a-]x", "[a-]x"), ("find x*", None)])
def test_a_glob_that_could_become_an_option(command: str, glob: str | None) -> None:
    words = tuple(shlex.split(command))
    assert glob_may_become_option(words, set(words[1:])) == glob
