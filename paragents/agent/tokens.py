"""Local token estimates for when the endpoint reports no ``usage`` (several servers ignore
``stream_options.include_usage``, e.g. llama.cpp's server), and the cost of a session's usage.

How the estimate works: text is cut into pieces the way GPT-2-style BPE pre-tokenizers cut it
(letters with their leading space, single digits, runs of punctuation, runs of white space); a
word costs one token per 8 characters (at least one), each digit one token, a punctuation run one
token per character, its leading space included (a run of one repeated character such as
``=====`` one per 8). Before that, ``& < > " '`` are counted as their HTML escapes (``&#34;``...),
because the stock llama.cpp Python server renders chat templates with HTML autoescaping and so
counts them that way; servers that report ``usage`` make the estimate unnecessary, so
over-counting quotes there costs nothing. Each message adds :data:`MESSAGE_OVERHEAD_TOKENS`
(chat framing ``<|im_start|>role ... <|im_end|>``), each request :data:`REQUEST_OVERHEAD_TOKENS`.

The constants were fitted to real ``usage`` numbers recorded from SmolLM2 on llama.cpp
(``tests/agent/data/usage_calibration.json``, recorded by ``record_usage.py`` next to it); the
test there checks every recorded conversation is within 10 %.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from paragents.models import Message, Usage

MESSAGE_OVERHEAD_TOKENS = 5
"""Tokens of chat framing per message (role header and end marker)."""
REQUEST_OVERHEAD_TOKENS = 3
"""Tokens that prime the reply (the assistant header)."""
WORD_CHARS_PER_TOKEN = 8
"""Characters of one word (letters) per token."""
REPEAT_CHARS_PER_TOKEN = 8
"""Characters per token in a run of one repeated punctuation character."""
TOOL_CALL_OVERHEAD_TOKENS = 3
"""Framing tokens per tool call in an assistant message."""

_PIECE = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")
"""Pieces as a BPE pre-tokenizer cuts them, except that a run of digits is one piece here: it costs
its length either way (one token per digit), and a 10 MB reply of digits is not 10 million pieces."""
_WORD = re.compile(r" ?[^\W\d_]+")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;"}
_ESCAPABLE = re.compile(r"""[&<>"']""")


LARGE_TEXT = 64 * 1024
"""Texts this long or longer have their estimate remembered (:func:`_estimate_large`): every request
of a session re-estimates its whole history, and a long reply must not cost its full scan each time."""


def estimate_text_tokens(text: str) -> int:
    """Return an estimate of the token count of ``text`` (0 for "", >= 1 otherwise)."""
    if len(text) >= LARGE_TEXT:
        return _estimate_large(text)
    return _estimate(text)


@lru_cache(maxsize=32)
def _estimate_large(text: str) -> int:
    """:func:`_estimate`, remembered for the last 32 long texts (a str caches its hash and a hit on
    the same object is an identity check, so a lookup does not rescan the text)."""
    return _estimate(text)


def estimate_json_tokens(value: Any) -> int:
    """Return an estimate of the tokens ``value`` costs as JSON (tool specs, MCP schemas): the text
    of ``json.dumps(value)``, its quotes not HTML-escaped (chat templates render tool specs with
    ``tojson``, whose output is not escaped). ``/mcp``'s per-server cost and the context the agent
    counts use this one function, so they agree."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) >= LARGE_TEXT:
        return _estimate_large_json(text)
    return _estimate(text, escape=False)


@lru_cache(maxsize=32)
def _estimate_large_json(text: str) -> int:
    return _estimate(text, escape=False)


def _estimate(text: str, escape: bool = True) -> int:
    if not text:
        return 0
    escaped = _ESCAPABLE.sub(lambda m: _ESCAPES[m.group()], text) if escape else text
    total = 0
    for piece in _PIECE.findall(escaped):
        if piece.isspace():
            total += 1
        elif piece[-1].isdigit():
            total += len(piece)
        elif _WORD.fullmatch(piece):
            total += max(1, math.ceil(len(piece) / WORD_CHARS_PER_TOKEN))
        elif len(set(piece.strip())) == 1:
            total += max(1, math.ceil(len(piece) / REPEAT_CHARS_PER_TOKEN))
        else:
            total += len(piece)
    return max(1, total)


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
        total += TOOL_CALL_OVERHEAD_TOKENS
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str):
        total += estimate_text_tokens(reasoning)
    return total


def estimate_messages_tokens(messages: Iterable[Message], tools: list[dict[str, Any]] | None = None) -> int:
    """Return the estimated prompt tokens of a request with ``messages`` and ``tools`` specs."""
    total = sum(estimate_message_tokens(m) for m in messages) + REQUEST_OVERHEAD_TOKENS
    if tools:
        total += estimate_json_tokens(tools)
    return total


def cost_usd(
    usage: Usage,
    input_price_per_mtok: float | None,
    output_price_per_mtok: float | None,
    cached_price_per_mtok: float | None = None,
) -> float | None:
    """Return the cost in USD of ``usage`` at the given prices (USD per million prompt / completion
    tokens, as in ``ModelSettings``), or None when neither price is configured. The cached part of
    the prompt is priced at ``cached_price_per_mtok`` when given, else as any prompt token."""
    if input_price_per_mtok is None and output_price_per_mtok is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens) if cached_price_per_mtok is not None else 0
    return (
        (usage.prompt_tokens - cached) * (input_price_per_mtok or 0.0)
        + cached * (cached_price_per_mtok or 0.0)
        + usage.completion_tokens * (output_price_per_mtok or 0.0)
    ) / 1_000_000


def counted_usage(
    reported: Usage | None, prompt: Callable[[], int], completion: Callable[[], int]
) -> tuple[Usage, bool]:
    """Return the usage to count for one request and whether it is estimated: the server's
    ``reported`` usage, else a local estimate from ``prompt()`` and ``completion()`` (tokens)."""
    if reported is not None:
        return reported, False
    p, c = prompt(), completion()
    return Usage(p, c, p + c), True
