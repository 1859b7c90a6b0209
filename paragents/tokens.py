"""Local token estimates for when the endpoint reports no ``usage`` (several servers ignore
``stream_options.include_usage``, e.g. llama.cpp's server).

The estimate is deliberately simple and conservative: about 4 characters per token for prose and
code (OpenAI's own rule of thumb for English), plus a per-message overhead of 4 tokens as in OpenAI's
cookbook "How to count tokens with tiktoken" (chat format framing).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from paragents.models import Message

CHARS_PER_TOKEN = 4.0
MESSAGE_OVERHEAD_TOKENS = 4


def estimate_text_tokens(text: str) -> int:
    """Return an estimate of the token count of ``text`` (>= 1 for non-empty text)."""
    if not text:
        return 0
    # Non-ASCII text (CJK, emoji) runs closer to one token per character.
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    ascii_chars = len(text) - non_ascii
    return max(1, round(ascii_chars / CHARS_PER_TOKEN + non_ascii))


def estimate_message_tokens(message: Message) -> int:
    """Return the estimated tokens one OpenAI-format message costs in a request."""
    total = MESSAGE_OVERHEAD_TOKENS
    content = message.get("content")
    if isinstance(content, str):
        total += estimate_text_tokens(content)
    elif content is not None:
        total += estimate_text_tokens(json.dumps(content))
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        total += estimate_text_tokens(str(fn.get("name", ""))) + estimate_text_tokens(
            str(fn.get("arguments", ""))
        )
        total += 3
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str):
        total += estimate_text_tokens(reasoning)
    return total


def estimate_messages_tokens(messages: Iterable[Message], tools: list[dict] | None = None) -> int:
    """Return the estimated prompt tokens of a request with ``messages`` and ``tools`` specs."""
    total = sum(estimate_message_tokens(m) for m in messages) + 3
    if tools:
        total += estimate_text_tokens(json.dumps(tools))
    return total
