"""Checkers of the chat requests a loopback ReplayServer received: which were summarisation requests
(``is_summary_request``), the turn requests in order (``turn_requests``), and the OpenAI rules on a
request's messages (``assert_valid_request``). Used by tests/agent and tests/sessions."""

from __future__ import annotations

from typing import Any

from paragents.agent.compaction import SUMMARY_PROMPT
from paragents.llm.replay import ReceivedRequest, ReplayServer


def is_summary_request(request: ReceivedRequest) -> bool:
    """True when ``request`` is a summarisation request (its system prompt is SUMMARY_PROMPT...)."""
    messages = request.body_json["messages"]
    return str(messages[0]["content"]).startswith(SUMMARY_PROMPT)


def turn_requests(server: ReplayServer) -> list[dict[str, Any]]:
    """Bodies of the chat requests that were not summarisation requests, in order."""
    return [r.body_json for r in server.requests if r.body_json and not is_summary_request(r)]


def assert_valid_request(body: dict[str, Any]) -> None:
    """Assert the OpenAI rules on ``body["messages"]``: one system message first; every assistant
    ``tool_calls`` answered by tool messages right after it (each id once); no orphan tool message;
    the request does not end with unanswered calls."""
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    assert all(m["role"] != "system" for m in messages[1:])
    pending: set[str] = set()
    for m in messages[1:]:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, f"orphan or repeated tool result {m['tool_call_id']}"
            pending.remove(m["tool_call_id"])
        else:
            assert not pending, f"calls {pending} not answered before a {m['role']} message"
            if m["role"] == "assistant":
                pending = {c["id"] for c in m.get("tool_calls") or []}
    assert not pending
