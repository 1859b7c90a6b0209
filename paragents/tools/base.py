"""The tool contract: what a tool gets (:class:`ToolContext`), what it returns (:class:`ToolResult`),
and the :class:`Tool` base class every tool implements.

Tools are described to the model in the OpenAI function-calling shape
(https://platform.openai.com/docs/guides/function-calling): ``parameters`` is a JSON Schema object.
Tools do no permission checks (the agent asks ``paragents.permissions`` before calling ``run``);
they just do their job safely: bounded output, plain text, clear errors.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from paragents.models import CallPreview
from paragents.terminal_text import show_controls
from paragents.tools.output import shorten
from paragents.tools.result import ToolResult as ToolResult  # re-exported: part of the tool contract

if TYPE_CHECKING:
    from paragents.tools.execution import Execution
    from paragents.tools.sandbox import SandboxConfig
PREVIEW_LINES = 300
"""Lines of a diff or of a new file's content a :class:`CallPreview` keeps (the rest is counted)."""
PREVIEW_LINE_CHARS = 500
"""Characters kept of one previewed line."""


def bounded_lines(text: str) -> tuple[str, int]:
    """Return ``text`` cut to :data:`PREVIEW_LINES` lines of at most :data:`PREVIEW_LINE_CHARS`
    characters each, and the number of lines left out."""
    lines = text.splitlines()
    kept = [line if len(line) <= PREVIEW_LINE_CHARS else line[:PREVIEW_LINE_CHARS] + "…" for line in lines]
    return "\n".join(kept[:PREVIEW_LINES]), max(len(lines) - PREVIEW_LINES, 0)


ToolFamily = Literal["read", "edit", "bash"]
"""Which permission family a tool belongs to (Claude Code's Read / Edit / Bash)."""


@dataclass
class ToolContext:
    """Everything a tool needs from the session running it.

    - ``workdir``: the session's working directory; relative paths are resolved against it.
    - ``session_id``: the session's store id (for logs; tools do not need it).
    - ``command_timeout``: default ``run_command`` timeout, in seconds.
    - ``max_output_chars``: cap on the ``content`` returned to the model, in characters.
    - ``on_read`` / ``on_write``: called as ``(resolved path, sha256 hex of the file's bytes)`` after a
      successful read (``read_file``) / write (``write_file``, ``edit_file``); the conflict checker
      uses them to detect stale reads. Exceptions they raise propagate to the caller of ``run``.
    - ``sandbox``: how ``run_command`` is confined (paragents.tools.sandbox); None runs it unconfined.
    """

    workdir: Path
    session_id: str = ""
    command_timeout: float = 120.0
    max_output_chars: int = 30000
    on_read: Callable[[Path, str], None] | None = None
    on_write: Callable[[Path, str], None] | None = None
    sandbox: SandboxConfig | None = None
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for commands (a lane's PARAGENTS_PORT / PORT)."""
    read_check: Callable[[Path, Path], str | None] | None = None
    """``read_check(root, path)`` for each path ``grep``/``glob``/``list_dir`` found below ``root``
    (both absolute): None shows it, else it is withheld and the text says why (e.g. "hidden by Read
    deny rules"); the tool counts what it withheld. None: nothing is withheld."""
    execution: Execution | None = None
    """Where the calls run when not on this machine (a lane in a container or Pod:
    paragents.tools.execution); None runs them here. ``workdir`` then stands for the lane's files."""


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool's schema; ``str(err)`` names the argument and the fix."""


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true/false)",
    "object": "an object",
    "array": "an array",
}


def _json_type(value: Any) -> str:
    """Return the JSON type name of a Python value (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _find_nul(value: Any, where: str) -> str | None:
    """Return the name of the first argument (possibly nested) holding a NUL character, or None."""
    if isinstance(value, str):
        return where if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _find_nul(item, f"{where}.{key}" if where else str(key))
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _find_nul(item, f"{where}[{i}]")
            if found:
                return found
    return None


class Tool(abc.ABC):
    """Base class of every tool the model can call.

    Subclasses set the class attributes ``name``, ``family``, ``description`` and ``parameters``
    (a JSON Schema object with ``properties``, ``required`` and ``additionalProperties: false``) and
    implement :meth:`run` and :meth:`summarize`.
    """

    name: ClassVar[str]
    family: ClassVar[ToolFamily]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]

    def spec(self) -> dict[str, Any]:
        """Return the ``tools[]`` item of a chat-completions request:
        ``{"type": "function", "function": {"name", "description", "parameters"}}``."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validate(self, args: Any) -> dict[str, Any]:
        """Check ``args`` (the parsed JSON arguments) against :attr:`parameters`.

        Checks: args is an object, required arguments present, no unknown arguments, types and
        ranges, no NUL character in any string. Returns a new dict with defaults filled in and
        integral floats (``5.0``) turned into ints. Raises ToolArgumentError with one readable
        message naming the argument and what to do."""
        if not isinstance(args, dict):
            raise ToolArgumentError(f"{self.name}: arguments must be a JSON object, got {_json_type(args)}")
        props: dict[str, Any] = self.parameters.get("properties", {})
        unknown = sorted(k for k in args if k not in props)
        if unknown:
            allowed = ", ".join(props) or "(none)"
            raise ToolArgumentError(
                f"{self.name}: unknown argument '{unknown[0]}' (allowed arguments: {allowed})"
            )
        from jsonschema import Draft202012Validator  # lazy: ~30-80 ms of startup otherwise

        validator = Draft202012Validator(self.parameters)
        errors = sorted(validator.iter_errors(args), key=lambda e: (list(e.absolute_path), e.validator))
        if errors:
            raise ToolArgumentError(self._describe(errors[0]))
        nul = _find_nul(args, "")
        if nul:
            raise ToolArgumentError(f"{self.name}: argument '{nul}' contains a NUL byte (\\x00); remove it")
        out: dict[str, Any] = {}
        for key, schema in props.items():
            if key in args:
                value = args[key]
                if schema.get("type") == "integer" and isinstance(value, float):
                    value = int(value)
                out[key] = value
            elif "default" in schema:
                out[key] = schema["default"]
        return out

    def _describe(self, err: Any) -> str:
        """Turn one ``jsonschema.ValidationError`` into a readable message naming the argument."""
        arg = ".".join(str(p) for p in err.absolute_path)
        schema = err.schema if isinstance(err.schema, dict) else {}
        if err.validator == "required":
            missing = [r for r in err.validator_value if r not in (err.instance or {})]
            name = missing[0] if missing else "?"
            return f"{self.name}: missing required argument '{name}'"
        if err.validator == "type":
            expected = err.validator_value
            want = " or ".join(
                _TYPE_WORDS.get(str(t), str(t))
                for t in (expected if isinstance(expected, list) else [expected])
            )
            return f"{self.name}: argument '{arg}' must be {want}, got {_json_type(err.instance)}"
        if err.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            bound = {
                "minimum": ">=",
                "exclusiveMinimum": ">",
                "maximum": "<=",
                "exclusiveMaximum": "<",
            }[str(err.validator)]
            return (
                f"{self.name}: argument '{arg}' must be {bound} {err.validator_value}, got {err.instance!r}"
            )
        if err.validator == "minLength":
            return f"{self.name}: argument '{arg}' must not be empty"
        if err.validator == "enum":
            choices = ", ".join(repr(c) for c in schema.get("enum", []))
            return f"{self.name}: argument '{arg}' must be one of {choices}"
        return f"{self.name}: argument '{arg or '(arguments)'}' is invalid: {err.message}"

    @abc.abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool with validated ``args`` (from :meth:`validate`) in ``ctx``.

        Returns a ToolResult; expected failures (missing file, bad regex, timeout, non-zero exit)
        are ``is_error=True`` results, never exceptions. ``asyncio.CancelledError`` propagates."""

    @abc.abstractmethod
    def summarize(self, args: dict[str, Any]) -> str:
        """Return a one-line (≤ 80 chars) description of the call, e.g. ``read_file src/app.py:10-40``."""

    def preview(self, args: dict[str, Any], workdir: Path) -> CallPreview | None:
        """Return what the call with validated ``args`` will do, without doing it (for a permission
        ask), or None when there is nothing to show beyond the summary. Blocking (may read the target
        file); the agent calls it in a thread. Never writes."""
        return None

    def _line(self, text: str) -> str:
        """Return ``f"{name} {text}"`` flattened to one line of at most 80 characters, its control
        characters drawn as symbols (ESC ``␛``, BEL ``␇``: ``show_controls``), never dropped: this is
        the call's one-line form everywhere (the ask's headline, the transcript row, the inbox rows),
        and it must not show something else than what runs."""
        return shorten(show_controls(f"{self.name} {text}"), 80)
