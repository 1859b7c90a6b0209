"""The title line of a session's panel (ui/widgets/session_panel.py), rendered from its ``SessionView``.

Everything shown comes from the view except what only the panel knows: its number, how long the
pending model request has waited for its first token, and the budget hooks' spend label."""

from __future__ import annotations

from rich.text import Text

from paragents.events import AgentControlsChanged
from paragents.models import SessionState
from paragents.sessions import SessionView
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.text import clean, shorten
from paragents.ui.widgets.budget_bar import pause_title

STATE_STYLES = {
    SessionState.IDLE: "green",
    SessionState.QUEUED: "yellow",
    SessionState.RUNNING: "bold cyan",
    SessionState.WAITING: "bold yellow",
    SessionState.BUDGET: "bold red",
    SessionState.PAUSED: "bold magenta",
    SessionState.FAILED: "bold red",
    SessionState.INTERRUPTED: "red",
    SessionState.CLOSED: "dim",
}


def format_tokens(count: int) -> str:
    """Return a token count in short form: 950 → "950", 12 345 → "12.3k", 2 500 000 → "2.5M"."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def over_window(view: SessionView) -> bool:
    """True when the session's context (the last request's prompt and reply, the size of the next
    request) is larger than its model's context window."""
    return view.context_window > 0 and view.context_tokens > view.context_window


def over_window_notice(view: SessionView) -> str:
    """The transcript's warning when the context outgrew the window (see :func:`over_window`)."""
    return (
        f"The context ({view.context_tokens:,} tokens) is larger than the context window of "
        f"{clean(view.model) or 'the model'} ({view.context_window:,} tokens): the server may cut or "
        "refuse the next request. /compact or /clear it, or set the model's context_window if the "
        "window is larger."
    )


def title_text(
    view: SessionView,
    number: int,
    controls: AgentControlsChanged | None,
    *,
    waited: int | None = None,
    budget_label: str = "",
) -> Text:
    """Return the title line: number, name, model, state, mode, tokens, context %, queue, asks.

    ``controls``: what the session's external ACP agent offers (its model and mode are shown), or
    None; ``waited``: whole seconds the pending model request has waited for its first token;
    ``budget_label``: the session's spend against its cap ("$0.03 of $0.05 (60%)")."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{number} ", style="bold reverse")
    text.append(" ")
    sep = f" {glyphs().sep} "
    text.append(shorten(view.name, 40), style="bold")
    text.append(sep)
    text.append(shorten(view.model or "(no model)", 40))
    if controls is not None and controls.model:
        text.append(f" ({shorten(controls.model, 30)})")
    text.append(sep)
    state, pause = view.state, view.open_pause
    if state is SessionState.WAITING and view.waiting_on:
        text.append(f"waiting on {shorten(view.waiting_on, 40)}", style=STATE_STYLES[state])
    elif waited is not None and state is SessionState.RUNNING:
        text.append(f"waiting for first token, {waited} s", style=STATE_STYLES[state])
    elif state is SessionState.QUEUED and view.state_detail:
        text.append(f"queued: {shorten(view.state_detail, 80)}", style=STATE_STYLES[state])
    elif state is SessionState.BUDGET and pause is not None:
        text.append(pause_title(pause), style=STATE_STYLES[state])
    else:
        text.append(state.value, style=STATE_STYLES.get(state, ""))
    if controls is not None and controls.mode:  # an ACP agent's own mode
        agent, mode = shorten(controls.agent, 20), shorten(controls.mode, 24)
        text.append(f"{sep}{agent} mode {mode}", style="bold")
    if view.lane_conflicts and view.lane:
        more = f" +{len(view.lane_conflicts) - 1}" if len(view.lane_conflicts) > 1 else ""
        said = shorten(clean(view.lane_conflicts[0].title(view.lane)), 48)
        text.append(f"{sep}{glyphs().warn} {said}{more}", style="bold red")
    text.append(f"{sep}{clean(view.mode)}")
    if view.usage.total_tokens or controls is None:  # an agent that reports none: no "0 tok"
        text.append(f"{sep}{format_tokens(view.usage.total_tokens)} tok")
    if view.context_window > 0:
        pct = round(100 * view.context_tokens / view.context_window)
        if over_window(view):  # the configured window is wrong, or the next request will not fit
            text.append(f"{sep}{glyphs().warn} ctx {pct}% over the window", style="bold white on red")
        else:
            text.append(f"{sep}ctx {pct}%", style="bold red" if pct >= 80 else "")
    if budget_label:
        text.append(f"{sep}{budget_label}", style="bold red" if state is SessionState.BUDGET else "")
    if view.queue:
        text.append(f"{sep}{len(view.queue)} queued", style="yellow")
    asks = len(view.open_asks) + len(view.open_conflicts) + (pause is not None)
    if asks:
        text.append(f"{sep}{glyphs().warn} {asks} needs you", style="bold yellow")
    return text
