"""The commit message of a squash or merge: drafted by the lane's model from the lane's turns (one
chat-completions request through paragents' client, no tools), or, without a model or when the
request fails, built from the lane's user prompts. The user edits it before merging."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

SYSTEM = (
    "You write git commit messages. Reply with only the message: a subject line of at most 72 "
    "characters in the imperative mood, a blank line, then a short body of plain sentences or '-' "
    "bullets saying what changed and why. No code fences, no preamble."
)
INPUT_LIMIT = 12000
"""Characters of turns, commits and file counts sent in the drafting request."""


class ChatClientLike(Protocol):
    """The part of :class:`paragents.llm.ChatClient` drafting uses."""

    async def stream_chat(
        self, *, model: str, messages: list[dict[str, Any]], tools: Any, session_label: str | None = None
    ) -> Any: ...


@dataclass(frozen=True)
class LaneWork:
    """What the lane did: its user ``prompts`` and the agent's text ``replies`` (oldest first), the
    ``subjects`` of its commits and ``files`` ("path +a -d" lines)."""

    lane: str
    strategy: str
    prompts: tuple[str, ...] = ()
    replies: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


def _first_line(text: str, width: int = 72) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def fallback_message(work: LaneWork) -> str:
    """A message built from the lane's user prompts (its commit subjects when it has no prompts)."""
    lines = [p for p in work.prompts if p.strip()] or list(work.subjects)
    verb = {"squash": "Squash lane", "commit": "Work of lane"}.get(work.strategy, "Merge lane")
    subject = _first_line(lines[0]) if lines else f"{verb} {work.lane}"
    body = [f"- {_first_line(p, 100)}" for p in lines[1:]]
    done = {"squash": "Squashed from", "commit": "Done in"}.get(work.strategy, "Merged from")
    body.append(f"\n{done} lane {work.lane}.")
    return subject + "\n\n" + "\n".join(body).strip()


def drafting_request(work: LaneWork) -> list[dict[str, Any]]:
    """The messages of the drafting request."""
    if work.strategy == "commit":
        parts = [f"Write the commit message for the uncommitted changes of lane {work.lane}."]
    else:
        parts = [f"Write the commit message for the {work.strategy} of lane {work.lane} into its target."]
    parts += ["\nThe user asked:"] + [f"- {p.strip()}" for p in work.prompts]
    if work.replies:
        parts += ["\nThe agent answered (last words of each turn):"] + [
            f"- {r.strip()[-600:]}" for r in work.replies
        ]
    if work.subjects:
        parts += ["\nCommits:"] + [f"- {s}" for s in work.subjects]
    if work.files:
        parts += ["\nFiles changed:"] + [f"- {f}" for f in work.files]
    text = "\n".join(parts)
    if len(text) > INPUT_LIMIT:
        text = text[:INPUT_LIMIT] + "\n(cut)"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def clean_reply(text: str) -> str:
    """The model's reply as a commit message: fences and surrounding blank lines removed."""
    lines = [ln for ln in text.strip().splitlines() if not ln.strip().startswith("```")]
    return "\n".join(lines).strip()


async def draft_message(
    client: ChatClientLike | None, model: str | None, work: LaneWork, *, label: str | None = None
) -> tuple[str, str]:
    """Return (message, where it came from: "model NAME" or a reason for the fallback)."""
    if client is None or not model:
        return fallback_message(work), "built from the lane's prompts (no model configured)"
    try:
        reply = await client.stream_chat(
            model=model, messages=drafting_request(work), tools=None, session_label=label
        )
    except Exception as exc:  # any failure of the endpoint: the fallback is always good enough
        reason = _first_line(str(exc), 60)
        return fallback_message(work), f"built from the lane's prompts; the model failed: {reason}"
    text = clean_reply(getattr(reply, "content", None) or "")
    if not text:
        return fallback_message(work), "built from the lane's prompts (the model sent no text)"
    return text, f"drafted by {model}"


def recent(items: Sequence[str], limit: int = 20) -> tuple[str, ...]:
    """The last ``limit`` non-empty items."""
    return tuple(i for i in items if i.strip())[-limit:]
