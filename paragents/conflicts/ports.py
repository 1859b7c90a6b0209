"""The TCP ports a shell command names, so a command that binds (or talks to) another lane's port is
caught by the conflict checker: lanes hold their block of ports as ``port:N`` reservations.

Read from the command's words (no shell): ``--port N`` / ``--port=N`` and the like (``--http-port``,
``--listen-port``), ``-p N`` and docker's ``-p HOST:CONTAINER``, ``PORT=N`` assignments and
``env PORT=N``, ``host:N`` (``localhost:N``, ``127.0.0.1:N``, ``0.0.0.0:N``, ``[::]:N``, in URLs
too), and ``http.server N``."""

from __future__ import annotations

import re
import shlex

PORT_PREFIX = "port:"
"""Reservations of ports store their path as ``port:N``."""

_HOST_PORT = re.compile(r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|::)[:](\d{2,5})(?!\d)")
_ASSIGN = re.compile(r"^(?:[A-Z_]*_)?PORT=(\d{2,5})$")
_LONG = re.compile(r"^--(?:[a-z-]*-)?port(?:=(\d{2,5}))?$")
_DOCKER = re.compile(r"^(?:[\d.]+:)?(\d{2,5}):\d{1,5}(?:/(?:tcp|udp))?$")


def _port(text: str | None) -> int | None:
    if text is None or not text.isdigit():
        return None
    value = int(text)
    return value if 1 <= value <= 65535 else None


def command_ports(command: str) -> tuple[int, ...]:
    """Return the ports named in ``command`` (a bash line), in order, without repeats."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    found: list[int] = []

    def add(value: int | None) -> None:
        if value is not None and value not in found:
            found.append(value)

    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if match := _ASSIGN.match(word):
            add(_port(match.group(1)))
        elif match := _LONG.match(word):
            add(_port(match.group(1) if match.group(1) else nxt))
        elif word == "-p" and nxt is not None:
            docker = _DOCKER.match(nxt)
            add(_port(docker.group(1)) if docker else _port(nxt))
        elif word == "http.server" and nxt is not None:
            add(_port(nxt))
        for match in _HOST_PORT.finditer(word):
            add(_port(match.group(1)))
    return tuple(found)
