"""StreamAssembler rules not covered by a shared fixture, fed chunk dicts directly."""

from __future__ import annotations

from typing import Any

import pytest

from paragents.llm import LLMError, StreamAssembler
from paragents.llm.stream import (
    StreamReasoningDelta,
    StreamTextDelta,
    ToolCallDelta,
    error_detail,
    parse_model_list,
)
from paragents.models import Usage


def delta(d: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": d, "finish_reason": finish}], **extra}


def call(
    index: int | None, *, id: str | None = None, name: str | None = None, args: str | None = None
) -> dict:
    fn: dict[str, Any] = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    frag: dict[str, Any] = {"function": fn}
    if index is not None:
        frag["index"] = index
    if id is not None:
        frag["id"] = id
    return delta({"tool_calls": [frag]})


def test_reasoning_key_variant_and_deltas_in_order() -> None:
    asm = StreamAssembler()
    out = asm.feed(delta({"reasoning": "think "}))
    out += asm.feed(delta({"reasoning_content": "more", "content": ""}))
    out += asm.feed(delta({"content": "answer"}, "stop"))
    assert out == [StreamReasoningDelta("think "), StreamReasoningDelta("more"), StreamTextDelta("answer")]
    reply = asm.finish(done=False)
    assert (reply.reasoning, reply.content, reply.finish_reason, reply.complete) == (
        "think more",
        "answer",
        "stop",
        True,
    )


def test_both_reasoning_keys_in_one_delta_count_once() -> None:
    asm = StreamAssembler()
    asm.feed(delta({"reasoning": "same", "reasoning_content": "same"}))
    assert asm.finish(done=True).reasoning == "same"


def test_usage_null_never_erases_and_last_finish_reason_wins() -> None:
    asm = StreamAssembler()
    asm.feed(delta({"content": "x"}, "length", usage={"prompt_tokens": 5, "completion_tokens": 1}))
    asm.feed({"choices": [], "usage": None})
    asm.feed(delta({}, None))
    asm.feed(delta({}, "stop"))
    reply = asm.finish(done=True)
    assert reply.usage == Usage(5, 1, 6)  # total computed when absent
    assert reply.finish_reason == "stop"


def test_repeated_name_is_not_doubled_and_progress_is_reported() -> None:
    asm = StreamAssembler()
    first = asm.feed(call(0, id="c1", name="grep", args='{"a"'))
    second = asm.feed(call(0, name="grep", args=": 1}"))
    assert first == [ToolCallDelta(position=0, name="grep", fragment='{"a"', arguments_chars=4)]
    assert second == [ToolCallDelta(position=0, name="grep", fragment=": 1}", arguments_chars=8)]
    [tc] = asm.finish(done=True).tool_calls
    assert (tc.id, tc.name, tc.arguments) == ("c1", "grep", '{"a": 1}')


def test_calls_sorted_by_index_even_when_they_arrive_out_of_order() -> None:
    asm = StreamAssembler()
    asm.feed(call(1, id="second", name="b", args="{}"))
    asm.feed(call(0, id="first", name="a", args="{}"))
    assert [c.id for c in asm.finish(done=True).tool_calls] == ["first", "second"]


def test_fragments_without_index_follow_their_id_or_the_last_call() -> None:
    asm = StreamAssembler()
    asm.feed(call(None, id="x", name="a", args='{"p":'))
    asm.feed(call(None, args="1}"))
    asm.feed(call(None, id="y", name="b", args="{}"))
    calls = asm.finish(done=True).tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("x", '{"p":1}'), ("y", "{}")]


def test_call_without_any_id_gets_a_generated_one() -> None:
    asm = StreamAssembler()
    asm.feed(call(0, id="", name="ls", args="{}"))
    [tc] = asm.finish(done=True).tool_calls
    assert tc.id.startswith("call_") and len(tc.id) > 10


def test_other_choices_are_ignored() -> None:
    asm = StreamAssembler()
    asm.feed(
        {"choices": [{"index": 1, "delta": {"content": "other"}}, {"index": 0, "delta": {"content": "me"}}]}
    )
    assert asm.finish(done=True).content == "me"


def test_stream_ending_without_done_or_finish_reason_raises_with_partial() -> None:
    asm = StreamAssembler()
    asm.feed(delta({"content": "half"}))
    with pytest.raises(LLMError) as info:
        asm.finish(done=False)
    assert info.value.kind == "protocol"
    assert "before the reply finished" in info.value.message
    assert info.value.partial is not None and info.value.partial.content == "half"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"message": "boom"}, "protocol"),
        ({"message": "slow", "code": 429}, "rate_limit"),
        ({"message": "too big", "code": "context_length_exceeded"}, "context_length"),
        ("plain string error", "protocol"),
    ],
)
def test_error_object_in_chunk(error: Any, kind: str) -> None:
    asm = StreamAssembler()
    asm.feed(delta({"content": "so far"}))
    with pytest.raises(LLMError) as info:
        asm.feed({"error": error})
    assert info.value.kind == kind
    text = error if isinstance(error, str) else error["message"]
    assert text in info.value.message
    assert info.value.partial is not None and info.value.partial.content == "so far"


def test_chunk_that_is_not_an_object() -> None:
    with pytest.raises(LLMError) as info:
        StreamAssembler().feed([1, 2])
    assert info.value.kind == "protocol" and "[1, 2]" in info.value.message


def test_error_detail_and_model_list_shapes() -> None:
    assert error_detail('{"error": {"message": "nope"}}') == "nope"
    assert error_detail('{"detail": "fastapi says"}') == "fastapi says"
    assert error_detail("<html>bad gateway</html>") == "<html>bad gateway</html>"
    assert parse_model_list({"data": [{"id": "a"}, {"id": "b"}]}) == ["a", "b"]
    assert parse_model_list({"models": [{"name": "llama"}]}) == ["llama"]
    with pytest.raises(ValueError, match="data"):
        parse_model_list(["a"])
