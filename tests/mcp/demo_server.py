"""A small MCP server for the tests (the SDK's FastMCP): ``python demo_server.py [stdio|http PORTFILE]``.

Tools: add (read-only hint), echo, slow (sleeps), big (a result of N bytes), crash (exits the
process mid-call), close_stdout (ends the connection, the process lives on), wipe (destructive hint),
overlap (how many calls ran at once), pid (the server's process id), bad (an invalid schema)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations


def build(name: str = "demo") -> FastMCP:
    """The demo server (also used in-process by the tests)."""
    server = FastMCP(name)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return "done"

    @server.tool()
    def big(size: int) -> str:
        """Return a text of `size` characters."""
        return "x" * size

    @server.tool()
    def crash() -> str:
        """Exit the server process at once (a crash mid-call)."""
        os._exit(3)

    @server.tool()
    async def close_stdout() -> str:
        """Close stdout and block (the connection ends, the process neither exits nor reads stdin)."""
        os.close(1)
        time.sleep(3600)  # blocks the server's event loop on purpose
        return "never"

    @server.tool(annotations=ToolAnnotations(destructiveHint=True))
    def wipe(target: str) -> str:
        """Pretend to delete something."""
        return f"wiped {target}"

    @server.prompt()
    def review(path: str, focus: str = "bugs") -> str:
        """Ask for a review of a file."""
        return f"Review {path}, looking for {focus}."

    @server.resource("note://greeting")
    def greeting() -> str:
        """A short text resource."""
        return "hello from a resource"

    running = [0, 0]  # calls running now, most seen at once
    changed = asyncio.Condition()

    @server.tool()
    async def overlap(want: int, seconds: float) -> str:
        """Wait until `want` calls have run at once (at most `seconds`); answer how many calls ran at
        once at most so far."""
        async with changed:
            running[0] += 1
            running[1] = max(running)
            changed.notify_all()
            try:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(seconds):
                        await changed.wait_for(lambda: running[1] >= want)
            finally:
                running[0] -= 1
        return str(running[1])

    @server.tool()
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    @server.tool()
    def bad() -> str:
        """A tool whose schema is made invalid below."""
        return "never"

    tool = server._tool_manager._tools["bad"]
    tool.parameters = {"type": "object", "properties": {"x": {"type": "no-such-type"}}}
    return server


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        print("demo server starting", file=sys.stderr, flush=True)
        build().run("stdio")
    elif mode == "hang":
        import time

        time.sleep(3600)  # never answers initialize
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
