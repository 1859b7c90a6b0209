"""The cost of MCP tool schemas is counted one way: what ``/mcp`` says a server's schemas cost is
what the agent counts in a request's context (they disagreed ~3x, so auto-compaction fired after a
few MCP calls though ``/mcp`` said the schemas were cheap)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from paragents.agent.tokens import estimate_json_tokens, estimate_messages_tokens, estimate_text_tokens
from paragents.mcp.pool import SessionMcp


def spec(i: int) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": f"mcp__db__query_{i}",
            "description": "Run a read-only SQL query against the project database; rows come back as JSON.",
            "parameters": {
                "type": "object",
                "properties": {
                    "sql": {"type": "string", "description": "The SQL SELECT statement"},
                    "limit": {"type": "integer", "description": "Most rows to return", "default": 100},
                },
                "required": ["sql"],
            },
        },
    }


def test_mcp_report_and_agent_context_count_tool_schemas_alike() -> None:
    specs = [spec(i) for i in range(12)]
    messages = [{"role": "user", "content": "hi"}]
    in_context = estimate_messages_tokens(messages, specs) - estimate_messages_tokens(messages)
    session = SessionMcp.__new__(SessionMcp)
    tools: dict[str, Any] = {
        s["function"]["name"]: SimpleNamespace(server="db", spec=lambda s=s: s) for s in specs
    }
    session.tools = tools
    reported = session.spec_tokens(estimate_json_tokens)["db"]
    assert abs(reported - in_context) <= 0.05 * in_context, (reported, in_context)
    # JSON quotes are not counted as HTML escapes (tool specs are rendered with tojson, unescaped)
    assert in_context < 0.6 * estimate_text_tokens(json.dumps(specs))
