"""MCP tools over Streamable HTTP against the demo server in this process: the pool lists them, a
call answers, results are capped, invalid schemas and annotations are handled, permissions decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.config import McpSettings
from paragents.mcp import McpPool
from paragents.permissions import Policy
from paragents.tools.base import ToolContext


def pool_for(tmp_path: Path, **server: object) -> McpPool:
    settings = McpSettings.model_validate({"servers": {"web": server}})
    return McpPool(tmp_path, settings, log_dir=tmp_path / "logs")


async def test_http_server_tools_are_offered_and_called(tmp_path: Path, http_url: str) -> None:
    pool = pool_for(tmp_path, type="http", url=http_url)
    mine = pool.for_session("s1")
    problems = await mine.prepare()
    assert "mcp__web__add" in mine.tools and "mcp__web__echo" in mine.tools
    # the tool whose schema is invalid is left out with one message naming server and tool
    assert "mcp__web__bad" not in mine.tools
    assert any("'web'" in p and "'bad'" in p and "invalid" in p for p in problems)
    result = await mine.tools["mcp__web__add"].run({"a": 2, "b": 40}, ToolContext(workdir=tmp_path))
    assert (result.content, result.is_error) == ("42", False)
    [row] = pool.status()
    assert row.transport == "http" and row.state == "running" and row.users == ("s1",)
    await pool.shutdown()


async def test_calls_are_serialised_unless_the_server_is_declared_concurrent(tmp_path: Path) -> None:
    import asyncio

    from tests.mcp.conftest import http_demo
    from tests.patience import HANG_GUARD_S

    # each call waits for the other to run beside it: at once when concurrent (however slow the
    # machine), in vain for 1.5 s when serialised (the wait only sets how long the test takes)
    for concurrent, expected, wait in ((False, "1", 1.5), (True, "2", HANG_GUARD_S)):
        async with http_demo() as url:  # a fresh server: its "most at once" starts at 0
            pool = pool_for(tmp_path, type="http", url=url, concurrent=concurrent)
            one, two = pool.for_session("s1"), pool.for_session("s2")
            await asyncio.gather(one.prepare(), two.prepare())
            ctx = ToolContext(workdir=tmp_path)
            args = {"want": 2, "seconds": wait}
            results = await asyncio.gather(
                one.tools["mcp__web__overlap"].run(args, ctx), two.tools["mcp__web__overlap"].run(args, ctx)
            )
            assert max(r.content for r in results) == expected, concurrent
            assert len(pool.handles) == 1  # one connection shared by both sessions
            await pool.shutdown()


async def test_reconfigure_restarts_only_the_changed_servers(tmp_path: Path, http_url: str) -> None:
    pool = pool_for(tmp_path, type="http", url=http_url)
    mine = pool.for_session("s1")
    await mine.prepare()
    before = pool.handles[("web", None)]
    await pool.reconfigure(pool.settings)  # nothing changed: the same connection
    assert pool.handles[("web", None)] is before
    changed = McpSettings.model_validate({"servers": {"web": {"url": http_url, "disabledTools": ["echo"]}}})
    await pool.reconfigure(changed)
    assert ("web", None) not in pool.handles and before.state == "stopped"
    await mine.prepare()
    assert "mcp__web__echo" not in mine.tools and "mcp__web__add" in mine.tools
    await pool.shutdown()


async def test_a_server_prompt_expands_with_its_arguments(tmp_path: Path, http_url: str) -> None:
    from paragents.mcp.server import McpServerError

    pool = pool_for(tmp_path, type="http", url=http_url)
    mine = pool.for_session("s1")
    assert await mine.prompt("mcp__web__review", "src/app.py") == "Review src/app.py, looking for bugs."
    assert (
        await mine.prompt("mcp__web__review", "a.py speed and memory")
        == "Review a.py, looking for speed and memory."
    )
    assert await mine.prompt("mcp__web__review", "focus=style path=b.py") == "Review b.py, looking for style."
    with pytest.raises(McpServerError, match="needs path"):
        await mine.prompt("mcp__web__review", "")
    with pytest.raises(McpServerError, match=r"no prompt 'nope' \(its prompts: /mcp__web__review\)"):
        await mine.prompt("mcp__web__nope", "")
    await pool.shutdown()


async def test_resources_named_in_a_prompt_are_attached(tmp_path: Path, http_url: str) -> None:
    pool = pool_for(tmp_path, type="http", url=http_url)
    mine = pool.for_session("s1")
    text, problems = await mine.attach("read @web:note://greeting and @web:note://missing, mail a@b.c", 1000)
    assert text.startswith("read @web:note://greeting and @web:note://missing, mail a@b.c\n\n")
    assert "[@web:note://greeting]\nhello from a resource" in text
    assert len(problems) == 1 and "@web:note://missing was not attached" in problems[0]
    assert await mine.attach("no refs @other:x://y here", 1000) == ("no refs @other:x://y here", [])
    await pool.shutdown()


async def test_a_10_mb_result_is_capped_like_other_tool_output(tmp_path: Path, http_url: str) -> None:
    pool = pool_for(tmp_path, type="http", url=http_url, maxOutputTokens=1000)
    mine = pool.for_session("s1")
    await mine.prepare()
    ctx = ToolContext(workdir=tmp_path, max_output_chars=30000)
    result = await mine.tools["mcp__web__big"].run({"size": 10_000_000}, ctx)
    assert len(result.content) <= 4000 and "chars omitted" in result.content
    await pool.shutdown()


async def test_annotations_and_rules_decide_mcp_calls(tmp_path: Path, http_url: str) -> None:
    pool = pool_for(tmp_path, type="http", url=http_url)
    mine = pool.for_session("s1")
    await mine.prepare()
    add, echo, wipe = (mine.tools[f"mcp__web__{n}"] for n in ("add", "echo", "wipe"))
    assert add.read_only and not wipe.read_only and wipe.destructive
    policy = Policy.load(tmp_path)

    def decide(tool: object, mode: str = "default", rules: tuple[str, ...] = ()) -> str:
        name, read_only = tool.name, tool.read_only  # type: ignore[attr-defined]
        return policy.decide(
            name, {}, cwd=tmp_path, mode=mode, session_rules=rules, read_only=read_only
        ).decision

    assert decide(add) == "allow"  # readOnlyHint: like a read
    assert decide(add, "plan") == "allow"
    assert decide(echo) == "ask"  # unlisted: asks
    assert decide(echo, "plan") == "ask"  # plan mode asks for a tool that is not read-only (issue 26)
    assert decide(wipe, "acceptEdits") == "ask"  # destructiveHint asks even in acceptEdits
    assert decide(wipe, "bypassPermissions") == "allow"
    assert decide(echo, rules=("mcp__web",)) == "allow"
    assert decide(wipe, rules=("mcp__web__*",)) == "allow"
    assert decide(echo, rules=("mcp__web__echo",)) == "allow"
    assert decide(wipe, rules=("mcp__web__echo",)) == "ask"
    assert decide(echo, "dontAsk") == "deny"
    preview = echo.preview({"text": "hi"}, tmp_path)
    assert preview is not None and "MCP server: web" in preview.text
    assert "Return the text unchanged." in preview.text and '"text": "hi"' in preview.text
    await pool.shutdown()


async def test_an_unreachable_http_server_is_one_readable_message(tmp_path: Path) -> None:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    pool = pool_for(tmp_path, type="http", url=f"http://127.0.0.1:{port}/mcp", startupTimeout=5)
    problems = await pool.for_session("s1").prepare()
    assert len(problems) == 1 and "MCP server 'web'" in problems[0]
    assert pool.status()[0].state == "failed"
    await pool.shutdown()
