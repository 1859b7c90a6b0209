"""Reading a model's JSON answer against a pydantic schema (specialist findings, the split planner):
the whole reply must be one JSON value, or one fenced ```json block holding it. Anything else is
invalid and said so: the caller retries once, then reports the failure; an answer is never guessed.
Nothing here imports Textual."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from paragents import jsonfile

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


class InvalidAnswer(ValueError):
    """The reply is not valid for the schema; ``str(err)`` says why in one line (for the retry)."""


def parse_answer(text: str | None, model: type[M]) -> M:
    """Return ``model`` validated from the reply ``text``; raise :class:`InvalidAnswer` otherwise."""
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        raise InvalidAnswer("the reply was empty")
    try:
        data = jsonfile.loads(body, "the reply")
    except jsonfile.JsonFileError as exc:
        raise InvalidAnswer(str(exc)) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InvalidAnswer(f"the JSON does not fit the schema: {where}: {first['msg']}") from None


def retry_prompt(error: InvalidAnswer, schema: dict[str, object]) -> str:
    """The one retry's prompt: what was wrong and the schema, asking for the JSON only."""
    return (
        f"Your answer could not be used: {error}. Answer again with only one JSON object that fits this "
        f"JSON schema, and nothing else:\n{json.dumps(schema)}"
    )
