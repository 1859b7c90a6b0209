"""An external ACP agent as a paragents session's agent (:class:`AcpAgent`): the same turn contract
as paragents' own :class:`~paragents.agent.Agent` (store, events, cancel; the session layer's
:class:`~paragents.agent.protocol.SessionAgent`), but each turn is a ``session/prompt`` to an agent
subprocess. It inherits from no agent: it holds the same parts (the record of its turns, its tool
calls serving the agent's file and terminal requests, its compaction requests) and its own: the link
to the agent process (:mod:`.link`: launch, session open), the read-only wait of a conversation it
cannot continue (:mod:`.held`), the budget caps (:mod:`.caps`), its updates (:mod:`.updates`), its
reported cost (:mod:`.spending`) and its commands and modes (:mod:`.controls`). This module is its
turns. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

from acp import RequestError, text_block
from acp.schema import PromptResponse

from paragents import events as ev
from paragents.acp.caps import hold_at_budget, stop_at_cap
from paragents.acp.controls import AgentControls
from paragents.acp.held import SessionWait
from paragents.acp.launch import AcpLaunchError, AgentSpec
from paragents.acp.link import CANCEL_WAIT, AgentLink
from paragents.acp.spending import AgentSpending
from paragents.acp.updates import TurnLog
from paragents.agent.budget import BudgetMeter
from paragents.agent.compacting import CompactionQueue
from paragents.agent.compaction import CompactionOutcome
from paragents.agent.parts import AgentParts, AgentStore
from paragents.agent.session import SessionReader
from paragents.agent.spend import request_cost
from paragents.agent.turn import BUDGET_KIND, CANCELLED_RESULT
from paragents.limits import Spend
from paragents.models import Message, TurnResult, TurnStatus, Usage, user_message
from paragents.store.records import StoreError

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.conflicts import ConflictChecker
    from paragents.llm import ChatClient
    from paragents.permissions import Policy
    from paragents.store.agent_sessions import AgentSessionsRepo
    from paragents.store.records import ApprovalRecord
    from paragents.tools.registry import ToolRegistry

__all__ = ["AGENT_KIND", "AcpAgent", "AcpLaunchError"]

AGENT_KIND = "agent"
"""``error_kind`` of a turn that failed because of the external agent (launch, crash, refusal)."""
STOP_REASONS = {
    "max_tokens": "the agent reached its token limit",
    "max_turn_requests": "the agent reached its limit of model requests for one turn",
    "refusal": "the agent refused to go on",
}


class AcpStore(AgentStore, Protocol):
    """The store's tables an external agent's session uses: those of every agent (its turns, messages,
    asks) and the agent's own session id and reported cost (``paragents.store.Store`` is one)."""

    @property
    def agent_sessions(self) -> AgentSessionsRepo: ...


class AcpAgent:
    """Runs the turns of one session through an external ACP agent (see the module docstring).

    ``spec`` says how to launch it; ``remote_id`` is the agent's own session id from a previous run
    (reloaded with ``session/load`` when supported); ``save_remote`` stores a new one. The session,
    tools, policy, store, config, sink, history, stale-read hooks and budget meter are those
    paragents' own agent takes."""

    RESUMES_ASKS: ClassVar[bool] = False
    """The external agent's own turn ended with the process: its ask is not asked again."""
    STORES_AFTER_CALLS = True
    """A turn's messages are stored when it ends, after its tool calls were shown (sessions/tool_rows.py)."""

    def __init__(
        self,
        *,
        spec: AgentSpec,
        conflicts: ConflictChecker,
        session: SessionReader,
        tools: ToolRegistry,
        policy: Policy,
        store: AcpStore,
        config: RuntimeConfig,
        emit: ev.EventSink,
        history: list[Message] | None = None,
        on_read: Callable[[Path, str], None] | None = None,
        on_write: Callable[[Path, str], None] | None = None,
        budget: BudgetMeter | None = None,
        remote_id: str | None = None,
        save_remote: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.spec = spec
        self.conflicts = conflicts
        self.session = session
        self.policy = policy
        self.store = store
        self.config = config
        self.emit = emit
        self.budget = budget
        self.parts = AgentParts.build(
            session=session,
            tools=tools,
            policy=policy,
            store=store,
            config=config,
            emit=emit,
            history=history,
            budget=budget,
            on_read=on_read,
            on_write=on_write,
        )
        """The record of its turns and its tool calls (:mod:`paragents.agent.parts`); the tool calls
        serve the agent's file and terminal requests (paragents.acp.client)."""
        self.record, self.calls = self.parts.record, self.parts.calls
        self.compactions = CompactionQueue(self.compact)
        self.log = TurnLog(session.id, emit)
        self.controls = AgentControls(session.id, emit, spec.name)
        """Its commands, modes and config options (``/mode``, ``/model``: paragents.acp.controls)."""
        self.wait = SessionWait(session.id, emit)
        self.spending = AgentSpending(self)
        self.link = AgentLink(self, remote_id, save_remote)
        self.log.on_usage = self.spending.reported
        if budget is not None:
            budget.agent_cost = True

    def reconfigure(self, client: ChatClient, config: RuntimeConfig) -> None:
        """Use ``config`` from now on (the runtime config was reloaded; the agent has its own model)."""
        self.config = config
        self.parts.reconfigure(config)

    async def compact(self, focus: str | None = None, *, auto: bool = False) -> CompactionOutcome:
        """External agents keep their own context: paragents does not compact it."""
        text = f"not compacted: {self.spec.name} manages its own context"
        if not auto:
            self.emit(ev.Notice(self.session.id, text))
        return CompactionOutcome(False, text)

    async def aclose(self) -> None:
        """Stop the agent (its whole process group); the session's transcript stays."""
        await self.link.aclose()

    # -- turns ---------------------------------------------------------------------------------------
    async def before_turn(self, prompt: str) -> None:
        """Before a queued prompt starts (and before notes from other sessions join it): held in its
        queue while the agent cannot continue the stored conversation (see ``SessionWait.before``)."""
        await self.wait.before(prompt, self.link.start_new_session)

    async def run_turn(self, prompt: str, resume: ApprovalRecord | None = None) -> TurnResult:
        """Send ``prompt`` to the agent and stream its updates until it ends the turn (``resume`` is
        never given: an external agent's ask is not resumed after a restart, see
        ``paragents.sessions.approvals``). Never raises
        for agent failures (launch, crash, refusal: the turn fails with the reason and stderr);
        re-raises CancelledError after ``session/cancel`` and recording the turn as cancelled."""
        record, link = self.record, self.link
        sid = self.session.id
        await self.wait.before(prompt, link.start_new_session)
        failed = await record.start(prompt)
        if failed is not None:
            return failed
        prompt_task: asyncio.Future[PromptResponse] | None = None
        try:
            await record.append(user_message(prompt))
            try:
                await link.start()
            except AcpLaunchError as exc:
                return await record.finish(TurnStatus.FAILED, str(exc), AGENT_KIND)
            if self.wait.stale is not None:  # this launch found it cannot reload (no launch at the reopen)
                await self.wait.before(prompt, link.start_new_session, started=True)
            if self.budget is not None:
                self.budget.start_clock()
            stopped = await hold_at_budget(self, prompt)
            if stopped is not None:
                text = f"stopped at the budget: {stopped.reason}; the prompt was not sent to the agent"
                self.emit(ev.Notice(self.session.id, text, "warning"))
                return await record.finish(TurnStatus.CANCELLED, text, BUDGET_KIND)
            proc, exit_task = link.proc, link.exit
            assert proc is not None and exit_task is not None
            self.log.take()  # updates that came between turns
            link.client.approved.clear()  # what request_permission allowed is for this turn only
            prompt_task = asyncio.ensure_future(
                link.conn.prompt(session_id=link.remote_id, prompt=[text_block(prompt)])
            )
            crossed = self.spending.begin()
            done, _ = await asyncio.wait({prompt_task, exit_task, crossed}, return_when="FIRST_COMPLETED")
            if crossed in done and prompt_task not in done and exit_task not in done:
                return await stop_at_cap(self, crossed.result(), prompt_task)
            crossed.cancel()
            await self.spending.end()
            lost = prompt_task in done and not isinstance(prompt_task.exception(), RequestError | None)
            if lost:  # the connection closed: the agent is exiting (its code and stderr follow)
                await asyncio.wait({exit_task}, timeout=CANCEL_WAIT)
            if prompt_task not in done or lost:
                prompt_task.cancel()
                if not exit_task.done():
                    await proc.stop()
                await self.persist("error", "the agent exited before this call finished")
                text = link.crash_text(proc, "exited during the turn", exit_task.result())
                text += "\nSend a prompt to start it again."
                return await record.finish(TurnStatus.FAILED, text, AGENT_KIND)
            try:
                response = prompt_task.result()
            except RequestError as exc:
                await self.persist()
                text = f"agent {self.spec.name!r} answered the prompt with an error: {exc} {exc.data or ''}"
                return await record.finish(TurnStatus.FAILED, text.strip(), AGENT_KIND)
            await self.persist()
            await self.count_usage(response)
            if response.stop_reason == "cancelled":
                note = "cancelled (the agent's stop reason: cancelled)"
                return await record.finish(TurnStatus.CANCELLED, note, "cancelled")
            if response.stop_reason in STOP_REASONS:
                self.emit(
                    ev.Notice(sid, f"the agent stopped: {STOP_REASONS[response.stop_reason]}", "warning")
                )
            return await record.finish(TurnStatus.COMPLETED)
        except StoreError as exc:
            return await record.store_failed(exc)
        except asyncio.CancelledError:
            await asyncio.shield(self._cancelled(prompt_task))
            raise

    async def persist(self, outcome: str = "error", note: str = "") -> None:
        """Store the turn's messages collected from the updates (closing open tool calls with
        ``outcome`` and ``note``); the last reply is shown now."""
        sid, record = self.session.id, self.record
        for message in self.log.end(outcome, note or "the agent reported no result"):
            self.emit(ev.MessageAdded(sid, message))
        for message, result_outcome in self.log.take():
            msg_id = await self.store.messages.append(
                sid, message, turn_id=record.turn_id, outcome=result_outcome, expect_revision=record.revision
            )
            record.written(msg_id)
            record.history.append(message)
            tool = message.get("role") == "tool"
            record.added.append({**message, "outcome": result_outcome or "ok"} if tool else message)

    async def count_usage(self, response: PromptResponse) -> None:
        """Record the turn's usage (the agent's, when it reports it; it is the turn's total) and the
        context size it last said. Its money is the cost the agent reported (``spending``), else its
        tokens at the model's prices (``models."acp:NAME"``), when set."""
        sid, record = self.session.id, self.record
        got = response.usage
        usage = Usage(got.input_tokens, got.output_tokens, got.total_tokens) if got is not None else Usage()
        context, window = self.log.context or (self.session.context_tokens, self.session.context_window)
        spend: Spend | None = None
        if got is not None:
            cost = 0.0 if self.spending.in_usd else request_cost(self.config, self.session.model, usage)
            await self.store.turns.add_usage(
                sid, record.turn_id, self.session.model, usage, estimated=False, cost_usd=cost
            )
            spend = (getattr(self.session, "spend", None) or Spend()) + Spend(
                usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, cost
            )
        if got is not None or self.log.context is not None:
            self.emit(
                ev.UsageUpdated(
                    sid, self.session.usage + usage, context, window or self.session.context_window, spend
                )
            )
        record.total = usage

    async def _cancelled(self, prompt_task: asyncio.Future[PromptResponse] | None) -> None:
        """``session/cancel``: answer pending asks "cancelled", wait a little for the agent's stop
        reason, keep what it did, end the turn as cancelled with that reason."""
        sid = self.session.id
        self.link.client.cancel_all()
        with contextlib.suppress(StoreError):
            await self.spending.end()
        reason = "no answer"
        await self.link.send_cancel()
        if prompt_task is not None:
            try:
                reason = (await asyncio.wait_for(prompt_task, CANCEL_WAIT)).stop_reason
            except (Exception, asyncio.CancelledError):
                prompt_task.cancel()
        try:
            await self.persist("cancelled", CANCELLED_RESULT)
        except StoreError as exc:
            self.emit(ev.Notice(sid, f"cancelled, but not everything could be saved: {exc}", "error"))
        note = f"cancelled by the user (the agent's stop reason: {reason})"
        self.emit(ev.Notice(sid, f"cancelled: {note}", "warning"))
        await self.record.finish(TurnStatus.CANCELLED, note, "cancelled")
