"""Outbound notifications: ``notify.webhook`` (one JSON POST each) and ``notify.command`` (argv).

The webhook body carries the text under the keys the common receivers read: ``text`` (Slack),
``content`` (Discord), ``title`` / ``message`` (ntfy's JSON publishing, with ``topic`` taken from
the URL's last path segment when the URL has one), plus ``session`` and ``kind``. A POST that times
out, fails to connect or answers 5xx/429 is retried with exponential backoff (``delays``); the
caller runs it in a background task so no turn ever waits on it, and a final failure is returned as
readable text (the notifier keeps it where the overview shows it). ``notify.command`` runs with the
notification text as its last argument, never through a shell; a program that does not exist is
reported the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlparse

import httpx

from paragents.notify.escapes import clean

DELAYS = (0.5, 2.0, 8.0)
"""Seconds to wait before each retry of a failed webhook POST."""


def webhook_body(url: str, title: str, text: str, session: str, kind: str) -> dict[str, Any]:
    """Return the JSON body of one webhook POST (see module docstring); every string is cleaned."""
    title, text = clean(title, 80), clean(text, 500)
    line = f"{title}: {text}"
    body: dict[str, Any] = {
        "text": line,
        "content": line,
        "title": title,
        "message": text,
        "session": clean(session, 80),
        "kind": kind,
    }
    topic = urlparse(url).path.rstrip("/").rsplit("/", 1)[-1]
    if topic:
        body["topic"] = topic
    return body


async def post_webhook(
    url: str,
    body: dict[str, Any],
    *,
    delays: Sequence[float] = DELAYS,
    timeout: float = 5.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    client: httpx.AsyncClient | None = None,
) -> str | None:
    """POST ``body`` to ``url``, retrying per ``delays``; return None when delivered, else why not."""
    own = client is None
    http = client or httpx.AsyncClient(timeout=timeout)
    why = ""
    try:
        for attempt in range(len(delays) + 1):
            try:
                response = await http.post(url, json=body)
                if response.status_code < 400:
                    return None
                why = f"HTTP {response.status_code}"
                if response.status_code < 500 and response.status_code != 429:
                    break  # a 4xx will not get better by retrying
            except httpx.HTTPError as exc:
                why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if attempt < len(delays):
                await sleep(delays[attempt])
        return f"webhook {clean(url, 120)} failed: {clean(why, 200)}"
    finally:
        if own:
            await http.aclose()


async def run_command(argv: Sequence[str], text: str, timeout: float = 10.0) -> str | None:
    """Run ``argv`` + [text] without a shell; return None when it exited 0, else why not."""
    if not argv:
        return None
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            clean(text, 500),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError as exc:
        return f"notify.command {clean(argv[0], 80)!r} could not run: {exc.strerror or exc}"
    try:
        code = await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        proc.kill()
        return f"notify.command {clean(argv[0], 80)!r} did not finish in {timeout:.0f} s"
    return None if code == 0 else f"notify.command {clean(argv[0], 80)!r} exited with {code}"
