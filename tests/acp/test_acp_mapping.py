"""The mapping of ACP tool calls onto paragents' rule families, the option carrying an answer, the
agent table and ``/new --agent``: pure functions, no subprocess."""

from __future__ import annotations

from acp.schema import PermissionOption, ToolCallLocation, ToolCallUpdate

from paragents.acp.launch import resolve_agent
from paragents.acp.permission import map_call, pick_option
from paragents.config import AgentCommand
from paragents.ui.core.commands import SlashCommand, parse_command


def test_execute_maps_to_bash_and_edits_to_each_location() -> None:
    run = map_call(ToolCallUpdate(tool_call_id="1", kind="execute", raw_input={"command": "rm -rf build"}))
    assert run.checks == (("Bash", {"command": "rm -rf build"}),) and run.summary == "rm -rf build"
    move = ToolCallUpdate(
        tool_call_id="2",
        kind="move",
        title="Move",
        locations=[ToolCallLocation(path="/p/a.txt"), ToolCallLocation(path="/p/b.txt")],
    )
    assert map_call(move).checks == (("Edit", {"path": "/p/a.txt"}), ("Edit", {"path": "/p/b.txt"}))
    read = map_call(ToolCallUpdate(tool_call_id="3", kind="read", raw_input={"absolute_path": "/p/x"}))
    assert read.checks == (("Read", {"path": "/p/x"}),)
    fetch = map_call(ToolCallUpdate(tool_call_id="4", kind="fetch", raw_input={"url": "https://x.org"}))
    assert fetch.checks == (("WebFetch", {"url": "https://x.org"}),)


def test_unknown_kinds_and_calls_without_their_argument_ask() -> None:
    assert map_call(ToolCallUpdate(tool_call_id="1", kind="think")).checks == ()
    assert map_call(ToolCallUpdate(tool_call_id="2", kind="execute")).checks == ()
    assert map_call(ToolCallUpdate(tool_call_id="3", kind="edit")).checks == ()


def test_the_agents_own_option_carries_the_answer() -> None:
    options = [
        PermissionOption(option_id="a", name="Allow", kind="allow_once"),
        PermissionOption(option_id="A", name="Always", kind="allow_always"),
        PermissionOption(option_id="r", name="Reject", kind="reject_once"),
    ]
    assert pick_option(options, True) == "a"
    assert pick_option(options, True, always=True) == "A"
    assert pick_option(options, False) == "r"
    assert pick_option(options[:1], False) is None


def test_the_config_extends_the_builtin_table() -> None:
    assert resolve_agent("qwen", {}).argv() == ["qwen", "--acp"]
    assert resolve_agent("gemini", {}).argv() == ["gemini", "--experimental-acp"]
    mine = resolve_agent("qwen", {"qwen": AgentCommand(command="/opt/qwen", args=("--acp", "-y"))})
    assert (
        mine.argv() == ["/opt/qwen", "--acp", "-y"] and mine.install == "npm install -g @qwen-code/qwen-code"
    )


def test_new_takes_an_agent() -> None:
    assert parse_command("/new --agent qwen helper") == SlashCommand("new", "helper", {"agent": "qwen"})
