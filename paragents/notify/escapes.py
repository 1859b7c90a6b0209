"""Terminal notification escape sequences, chosen from the environment.

Which sequence (``method`` "auto"):

- OSC 99 (kitty's desktop notifications) when ``KITTY_WINDOW_ID`` is set or ``TERM`` is xterm-kitty;
- OSC 777 (``notify;title;body``) for VTE terminals (``VTE_VERSION``: GNOME Terminal, Tilix...) and
  foot, which do not show OSC 9;
- OSC 9 for iTerm2, WezTerm (``WEZTERM_PANE``), Ghostty, Windows Terminal (``WT_SESSION``), ConEmu;
- otherwise only the BEL.

Every notification ends with a BEL outside any passthrough, so tmux flags the window (and terminals
that show nothing else still beep or mark the tab). Under tmux (``$TMUX``) the sequence is wrapped in
tmux's DCS passthrough (``ESC P tmux; ... ESC \\`` with each ESC doubled; tmux needs
``allow-passthrough on``), under GNU screen (``$STY``) in screen's DCS. Text is stripped of control
characters (C0, DEL, C1) before it goes into a sequence, and ``;`` is replaced where it separates fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

ESC = "\x1b"
BEL = "\x07"
ST = ESC + "\\"
METHODS = ("osc9", "osc777", "osc99", "bel", "off")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_OSC9_TERMS = {"iTerm.app", "WezTerm", "ghostty", "vscode"}


def clean(text: str, limit: int = 200) -> str:
    """Return ``text`` without control characters (newlines and tabs become spaces), at most
    ``limit`` characters."""
    text = re.sub(r"[\n\r\t]+", " ", text)
    text = _CONTROL.sub("", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def choose_method(env: Mapping[str, str], configured: str = "auto") -> str:
    """Return the sequence to use: ``configured`` unless "auto", else one chosen from ``env``."""
    if configured != "auto":
        return configured
    term = env.get("TERM", "")
    program = env.get("TERM_PROGRAM", "")
    if env.get("KITTY_WINDOW_ID") or term == "xterm-kitty":
        return "osc99"
    if env.get("WEZTERM_PANE") or program in _OSC9_TERMS or env.get("WT_SESSION") or env.get("ConEmuPID"):
        return "osc9"
    if env.get("VTE_VERSION") or term.startswith("foot"):
        return "osc777"
    if term == "xterm-ghostty":
        return "osc9"
    return "bel"


def _raw(method: str, title: str, body: str) -> str:
    if method == "osc9":
        return f"{ESC}]9;{title}: {body}{BEL}"
    if method == "osc777":
        return f"{ESC}]777;notify;{title.replace(';', ',')};{body.replace(';', ',')}{BEL}"
    if method == "osc99":
        return f"{ESC}]99;i=1:d=0;{title}{ST}{ESC}]99;i=1:d=1:p=body;{body}{ST}"
    return ""


def wrap(sequence: str, env: Mapping[str, str]) -> str:
    """Wrap ``sequence`` for tmux (``$TMUX``) or screen (``$STY``) so it reaches the outer terminal."""
    if not sequence:
        return ""
    if env.get("TMUX"):
        return f"{ESC}Ptmux;{sequence.replace(ESC, ESC + ESC)}{ST}"
    if env.get("STY"):
        return f"{ESC}P{sequence}{ST}"
    return sequence


def notification_bytes(title: str, body: str, env: Mapping[str, str], method: str = "auto") -> str:
    """Return what to write to the terminal for one notification: the chosen sequence (wrapped for
    tmux/screen) and always a BEL; "" when ``method`` is "off"."""
    chosen = choose_method(env, method)
    if chosen == "off":
        return ""
    return wrap(_raw(chosen, clean(title, 80), clean(body)), env) + BEL


def title_sequence(title: str) -> str:
    """Return OSC 2 setting the terminal (tmux: pane) title to ``title`` (control characters stripped)."""
    return f"{ESC}]2;{clean(title, 80)}{BEL}"
