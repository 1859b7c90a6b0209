"""MCP configuration: .mcp.json in Claude Code's shape, the trust gate, ${VAR} expansion, redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.config import LoadedConfig, McpSettings, RuntimeConfig, describe_config, mcp_shown
from paragents.mcp.project import (
    McpConfigError,
    ServerEntry,
    expanded,
    load_servers,
    project_trust,
    read_mcp_json,
    remember_trust,
)


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_claude_code_mcp_json_loads_stdio_and_http_entries(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "srv"], "env": {"TOKEN": "${TOKEN}"}},
                "web": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"X": "1"}},
                "tuned": {"command": "x", "disabledTools": ["w*"], "toolTimeout": 5, "scope": "session"},
            }
        },
    )
    servers = read_mcp_json(path)
    assert servers["files"].transport == "stdio" and servers["files"].args == ("-y", "srv")
    assert servers["web"].transport == "http" and servers["web"].headers == {"X": "1"}
    assert servers["tuned"].disabled_tools == ("w*",) and servers["tuned"].scope == "session"
    assert servers["tuned"].tool_timeout == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{oops", "not valid JSON (line 1"),
        ('{"servers": {}}', 'expected {"mcpServers"'),
        ('{"mcpServers": {"a": {"args": ["x"]}}}', "server 'a': a stdio server needs a 'command'"),
        ('{"mcpServers": {"a": {"command": "x", "toolTimeout": -1}}}', "server 'a': toolTimeout"),
        ('{"mcpServers": {"a": {"command": "x", "bogus": 1}}}', "server 'a': bogus"),
        ('{"mcpServers": {"a b": {"command": "x"}}}', "server name 'a b'"),
    ],
)
def test_a_bad_mcp_json_is_one_message_naming_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(McpConfigError) as err:
        read_mcp_json(path)
    assert str(path) in str(err.value) and expected in str(err.value)


def test_one_bad_server_in_mcp_json_is_skipped_with_its_name_and_the_others_load(tmp_path: Path) -> None:
    write(
        tmp_path / ".mcp.json",
        {"mcpServers": {"good": {"command": "x"}, "bad name": {"command": "y"}, "b2": {"args": ["z"]}}},
    )
    entries, problems = load_servers(tmp_path, McpSettings(), [])
    assert list(entries) == ["good"]
    assert len(problems) == 2
    assert "server name 'bad name'" in problems[0] and "skipped" in problems[0]
    assert "server 'b2': a stdio server needs a 'command'" in problems[1]
    assert all(str(tmp_path / ".mcp.json") in p for p in problems)


def test_project_servers_are_gated_by_the_settings_keys(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    write(project / ".mcp.json", {"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})
    assert project_trust("a", []) == "unknown"
    allow_a = write(tmp_path / "s1.json", {"enabledMcpjsonServers": ["a"]})
    deny_b = write(
        tmp_path / "s2.json", {"disabledMcpjsonServers": ["b"], "enableAllProjectMcpServers": True}
    )
    assert project_trust("a", [allow_a], project) == "trusted"
    assert project_trust("b", [allow_a], project) == "unknown"
    assert project_trust("b", [deny_b], project) == "refused"
    assert project_trust("a", [deny_b], project) == "trusted"
    user = McpSettings.model_validate({"servers": {"u": {"command": "z"}}})
    entries, problems = load_servers(project, user, [allow_a])
    assert problems == []
    assert {n: (e.origin, e.trust) for n, e in entries.items()} == {
        "u": ("user", "trusted"),
        "a": ("project", "trusted"),
        "b": ("project", "unknown"),
    }


def test_a_projects_own_files_cannot_trust_its_servers_and_a_changed_entry_asks_again(tmp_path: Path) -> None:
    """enabledMcpjsonServers / enableAllProjectMcpServers in the project's permission files (which a
    session can write) do not trust a server; an "always" answer is kept outside the project by the
    hash of the entry, so a changed command is unknown again."""
    write(tmp_path / ".mcp.json", {"mcpServers": {"b": {"command": "y"}}})
    local = write(tmp_path / ".paragents" / "permissions.local.json", {"enableAllProjectMcpServers": True})
    project_file = write(tmp_path / "permissions.json", {"enabledMcpjsonServers": ["b"]})
    entries, _problems = load_servers(tmp_path, McpSettings(), [local, project_file])
    assert entries["b"].trust == "unknown"
    remember_trust(tmp_path, "b")
    entries, _problems = load_servers(tmp_path, McpSettings(), [])
    assert entries["b"].trust == "trusted"
    assert json.loads(local.read_text()) == {"enableAllProjectMcpServers": True}  # not written there
    write(tmp_path / ".mcp.json", {"mcpServers": {"b": {"command": "sh", "args": ["-c", "evil"]}}})
    entries, _problems = load_servers(tmp_path, McpSettings(), [])
    assert entries["b"].trust == "unknown"


def test_vars_expand_from_the_environment_and_unset_ones_name_the_server() -> None:
    raw = {
        "command": "${BIN}",
        "args": ["--key", "${KEY}"],
        "env": {"T": "${KEY}"},
        "headers": {"A": "${D:-x}"},
    }
    entry = ServerEntry("svc", McpSettings.model_validate({"servers": {"svc": raw}}).servers["svc"], "user")
    got = expanded(entry, {"BIN": "/bin/srv", "KEY": "k1"})
    assert (got.command, got.args, got.env, got.headers) == (
        "/bin/srv",
        ("--key", "k1"),
        {"T": "k1"},
        {"A": "x"},
    )
    with pytest.raises(McpConfigError, match=r"MCP server 'svc': \$\{KEY\} is not set"):
        expanded(entry, {"BIN": "b"})
    assert entry.settings.command == "${BIN}"  # the configured entry keeps the reference


def test_secrets_are_redacted_in_show_config() -> None:
    cfg = RuntimeConfig.model_validate(
        {
            "mcp": {
                "servers": {
                    "gh": {
                        "command": "gh-mcp",
                        "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnop", "REF": "${TOK}"},
                    },
                    "web": {
                        "url": "https://x.invalid/mcp",
                        "headers": {"Authorization": "Bearer sekrit-123456"},
                    },
                }
            }
        }
    )
    shown = json.dumps(mcp_shown(cfg.mcp))
    assert "ghp_abcdefghijklmnop" not in shown and "sekrit-123456" not in shown
    assert "${TOK}" in shown and "gh-mcp" in shown
    [row] = [r for r in describe_config(LoadedConfig(cfg)) if r[0] == "mcp"]  # the /show-config row
    assert "gh-mcp" in row[1] and "ghp_abcdefghijklmnop" not in row[1] and "sekrit-123456" not in row[1]


def test_mcp_tools_that_declare_paths_get_conflict_targets(tmp_path: Path) -> None:
    from paragents.conflicts import call_targets

    real = tmp_path.resolve()
    args = {"path": "a.txt", "paths": ["sub/b.txt", "a.txt"], "text": "x"}
    assert call_targets("mcp__fs__write", args, tmp_path).paths == (
        str(real / "a.txt"),
        str(real / "sub/b.txt"),
    )
    assert call_targets("mcp__fs__search", {"query": "x"}, tmp_path).empty  # no path declared
