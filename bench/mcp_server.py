"""A minimal stdio MCP server (the SDK's FastMCP) for ``bench.mcp``: one tool, ``ping``."""

from mcp.server.fastmcp import FastMCP

server = FastMCP("bench")


@server.tool()
def ping(text: str) -> str:
    """Answer with the text."""
    return text


if __name__ == "__main__":
    server.run("stdio")
