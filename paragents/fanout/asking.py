"""Asking a session for an answer in a JSON schema (specialists, the split planner): submit the
prompt under the scheduler, wait for the turn, validate the reply; an invalid reply is retried once
in the same session, then the session "failed" with the reason. Nothing here imports Textual."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from paragents.config import SessionProfile
from paragents.fanout.answers import InvalidAnswer, parse_answer, retry_prompt
from paragents.models import TurnStatus
from paragents.sessions.api import SessionsAPI
from paragents.sessions.names import unique_name
from paragents.sessions.view import SessionError, SessionView

M = TypeVar("M", bound=BaseModel)


class WorkerFailed(Exception):
    """A worker session gave no usable answer: ``name`` and ``str(err)``, the reason."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(reason)
        self.name = name


def last_reply(view: SessionView) -> str | None:
    """The text of the last assistant message of the session's last turn (None: none)."""
    result = view.last_result
    if result is None:
        return None
    for message in reversed(result.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
    return None


def schema_instructions(schema: dict[str, Any]) -> str:
    """The sentence every JSON-answering worker gets in its system prompt."""
    return (
        "When you are done, your final reply must be only one JSON object that fits this JSON schema "
        f"(no prose around it):\n{json.dumps(schema)}"
    )


async def open_worker(
    rt: SessionsAPI,
    base_name: str,
    profile: SessionProfile | None,
    *,
    schema: dict[str, Any] | None = None,
    workdir: Path | None = None,
    lane: str | bool | None = None,
    base: str | None = None,
    mode: str | None = None,
    on_open: Callable[[SessionView], Any] | None = None,
) -> SessionView:
    """Open a worker session named ``base_name`` (or ``base_name-2``...) shaped by ``profile``: its
    model, its system prompt (plus the schema's instructions), only its allowed tools, plan mode when
    read-only (else ``mode``, default the session default). ``on_open`` is told of the view (the TUI
    adds a panel)."""
    taken = {s.name for s in await rt.lifecycle.list_sessions()} | {v.name for v in rt.sessions.values()}
    name = unique_name(base_name, taken)
    mode = "plan" if profile is not None and profile.read_only else mode
    model = profile.model if profile is not None else None
    view = await rt.lifecycle.new_session(name, model=model, workdir=workdir, mode=mode, lane=lane, base=base)
    extra = [
        p for p in ((profile.system_prompt if profile else ""), schema and schema_instructions(schema)) if p
    ]
    try:
        rt.controls.use_tools(view.id, profile.allowed_tools if profile is not None else None, extra)
    except SessionError as exc:  # a worker is opened with a model, never an external agent
        raise WorkerFailed(view.name, str(exc)) from None
    if on_open is not None:
        on_open(view)
    return view


async def run_turn(rt: SessionsAPI, view: SessionView, prompt: str) -> str | None:
    """Submit ``prompt`` to the worker and wait for its turn; return its last reply. Raises
    :class:`WorkerFailed` when the turn did not complete."""
    rt.submit(view.id, prompt)
    await rt.wait_idle(view.id)
    result = view.last_result
    if result is None or result.status is not TurnStatus.COMPLETED:
        reason = (result.error if result else None) or (result.status.value if result else "no turn ran")
        raise WorkerFailed(view.name, reason)
    return last_reply(view)


async def ask_json(rt: SessionsAPI, view: SessionView, prompt: str, model: type[M]) -> M:
    """Ask the worker ``prompt`` and return its answer validated as ``model``; an invalid answer is
    retried once (saying what was wrong), then :class:`WorkerFailed` names the reason."""
    schema = model.model_json_schema()
    reply = await run_turn(rt, view, prompt)
    try:
        return parse_answer(reply, model)
    except InvalidAnswer as first:
        reply = await run_turn(rt, view, retry_prompt(first, schema))
        try:
            return parse_answer(reply, model)
        except InvalidAnswer as second:
            raise WorkerFailed(view.name, f"invalid answer after one retry: {second}") from None


async def close_workers(rt: SessionsAPI, views: Sequence[SessionView]) -> None:
    """Close the worker sessions (they stay in the store and ``/sessions``)."""
    for view in views:
        if view.id in rt.sessions:
            await rt.lifecycle.close_session(view.id)
