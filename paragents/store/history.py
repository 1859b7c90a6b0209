"""Turning stored messages into a history the provider accepts (pure functions, no SQL).

OpenAI chat-completions requires every ``tool_calls[]`` item of an assistant message to be answered
by a ``role: tool`` message with the same ``tool_call_id`` right after it (before the next
non-tool message), and rejects a tool message with no matching call before it. A process killed
mid-turn, a cancelled turn or a partly kept reply can break both rules; :func:`repair_history`
restores them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from paragents.models import Message, tool_message
from paragents.store.records import StoredMessage

INTERRUPTED_RESULT = (
    "interrupted: the paragents process stopped before this call finished, so its result is unknown "
    "(it may not have run, or run only in part); check its effect if that matters, and call it again "
    "if it is still needed"
)
"""Content of the synthetic tool result added for a tool call that never got its result."""


@dataclass(slots=True)
class RepairedHistory:
    """Result of :func:`repair_history`.

    ``messages``: OpenAI dicts ready to send. ``synthetic``: the tool results that were invented,
    each as ``(anchor id, message)`` where the anchor is the stored message it must follow (the
    assistant message or its last answered result); the store persists them there."""

    messages: list[Message] = field(default_factory=list)
    synthetic: list[tuple[int, Message]] = field(default_factory=list)


def _call_ids(message: Message) -> list[str]:
    ids: list[str] = []
    for call in message.get("tool_calls") or []:
        call_id = call.get("id") if isinstance(call, dict) else None
        if isinstance(call_id, str) and call_id and call_id not in ids:
            ids.append(call_id)
    return ids


def repair_history(stored: Sequence[StoredMessage]) -> RepairedHistory:
    """Build a provider-ready history from ``stored`` (one conversation, in order).

    - incomplete messages (partial replies kept after a failure) are left out;
    - a tool result is kept only right after the assistant message that called it (once per call);
      results with no such call, or out of place, are left out;
    - every call left without a result gets a synthetic ``{"role": "tool", "tool_call_id": ...,
      "content": INTERRUPTED_RESULT}`` right after that assistant's other results.
    The input is not modified."""
    out = RepairedHistory()
    pending: list[str] = []
    answered: set[str] = set()
    anchor = 0

    def flush() -> None:
        for call_id in pending:
            if call_id not in answered:
                msg = tool_message(call_id, INTERRUPTED_RESULT)
                out.messages.append(msg)
                out.synthetic.append((anchor, msg))
        pending.clear()
        answered.clear()

    for item in stored:
        if not item.complete:
            continue
        message = item.message
        if item.role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending and call_id not in answered:
                out.messages.append(message)
                answered.add(call_id)
                anchor = item.id
            continue
        flush()
        out.messages.append(message)
        if item.role == "assistant":
            pending.extend(_call_ids(message))
            anchor = item.id
    flush()
    return out
