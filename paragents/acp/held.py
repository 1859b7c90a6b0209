"""What a prompt for an external agent that cannot continue its conversation is told (no SDK import:
the session layer uses it without loading the ACP SDK)."""

from __future__ import annotations

WAITING_ON = "a new agent session"
"""What such a session's title says it waits on."""


def held_note(prompt: str, *, queued: bool = True) -> str:
    """The note shown when ``prompt`` has to wait for a new agent session (in the queue, or in a turn
    that found out only when it launched the agent)."""
    shown = prompt if len(prompt) <= 80 else prompt[:79] + "…"
    where = "in the queue " if queued else ""
    return (
        f'this prompt waits {where}until a new agent session starts ("Start a new agent session" above '
        f"the prompt, or /agent new): {shown}"
    )
