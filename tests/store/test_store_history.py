"""repair_history (pure): the provider's tool-call ordering rules hold for any stored sequence."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from paragents.models import Message, ToolCall, tool_message, user_message
from paragents.store import INTERRUPTED_RESULT, StoredMessage, repair_history


def _stored(messages: list[tuple[Message, bool]]) -> list[StoredMessage]:
    return [
        StoredMessage(id=i + 1, role=m["role"], message=m, complete=ok, turn_id=None, created_at=0.0)
        for i, (m, ok) in enumerate(messages)
    ]


def _assistant(*ids: str) -> Message:
    msg: dict[str, Any] = {"role": "assistant", "content": ""}
    if ids:
        msg["tool_calls"] = [ToolCall(i, "read_file", "{}").to_openai() for i in ids]
    return msg


def _check_rules(history: list[Message]) -> None:
    """Every tool message answers a call of the nearest assistant before it, once; every call of an
    assistant is answered before the next non-tool message."""
    open_calls: list[str] = []
    answered: set[str] = set()
    for msg in history:
        if msg["role"] == "tool":
            assert msg["tool_call_id"] in open_calls and msg["tool_call_id"] not in answered
            answered.add(msg["tool_call_id"])
            continue
        assert set(open_calls) <= answered, f"unanswered calls {set(open_calls) - answered}"
        open_calls = [c["id"] for c in msg.get("tool_calls", [])] if msg["role"] == "assistant" else []
        answered = set()
    assert set(open_calls) <= answered


def test_synthetic_results_are_anchored_after_the_last_answered_result() -> None:
    stored = _stored(
        [
            (user_message("q"), True),
            (_assistant("a", "b"), True),
            (tool_message("b", "B"), True),
            (user_message("next"), True),
        ]
    )
    repaired = repair_history(stored)
    assert repaired.synthetic == [(3, tool_message("a", INTERRUPTED_RESULT))]
    assert repaired.messages[3] == tool_message("a", INTERRUPTED_RESULT)
    _check_rules(repaired.messages)


def test_nothing_to_repair_gives_the_input_back() -> None:
    messages = [
        user_message("q"),
        _assistant("a"),
        tool_message("a", "A"),
        {"role": "assistant", "content": "ok"},
    ]
    repaired = repair_history(_stored([(m, True) for m in messages]))
    assert repaired.messages == messages and repaired.synthetic == []


_ids = st.sampled_from(["c1", "c2", "c3", "c4"])
_message = st.one_of(
    st.builds(user_message, st.text(max_size=5)),
    st.builds(lambda ids: _assistant(*ids), st.lists(_ids, max_size=3)),
    st.builds(lambda i: tool_message(i, "r"), _ids),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_message, st.booleans()), max_size=12))
def test_any_sequence_is_repaired_into_a_valid_history(messages: list[tuple[Message, bool]]) -> None:
    repaired = repair_history(_stored(messages))
    _check_rules(repaired.messages)
    complete_non_tool = [m for m, ok in messages if ok and m["role"] != "tool"]
    assert [m for m in repaired.messages if m["role"] != "tool"] == complete_non_tool
    invented = [m for _, m in repaired.synthetic]
    assert all(m["content"] == INTERRUPTED_RESULT for m in invented)
    assert sum(1 for m in repaired.messages if m["role"] == "tool") >= len(invented)
