"""Who answers an ask, and whether it may: a session must not approve its own asks (issue 25).

An ask is answered by a person: at the process that waits on it (the TUI's bar, ``paragents run``'s
prompt), with ``paragents approve`` from a terminal, or through ``paragents serve``'s HTTP API. A
*session's tool* may not answer: any process paragents started for a session (its commands and their
children, ACP agents and their terminals, MCP servers, lane setup and verify commands, a git hook
paragents' own git ran) is a descendant of the paragents process that runs the session. So:

- :func:`tool_reason` walks the answering process's parents (``/proc``): a parent that is a live
  paragents process running sessions (a session holder, or the process waiting on a pending ask;
  ``ApprovalsRepo.engine_processes``) refuses it; so does a process (or parent) whose environment carries
  :data:`TOOL_ENV` (set on every command paragents runs: it survives a background job that outlives
  its command and is adopted by init), and one in another PID namespace than the checking process
  (a sandbox; for the HTTP API);
- :func:`cli_check` adds, for ``paragents approve`` itself: a paragents process on this host whose
  heartbeat is fresh but whose pid is not visible from here means this process runs in another PID
  namespace (a sandbox), and is refused.

What this does not stop, and ``docs/security.md`` says so: an *unsandboxed* session (sandbox off, or
bypassPermissions with the sandbox off) runs as the user; a command that double-forks and calls
``setsid`` with a cleaned environment, or asks a process outside paragents' tree to run it (``at``,
``systemd-run --user``, an existing tmux server), is indistinguishable from the user, and it can also
open the SQLite store itself. The sandbox is what stops that: it hides paragents' state and config
directories (the store, the API key) and puts the command in its own PID and network namespaces.

Every answer records who gave it (:func:`describe`): ``cli (pid N, tty /dev/pts/3, parents
bash[120] < sshd[99])``, ``web:key (client 192.168.1.20:5123)`` ... Nothing here imports Textual."""

from __future__ import annotations

import os
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paragents import procs
from paragents.tools.shell import TOOL_ENV

if TYPE_CHECKING:
    from paragents.store.approvals import ApprovalsRepo

FRESH = 30.0
"""Seconds since a paragents process's last sign of life within which it counts as running (its
heartbeat comes every 15 s)."""
SHOWN_PARENTS = 3
"""Parents named in an answer's record."""


@dataclass(frozen=True, slots=True)
class Answerer:
    """Who is answering: ``label`` as the approval row and the audit log keep it, and ``refused`` why
    this process may not answer (None: it may)."""

    label: str
    refused: str | None = None


def tool_reason(pid: int, engines: Collection[int], *, same_namespace: bool = True) -> str | None:
    """Why process ``pid`` is a session's tool (it may not answer asks), or None. ``engines``: the
    pids of the paragents processes on this host that run sessions. ``same_namespace``: also refuse a
    process in another PID namespace than this one (the HTTP API checking its client)."""
    chain = procs.ancestry(pid)
    for proc in chain[1:]:
        if proc.pid in engines:
            return (
                f"process {pid} was started by paragents ({proc}, which runs sessions): a session's "
                "commands, agents and servers may not answer its asks"
            )
    for proc in chain:
        if proc.pid not in engines and procs.environ_has(proc.pid, TOOL_ENV):
            return (
                f"process {pid} comes from a session's command ({proc} carries {TOOL_ENV}): a session "
                "may not answer its own asks"
            )
    if same_namespace:
        mine, theirs = procs.pid_namespace(os.getpid()), procs.pid_namespace(pid)
        if mine is not None and theirs is not None and mine != theirs:
            return f"process {pid} runs in another PID namespace (a sandbox): it may not answer asks"
    return None


def describe(kind: str, pid: int, extra: str = "") -> str:
    """The answer's record: ``cli (pid 12, tty /dev/pts/3, parents bash[10] < tmux: server[2])``."""
    chain = procs.ancestry(pid)
    parts = [f"pid {pid}"]
    tty = procs.terminal(pid)
    parts.append(f"tty {tty}" if tty else "no tty")
    if len(chain) > 1:
        parts.append("parents " + " < ".join(str(p) for p in chain[1 : 1 + SHOWN_PARENTS]))
    if extra:
        parts.insert(0, extra)
    return f"{kind} ({', '.join(parts)})"


async def engines_of(approvals: ApprovalsRepo) -> list[tuple[int, float]]:
    """The paragents processes on this host that run sessions: ``(pid, last sign of life)``."""
    return await approvals.engine_processes()


async def cli_check(approvals: ApprovalsRepo) -> Answerer:
    """Who this ``paragents approve`` process is, and whether it may answer (see the module)."""
    pid = os.getpid()
    label = describe("cli", pid)
    engines = await engines_of(approvals)
    live = [p for p, stamp in engines if time.time() - stamp <= FRESH]
    why = tool_reason(pid, {p for p, _stamp in engines}, same_namespace=False)
    if why is None and live and not any(_visible(p) for p in live):
        why = (
            f"the paragents process running sessions here (pid {live[0]}) is not visible from this "
            "process: it runs in another PID namespace (a sandbox) and may not answer asks (if "
            f"paragents stopped in the last {FRESH:.0f} s, try again)"
        )
    return Answerer(label, why)


def _visible(pid: int) -> bool:
    return procs.read(pid) is not None


def has_terminal() -> bool:
    """True when this process has a controlling terminal (``/dev/tty`` opens): ``--always`` needs one."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


async def http_check(
    approvals: ApprovalsRepo, server: tuple[str, int], client: tuple[str, int], by: str
) -> Answerer:
    """Who answers through the HTTP API (``by``: ``web:key``, ``web:cookie``...) from ``client`` to
    ``server``, and whether it may: a client on this host is looked up (``/proc/net/tcp``) and refused
    when it is a session's tool or sandboxed (see :func:`tool_reason`); this process counts as one
    that runs sessions."""
    where = f"client {client[0]}:{client[1]}"
    pid = procs.peer_pid(server, client)
    if pid is None:
        return Answerer(f"{by} ({where})")
    engines = {p for p, _stamp in await engines_of(approvals)} | {os.getpid()}
    why = tool_reason(pid, engines)
    return Answerer(describe(by, pid, where), why)
