"""Text helpers for tool output: decoding, stripping terminal control sequences, and capping.

Everything a tool returns to the model goes through these so it is plain, bounded text.
Escape-sequence forms follow ECMA-48 (CSI, OSC, DCS/SOS/PM/APC strings, two-byte ESC sequences).
"""

from __future__ import annotations

import re

_ANSI_RE = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]                        # CSI ... final byte (colours, cursor moves)
    | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?           # OSC ... BEL or ST (titles, hyperlinks)
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?                # DCS / SOS / PM / APC strings
    | \x1b[ -/]*[0-~]                              # other ESC sequences (charset, keypad...)
    | \x1b                                         # a lone ESC
    | \x9b[0-?]*[ -/]*[@-~]                        # 8-bit CSI
    """,
    re.VERBOSE,
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""C0/C1 control characters other than tab, newline and carriage return."""


def strip_ansi(text: str) -> str:
    """Return ``text`` without terminal escape sequences and control characters.

    Keeps ``\\t``, ``\\n`` and ``\\r``; removes CSI (colours), OSC (titles, hyperlinks: the link
    text stays), DCS strings, other ESC sequences and remaining C0/C1 control characters."""
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI_RE.sub("", text)
    return _CONTROL_RE.sub("", text)


def collapse_carriage_returns(text: str) -> str:
    """Return ``text`` as a terminal would show it line by line: ``\\r\\n`` becomes ``\\n`` and
    within a line only the text after the last lone ``\\r`` is kept (progress bars)."""
    text = text.replace("\r\n", "\n")
    if "\r" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        if "\r" in line:
            parts = [p for p in line.split("\r") if p]
            line = parts[-1] if parts else ""
        lines.append(line)
    return "\n".join(lines)


def decode(data: bytes) -> str:
    """Decode bytes as UTF-8, replacing invalid sequences with U+FFFD."""
    return data.decode("utf-8", errors="replace")


def clean_output(data: bytes) -> str:
    """Decode command output and make it plain text: UTF-8 (replace), carriage returns collapsed,
    escape sequences and control characters stripped."""
    return strip_ansi(collapse_carriage_returns(decode(data)))


def cap_middle(text: str, limit: int) -> str:
    """Return ``text`` cut to about ``limit`` characters by keeping its head and tail, with a line
    ``[... N chars omitted ...]`` in place of the middle when anything was cut."""
    return cap_parts(text, "", limit, 0)


def cap_parts(head: str, tail: str, limit: int, dropped: int) -> str:
    """Join ``head`` and ``tail`` (the two ends of a text whose middle, ``dropped`` characters long,
    was already discarded) into at most about ``limit`` characters.

    Keeps about two thirds of the room from the start and the rest from the end. When anything is
    missing, a line ``[... N chars omitted ...]`` (N counting ``dropped`` too) marks the gap; the
    result, marker included, is at most ``limit`` characters (for limits above ~40)."""
    if dropped == 0:
        head, tail = head + tail, ""
        if len(head) <= limit:
            return head
    # Reserve room for the marker line (its count can only be smaller than this one).
    reserve = len(f"[... {dropped + len(head) + len(tail)} chars omitted ...]\n") + 1
    budget = max(limit - reserve, 0)
    if len(head) + len(tail) <= budget:
        keep_head, keep_tail = head, tail
    else:
        keep_head = head[: budget * 2 // 3]
        rest = head[len(keep_head) :] + tail
        tail_budget = budget - len(keep_head)
        keep_tail = rest[len(rest) - tail_budget :] if tail_budget > 0 else ""
    omitted = dropped + len(head) + len(tail) - len(keep_head) - len(keep_tail)
    if keep_head and not keep_head.endswith("\n"):
        keep_head += "\n"
    return f"{keep_head}[... {omitted} chars omitted ...]\n{keep_tail}"


def cap_tail(text: str, limit: int, note: str) -> str:
    """Return ``text`` cut to ``limit`` characters (keeping the start) followed by ``note`` on its
    own line when it was longer; else ``text`` unchanged."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    nl = cut.rfind("\n")
    if nl > limit // 2:
        cut = cut[: nl + 1]
    if not cut.endswith("\n"):
        cut += "\n"
    return cut + note


def shorten(text: str, width: int = 80) -> str:
    """Return ``text`` on one line (whitespace runs collapsed, control characters removed) and at
    most ``width`` characters, ending with ``…`` when cut."""
    one = " ".join(strip_ansi(text).split())
    if len(one) <= width:
        return one
    return one[: width - 1] + "…"
