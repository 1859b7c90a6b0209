"""Token estimates against real ``usage`` recorded from a llama.cpp server, and cost display."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.agent.tokens import cost_usd, estimate_messages_tokens, estimate_text_tokens
from paragents.models import Usage

DATA = json.loads((Path(__file__).parent / "data" / "usage_calibration.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("record", DATA["records"], ids=[r["name"] for r in DATA["records"]])
def test_estimate_within_ten_percent_of_server_usage(record: dict) -> None:
    estimate = estimate_messages_tokens(record["messages"])
    actual = record["usage"]["prompt_tokens"]
    assert abs(estimate - actual) <= 0.10 * actual, (estimate, actual)


def test_calibration_file_is_real_data() -> None:
    # Guard against an edited file: every record carries a full usage triple from the server.
    assert len(DATA["records"]) >= 6
    for record in DATA["records"]:
        usage = record["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        assert record["messages"][0]["role"] == "system"


def test_text_estimate_basics() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("a") == 1
    # digits are one token each; quotes count as their HTML escapes
    assert estimate_text_tokens("12345") == 5
    assert estimate_text_tokens('"x"') > estimate_text_tokens("x")


def test_tool_calls_and_specs_are_counted() -> None:
    plain = {"role": "assistant", "content": ""}
    with_call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    }
    assert estimate_messages_tokens([with_call]) > estimate_messages_tokens([plain])
    spec = [{"type": "function", "function": {"name": "x", "description": "does x", "parameters": {}}}]
    assert estimate_messages_tokens([plain], spec) > estimate_messages_tokens([plain])


def test_cost() -> None:
    usage = Usage(prompt_tokens=2_000_000, completion_tokens=500_000, total_tokens=2_500_000)
    assert cost_usd(usage, None, None) is None
    assert cost_usd(usage, 0.5, 2.0) == pytest.approx(1.0 + 1.0)
    assert cost_usd(usage, 0.5, None) == pytest.approx(1.0)


def _per_digit_reference(text: str) -> int:
    """The estimate with the pre-tokenizer's one piece per digit (what a digit run must still cost)."""
    import math
    import re

    from paragents.agent import tokens

    piece_re = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d| ?[^\s\w]+|\s+(?!\S)|\s+""")
    escaped = tokens._ESCAPABLE.sub(lambda m: tokens._ESCAPES[m.group()], text)
    total = 0
    for piece in piece_re.findall(escaped):
        if piece.isspace():
            total += 1
        elif piece[-1].isdigit():
            total += len(piece)
        elif tokens._WORD.fullmatch(piece):
            total += max(1, math.ceil(len(piece) / tokens.WORD_CHARS_PER_TOKEN))
        elif len(set(piece.strip())) == 1:
            total += max(1, math.ceil(len(piece) / tokens.REPEAT_CHARS_PER_TOKEN))
        else:
            total += len(piece)
    return max(1, total)


@pytest.mark.parametrize(
    "text", ["0123456789abcdef" * 40, "v 12 345, x12y 3.14 -7 ١٢٣ 0x1f 2026-12-01", "a 1\n22  333\t\n"]
)
def test_digit_runs_cost_what_single_digits_did(text: str) -> None:
    assert estimate_text_tokens(text) == _per_digit_reference(text)


def test_a_long_text_is_scanned_once_per_request_history() -> None:
    """Every request re-estimates the whole history: a 10 MB reply must not be rescanned each time
    (it took seconds of the event loop per request, and timed the fault suite out under load)."""
    from paragents.agent import tokens

    big = "0123456789abcdef" * (tokens.LARGE_TEXT // 16 + 1)
    first = estimate_text_tokens(big)
    before = tokens._estimate_large.cache_info()
    assert estimate_text_tokens(big) == first
    after = tokens._estimate_large.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses)
