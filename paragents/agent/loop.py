"""The agent: one per session, kept across turns, holding the conversation.

One turn (``Agent.run_turn``): store the user message, then loop: stream the reply (forwarding
text/reasoning deltas as events), store it, run each tool call through the permission policy
(asking the user through a ``PermissionRequested`` event whose Future the client resolves), send the
results back, until the model stops calling tools or ``max_tool_rounds`` requests were made.

The agent holds its parts: the record of its turns (:class:`~paragents.agent.turn.TurnRecord`: the
conversation copy, appending, accounting, finishing) and its tool calls
(:class:`~paragents.agent.calls.ToolCalls`: lookup, approval, sandbox, preview, MCP); this module is
the loop between them, the request and its stream, and compaction.

Tool errors, denials and bad arguments go back to the model as ``tool`` messages; the loop never
crashes on them. A stream that fails keeps its partial text (stored, marked incomplete, never sent
back as finished); half-built tool calls never run. Cancellation stores what was complete, answers
every started tool call with a "cancelled" result so the history stays valid, then re-raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from paragents import events as ev
from paragents.agent.budget import Breach, BudgetMeter
from paragents.agent.calls import Preflight, capped
from paragents.agent.compacting import CompactionQueue, Compactor
from paragents.agent.compaction import CompactionOutcome, build_request, tool_output_limit
from paragents.agent.loop_guard import LoopGuard
from paragents.agent.parts import AgentParts, AgentStore
from paragents.agent.question import question_of
from paragents.agent.session import SessionReader
from paragents.agent.tokens import counted_usage, estimate_messages_tokens
from paragents.agent.turn import BUDGET_KIND, CANCELLED_RESULT, LOOP_KIND
from paragents.llm import LLMError
from paragents.models import (
    AssembledReply,
    Message,
    SessionState,
    ToolCall,
    TurnResult,
    TurnStatus,
    Usage,
    tool_message,
    user_message,
)
from paragents.store.records import StoreError

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.llm import ChatClient
    from paragents.mcp import SessionMcp
    from paragents.permissions import Policy
    from paragents.store.records import ApprovalRecord
    from paragents.tools.execution import Execution
    from paragents.tools.registry import ToolRegistry

OVERSIZE_FACTOR = 1.5
"""A request whose local token estimate exceeds this many context windows is refused before sending,
when the model's window is configured (``models.NAME.context_window``); the estimate can run high on
some tokenizers, so only clear overflows are stopped locally, and unknown windows are left to the server."""
WRITE_TOOLS = frozenset({"write_file", "edit_file"})
"""Tools whose successful call changed a file (the loop guard's "no change" test)."""
UNFINISHED_NOTE = (
    "the server ended this reply without saying it was finished (no finish_reason): it may be cut "
    "short. A server that runs one request at a time cuts the running reply when another request "
    "arrives (llama.cpp's Python server: start it with --interrupt_requests False to queue them)"
)
"""The notice for a reply that ended with ``[DONE]`` but no finish_reason (kept as it is: some servers
never send one; the llama-cpp-python server sends this when it interrupts a reply)."""


def _partial_message(text: str, reasoning: str) -> Message | None:
    """Return the assistant message holding a reply's ``text``/``reasoning`` so far, or None when empty."""
    if not (text or reasoning):
        return None
    msg: Message = {"role": "assistant", "content": text}
    if reasoning:
        msg["reasoning_content"] = reasoning
    return msg


class Agent:
    """Runs turns for one session, holding the record of its turns (``record``: the conversation
    copy) and its tool calls (``calls``).

    Takes the session (read only: its state changes only through the events the agent emits), the
    chat client, the tool registry, the policy, the store (the tables it uses:
    :class:`~paragents.agent.parts.AgentStore`), the runtime config, an event sink and a callable that
    builds the system prompt; the rest are :meth:`AgentParts.build`'s."""

    RESUMES_ASKS: ClassVar[bool] = True
    """Whether an ask a crash left pending can be asked again in a new turn (``run_turn(resume=...)``)."""

    def __init__(
        self,
        *,
        session: SessionReader,
        client: ChatClient,
        tools: ToolRegistry,
        policy: Policy,
        store: AgentStore,
        config: RuntimeConfig,
        emit: ev.EventSink,
        system_prompt: Callable[[], str],
        history: list[Message] | None = None,
        preflight: Preflight | None = None,
        on_read: Callable[[Path, str], None] | None = None,
        on_write: Callable[[Path, str], None] | None = None,
        budget: BudgetMeter | None = None,
        mcp: SessionMcp | None = None,
        execution: Callable[[], Execution | None] | None = None,
    ) -> None:
        self.session = session
        self.client = client
        self.store = store
        self.config = config
        self.emit = emit
        self.system_prompt = system_prompt
        self.budget = budget
        """Checks the budgets before each request (None: no budgets, e.g. in unit tests)."""
        self.parts = AgentParts.build(
            session=session,
            tools=tools,
            policy=policy,
            store=store,
            config=config,
            emit=emit,
            history=history,
            budget=budget,
            preflight=preflight,
            on_read=on_read,
            on_write=on_write,
            mcp=mcp,
            execution=execution,
        )
        """The record of its turns and its tool calls (:mod:`paragents.agent.parts`)."""
        self.record, self.calls = self.parts.record, self.parts.calls
        guard = config.loop_guard
        self.loop_guard = LoopGuard(guard.identical_calls, guard.idle_requests)
        self.compactor = Compactor(self)
        self.compactions = CompactionQueue(self.compact)
        """Compactions asked for while a turn runs (``/compact``), run at its next safe point."""

    def reconfigure(self, client: ChatClient, config: RuntimeConfig) -> None:
        """Use ``client`` and ``config`` from the next request on (the runtime config was reloaded)."""
        self.client = client
        self.config = config
        self.parts.reconfigure(config)

    def request_messages(self) -> list[Message]:
        """Return the full message list of the next request: system prompt, then the compaction
        summary (when one is in force) in place of the messages it covers, then the rest of the
        history; tool outputs longer than the window allows are trimmed (see paragents.agent.compaction)."""
        limit = tool_output_limit(self.session.context_window)
        return build_request(self.system_prompt(), self.record.history, self.record.compaction, limit)

    async def compact(self, focus: str | None = None, *, auto: bool = False) -> CompactionOutcome:
        """Compact the history now (paragents.agent.compacting); call it only when no tool call runs.
        Never raises for a failed compaction (a Notice says why; ``ok=False``)."""
        return await self.compactor.compact(focus, auto=auto)

    async def _before_request(self) -> Breach | None:
        """Between requests of a turn (every tool call answered): run asked-for compactions, then
        compact automatically when the request would reach ``compact_threshold`` of the window. A
        summary request is a model request like any other: the budgets are checked before it (a
        pause as before a turn's request; returns the breach when the user chose to stop)."""
        await self.calls.prepare_mcp(self.record.turn_id)
        if self.compactions.waiters:
            stopped = await self._hold_at_caps()
            if stopped is not None:
                return stopped
            await self.compactions.run_pending()
        if self._compaction_due():
            stopped = await self._hold_at_caps()
            if stopped is not None:
                return stopped
            await self.compact(None, auto=True)
        return None

    def _compaction_due(self) -> bool:
        """True when the next request would reach ``compact_threshold`` of the window."""
        window = self.session.context_window
        size = estimate_messages_tokens(self.request_messages(), self.calls.specs())
        return window > 0 and size >= self.config.compact_threshold * window

    # -- a turn ---------------------------------------------------------------------------------------
    async def before_turn(self, prompt: str) -> None:
        """Called before a queued ``prompt`` starts; may raise ``paragents.scheduler.PromptHeld`` to put
        it back in its queue (an external agent waiting for a new agent session). Nothing here."""

    async def run_turn(self, prompt: str, resume: ApprovalRecord | None = None) -> TurnResult:
        """Run one turn for the user text ``prompt``; return how it ended.

        ``resume``: an approval a crashed process left pending (``paragents.sessions.resume``). The turn
        then continues that interrupted turn instead of sending a prompt: the call (whose stored result
        says "interrupted") is re-issued as a new assistant tool call, asked again under the same
        approval id (or run on the answer given meanwhile), and the loop goes on from its result.

        Never raises for endpoint or tool failures (they end the turn as failed, with the error);
        re-raises asyncio.CancelledError after recording the turn as cancelled."""
        record, calls = self.record, self.calls
        too_big = self._prompt_too_big(user_message(prompt)) if resume is None else None
        if too_big is not None:
            return await self._refuse_prompt(prompt, too_big)
        failed = await record.start(prompt)
        if failed is not None:
            return failed
        pending_calls: list[ToolCall] = []
        partial = _Partial()
        try:
            if resume is not None:
                pending_calls = [await self._reissue(resume)]
                content, outcome = await calls.run(pending_calls[0], None, record.turn_id, resume)
                await record.append(tool_message(pending_calls[0].id, content), outcome)
                pending_calls = []
            else:
                await record.append_user(user_message(await calls.attach_resources(prompt)))
            self.loop_guard.reset(new_turn=True)
            if self.budget is not None:
                self.budget.start_clock()
            for _round in range(self.config.max_tool_rounds):
                partial = _Partial()
                stopped = await self._before_request()
                await self._hold_while_unreachable()
                stopped = stopped or await self._hold_at_caps()
                if stopped is not None:
                    return await self._stopped_at(stopped)
                reply = await self._stream(partial)
                if reply is None:
                    return await record.finish(TurnStatus.FAILED, partial.error, partial.kind)
                nameless = [c for c in reply.tool_calls if not c.name.strip()]
                if nameless:
                    error = await self._refuse_nameless(reply, nameless)
                    return await record.finish(TurnStatus.FAILED, error, "protocol")
                await record.append(reply.to_message())
                await self._account(reply)
                partial = _Partial()  # accounted: a cancel from here on has no stream to keep
                if not reply.tool_calls and not reply.content:
                    self.emit(ev.Notice(self.session.id, self._empty_reply_note(), "warning"))
                elif reply.finish_reason is None:
                    self.emit(ev.Notice(self.session.id, UNFINISHED_NOTE, "warning"))
                if not reply.tool_calls:
                    return await record.finish(TurnStatus.COMPLETED, question=question_of(reply))
                pending_calls = list(reply.tool_calls)
                ran: list[tuple[ToolCall, str]] = []
                wrote = False
                idle_guard = bool(self.loop_guard.idle_requests)
                while pending_calls:
                    call = pending_calls[0]
                    tree = await calls.tree_state(call, idle_guard)
                    content, outcome = await calls.run(call, reply.finish_reason, record.turn_id)
                    ran.append((call, content))
                    wrote = wrote or (call.name in WRITE_TOOLS and outcome == "ok")
                    if tree is not None and not wrote:  # a command that changed files is not idle
                        wrote = tree[0] is None or tree[0] != await calls.tree_state(
                            call, idle_guard, after=True
                        )
                    await record.append_result(tool_message(call.id, content), outcome)
                    pending_calls.pop(0)
                self.loop_guard.record(ran, wrote)
            self.emit(
                ev.Notice(
                    self.session.id,
                    f"stopped after {self.config.max_tool_rounds} model requests (max_tool_rounds); "
                    "send another prompt to continue",
                    "warning",
                )
            )
            return await record.finish(TurnStatus.COMPLETED)
        except StoreError as exc:
            return await record.store_failed(exc)
        except asyncio.CancelledError:
            await asyncio.shield(self._on_cancel(partial, pending_calls))
            raise

    async def _refuse_prompt(self, prompt: str, why: str) -> TurnResult:
        """End a turn whose prompt cannot fit the window before anything is sent: the prompt goes back
        into the prompt box (``DraftRestored``), is kept in the store marked unsent (shown so when the
        session is reopened, never sent to the model) and the turn fails with ``why``."""
        record = self.record
        failed = await record.start(prompt, announce=False)
        if failed is not None:
            return failed
        self.emit(ev.DraftRestored(self.session.id, prompt))
        try:
            await record.keep_unsent(user_message(prompt))
        except StoreError as exc:
            return await record.store_failed(exc)
        return await record.finish(TurnStatus.FAILED, why, "context_length")

    def _prompt_too_big(self, message: Message) -> str | None:
        """What to say when the user message ``message`` cannot fit the context window even alone
        (without the system prompt, the tools or any history), else None. Such a prompt is
        refused before any request: sent, it would fail or be cut, and kept in the history every later
        request would first try (and fail) to compact it."""
        window = self.session.context_window
        if window <= 0:
            return None
        size = estimate_messages_tokens([message])
        if size <= window:
            return None
        model = self.session.model
        return (
            f"this prompt is about {size:,} tokens (estimated), more "
            f"than {model}'s context window of {window:,} tokens, so nothing was sent. It is back in the "
            "prompt box (and kept in the session, marked not sent), not in the conversation the model "
            "sees. Shorten it, or save the text to a file in the project and ask the model to read what it "
            "needs, or switch to a model with a bigger window (/model NAME); if "
            f"{model}'s window is larger, set models.{model}.context_window in runtime_config.json"
        )

    async def _reissue(self, resume: ApprovalRecord) -> ToolCall:
        """Store an assistant message re-issuing the call of a resumed approval (a new call id: the old
        one has its "interrupted" result) and return that call."""
        old = resume.call
        call = ToolCall(
            f"{old.get('id') or 'call'}-resumed",
            str(old.get("name") or resume.tool),
            str(old.get("arguments") or "{}"),
        )
        await self.record.append({"role": "assistant", "content": "", "tool_calls": [call.to_openai()]})
        return call

    async def _on_cancel(self, partial: _Partial, pending: list[ToolCall]) -> None:
        record = self.record
        sid = self.session.id
        try:
            msg = _partial_message(partial.text, partial.reasoning)
            if msg is not None:
                await record.append_partial(msg)
                self.emit(
                    ev.Notice(sid, "cancelled: the partial reply was kept (marked incomplete)", "warning")
                )
            if partial.sent:  # the request was sent: count its tokens (estimated; no usage came back)
                reply: Message = {"role": "assistant", "content": partial.text}
                prompt_est = estimate_messages_tokens(self.request_messages(), self.calls.specs())
                completion_est = estimate_messages_tokens([reply]) if partial.text or partial.reasoning else 0
                usage = Usage(prompt_est, completion_est, prompt_est + completion_est)
                await record.account(usage, prompt_est + completion_est, estimated=True)
            for call in pending:
                await record.append(tool_message(call.id, CANCELLED_RESULT), "cancelled")
                self.emit(ev.ToolCallFinished(sid, call, "cancelled", CANCELLED_RESULT))
        except StoreError as exc:
            self.emit(ev.Notice(sid, f"cancelled, but not everything could be saved: {exc}", "error"))
        await record.finish(TurnStatus.CANCELLED, "cancelled by the user", "cancelled")

    def _empty_reply_note(self) -> str:
        """The notice for an empty reply: with tools sent, what to try (models that cannot call tools
        often answer a request with tool specs with nothing)."""
        note = "the model returned an empty reply"
        if not self.calls.specs():
            return note + "; try rephrasing the prompt, or another model (/model NAME)"
        model = self.session.model
        return (
            f'{note} to a request with tools. If {model} cannot call tools, untick "The model can call '
            f'tools" in /setup (or set "tools": false for it under "models" in runtime_config.json '
            "and /reload), then send the prompt again"
        )

    # -- budgets, the loop guard, an unreachable lane -------------------------------------------------
    async def _stopped_at(self, breach: Breach) -> TurnResult:
        """The user answered a budget or loop-guard pause with "stop": the turn ends as a cancel does
        (status cancelled, the session idle, not failed), with a note naming the cap; its
        ``error_kind`` stays "budget"/"loop" (``paragents run`` exits with 7)."""
        kind = LOOP_KIND if breach.level == "loop" else BUDGET_KIND
        where = "the loop guard" if breach.level == "loop" else "the budget"
        text = f"stopped at {where}: {breach.reason}"
        self.emit(ev.Notice(self.session.id, text, "warning"))
        return await self.record.finish(TurnStatus.CANCELLED, text, kind)

    async def _hold_while_unreachable(self) -> None:
        """Before a request: while the session's lane (a container or Pod) does not answer, pause the
        turn (state PAUSED, the reason as detail) until it answers again; its clock stops meanwhile."""
        remote = self.calls.remote()
        if remote is None or remote.answering:
            return
        if self.budget is not None:
            self.budget.stop_clock()
        self.record.set_state(SessionState.PAUSED, remote.why or f"{remote.where} does not answer")
        await remote.wait_answering()
        if self.budget is not None:
            self.budget.start_clock()
        self.record.set_state(SessionState.RUNNING)

    async def _hold_at_caps(self) -> Breach | None:
        """Before a request: while the loop guard has tripped or a budget would be crossed, pause the
        turn (state BUDGET, a ``BudgetPaused`` whose Future the user answers) and wait. Return None
        to send the request, or the breach when the user chose to stop."""
        while True:
            breach = self.loop_guard.tripped
            if breach is None and self.budget is not None and self.budget.active():
                estimate = estimate_messages_tokens(self.request_messages(), self.calls.specs())
                breach = await self.budget.check(self.session.model, estimate)
            if breach is None:
                return None
            answer = await self.record.pause(breach)
            if answer == "stop":
                return breach
            if breach.level == "loop":
                self.loop_guard.reset()
                return None
            if answer == "one_more":
                return None

    # -- streaming ------------------------------------------------------------------------------------
    async def _stream(self, partial: _Partial) -> AssembledReply | None:
        sid = self.session.id
        awaiting = False

        def on_delta(delta: Any) -> None:
            nonlocal awaiting
            partial.sent = True  # a reply is coming: the server took the request
            if awaiting:  # the first token of the reply (text, reasoning or a tool call)
                awaiting = False
                self.emit(ev.AwaitingReply(sid, False))
            kind = getattr(delta, "kind", None)
            text = getattr(delta, "text", None)
            if not text:
                return
            if kind == "reasoning":
                partial.reasoning += text
                self.emit(ev.ReasoningDelta(sid, text))
            elif kind == "text":
                partial.text += text
                self.emit(ev.TextDelta(sid, text))

        def on_retry(reason: str, delay: float, attempt: int) -> None:
            # the attempt failed (no connection, 429, 5xx): nothing of it is counted; a cancel before
            # the next attempt's first token counts nothing either (a server refusing it bills nothing)
            partial.sent = False
            self.emit(ev.StreamRetry(sid, reason, delay, attempt))
            self.emit(ev.Notice(sid, f"{reason}, retrying in {delay:.0f} s (attempt {attempt})", "warning"))

        specs = self.calls.specs()
        messages = self.request_messages()
        estimate = estimate_messages_tokens(messages, specs)
        window = self.session.context_window
        explicit = self.session.model in self.config.models
        if explicit and estimate > OVERSIZE_FACTOR * window:
            partial.kind = "context_length"
            partial.error = (
                f"this request is about {estimate:,} tokens, far more than {self.session.model}'s context "
                f"window ({window:,} tokens), so it was not sent: shorten the prompt, /compact or /clear "
                f"(if the window is larger, set models.{self.session.model}.context_window "
                "in runtime_config.json)"
            )
            return None
        awaiting = True
        partial.sent = True
        self.emit(ev.AwaitingReply(sid, True))
        try:
            return await self.client.stream_chat(
                model=self.session.model,
                messages=messages,
                tools=specs or None,
                on_delta=on_delta,
                on_retry=on_retry,
                session_label=self.session.name,
            )
        except LLMError as exc:
            got = exc.partial
            text = partial.text or (got.content if got and got.content else "")
            reasoning = partial.reasoning or (got.reasoning if got and got.reasoning else "")
            msg = _partial_message(text, reasoning)
            if msg is not None:
                await self.record.append_partial(msg)
                self.emit(
                    ev.Notice(sid, "the reply broke off: partial text kept and marked incomplete", "warning")
                )
            partial.error = exc.message
            if exc.kind == "protocol" and specs and not (text or reasoning):
                partial.error += (
                    f" (the server sent no reply to a request with tools; if {self.session.model} cannot "
                    'call tools, set "tools": false for it under "models" in runtime_config.json)'
                )
            partial.kind = exc.kind
            return None
        finally:
            if awaiting:  # ended (empty reply, error, cancel) before any token
                awaiting = False
                self.emit(ev.AwaitingReply(sid, False))

    async def _refuse_nameless(self, reply: AssembledReply, nameless: list[ToolCall]) -> str:
        """Keep a reply holding a tool call whose function name never arrived out of the history.

        Such a call cannot be answered in a way every provider accepts (an empty name, or one made
        up here, is rejected by strict servers in the next request), so none of the reply's calls
        run: its text is stored marked incomplete (never sent back), like a reply that broke off,
        and the turn fails with the returned error."""
        sid = self.session.id
        msg = _partial_message(reply.content or "", reply.reasoning or "")
        if msg is not None:
            await self.store.messages.append(sid, msg, turn_id=self.record.turn_id, complete=False)
            self.emit(ev.MessageAdded(sid, {**msg, "incomplete": True}))
        first = nameless[0]
        return (
            f"the model sent a tool call without a function name (id {first.id}, arguments "
            f"{capped(first.arguments, 200)!r}); no call of that reply was run and it was not sent "
            "back to the model; send the prompt again"
        )

    async def _account(self, reply: AssembledReply) -> None:
        """Record usage (the server's, else a local estimate) and the context size of the next request."""
        record = self.record
        usage, estimated = counted_usage(
            reply.usage,
            lambda: estimate_messages_tokens(self.request_messages()[:-1], self.calls.specs()),
            lambda: estimate_messages_tokens([record.history[-1]]) if record.history else 0,
        )
        if estimated:
            context = estimate_messages_tokens(self.request_messages(), self.calls.specs())
        else:
            context = usage.total_tokens or (usage.prompt_tokens + usage.completion_tokens)
        await self.record.account(usage, context, estimated=estimated)


@dataclass
class _Partial:
    """Text streamed so far in the current request (kept when the stream fails or is cancelled)."""

    text: str = ""
    reasoning: str = ""
    error: str | None = None
    kind: str | None = None
    sent: bool = False
    """True once the request was handed to the client (its tokens count even when it is cancelled),
    False again after a failed attempt until the retry's first token arrives."""
