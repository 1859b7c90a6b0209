"""Rows into records and values into JSON columns: the one place the store's repositories parse a
row (:func:`from_row`, with :class:`Json` for a JSON column) and write JSON (:func:`to_json`).

A record is a frozen dataclass of :mod:`paragents.store.records`; each field takes the column of its
own name unless the repository says otherwise::

    from_row(ApprovalRecord, row, call=Json("call_json", {}), rules=Json(into=tuple, default=()))
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from paragents.store.records.errors import StoreError

R = TypeVar("R")

_ABSENT: Any = object()

SECRET_KEYS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key", "api_key"})
"""Dict keys (compared case-insensitively) that mark HTTP auth headers or keys: never stored."""


@dataclass(frozen=True, slots=True)
class Json:
    """A field read from a JSON column: ``column`` (default: the field's own name); ``default`` (a
    copy of it) when the column is NULL, empty or JSON ``null``; ``into`` applied to the value (e.g.
    ``tuple`` for a list kept as a tuple)."""

    column: str | None = None
    default: Any = None
    into: Callable[[Any], Any] | None = None


def loads(text: str | bytes | None, default: Any = None) -> Any:
    """Decode a JSON column: NULL, "" and ``null`` give (a copy of) ``default``."""
    value = json.loads(text) if text else None
    return copy.copy(default) if value is None else value


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def from_row(cls: type[R], row: sqlite3.Row, /, **given: Any) -> R:
    """Build the record ``cls`` (a dataclass) from ``row``.

    Each field takes the column of the same name; a field the row has no column for keeps its
    default; columns with no field are ignored. ``given`` overrides fields: a :class:`Json` decodes
    a JSON column, any other value is the field's value (a Path, a converted enum...)."""
    keys = set(row.keys())
    values: dict[str, Any] = {}
    for name in _fields(cls):
        how = given.get(name, _ABSENT)
        if isinstance(how, Json):
            value = loads(row[how.column or name], how.default)
            values[name] = how.into(value) if how.into is not None else value
        elif how is not _ABSENT:
            values[name] = how
        elif name in keys:
            values[name] = row[name]
    return cls(**values)


def json_dicts(rows: Iterable[dict[str, Any]], **columns: str) -> list[dict[str, Any]]:
    """Return ``rows`` (plain dicts) with each JSON column decoded under a field name:
    ``json_dicts(rows, input="input_json")`` replaces ``input_json`` by ``input``."""
    out = []
    for row in rows:
        for name, column in columns.items():
            row[name] = json.loads(row.pop(column))
        out.append(row)
    return out


def _find_secret_key(value: Any) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and key.lower() in SECRET_KEYS:
                    return key
                stack.append(sub)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def to_json(value: Any, field: str) -> str:
    """Serialise ``value`` to JSON text for the column ``field`` (UTF-8, unicode kept as is).

    Raises StoreError when it cannot be serialised, or when it holds a dict key naming an auth
    header or API key (``Authorization``, ``api_key``...): the store never keeps secrets."""
    secret = _find_secret_key(value)
    if secret is not None:
        raise StoreError(
            f"{field}: refusing to store a value holding {secret!r} (auth headers and API keys are "
            "never written to the database); strip it before storing"
        )
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{field}: value is not JSON-serialisable ({exc})") from exc
