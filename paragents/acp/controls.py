"""What an external agent offers besides prompts (:class:`AgentControls`): its slash commands
(``available_commands_update``, at any time), its modes (``modes`` of session/new or session/load,
``current_mode_update``; switched with ``session/set_mode``) and its config options (``configOptions``,
``config_option_update``; switched with ``session/set_config_option``), among them its model (the
option of category "model"). The SDK (0.12) has no ``session/set_model``: models are config options.

Names and descriptions come from the agent: they are cleaned (no control characters, one line),
capped in length and in count; clients show them as plain text. Every change emits one
:class:`~paragents.events.AgentControlsChanged`. Nothing here imports Textual."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from acp import RequestError
from acp.schema import AvailableCommandsUpdate, ConfigOptionUpdate, CurrentModeUpdate

from paragents import events as ev

MAX_COMMANDS = 64
"""At most this many of the agent's commands are kept (the rest are ignored)."""
MAX_CHOICES = 64
"""At most this many modes, config options, and choices per option."""
MAX_NAME = 48
"""Longer command names, mode ids and option values are ignored (they could not be typed anyway)."""
MAX_TEXT = 160
"""Descriptions and labels are cut to this many characters."""
METHOD_NOT_FOUND = -32601

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
_NAME = re.compile(r"\S+")


def one_line(text: Any, limit: int = MAX_TEXT) -> str:
    """``text`` as one line of plain text: control characters removed, spaces collapsed, cut."""
    line = " ".join(_CONTROL.sub(" ", str(text or "")).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def clean_name(text: Any) -> str | None:
    """A command name, mode id or option value fit to be typed (one word, no leading slash, no control
    characters, at most MAX_NAME characters), or None."""
    name = str(text or "").strip().lstrip("/")
    if not name or len(name) > MAX_NAME or _CONTROL.search(name) or not _NAME.fullmatch(name):
        return None
    return name


@dataclass(frozen=True, slots=True)
class Choice:
    """A command, mode or option value: ``id`` (what is typed / sent), ``name``, ``description``."""

    id: str
    name: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One of the agent's config options: a select (``choices``) or a boolean (``boolean``)."""

    id: str
    name: str
    category: str
    current: str
    choices: tuple[Choice, ...] = ()
    boolean: bool = False

    def find(self, wanted: str) -> Choice | None:
        """The choice whose value or name is ``wanted`` (case-insensitive), or None."""
        low = wanted.lower()
        for choice in self.choices:
            if low in (choice.id.lower(), choice.name.lower()):
                return choice
        return None

    def label(self, value: str | None = None) -> str:
        """The name of ``value`` (default: the current value)."""
        value = self.current if value is None else value
        found = next((c for c in self.choices if c.id == value), None)
        return found.name if found is not None else value


def _choices(items: Any, limit: int = MAX_CHOICES) -> tuple[Choice, ...]:
    out: dict[str, Choice] = {}
    for item in items or ():
        options = getattr(item, "options", None)  # a group of choices
        for one in options if options is not None else (item,):
            value = clean_name(getattr(one, "value", None) or getattr(one, "id", None))
            if value is not None and value not in out and len(out) < limit:
                desc = one_line(getattr(one, "description", None) or "")
                out[value] = Choice(value, one_line(getattr(one, "name", None) or value), desc)
    return tuple(out.values())


def _option(raw: Any) -> ConfigOption | None:
    option_id = clean_name(getattr(raw, "id", None))
    if option_id is None:
        return None
    category = getattr(raw, "category", None)
    category = category if isinstance(category, str) else "other"
    boolean = getattr(raw, "type", None) == "boolean"
    current = getattr(raw, "current_value", "")
    current = ("on" if current else "off") if boolean else one_line(current, MAX_NAME)
    name = one_line(getattr(raw, "name", None) or option_id)
    choices = () if boolean else _choices(getattr(raw, "options", None))
    return ConfigOption(option_id, name, category, current, choices, boolean)


@dataclass
class AgentControls:
    """The agent's commands, modes and config options for one session (see the module docstring);
    ``emit`` gets an AgentControlsChanged after each change."""

    session_id: str
    emit: ev.EventSink
    agent_name: str = "the agent"
    commands: tuple[Choice, ...] = ()
    modes: tuple[Choice, ...] = ()
    mode: str | None = None
    options: tuple[ConfigOption, ...] = ()
    unsupported: set[str] = field(default_factory=set)
    """Methods the agent answered with "method not found" (asked again after a restart)."""

    # -- state ----------------------------------------------------------------------------------------
    @property
    def model_option(self) -> ConfigOption | None:
        """The config option of category "model", if the agent offers one."""
        return next((o for o in self.options if o.category == "model" and o.choices), None)

    @property
    def mode_option(self) -> ConfigOption | None:
        """The config option of category "mode" (agents that offer modes as a config option)."""
        return next((o for o in self.options if o.category == "mode" and o.choices), None)

    @property
    def model(self) -> str | None:
        """The name of the agent's current model, when it says."""
        option = self.model_option
        return option.label() if option is not None else None

    @property
    def mode_name(self) -> str | None:
        """The name of the agent's current mode, when it has modes."""
        if self.mode is not None:
            return next((m.name for m in self.modes if m.id == self.mode), self.mode)
        option = self.mode_option
        return option.label() if option is not None else None

    def changed(self) -> None:
        commands = tuple((c.id, c.description) for c in self.commands)
        self.emit(
            ev.AgentControlsChanged(self.session_id, self.agent_name, commands, self.mode_name, self.model)
        )

    def opened(self, response: Any, agent_name: str) -> None:
        """Take the modes and config options of a session/new or session/load response."""
        self.agent_name = agent_name
        self.unsupported.clear()
        modes = getattr(response, "modes", None)
        if modes is not None:
            self.modes = _choices(modes.available_modes)
            self.mode = clean_name(modes.current_mode_id)
        options = getattr(response, "config_options", None)
        if options is not None:
            self.set_options(options, announce=False)
        self.changed()

    def set_options(self, raw: Any, *, announce: bool = True) -> None:
        """Replace the config options (the full set an agent sends)."""
        made = (_option(o) for o in list(raw or ())[:MAX_CHOICES])
        self.options = tuple(o for o in made if o is not None)
        if announce:
            self.changed()

    def apply(self, update: Any) -> None:
        """Take one ``session/update`` (commands, current mode, config options; others are ignored)."""
        if isinstance(update, AvailableCommandsUpdate):
            commands = _commands(update.available_commands)
            if commands != self.commands:
                self.commands = commands
                self.changed()
        elif isinstance(update, CurrentModeUpdate):
            mode = clean_name(update.current_mode_id)
            if mode != self.mode:
                self.mode = mode
                self.changed()
        elif isinstance(update, ConfigOptionUpdate):
            self.set_options(update.config_options)

    # -- switching ------------------------------------------------------------------------------------
    async def set_mode(self, conn: Any, remote_id: str, mode: Choice) -> None:
        """``session/set_mode`` (or the mode config option); RequestError when the agent refuses."""
        option = self.mode_option if not self.modes else None
        if option is not None:
            await self.set_option(conn, remote_id, option, mode.id)
            return
        await conn.set_session_mode(session_id=remote_id, mode_id=mode.id)
        if self.mode != mode.id:
            self.mode = mode.id
            self.changed()

    async def set_option(self, conn: Any, remote_id: str, option: ConfigOption, value: str) -> None:
        """``session/set_config_option``; the agent answers with the full set of options."""
        answer = await conn.set_config_option(config_id=option.id, session_id=remote_id, value=value)
        self.set_options(getattr(answer, "config_options", None) or ())


def _commands(items: Any) -> tuple[Choice, ...]:
    out: dict[str, Choice] = {}
    for item in items or ():
        name = clean_name(getattr(item, "name", None))
        if name is None or name in out:
            continue
        out[name] = Choice(name, name, one_line(getattr(item, "description", "")))
        if len(out) >= MAX_COMMANDS:
            break
    return tuple(out.values())


def not_supported(exc: BaseException) -> bool:
    """True when ``exc`` is the agent's "method not found" answer."""
    return isinstance(exc, RequestError) and exc.code == METHOD_NOT_FOUND
