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
