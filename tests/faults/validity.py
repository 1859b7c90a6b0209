"""Checks that a chat-completions request body is one the provider accepts (OpenAI rules)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def request_problems(body: Any, full_replies: Collection[str] | None = None) -> list[str]:
    """Return what is wrong with the ``messages`` of a chat-completions request ``body`` ([] if valid).

    Rules (OpenAI chat completions): every ``tool_calls[]`` id of an assistant message is answered by
    exactly one ``role: tool`` message right after it (before the next non-tool message); no tool
    message comes without that call; no message carries the store's ``incomplete`` marker. With
    ``full_replies``, every assistant ``content`` must be one of them (a partial reply is a prefix
    that is not, so it is caught)."""
    problems: list[str] = []
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return ["request body has no messages list"]
    messages = body["messages"]
    open_calls: list[str] = []
    answered: set[str] = set()

    def close(at: int) -> None:
        missing = [c for c in open_calls if c not in answered]
        if missing:
            problems.append(f"message {at}: tool call(s) {missing} have no tool result")
        open_calls.clear()
        answered.clear()

    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or "role" not in msg:
            problems.append(f"message {i} is not an OpenAI message: {msg!r:.80}")
            continue
        if "incomplete" in msg:
            problems.append(f"message {i} carries the incomplete marker")
        role = msg["role"]
        if role == "tool":
            cid = msg.get("tool_call_id")
            if cid not in open_calls:
                problems.append(f"message {i}: tool result {cid!r} without its call just before")
            elif cid in answered:
                problems.append(f"message {i}: second tool result for {cid!r}")
            else:
                answered.add(cid)
            continue
        close(i)
        if role == "assistant":
            content = msg.get("content") or ""
            if full_replies is not None and content and content not in full_replies:
                problems.append(f"message {i}: assistant content {content!r:.60} is not a finished reply")
            calls = msg.get("tool_calls") or []
            if not content and not calls:
                problems.append(f"message {i}: empty assistant message")
            for call in calls:
                open_calls.append(call.get("id"))
    close(len(messages))
    if messages and messages[-1].get("role") == "assistant" and not messages[-1].get("tool_calls"):
        problems.append("the request ends with an assistant reply (nothing to answer)")
    return problems
