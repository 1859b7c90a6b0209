"""The controls facet of the session layer (:class:`Controls`): a session's name, model, permission
mode and sandbox, ``/mode`` and ``/model`` of a session an external ACP agent runs
(sessions/acp_controls.py), and the tools and instructions a fan-out worker runs with. Every change
of a view goes through an event. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from paragents import events as ev
from paragents.agent import Agent
from paragents.llm.errors import LLMError, safe_url
from paragents.permissions import PermissionMode
from paragents.sessions import acp as acp_sessions
from paragents.sessions import acp_controls
from paragents.sessions.core import SessionsCore
from paragents.sessions.names import check_name
from paragents.sessions.view import SessionError
from paragents.tools.registry import ToolRegistry
from paragents.tools.sandbox import check, describe

SANDBOX_MODES = ("off", "auto", "required")
MODELS_CHECK_S = 5.0
"""How long ``/model NAME`` waits for the server's ``/models`` before saying it could not check."""
MODELS_SHOWN = 8
"""Model ids named in the warning about a model the server does not list."""
MODE_NAMES = tuple(m.value for m in PermissionMode)


def check_mode(mode: str) -> str:
    """Return ``mode`` when it is a permission mode. Raises SessionError listing the modes."""
    if mode not in MODE_NAMES:
        raise SessionError(f"unknown mode {mode!r}; use one of {', '.join(MODE_NAMES)}")
    return mode


class Controls(Protocol):
    """What clients change of an open session (``runtime.controls``)."""

    async def rename_session(self, sid: str, name: str) -> None: ...
    async def set_model(self, sid: str, model: str) -> None: ...
    async def set_mode(self, sid: str, mode: str) -> None: ...
    def set_sandbox(self, sid: str, mode: str) -> None: ...
    def sandbox_report(self, sid: str) -> str: ...
    def runs_agent(self, sid: str) -> bool:
        """True when an external ACP agent runs session ``sid`` (``/mode`` and ``/model`` address it)."""
        ...

    async def agent_mode(self, sid: str, mode: str | None) -> None: ...
    async def agent_model(self, sid: str, model: str | None) -> None: ...
    def use_tools(self, sid: str, tools: Sequence[str] | None, instructions: Sequence[str] = ()) -> None:
        """Run session ``sid`` with only ``tools`` (None: its own) and ``instructions`` added to its
        system prompt (a fan-out worker)."""
        ...


class SessionControls:
    """The :class:`Controls` facet of the sessions of one project."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core
        self.checked_models: set[str] = set()
        """Models already checked against the server's ``/models`` (each is warned about once)."""

    async def rename_session(self, sid: str, name: str) -> None:
        """Rename a session. Raises SessionError on a bad or taken name."""
        core = self.core
        view = core.writable(sid)
        check_name(name)
        try:
            await core.store.sessions.update(sid, name=name)
        except Exception as exc:
            raise SessionError(str(exc)) from exc
        core.emit(ev.SessionRenamed(sid, name))
        core.emit(ev.SessionStateChanged(sid, view.state, f"renamed to {name}"))

    async def set_model(self, sid: str, model: str) -> None:
        """Use ``model`` for the session's next requests. Raises SessionError for an ``acp:NAME``
        model (that names an external agent, which a model session cannot become)."""
        core = self.core
        view = core.writable(sid)
        if model.startswith(acp_sessions.MODEL_PREFIX) and acp_sessions.agent_of(core, sid) is None:
            raise SessionError(f"{model} names an external agent: open one with /new --agent {model[4:]}")
        await core.store.sessions.update(sid, model=model)
        core.emit(ev.ModelChanged(sid, model, core.context_window(model)))
        core.emit(ev.SessionStateChanged(sid, view.state, f"model {model}"))
        if model not in self.checked_models:
            self.checked_models.add(model)
            warning = await self.unlisted(model)
            if warning is not None:
                core.emit(ev.Notice(sid, warning, "warning"))

    async def unlisted(self, model: str) -> str | None:
        """The warning for a model the server's ``GET /models`` does not list (set anyway: a server
        may serve more than it lists), or that the list could not be read; None when it is listed
        or the server lists nothing. Waits at most :data:`MODELS_CHECK_S`; never raises."""
        client = self.core.client
        where = safe_url(client.base_url)
        try:
            listed = await asyncio.wait_for(client.list_models(), MODELS_CHECK_S)
        except (LLMError, TimeoutError) as exc:
            why = str(exc) or f"no answer in {MODELS_CHECK_S:g} s"
            return (
                f"model {model!r} is set, but {where}/models could not be read to check that the server"
                f" has it ({why}); the next request will say"
            )
        if not listed or model in listed:
            return None
        shown = ", ".join(listed[:MODELS_SHOWN]) + (", ..." if len(listed) > MODELS_SHOWN else "")
        return (
            f"model {model!r} is set, but {where}/models does not list it (it lists {shown}): the next"
            " request may fail; /setup shows the server's models, `/model NAME` picks one"
        )

    async def set_mode(self, sid: str, mode: str) -> None:
        """Set the session's permission mode. Raises SessionError for an unknown mode."""
        core = self.core
        check_mode(mode)
        view = core.writable(sid)
        await core.store.sessions.update(sid, mode=mode)
        core.emit(ev.ModeChanged(sid, mode))
        core.emit(ev.SessionStateChanged(sid, view.state, f"mode {mode}"))

    def set_sandbox(self, sid: str, mode: str) -> None:
        """Set the session's sandbox mode (off/auto/required) until it is closed. Raises SessionError
        for an unknown mode."""
        if mode not in SANDBOX_MODES:
            raise SessionError(f"unknown sandbox mode {mode!r}; use one of {', '.join(SANDBOX_MODES)}")
        view = self.core.writable(sid)
        self.core.emit(ev.SandboxChanged(sid, mode))
        self.core.emit(ev.SessionStateChanged(sid, view.state, f"sandbox {mode}"))

    def sandbox_report(self, sid: str) -> str:
        """Return the lines ``/sandbox`` shows for the session (mode, state, network, paths)."""
        view = self.core.view(sid)
        agent = self.core.agents.get(sid)
        if agent is None:
            raise SessionError(f"session {view.name!r} is still loading; try again in a moment")
        sandbox = agent.calls.sandbox_config()
        return describe(sandbox, check(sandbox), view.workdir)

    def runs_agent(self, sid: str) -> bool:
        """True when an external ACP agent runs session ``sid`` (``/mode`` and ``/model`` address it)."""
        return acp_controls.runs_agent(self.core, sid)

    async def agent_mode(self, sid: str, mode: str | None) -> None:
        """See :func:`paragents.sessions.acp_controls.agent_mode`."""
        self.core.writable(sid)
        await acp_controls.agent_mode(self.core, sid, mode)

    async def agent_model(self, sid: str, model: str | None) -> None:
        """See :func:`paragents.sessions.acp_controls.agent_model`."""
        self.core.writable(sid)
        await acp_controls.agent_model(self.core, sid, model)

    def use_tools(self, sid: str, tools: Sequence[str] | None, instructions: Sequence[str] = ()) -> None:
        """Run session ``sid`` with only the tools named in ``tools`` (an empty list: none, it answers
        in text; None: the tools it has) and ``instructions`` appended to its system prompt: a fan-out
        worker (a specialist, the split planner, the review's patch). Unknown tool names are left out.
        Raises SessionError when paragents' own agent does not run it (an external agent's tools and
        prompt are its own)."""
        view = self.core.view(sid)
        agent = self.core.agents.get(sid)
        if not isinstance(agent, Agent):
            raise SessionError(f"session {view.name!r} is not run by paragents' own agent")
        if tools is not None:
            known = self.core.tools
            agent.calls.tools = ToolRegistry(t for n in tools if (t := known.get(n)) is not None)
        extra = [text for text in instructions if text]
        if extra:
            plain = agent.system_prompt
            agent.system_prompt = lambda: "\n\n".join([plain(), *extra])
