"""Turn OpenAI ``chat.completion.chunk`` dicts into an :class:`~paragents.models.AssembledReply`.

This is the only module that reads provider JSON (stream chunks, non-streamed completions, error
bodies and the ``/models`` list). Shapes follow the OpenAI chat-completions streaming format
(https://platform.openai.com/docs/api-reference/chat-streaming) plus the variations seen in the
wild and captured as fixtures (``tests/fixtures_shared/sse``):

- tool-call fragments merge by ``index``; an ``id`` of "" means "no id"; a different non-empty id
  on an index already in use starts a new call; the name may arrive after the first arguments;
  arguments that are empty or only whitespace are kept as ``{}`` once the reply is complete;
- ``reasoning_content`` (DeepSeek, vLLM, llama.cpp) and ``reasoning`` (OpenRouter, Ollama) deltas
  both accumulate into the reasoning text; null or "" content adds nothing;
- chunks with empty/absent ``choices`` only contribute ``usage``; a later ``usage: null`` never
  erases it; the last non-null ``finish_reason`` wins;
- an ``error`` object in a chunk ends the stream with an :class:`LLMError`.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar

from paragents.llm.errors import ErrorKind, LLMError, kind_for_status, quote
from paragents.models import AssembledReply, ToolCall, Usage


@dataclass(frozen=True, slots=True)
class StreamTextDelta:
    """A piece of answer text, in arrival order."""

    kind: ClassVar[str] = "text"
    text: str


@dataclass(frozen=True, slots=True)
class StreamReasoningDelta:
    """A piece of thinking text (``reasoning_content`` / ``reasoning``), in arrival order."""

    kind: ClassVar[str] = "reasoning"
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """Progress of one tool call: ``position`` is its place in the final list (0-based, arrival
    order), ``name`` the name known so far ("" if none yet), ``fragment`` the argument text just
    received and ``arguments_chars`` the length of all argument text so far (characters)."""

    kind: ClassVar[str] = "tool_call"
    position: int
    name: str
    fragment: str
    arguments_chars: int


StreamDelta = StreamTextDelta | StreamReasoningDelta | ToolCallDelta
"""What :meth:`StreamAssembler.feed` returns, for forwarding to the UI as it arrives."""


@dataclass(slots=True)
class _CallBuilder:
    index: int
    arrival: int
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    chars: int = 0


def _text(value: Any) -> str:
    """Return ``value`` when it is a non-empty string, else "" (null/absent/other add nothing)."""
    return value if isinstance(value, str) else ""


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None

    def num(key: str) -> int:
        raw = value.get(key)
        return int(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else 0

    prompt, completion = num("prompt_tokens"), num("completion_tokens")
    total = num("total_tokens") or prompt + completion
    details = value.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    cached_n = int(cached) if isinstance(cached, int | float) and not isinstance(cached, bool) else 0
    return Usage(prompt, completion, total, max(0, min(cached_n, prompt)))


class StreamAssembler:
    """Accumulates one streamed chat completion.

    Call :meth:`feed` with each parsed chunk dict (the JSON of one SSE ``data:`` line), then
    :meth:`finish` when the stream ends. :meth:`snapshot` returns what was assembled so far (used as
    ``LLMError.partial``). Not thread-safe; one assembler per request."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_CallBuilder] = []
        self._by_index: dict[int, _CallBuilder] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self.chunks = 0
        """Number of chunks fed so far."""

    # -- feeding ---------------------------------------------------------------------------------
    def feed(self, chunk: Any) -> list[StreamDelta]:
        """Apply one ``chat.completion.chunk`` dict; return the deltas it carried, in order.

        Raises LLMError(kind="protocol", or a kind mapped from the error's code) when the chunk is
        not a JSON object or carries an ``error`` object; ``partial`` holds the reply so far."""
        if not isinstance(chunk, dict):
            raise LLMError(
                "protocol",
                f"the server sent a stream chunk that is not a JSON object: {quote(json.dumps(chunk))}",
                partial=self.snapshot(),
            )
        self.chunks += 1
        if chunk.get("error") is not None:
            raise self._error_from_chunk(chunk["error"])
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
        deltas: list[StreamDelta] = []
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return deltas
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta")
            if delta is None:
                delta = choice.get("message")  # a few servers send message-shaped chunks
            if isinstance(delta, dict):
                self._apply_delta(delta, deltas)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._finish_reason = reason
            choice_usage = _usage(choice.get("usage"))
            if choice_usage is not None:
                self._usage = choice_usage
        return deltas

    def feed_completion(self, body: Any) -> list[StreamDelta]:
        """Apply a whole non-streamed ``chat.completion`` body (a server that ignored
        ``stream: true``); returns the deltas it amounts to. Raises LLMError like :meth:`feed`."""
        if isinstance(body, dict) and isinstance(body.get("choices"), list):
            chunk = dict(body)
            chunk["choices"] = [
                {**c, "delta": _message_as_delta(c.get("message"))}
                for c in body["choices"]
                if isinstance(c, dict)
            ]
            return self.feed(chunk)
        return self.feed(body)

    def _apply_delta(self, delta: dict[str, Any], out: list[StreamDelta]) -> None:
        reasoning = _text(delta.get("reasoning_content")) or _text(delta.get("reasoning"))
        if reasoning:
            self._reasoning.append(reasoning)
            out.append(StreamReasoningDelta(reasoning))
        content = _text(delta.get("content"))
        if content:
            self._content.append(content)
            out.append(StreamTextDelta(content))
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for fragment in tool_calls:
                if isinstance(fragment, dict):
                    out.append(self._apply_tool_fragment(fragment))

    def _apply_tool_fragment(self, fragment: dict[str, Any]) -> ToolCallDelta:
        frag_id = _text(fragment.get("id"))
        raw_fn = fragment.get("function")
        fn: dict[str, Any] = raw_fn if isinstance(raw_fn, dict) else {}
        name = _text(fn.get("name"))
        args = fn.get("arguments")
        if isinstance(args, dict | list):  # a few servers send parsed arguments
            args = json.dumps(args)
        args = _text(args)
        raw_index = fragment.get("index")
        if isinstance(raw_index, int) and not isinstance(raw_index, bool):
            index = raw_index
        else:  # no index: continue the call with this id, else the last call
            known = next((c for c in self._calls if frag_id and c.id == frag_id), None)
            last = self._calls[-1] if self._calls else None
            base = known or (None if frag_id else last)
            index = base.index if base else (max(self._by_index, default=-1) + 1)
        call = self._by_index.get(index)
        if call is None or (frag_id and call.id and frag_id != call.id):
            call = _CallBuilder(index=index, arrival=len(self._calls))
            self._calls.append(call)
            self._by_index[index] = call
        if frag_id and not call.id:
            call.id = frag_id
        if name and name != call.name:
            call.name = name if not call.name else call.name + name
        if args:
            call.parts.append(args)
            call.chars += len(args)
        position = self._ordered().index(call)
        return ToolCallDelta(position=position, name=call.name, fragment=args, arguments_chars=call.chars)

    def _error_from_chunk(self, error: Any) -> LLMError:
        text = _error_text(error) or json.dumps(error)
        code = error.get("code") if isinstance(error, dict) else None
        kind: ErrorKind = "protocol"
        if isinstance(code, int) and not isinstance(code, bool):
            kind = kind_for_status(code, text) if code >= 400 else "protocol"
        elif isinstance(code, str):
            low = code.lower()
            if "context" in low or "too_long" in low:
                kind = "context_length"
            elif "rate" in low:
                kind = "rate_limit"
        return LLMError(
            kind,
            f"the server reported an error in the middle of the stream: {quote(text)}",
            partial=self.snapshot(),
        )

    # -- results ---------------------------------------------------------------------------------
    def _ordered(self) -> list[_CallBuilder]:
        return sorted(self._calls, key=lambda c: (c.index, c.arrival))

    @property
    def empty(self) -> bool:
        """True while no text, reasoning or tool call has arrived."""
        return not (self._content or self._reasoning or self._calls)

    @property
    def finish_reason(self) -> str | None:
        """The last non-null ``finish_reason`` received so far."""
        return self._finish_reason

    def snapshot(self, complete: bool = False) -> AssembledReply:
        """Return what has been assembled so far. Calls without an id get a generated
        ``call_<24 hex>`` id; argument text is kept raw (never repaired), except that in a complete
        reply arguments that are empty or only whitespace become ``{}`` (a call without parameters;
        several servers reject ``""`` in the history). A complete reply drops empty fragments that
        never got an id, a name or any argument text. A call whose name never arrived keeps
        ``name == ""``: the agent refuses such a reply (see docs/architecture.md, failure rules)."""
        calls = []
        for builder in self._ordered():
            arguments = "".join(builder.parts)
            if complete and not arguments.strip():
                if not (builder.id or builder.name.strip() or arguments):
                    continue
                arguments = "{}"
            if not builder.id:
                builder.id = f"call_{uuid.uuid4().hex[:24]}"
            calls.append(ToolCall(id=builder.id, name=builder.name, arguments=arguments))
        return AssembledReply(
            content="".join(self._content) or None,
            reasoning="".join(self._reasoning) or None,
            tool_calls=calls,
            finish_reason=self._finish_reason,
            usage=self._usage,
            complete=complete,
        )

    def finish(self, done: bool) -> AssembledReply:
        """End the stream. ``done`` is True when ``[DONE]`` arrived.

        Returns the reply with ``complete=True`` when ``done`` or a finish_reason was received;
        otherwise raises LLMError(kind="protocol", "stream ended before the reply finished",
        partial=the reply so far)."""
        if done or self._finish_reason is not None:
            return self.snapshot(complete=True)
        raise LLMError(
            "protocol",
            "the stream ended before the reply finished (no finish_reason and no [DONE]); "
            "the partial reply was kept — try again",
            partial=self.snapshot(),
        )


def _message_as_delta(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict):
        return {}
    delta = dict(message)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(calls) if isinstance(c, dict)]
    return delta


def _error_text(error: Any) -> str:
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        for key in ("message", "detail", "error", "msg"):
            value = error.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, dict):
                inner = _error_text(value)
                if inner:
                    return inner
    return ""


def error_detail(body: str) -> str:
    """Return the server's own error text from an error response body.

    Understands ``{"error": {"message": ...}}`` (OpenAI), ``{"error": "..."}``, ``{"message": ...}``
    and ``{"detail": ...}`` (FastAPI); any other body is returned as is (stripped)."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()
    if isinstance(data, dict):
        text = _error_text(data.get("error")) or _error_text(data)
        if text:
            return text
    return body.strip()


def parse_model_list(body: Any) -> list[str]:
    """Return the model ids of a ``GET /models`` body: OpenAI ``{"data": [{"id": ...}]}``, or
    llama.cpp/Ollama-style ``{"models": [{"id"|"name"|"model": ...}]}``. Raises ValueError naming
    what was expected when neither shape is found."""
    if isinstance(body, dict):
        for key in ("data", "models"):
            items = body.get(key)
            if isinstance(items, list):
                ids = []
                for item in items:
                    if isinstance(item, dict):
                        name = item.get("id") or item.get("name") or item.get("model")
                        if isinstance(name, str) and name:
                            ids.append(name)
                    elif isinstance(item, str):
                        ids.append(item)
                return ids
    raise ValueError('expected {"data": [{"id": ...}, ...]} (OpenAI /models shape)')


CONTEXT_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window", "n_ctx")
"""Fields of a ``/models`` entry that give the context window the server runs the model with: vLLM's
``max_model_len``, OpenRouter's ``context_length``, LM Studio's ``max_context_length``, others'
``context_window`` / ``n_ctx`` (also inside a ``meta`` object). llama.cpp's ``meta.n_ctx_train`` is
the size the model was trained with, not the one it runs with: not used (``/props`` says that)."""


def _context_of(item: dict[str, Any]) -> int | None:
    for where in (item, item.get("meta"), item.get("top_provider")):
        if isinstance(where, dict):
            for key in CONTEXT_FIELDS:
                value = where.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None


def parse_context_windows(body: Any) -> dict[str, int]:
    """Return the context window of each model of a ``GET /models`` body that says it (see
    :data:`CONTEXT_FIELDS`); models that do not say are left out. Never raises."""
    windows: dict[str, int] = {}
    if not isinstance(body, dict):
        return windows
    for key in ("data", "models"):
        items = body.get(key)
        if isinstance(items, list):
            for item in items:
                if isinstance(item, dict):
                    name = item.get("id") or item.get("name") or item.get("model")
                    window = _context_of(item)
                    if isinstance(name, str) and name and window is not None:
                        windows[name] = window
    return windows


def parse_props_context(body: Any) -> int | None:
    """Return the context window llama.cpp's server runs with, from its ``GET /props`` body
    (``default_generation_settings.n_ctx``, or a top-level ``n_ctx``); None when it does not say."""
    if not isinstance(body, dict):
        return None
    for where in (body.get("default_generation_settings"), body):
        if isinstance(where, dict):
            value = where.get("n_ctx")
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None
