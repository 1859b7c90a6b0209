"""Facts about local processes from Linux's ``/proc``: a process's parents, its PID namespace, its
terminal, its environment, and which process holds the other end of a local TCP connection. Used to
tell who answers an ask (``paragents.sessions.answerer``). Everything returns None / [] / False when
``/proc`` cannot say (another OS, another user's process, a process that is gone): callers treat an
unknown as unknown, never as proof. Nothing here imports anything of paragents."""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass

PROC = "/proc"
MAX_DEPTH = 64
"""Most parents followed (a loop or a very deep tree stops there)."""


@dataclass(frozen=True, slots=True)
class Proc:
    """One process: ``pid``, its parent ``ppid``, its short ``name`` (comm) and ``start`` (clock ticks
    after boot: with the pid, it names the process even when the pid is reused later)."""

    pid: int
    ppid: int
    name: str
    start: int

    def __str__(self) -> str:
        return f"{self.name}[{self.pid}]"


def read(pid: int) -> Proc | None:
    """The process ``pid`` (from ``/proc/PID/stat``), or None."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as fh:
            data = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    head, _, tail = data.rpartition(")")  # comm may hold spaces and parentheses
    name = head.partition("(")[2]
    fields = tail.split()
    try:
        return Proc(pid, int(fields[1]), name, int(fields[19]))
    except (IndexError, ValueError):
        return None


def ancestry(pid: int) -> list[Proc]:
    """``pid`` and its parents, nearest first, up to (not including) pid 0; [] when unknown."""
    chain: list[Proc] = []
    seen: set[int] = set()
    current = pid
    while current > 0 and current not in seen and len(chain) < MAX_DEPTH:
        seen.add(current)
        proc = read(current)
        if proc is None:
            break
        chain.append(proc)
        current = proc.ppid
    return chain


def pid_namespace(pid: int) -> str | None:
    """The PID namespace of ``pid`` (``pid:[4026531836]``), or None."""
    try:
        return os.readlink(f"{PROC}/{pid}/ns/pid")
    except OSError:
        return None


def terminal(pid: int) -> str | None:
    """The terminal on the process's standard input (``/dev/pts/3``), or None."""
    for fd in (0, 1, 2):
        try:
            target = os.readlink(f"{PROC}/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(("/dev/pts/", "/dev/tty")):
            return target
    return None


def environ_has(pid: int, name: str) -> bool:
    """True when the environment ``pid`` started with holds ``name`` (readable only for our own
    user's processes)."""
    try:
        with open(f"{PROC}/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    key = name.encode() + b"="
    return any(item.startswith(key) for item in data.split(b"\0"))


def _hex_endpoint(host: str, port: int) -> tuple[str, str] | None:
    """``/proc/net/tcp``'s spelling of an address and port (little-endian words), and the file."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    packed = address.packed
    words = [packed[i : i + 4] for i in range(0, len(packed), 4)]
    text = "".join(word[::-1].hex().upper() for word in words)
    return f"{text}:{port:04X}", "tcp" if len(packed) == 4 else "tcp6"


def _socket_inodes(local: tuple[str, int], remote: tuple[str, int]) -> set[str]:
    """Inodes of the sockets whose local end is ``local`` and remote end ``remote``."""
    found: set[str] = set()
    ends = [_hex_endpoint(*local), _hex_endpoint(*remote)]
    if ends[0] is None or ends[1] is None:
        return found
    (want_local, table), (want_remote, _t) = ends[0], ends[1]
    spellings = {(want_local, want_remote)}
    if table == "tcp":  # an IPv4 connection may sit in tcp6 as ::ffff:a.b.c.d
        mapped = [_hex_endpoint(f"::ffff:{h}", p) for h, p in (local, remote)]
        if mapped[0] is not None and mapped[1] is not None:
            spellings.add((mapped[0][0], mapped[1][0]))
    for name in ("tcp", "tcp6"):
        try:
            with open(f"{PROC}/net/{name}", encoding="ascii") as fh:
                next(fh, None)
                for line in fh:
                    parts = line.split()
                    if len(parts) > 9 and (parts[1], parts[2]) in spellings:
                        found.add(parts[9])
        except OSError:
            continue
    return found


def peer_pid(server: tuple[str, int], client: tuple[str, int]) -> int | None:
    """The local process holding the client end of a TCP connection whose server end is ``server``
    (this process's ``sockname``) and client end ``client`` (``peername``): its socket is found in
    ``/proc/net/tcp`` and its owner by the ``socket:[inode]`` links in ``/proc/*/fd``. None when the
    client is not on this host (or in another network namespace), or its process is another user's."""
    inodes = {i for i in _socket_inodes(client, server) if i != "0"}
    if not inodes:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            fds = os.scandir(f"{PROC}/{entry.name}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) in wanted:
                        return int(entry.name)
                except OSError:
                    continue
    return None


def host_name() -> str:
    """This machine's host name."""
    return socket.gethostname() or "localhost"
