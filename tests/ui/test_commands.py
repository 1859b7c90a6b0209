"""The slash-command parser (pure, no Textual)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from paragents.ui.core.commands import (
    COMMANDS,
    CommandError,
    SlashCommand,
    complete,
    is_command,
    parse_command,
)


def test_new_with_name_model_and_dir() -> None:
    assert parse_command('/new "api work" --model qwen --dir ../api') == SlashCommand(
        "new", "api work", {"model": "qwen", "dir": "../api"}
    )
    assert parse_command("/new --model=m") == SlashCommand("new", None, {"model": "m"})
    assert parse_command("/new") == SlashCommand("new")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/rename backend", SlashCommand("rename", "backend")),
        ("/model gpt-4o-mini", SlashCommand("model", "gpt-4o-mini")),
        ("/mode acceptEdits", SlashCommand("mode", "acceptEdits")),
        ("/CLEAR", SlashCommand("clear")),
        ("  /show-config", SlashCommand("show-config")),
        ("/mcp", SlashCommand("mcp")),
        ("/mcp restart demo", SlashCommand("mcp", "demo")),
        (
            "/mcp__demo__Review a.py  b c",
            SlashCommand("mcp", None, {"prompt": "mcp__demo__Review", "args": "a.py  b c"}),
        ),
    ],
)
def test_valid_commands(line: str, expected: SlashCommand) -> None:
    assert parse_command(line) == expected


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("/frobnicate", "Unknown command /frobnicate"),
        ("/rename", "needs an argument"),
        ("/mode yolo", "Unknown mode 'yolo'"),
        ("/clear now", "takes no arguments"),
        ("/new --colour red", "no option --colour"),
        ("/new --model", "--model needs a value"),
        ('/rename "unclosed', "close the quotes"),
        ("/model a b", "one model name"),
        ("/mcp stop demo", "'restart NAME'"),
    ],
)
def test_errors_are_readable(line: str, needle: str) -> None:
    result = parse_command(line)
    assert isinstance(result, CommandError)
    assert needle in result.message


def test_unknown_command_lists_the_existing_ones_and_suggests() -> None:
    result = parse_command("/sess")
    assert isinstance(result, CommandError)
    assert "/sessions" in result.message and "/quit" in result.message


def test_completion_and_detection() -> None:
    assert [s.name for s in complete("/se")] == ["sessions", "serve", "setup"]
    assert complete("/new x") == [] and complete("hello") == []
    assert len(complete("/")) == len(COMMANDS)
    assert is_command("/help") and not is_command("//path/in/prompt") and not is_command("fix /tmp")


def test_commands_module_does_not_import_textual() -> None:
    code = "import sys, paragents.ui.core.commands; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_fanout_split_and_review_are_split_and_review() -> None:
    """`/fanout --split PROMPT` and `/fanout --review LIST` (the issue's spelling) are /split and /review."""
    assert parse_command("/fanout --split add a cache") == parse_command("/split add a cache")
    assert parse_command("/fanout --review security,test") == parse_command("/review security,test")
    assert parse_command("/fanout 3 fix --split here") == SlashCommand("fanout", "3 fix --split here")


def test_serve_port_out_of_range_is_a_readable_error() -> None:
    """`/serve 99999` crashed the app (OverflowError from bind): it is refused before anything starts."""
    result = parse_command("/serve 99999")
    assert isinstance(result, CommandError) and "0-65535" in result.message
    assert parse_command("/serve 65535") == SlashCommand("serve", "65535")
