"""A private scratch dir per run whose on-screen name is stable, and screenshots that show it so.

A fixed dir such as ``/tmp/paragents-demo-snapshot`` is shared by every checkout on the machine: two
runs at once delete each other's workspace. :func:`private_root` makes ``/tmp/paragents-demo-XXXXXXXX``
(8 random lower-case letters, so exactly as long as ``snapshot``) and :func:`export_screenshot`
renders the screen with those 8 characters shown as ``snapshot``: layout, wrapping and ellipses are
those of the fixed name, so the SVG is byte-for-byte the one the fixed dir gave. Letters only (not
``mkdtemp``'s digits and ``_``): the local token estimate counts each digit as a token, and the
working directory is part of the system prompt, so a name with digits changed a session's
"20.0k tok" to "19.9k tok" in about one run in six."""

from __future__ import annotations

import io
import random
import string
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.segment import Segment

PREFIX = "paragents-demo-"
SHOWN = "snapshot"
"""What the random part of the dir name reads on screen (as long as mkdtemp's 8 characters)."""


def private_root() -> Path:
    """A new empty dir ``/tmp/paragents-demo-XXXXXXXX`` of this run (the caller removes it)."""
    rng = random.SystemRandom()
    while True:
        root = Path("/tmp", PREFIX + "".join(rng.choices(string.ascii_lowercase, k=len(SHOWN))))
        try:
            root.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return root


def shown_as_fixed(text: str, token: str) -> str:
    """``text`` with every ``PREFIX + token`` (or the start of it an ellipsis left) read as ``SHOWN``."""
    chars = list(text)
    start = text.find(PREFIX)
    while start >= 0:
        at = start + len(PREFIX)
        for i, (mine, shown) in enumerate(zip(token, SHOWN, strict=True)):
            if at + i >= len(chars) or chars[at + i] != mine:
                break
            chars[at + i] = shown
        start = text.find(PREFIX, at)
    return "".join(chars)


def _normalised(segments: list[Segment], token: str) -> list[Segment]:
    """Rewrite ``token`` across segment boundaries (same length: every segment keeps its length)."""
    joined = shown_as_fixed("".join(s.text for s in segments), token)
    out, at = [], 0
    for seg in segments:
        out.append(Segment(joined[at : at + len(seg.text)], seg.style, seg.control))
        at += len(seg.text)
    return out


def export_screenshot(app: Any, root: Path) -> str:
    """``app.export_screenshot()`` with ``root``'s random name part shown as :data:`SHOWN`."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    token = root.name.removeprefix(PREFIX)
    with console._record_buffer_lock:
        console._record_buffer[:] = _normalised(list(console._record_buffer), token)
    return console.export_svg(title=app.title)
