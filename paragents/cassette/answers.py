"""Scripted user answers: match an approval or a conflict ask to the cassette's ``answers``.

Rule: the first unused answer (in cassette order) whose given fields all match wins; ``session``
is the session name, ``tool`` the tool name, ``path`` / ``command`` the call's arguments. So
answers listed per session in order are used in order, and ``tool``/``path`` pin one ask."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from paragents.cassette.model import Answer
from paragents.events import ApprovalAnswer, PermissionAnswer

PERMISSION_ANSWERS = ("allow_once", "allow_session", "allow_always", "reject_once", "reject_with_note")
CONFLICT_ANSWERS = ("wait", "run_anyway", "skip", "reread")


@dataclass
class AnswerBook:
    """The cassette's answers with a used-flag each. Not thread-safe; one per replay."""

    answers: list[Answer]
    used: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.used = [False] * len(self.answers)

    def take(self, kind: str, session: str, tool: str, args: dict[str, Any]) -> Answer | None:
        """Return (and mark used) the first unused answer matching an ask of ``kind`` ("permission"
        or "conflict") in ``session`` for ``tool`` with ``args``; None when none matches."""
        allowed = PERMISSION_ANSWERS if kind == "permission" else CONFLICT_ANSWERS
        for i, a in enumerate(self.answers):
            if self.used[i] or a.answer not in allowed:
                continue
            if a.kind is not None and a.kind != kind:
                continue
            if a.session is not None and a.session != session:
                continue
            if a.tool is not None and a.tool != tool:
                continue
            if a.path is not None and a.path != str(args.get("path", "")):
                continue
            if a.command is not None and a.command != str(args.get("command", "")):
                continue
            self.used[i] = True
            return a
        return None

    def unused(self) -> list[Answer]:
        """The answers never used (reported as warnings)."""
        return [a for a, u in zip(self.answers, self.used, strict=True) if not u]


def permission_reply(answer: Answer, workspace: str = "<workspace>") -> PermissionAnswer:
    """The answer a PermissionRequested future is resolved with (``workspace`` replaces
    ``<workspace>`` in a recorded reason). Only the fields the answer's kind takes are used (the
    loader checked the kind)."""
    kind = cast("ApprovalAnswer", answer.answer)
    if kind == "reject_with_note":
        return PermissionAnswer(kind, note=answer.note or "")
    if kind == "allow_always":
        return PermissionAnswer(kind, rules=tuple(answer.rules or ()))
    if kind == "reject_once":
        reason = answer.reason.replace("<workspace>", workspace) if answer.reason is not None else None
        return PermissionAnswer(kind, note=reason, headless=answer.headless)
    return PermissionAnswer(kind)


def describe_ask(session: str, tool: str, args: dict[str, Any]) -> str:
    """One line naming an ask, e.g. ``session api: write_file a.txt``."""
    what = args.get("path") or args.get("command") or ""
    return f"session {session}: {tool} {what}".rstrip()
