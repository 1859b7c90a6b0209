"""Compaction: replace the older part of a conversation by a summary, in requests only.

The store and the transcript keep every message; a compaction is a record "messages up to X are
represented by this summary" (``paragents.store.compactions``). This module holds the cut, the
request building and the summary request (the agent records the result and puts it in force):

- where a cut may go (:func:`valid_cuts`, :func:`choose_cut`): only right before a message that is
  not a ``tool`` result, so an assistant message with ``tool_calls`` always keeps all its results
  (a parallel batch included) — the rule of OpenAI chat completions that every provider enforces;
- how the request is built (:func:`build_request`): system prompt, summary, the kept messages
  verbatim, tool outputs over a size limit trimmed with a note saying how to see the rest;
- the summarisation request (:func:`summarization_messages`) and its checks (:func:`check_summary`);
- mapping a cut to a stored message id and back (:func:`upto_message_id`, :func:`covered_count`);
- :func:`summarize`: choose the cut and ask the model for the summary; returns a :class:`Summary`
  (values only: nothing is stored and no agent is changed).

Where the summary goes: when the first kept message is a ``user`` message, the summary is appended
to the system message (so roles still alternate user/assistant, which strict chat templates such as
Gemma's or Mistral's require); when it is an ``assistant`` message, the summary is a ``user`` message
right before it. The first user message of the conversation (the task) is always quoted verbatim
(capped at :data:`TASK_CHARS`) next to the model's summary, so the task survives any summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from paragents.agent.tokens import (
    counted_usage,
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_text_tokens,
)
from paragents.llm import LLMError
from paragents.models import Message, Usage
from paragents.store.records import StoredMessage

if TYPE_CHECKING:
    from paragents.store.compactions import CompactionsRepo
    from paragents.store.messages import MessagesRepo

TASK_CHARS = 2000
"""The first user message is quoted in the summary up to this many characters."""
SUMMARY_SHARE = 0.15
"""A summary longer than this share of the context window (tokens) is refused."""
KEEP_SHARE = 0.5
"""Share of the compaction threshold's token budget kept verbatim (the most recent messages)."""
TOOL_OUTPUT_SHARE = 0.25
"""A tool output in a request is trimmed beyond this share of the window (at ~3 chars per token)."""
MIN_TOOL_OUTPUT_CHARS = 400
"""Tool outputs are never trimmed below this many characters."""
KEEP_TURNS = 2
"""At most this many recent user turns are kept verbatim (fewer when they do not fit)."""

SUMMARY_HEADER = (
    "Summary of the earlier part of this conversation (compacted; the most recent messages follow verbatim):"
)

SUMMARY_PROMPT = (
    "You summarise a coding agent's conversation so that the agent can continue the work from your "
    "summary and the most recent messages alone. Write a concise Markdown summary with these sections: "
    "Task (the user's goal, in the user's words where possible), Decisions (what was decided and why), "
    "Files touched (paths and what changed), Done so far, Open questions and next steps. Keep exact "
    "names, paths, commands and error messages. Do not invent anything. Do not call tools; reply with "
    "the summary only."
)


class CompactionError(Exception):
    """A compaction could not be done; ``str()`` says why in one readable sentence. ``billed``: the
    usage of a summary request the server answered (and so billed) before the compaction was given
    up, with whether it is estimated; None when no request was answered."""

    billed: tuple[Usage, bool] | None = None


class NothingToCompact(CompactionError):
    """Compacting now would not make the request smaller (nothing old enough, or too little of it);
    automatic compaction skips quietly, ``/compact`` says so."""


@dataclass(frozen=True, slots=True)
class CompactionState:
    """The compaction in force for an agent's history: ``covered`` history messages (from the
    start) are replaced in requests by ``summary`` (the model's text); ``task`` is the first user
    message, quoted verbatim; ``record_id`` the store's compaction id (None when not stored)."""

    summary: str
    covered: int
    task: str | None = None
    record_id: int | None = None

    def message_text(self) -> str:
        """Return the text that stands for the covered messages in a request."""
        parts = [SUMMARY_HEADER]
        if self.task:
            task = self.task if len(self.task) <= TASK_CHARS else self.task[:TASK_CHARS] + " [...]"
            parts.append(f"The user's first request, verbatim:\n{task}")
        parts.append(self.summary.strip())
        return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What a compaction request came to: ``ok``; ``message`` (readable: what was done, or why
    nothing was); ``replaced`` how many history messages the summary now stands for;
    ``tokens_before`` / ``tokens_after`` the estimated request size (tokens)."""

    ok: bool
    message: str
    replaced: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


def first_task(history: Sequence[Message]) -> str | None:
    """Return the content of the first ``user`` message of ``history`` (the task), or None."""
    for message in history:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return None


def tool_output_limit(context_window: int) -> int:
    """Return the longest tool output (characters) sent whole in a request for this window (tokens)."""
    return max(MIN_TOOL_OUTPUT_CHARS, int(context_window * TOOL_OUTPUT_SHARE * 3))


def trim_tool_output(content: str, limit: int) -> str:
    """Return ``content`` cut to about ``limit`` characters (head and tail kept) with a note saying
    the whole output is in the session's history and how to see the rest; unchanged when short."""
    if len(content) <= limit:
        return content
    head = content[: limit * 2 // 3]
    tail = content[-(limit // 3) :] if limit >= 3 else ""
    cut = len(content) - len(head) - len(tail)
    note = (
        f"\n[... {cut} of {len(content)} characters trimmed from this request; the whole output is kept in "
        "the session's history. To see the rest, call the tool again with a narrower range (read_file with "
        "offset/limit, grep for what you need, or pipe the command through head, tail or sed -n).]\n"
    )
    return head + note + tail


def valid_cuts(history: Sequence[Message]) -> list[int]:
    """Return the indexes ``c`` (1 <= c < len) where the history may be cut: ``history[c]`` is not a
    ``tool`` message, so no assistant message is separated from any of its tool results."""
    return [c for c in range(1, len(history)) if history[c].get("role") != "tool"]


def _trimmed(message: Message, limit: int) -> Message:
    if message.get("role") == "tool" and isinstance(message.get("content"), str):
        content = trim_tool_output(message["content"], limit)
        if content is not message["content"]:
            return {**message, "content": content}
    return message


def choose_cut(
    history: Sequence[Message], start: int, keep_tokens: int, limit_chars: int, keep_turns: int = KEEP_TURNS
) -> int | None:
    """Return where to cut so that the messages from the cut on fit ``keep_tokens`` (estimated, with
    tool outputs trimmed to ``limit_chars``) and hold at most ``keep_turns`` user turns: the smallest
    such valid cut after ``start``; else the start of the latest user turn (that turn alone is kept);
    else, inside one long turn, the last valid cut. None when no valid cut lies after ``start``."""
    cuts = [c for c in valid_cuts(history) if c > start]
    if not cuts:
        return None
    users = [i for i, m in enumerate(history) if m.get("role") == "user"]
    floor = users[-keep_turns] if keep_turns > 0 and len(users) >= keep_turns else 0
    suffix = 0
    sizes: dict[int, int] = {}
    index = len(history)
    for c in sorted(cuts, reverse=True):
        while index > c:
            index -= 1
            suffix += estimate_message_tokens(_trimmed(history[index], limit_chars))
        sizes[c] = suffix
    fitting = [c for c in cuts if sizes[c] <= keep_tokens and c >= floor]
    if fitting:
        return min(fitting)
    turn_starts = [c for c in cuts if history[c].get("role") == "user"]
    return max(turn_starts) if turn_starts else max(cuts)


def build_request(
    system_prompt: str, history: Sequence[Message], state: CompactionState | None, limit_chars: int
) -> list[Message]:
    """Return the messages of a request: system prompt, the summary (see module docstring) when
    ``state`` covers part of ``history``, then the kept messages with long tool outputs trimmed."""
    covered = state.covered if state is not None else 0
    kept = [_trimmed(m, limit_chars) for m in history[covered:]]
    system: Message = {"role": "system", "content": system_prompt}
    if state is None or covered == 0:
        return [system, *kept]
    text = state.message_text()
    if kept and kept[0].get("role") == "user":
        return [{"role": "system", "content": f"{system_prompt}\n\n{text}"}, *kept]
    return [system, {"role": "user", "content": text}, *kept]


def _render(message: Message, cap: int) -> str:
    role = str(message.get("role", "?"))
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content) if content is not None else ""
    if len(text) > cap:
        text = text[:cap] + f" [... {len(text) - cap} characters left out]"
    if role == "tool":
        return f"[tool result {message.get('tool_call_id', '')}]\n{text}"
    calls = [
        f"{(c.get('function') or {}).get('name', '?')}({(c.get('function') or {}).get('arguments', '')})"
        for c in message.get("tool_calls") or []
    ]
    line = f"[{role}]\n{text}" if text else f"[{role}]"
    if calls:
        line += "\n(tool calls: " + "; ".join(calls) + ")"
    return line


def summarization_messages(
    part: Sequence[Message], previous: str | None, focus: str | None, budget_tokens: int
) -> list[Message]:
    """Return the messages of the summarisation request for ``part`` (the messages to summarise),
    the ``previous`` summary (None for the first compaction) and the user's ``focus`` text.

    The part is rendered as plain text (so the request holds no tool pairs to keep valid); long
    contents are cut, then the oldest messages left out, until the request fits ``budget_tokens``.
    Raises CompactionError when not even the previous summary and the last message fit."""
    system = SUMMARY_PROMPT
    if focus:
        system += f"\n\nThe user asked the summary to focus on: {focus}"
    head = f"Earlier summary (keep what still matters):\n{previous}\n\n" if previous else ""
    fixed = (
        estimate_messages_tokens([{"role": "system", "content": system}]) + estimate_text_tokens(head) + 40
    )
    cap = 4000
    items = list(part)
    while True:
        blocks = [_render(m, cap) for m in items]
        dropped = len(part) - len(items)
        body = (f"[{dropped} earlier messages left out]\n\n" if dropped else "") + "\n\n".join(blocks)
        if fixed + estimate_text_tokens(body) <= budget_tokens:
            break
        if cap > 200:
            cap //= 2
        elif len(items) > 1:
            items = items[1:]
        else:
            raise CompactionError(
                f"the conversation to summarise does not fit the context window ({budget_tokens} tokens "
                "left for it)"
            )
    user = f"{head}Conversation to summarise:\n\n{body}\n\nWrite the summary now."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def check_summary(text: str | None, max_tokens: int) -> str:
    """Return the summary text stripped. Raises CompactionError when it is empty or longer than
    ``max_tokens`` (estimated)."""
    summary = (text or "").strip()
    if not summary:
        raise CompactionError("the model returned an empty summary")
    size = estimate_text_tokens(summary)
    if size > max_tokens:
        raise CompactionError(f"the summary was too long ({size} tokens; the limit is {max_tokens})")
    return summary


def _nontool_stored(stored: Sequence[StoredMessage]) -> list[StoredMessage]:
    return [s for s in stored if s.complete and s.role != "tool"]


def upto_message_id(stored: Sequence[StoredMessage], history: Sequence[Message], cut: int) -> int:
    """Return the id of the last stored message before the first kept message ``history[cut]``.

    ``stored`` is the conversation as the store holds it (``load_messages``), ``history`` its
    repaired form (``load_history``): the complete non-tool messages are the same, in the same
    order, in both. Raises CompactionError when they do not line up."""
    k = sum(1 for m in history[:cut] if m.get("role") != "tool")
    nontool = _nontool_stored(stored)
    if k >= len(nontool) or cut >= len(history) or history[cut].get("role") == "tool":
        raise CompactionError("the stored conversation does not match the history; nothing was compacted")
    first_kept = nontool[k]
    position = next(i for i, s in enumerate(stored) if s.id == first_kept.id)
    if position == 0:
        raise CompactionError("nothing before the cut to compact")
    return stored[position - 1].id


def covered_count(stored: Sequence[StoredMessage], history: Sequence[Message], upto: int) -> int:
    """Return how many ``history`` messages a compaction up to stored message ``upto`` covers
    (0 when ``upto`` is not in ``stored``, e.g. lost in a salvaged database)."""
    position = next((i for i, s in enumerate(stored) if s.id == upto), None)
    if position is None:
        return 0
    k = len(_nontool_stored(stored[: position + 1]))
    seen = 0
    for index, message in enumerate(history):
        if message.get("role") != "tool":
            if seen == k:
                return index
            seen += 1
    return len(history)


@dataclass(frozen=True, slots=True)
class Summary:
    """What :func:`summarize` got: the summary ``text``; ``start``/``cut`` the history indexes of the
    first message it folds and of the first message kept; the summary request's ``usage`` and whether
    it is ``estimated`` (the server reported none)."""

    text: str
    start: int
    cut: int
    usage: Usage
    estimated: bool


async def summarize(
    client: Any,
    *,
    model: str,
    label: str,
    history: Sequence[Message],
    state: CompactionState | None,
    system_prompt: str,
    specs: list[dict[str, Any]],
    window: int,
    threshold: float,
    focus: str | None = None,
    auto: bool = False,
) -> Summary:
    """Choose where to cut ``history`` (the compaction ``state`` in force already folds its start)
    and summarise the older part with ``model`` through ``client`` (a ChatClient); return the result.

    The summary request is sent without tools and labelled ``label`` (``<session name>/compact``,
    header ``X-Paragents-Session``), so logs, proxies and the replay server can tell it from turn
    requests. ``auto`` (automatic compaction) also refuses, with NothingToCompact, when the messages to
    fold are smaller than half the summary budget: such a compaction would cost a request and save
    little. Raises CompactionError when there is nothing to compact, the request fails, or the summary
    is empty or too long."""
    start = state.covered if state is not None else 0
    limit = tool_output_limit(window)
    max_summary = max(64, int(window * SUMMARY_SHARE))
    fixed = estimate_messages_tokens([{"role": "system", "content": system_prompt}], specs)
    keep = max(0, int(window * threshold * KEEP_SHARE) - fixed - max_summary)
    cut = choose_cut(history, start, keep, limit)
    if cut is None:
        raise NothingToCompact("nothing to compact yet: the request holds only the latest turn")
    folded = estimate_messages_tokens(history[start:cut]) - estimate_text_tokens(
        state.summary if state else ""
    )
    if auto and folded <= max_summary // 2:
        raise NothingToCompact(
            f"nothing worth compacting yet: the older messages hold about {max(folded, 0)} tokens "
            f"and a summary may take up to {max_summary}"
        )
    messages = summarization_messages(
        history[start:cut], state.summary if state is not None else None, focus, window - max_summary - 32
    )
    try:
        reply = await client.stream_chat(model=model, messages=messages, tools=None, session_label=label)
    except LLMError as exc:
        failed = CompactionError(f"the summary request failed: {exc.message}")
        got = exc.partial
        if got is not None and got.usage is not None:  # the server reported what it billed
            failed.billed = (got.usage, False)
        raise failed from None
    usage, estimated = counted_usage(
        reply.usage,
        lambda: estimate_messages_tokens(messages),
        lambda: estimate_text_tokens(reply.content or ""),
    )
    try:
        text = check_summary(reply.content, max_summary)
    except CompactionError as exc:  # answered, so billed, even though the summary is not kept
        exc.billed = (usage, estimated)
        raise
    return Summary(text, start, cut, usage, estimated)


class CompactionStore(Protocol):
    """The store's tables :func:`load_compaction` reads (``paragents.store.Store`` is one)."""

    @property
    def compactions(self) -> CompactionsRepo: ...
    @property
    def messages(self) -> MessagesRepo: ...


async def load_compaction(
    store: CompactionStore, session_id: str, history: Sequence[Message]
) -> CompactionState | None:
    """Return the compaction in force for the session's current conversation, mapped onto
    ``history`` (its repaired history from ``store.messages.load_history``), or None when there is none or
    its message is no longer stored."""
    record = await store.compactions.latest(session_id)
    if record is None:
        return None
    covered = covered_count(await store.messages.load(session_id), history, record.upto_message_id)
    if covered == 0:
        return None
    return CompactionState(record.summary, covered, first_task(history), record.id)
