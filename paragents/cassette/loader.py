"""Load and validate a cassette file: JSON Schema (``schema.json``, checked with ``jsonschema``) plus
the rules a schema cannot say (one reply kind per reply, unique session names, ``after`` naming a
known session...). Every problem is reported as one :class:`CassetteError` naming the file and the
field path, e.g. ``sessions[1].replies[0].tool_calls[0].arguments: expected a string``."""

from __future__ import annotations

import base64
import binascii
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from paragents import jsonfile
from paragents.cassette.model import Answer, Cassette, Expectation, Reply, SessionSpec, Step

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "object": "an object",
    "array": "a list",
    "boolean": "true or false",
    "null": "null",
}


class CassetteError(ValueError):
    """A cassette could not be loaded; ``str()`` names the file, the field path and what to do."""


@cache
def cassette_schema() -> dict[str, Any]:
    """Return the cassette JSON Schema (``paragents/cassette/schema.json``) as a dict."""
    text = resources.files("paragents.cassette").joinpath("schema.json").read_text("utf-8")
    return dict(json.loads(text))


def field_path(parts: Any) -> str:
    """Render a jsonschema path (deque of keys and indexes) as ``a.b[0].c``; ``(top level)`` if empty."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    """A short readable sentence for one schema error."""
    validator, expected = error.validator, error.validator_value
    if validator == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return "expected " + " or ".join(_TYPE_WORDS.get(str(k), str(k)) for k in kinds)
    if validator == "required":
        missing = [k for k in expected if isinstance(error.instance, dict) and k not in error.instance]
        return f"missing required field {missing[0]!r}" if missing else error.message
    if validator == "additionalProperties":
        known = sorted((error.schema.get("properties") or {}).keys())
        extra = sorted(set(error.instance) - set(known)) if isinstance(error.instance, dict) else []
        return f"unknown field {extra[0]!r}" + (f"; known fields: {', '.join(known)}" if known else "")
    if validator == "enum":
        return f"{error.instance!r} is not one of {', '.join(map(repr, expected))}"
    if validator == "const":
        return f"must be {expected!r}"
    if validator == "pattern":
        return f"{error.instance!r} does not match {expected} (use letters, digits, '.', '_' or '-', 1-40)"
    if validator in ("minimum", "maximum", "minLength", "minItems"):
        return f"{error.message}"
    if validator == "oneOf":
        return 'expected a prompt string, {"prompt": str, "after"?: str} or {"restart": true}'
    return str(error.message)


def _best_error(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    error = jsonschema.exceptions.best_match(errors)
    # For oneOf/anyOf, prefer the deepest concrete error of the branch matching the value's type.
    while error.context and isinstance(error.instance, dict):
        deeper = [e for e in error.context if e.validator != "type"] or list(error.context)
        error = jsonschema.exceptions.best_match(deeper)
        if error.validator == "type":
            break
    return error


def validate_cassette(data: Any, source: str = "<cassette>") -> Cassette:
    """Validate parsed JSON ``data`` and return the :class:`Cassette`. Raises CassetteError naming
    ``source`` and the field path of the first problem."""
    validator = jsonschema.Draft202012Validator(cassette_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        error = _best_error(errors)
        raise CassetteError(f"{source}: {field_path(error.absolute_path)}: {_describe(error)}")
    return _build(data, source)


def load_cassette(path: str | Path) -> Cassette:
    """Read, parse and validate the cassette at ``path``. Raises CassetteError (missing file, bad
    JSON with its line and column, or a field problem naming its path)."""
    p = Path(path)
    try:
        data = jsonfile.load(p)
    except jsonfile.JsonFileMissing:
        raise CassetteError(f"{p}: no such cassette file") from None
    except jsonfile.JsonFileError as exc:
        raise CassetteError(str(exc)) from None
    return validate_cassette(data, str(p))


def _reply(data: dict[str, Any], where: str, source: str) -> Reply:
    raw = "reads" in data or "reads_b64" in data
    message_keys = {"content", "reasoning_content", "tool_calls", "finish_reason", "usage", "chunk_size"}
    has_message = bool(message_keys & set(data))
    if "reads" in data and "reads_b64" in data:
        raise CassetteError(f"{source}: {where}: give either 'reads' or 'reads_b64', not both")
    if raw and has_message:
        extra = sorted(message_keys & set(data))[0]
        raise CassetteError(
            f"{source}: {where}.{extra}: a raw reply ('reads') cannot also have message fields"
        )
    if "reads_b64" in data:
        for i, item in enumerate(data["reads_b64"]):
            try:
                base64.b64decode(item, validate=True)
            except (binascii.Error, ValueError):
                raise CassetteError(f"{source}: {where}.reads_b64[{i}]: not valid base64") from None
    if raw:
        return Reply("raw", data, where)
    if "body" in data or "status" in data:
        if has_message:
            extra = sorted(message_keys & set(data))[0]
            raise CassetteError(
                f"{source}: {where}.{extra}: an HTTP error reply cannot also have message fields"
            )
        if "status" not in data:
            raise CassetteError(f"{source}: {where}: an HTTP error reply needs 'status' (e.g. 500)")
        if int(data["status"]) < 300:
            raise CassetteError(
                f"{source}: {where}.status: an HTTP error reply needs a status >= 300; "
                "give a success as 'reads' or as a message"
            )
        return Reply("http_error", data, where)
    # Tool-call arguments are not checked to be JSON: malformed arguments are a case worth replaying.
    return Reply("message", data, where)


def _build(data: dict[str, Any], source: str) -> Cassette:
    sessions: list[SessionSpec] = []
    names: set[str] = set()
    for si, s in enumerate(data["sessions"]):
        where = f"sessions[{si}]"
        if s["name"] in names:
            raise CassetteError(f"{source}: {where}.name: session name {s['name']!r} is used twice")
        names.add(s["name"])
        steps: list[Step] = []
        for step in s.get("prompts", []):
            if isinstance(step, str):
                steps.append(Step(text=step))
            elif step.get("restart"):
                steps.append(Step(restart=True))
            else:
                steps.append(Step(text=step["prompt"], after=step.get("after")))
        replies = [_reply(r, f"{where}.replies[{ri}]", source) for ri, r in enumerate(s.get("replies", []))]
        calls: dict[str, str] = {}
        for reply in replies:
            for ci, call in enumerate(reply.data.get("tool_calls", [])):
                call.setdefault("id", f"call_{s['name']}_{len(calls) + 1}")
                if call["id"] in calls:
                    raise CassetteError(
                        f"{source}: {reply.where}.tool_calls[{ci}].id: id {call['id']!r} already used "
                        f"at {calls[call['id']]}"
                    )
                calls[call["id"]] = f"{reply.where}.tool_calls[{ci}]"
        sessions.append(SessionSpec(s["name"], s.get("dir"), s.get("mode"), s.get("model"), steps, replies))
    for si, s in enumerate(sessions):
        for pi, step in enumerate(x for x in s.steps if not x.restart):
            other, _, count = (step.after or "").partition(":")
            if step.after is not None and count and not count.isdigit():
                raise CassetteError(
                    f"{source}: sessions[{si}].prompts[{pi}].after: use NAME or NAME:N (N = prompts done)"
                )
            if step.after is not None and (other not in names or other == s.name):
                raise CassetteError(
                    f"{source}: sessions[{si}].prompts[{pi}].after: {step.after!r} is not another session "
                    f"of this cassette ({', '.join(sorted(names - {s.name})) or 'none'})"
                )
    answers: list[Answer] = []
    for ai, a in enumerate(data.get("answers", [])):
        where = f"answers[{ai}]"
        if a.get("session") is not None and a["session"] not in names:
            raise CassetteError(f"{source}: {where}.session: no session named {a['session']!r}")
        answers.append(
            Answer(
                answer=a["answer"],
                where=where,
                kind=a.get("kind"),
                session=a.get("session"),
                tool=a.get("tool"),
                path=a.get("path"),
                command=a.get("command"),
                note=a.get("note"),
                rules=a.get("rules"),
                reason=a.get("reason"),
                headless=bool(a.get("headless", False)),
            )
        )
    expect: dict[str, Expectation] = {}
    for name, e in (data.get("expect") or {}).items():
        if name not in names:
            raise CassetteError(f"{source}: expect.{name}: no session named {name!r}")
        expect[name] = Expectation(
            e.get("status"), e.get("messages"), e.get("error_contains"), dict(e.get("files", {}))
        )
    for rel in data.get("workspace", {}):
        p = Path(rel)
        if p.is_absolute() or ".." in p.parts or not rel.strip():
            raise CassetteError(
                f"{source}: workspace.{rel}: paths must be relative and stay inside the workspace"
            )
    return Cassette(
        sessions=sessions,
        workspace=dict(data.get("workspace", {})),
        permissions=data.get("permissions"),
        answers=answers,
        expect=expect,
        title=data.get("title", ""),
        description=data.get("description", ""),
        model=data.get("model", "replay-model"),
        max_parallel_turns=data.get("max_parallel_turns"),
        max_tool_rounds=data.get("max_tool_rounds"),
        source=source,
        raw=data,
    )
