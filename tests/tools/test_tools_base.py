"""Tool contract: argument validation, specs (valid JSON Schema), summaries and the registry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from paragents.tools import ToolArgumentError, ToolRegistry, default_registry, unknown_tool_message
from paragents.tools.files import ReadFile
from paragents.tools.output import cap_middle, cap_parts, collapse_carriage_returns, strip_ansi

REGISTRY = default_registry()
ALL_TOOLS = ["read_file", "list_dir", "glob", "grep", "write_file", "edit_file", "run_command"]


def tool(name: str) -> Any:
    found = REGISTRY.get(name)
    assert found is not None
    return found


def test_default_registry_has_every_tool_in_order() -> None:
    assert REGISTRY.names() == ALL_TOOLS
    assert {tool(n).family for n in ALL_TOOLS} == {"read", "edit", "bash"}
    assert tool("run_command").family == "bash"
    assert tool("edit_file").family == "edit"
    assert REGISTRY.get("nope") is None


@pytest.mark.parametrize("name", ALL_TOOLS)
def test_spec_is_openai_function_with_valid_json_schema(name: str) -> None:
    spec = tool(name).spec()
    assert json.loads(json.dumps(spec)) == spec
    assert spec["type"] == "function"
    fn = spec["function"]
    assert fn["name"] == name
    assert fn["description"]
    params = fn["parameters"]
    Draft202012Validator.check_schema(params)
    assert params["type"] == "object"
    assert params["additionalProperties"] is False
    assert set(params.get("required", [])) <= set(params["properties"])


def test_specs_lists_one_item_per_tool() -> None:
    assert [s["function"]["name"] for s in REGISTRY.specs()] == ALL_TOOLS


def test_unknown_tool_message_lists_available_tools() -> None:
    msg = unknown_tool_message("read_files")
    assert "read_files" in msg
    for name in ALL_TOOLS:
        assert name in msg
    assert REGISTRY.unknown_tool_message("x") == msg.replace("read_files", "x")


def test_registry_rejects_duplicate_names() -> None:
    with pytest.raises(ValueError, match="read_file"):
        ToolRegistry([ReadFile(), ReadFile()])


def test_validate_fills_defaults_and_normalises_integral_floats() -> None:
    assert tool("grep").validate({"pattern": "x"}) == {
        "pattern": "x",
        "path": ".",
        "ignore_case": False,
        "max_results": 100,
    }
    out = tool("read_file").validate({"path": "a", "offset": 5.0})
    assert out == {"path": "a", "offset": 5}
    assert isinstance(out["offset"], int)


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        ("read_file", {"path": "a\x00b"}, ["'path'", "NUL"]),
        ("write_file", {"path": "a", "content": "x\x00"}, ["'content'", "NUL"]),
        ("read_file", {"path": 3}, ["'path'", "string", "integer"]),
        ("read_file", {"path": "a", "offset": "10"}, ["'offset'", "integer", "string"]),
        ("read_file", {"path": "a", "offset": True}, ["'offset'", "integer", "boolean"]),
        ("read_file", {"path": "a", "offset": 0}, ["'offset'", ">= 1"]),
        ("read_file", {"path": "a", "offset": 2.5}, ["'offset'", "integer", "number"]),
        ("read_file", {"path": "a", "lines": 3}, ["unknown argument 'lines'", "path, offset, limit"]),
        ("read_file", {}, ["missing required argument 'path'"]),
        ("read_file", {"path": ""}, ["'path'", "empty"]),
        (
            "edit_file",
            {"path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"},
            ["replace_all"],
        ),
        ("run_command", {"command": "ls", "timeout": -1}, ["'timeout'", "> 0"]),
        ("grep", {"pattern": "x", "max_results": 100000}, ["'max_results'", "<= 1000"]),
    ],
)
def test_validate_rejects_bad_arguments_with_readable_message(
    name: str, args: dict[str, Any], words: list[str]
) -> None:
    with pytest.raises(ToolArgumentError) as info:
        tool(name).validate(args)
    message = str(info.value)
    assert message.startswith(f"{name}: ")
    for word in words:
        assert word in message
    assert "Traceback" not in message


@pytest.mark.parametrize("args", [[], "path", None, 3])
def test_validate_rejects_non_object_arguments(args: Any) -> None:
    with pytest.raises(ToolArgumentError, match="must be a JSON object"):
        tool("list_dir").validate(args)


def test_summaries_are_one_short_line() -> None:
    assert (
        tool("read_file").summarize({"path": "src/app.py", "offset": 10, "limit": 31})
        == "read_file src/app.py:10-40"
    )
    assert tool("run_command").summarize({"command": "pytest -q"}) == "run_command pytest -q"
    assert tool("grep").summarize({"pattern": "def main", "path": "src", "glob": "*.py"}) == (
        "grep /def main/ in src (*.py)"
    )
    long_cmd = {"command": "for i in 1 2 3\ndo\n  echo $i\ndone; " + "x" * 200}
    for name, args in [
        ("run_command", long_cmd),
        ("write_file", {"path": "p" * 300, "content": "a\nb"}),
        ("edit_file", {"path": "\x1b[31mred\x1b[0m", "old_string": "a", "new_string": "b"}),
        ("glob", {"pattern": "**/*.py", "path": "src"}),
        ("list_dir", {}),
    ]:
        line = tool(name).summarize(args)
        assert len(line) <= 80
        assert "\n" not in line
        assert "\x1b" not in line
        assert line.startswith(name)


def test_strip_ansi_removes_escape_sequences_and_controls() -> None:
    text = (
        "\x1b[1;31mred\x1b[0m \x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b(Bok\x07\x08\ttab"
    )
    assert strip_ansi(text) == "red link ok\ttab"
    assert strip_ansi("plain\nline\r\n") == "plain\nline\r\n"


def test_collapse_carriage_returns_keeps_last_progress_state() -> None:
    assert collapse_carriage_returns("10%\r50%\r100%\ndone\r\n") == "100%\ndone\n"


def test_cap_middle_keeps_head_and_tail_and_counts_omitted() -> None:
    text = "".join(f"{i:04d}\n" for i in range(1000))
    out = cap_middle(text, 300)
    head, rest = out.split("[... ", 1)
    count, tail = rest.split(" chars omitted ...]\n", 1)
    assert text.startswith(head.rstrip("\n"))
    assert text.endswith(tail)
    assert int(count) == len(text) - len(head) - len(tail)
    assert cap_middle("short", 300) == "short"


def test_cap_parts_counts_already_dropped_chars() -> None:
    out = cap_parts("head\n", "tail\n", 100, 50)
    assert out == "head\n[... 50 chars omitted ...]\ntail\n"


def test_a_summary_draws_control_characters_as_symbols_never_drops_them() -> None:
    """Fresh-user finding: the one-line form of a call shows what runs (ESC "␛", BEL "␇", a bidi
    override by its code point), as the whole call does."""
    line = tool("run_command").summarize({"command": "printf '\x1b[2J\x07' && echo \u202egnp.exe"})
    assert line == "run_command printf '\u241b[2J\u2407' && echo <U+202E>gnp.exe"
