"""When a turn ends with a question to the user (the "needs you: question" kind).

The heuristic, kept simple and predictable: the turn's last reply has no tool calls and ended with
``finish_reason`` "stop" (or none reported), and its last paragraph, once trailing markdown
emphasis, quotes and brackets are stripped, ends with a question mark ("?" or the full-width "？").
A reply cut off by the length limit is not a question; a question in the middle of a reply that then
goes on is not either. Code blocks at the end are not paragraphs of prose, so a reply ending in a
fence is not a question. Nothing here imports Textual.
"""

from __future__ import annotations

import re

from paragents.models import AssembledReply

_TRAILING = "*_`'\")]}> \t"
_MAX = 300


def question_of(reply: AssembledReply) -> str | None:
    """Return the question the reply ends with (its last paragraph, at most 300 characters), or None."""
    if reply.tool_calls or reply.finish_reason not in ("stop", None) or not reply.content:
        return None
    return ends_with_question(reply.content)


def ends_with_question(text: str) -> str | None:
    """Return the last paragraph of ``text`` when it ends with a question mark, else None."""
    stripped = text.strip()
    if not stripped or stripped.endswith("```"):
        return None
    last = re.split(r"\n\s*\n", stripped)[-1].strip()
    if not last.rstrip(_TRAILING).endswith(("?", "？")):
        return None
    last = " ".join(last.split())
    return last if len(last) <= _MAX else "…" + last[-(_MAX - 1) :]
