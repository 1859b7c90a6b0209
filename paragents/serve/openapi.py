"""The OpenAPI 3.1 description of the API, served at ``/openapi.json``."""

from __future__ import annotations

from typing import Any

from paragents import __version__

_ERROR = {
    "description": "refused",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def _op(
    summary: str, *, body: dict[str, Any] | None = None, public: bool = False, **extra: Any
) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {"200": {"description": "ok"}, "default": _ERROR}}
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    if public:
        op["security"] = []
    op.update(extra)
    return op


_SID = [{"name": "sid", "in": "path", "required": True, "schema": {"type": "string"}}]
_PAGE = [
    {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 500}},
]


def openapi_document() -> dict[str, Any]:
    """Return the OpenAPI document (a JSON-able dict)."""
    answer_body = {
        "type": "object",
        "required": ["answer"],
        "properties": {
            "answer": {"enum": ["allow_once", "allow_session", "reject_once", "reject_with_note"]},
            "note": {"type": "string"},
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "paragents", "version": __version__},
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "API key or HS256 JWT"},
                "key": {"type": "apiKey", "in": "header", "name": "X-Paragents-Key"},
                "browser": {"type": "apiKey", "in": "header", "name": "X-Paragents-Session"},
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {"status": {"type": "integer"}, "message": {"type": "string"}},
                        }
                    },
                }
            },
        },
        "security": [{"bearer": []}, {"key": []}, {"browser": []}],
        "paths": {
            "/health": {"get": _op("Liveness (no auth)", public=True)},
            "/sessions": {"get": _op("The open sessions: state, pending approvals, last lines")},
            "/sessions/{sid}": {
                "get": _op("One session and a page of its transcript", parameters=_SID + _PAGE)
            },
            "/sessions/{sid}/prompt": {
                "post": _op(
                    "Queue a prompt",
                    body={"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
                    parameters=_SID,
                )
            },
            "/sessions/{sid}/cancel": {"post": _op("Cancel the running turn", parameters=_SID)},
            "/inbox": {"get": _op("What waits on the user across sessions, oldest first")},
            "/inbox/{rid}/call": {
                "get": _op(
                    "The whole call of a pending ask (what a bounded preview leaves out)",
                    parameters=[
                        {"name": "rid", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                )
            },
            "/inbox/{rid}/answer": {
                "post": _op(
                    "Answer a pending approval (once)",
                    body=answer_body,
                    parameters=[
                        {"name": "rid", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                )
            },
            "/conflicts/{cid}/answer": {
                "post": _op(
                    "Answer a conflict (once) with one of its choices",
                    body={
                        "type": "object",
                        "required": ["answer"],
                        "properties": {
                            "answer": {"type": "string", "enum": ["wait", "run_anyway", "skip", "reread"]}
                        },
                    },
                    parameters=[
                        {"name": "cid", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                )
            },
            "/pauses/{pid}/answer": {
                "post": _op(
                    "Answer this process's budget or loop-guard pause (once)",
                    body={
                        "type": "object",
                        "required": ["answer"],
                        "properties": {
                            "answer": {"type": "string", "enum": ["raise", "one_more", "stop"]},
                            "value": {"type": "string", "description": "the new cap (raise): 5usd, 500k"},
                        },
                    },
                    parameters=[
                        {"name": "pid", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                )
            },
            "/events": {"get": _op("Server-sent events of session changes (text/event-stream)")},
            "/pair/{code}": {"get": _op("A pairing link's page (does not use the code)", public=True)},
            "/pair": {
                "post": _op(
                    "Trade a one-time pairing code for a browser token (sent as X-Paragents-Session)",
                    body={"type": "object", "required": ["code"], "properties": {"code": {"type": "string"}}},
                    public=True,
                )
            },
            "/ws-ticket": {"post": _op("A one-time ticket for the /tui/ websocket (/tui/ws/TICKET)")},
        },
    }
