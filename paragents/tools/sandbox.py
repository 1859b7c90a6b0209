"""Confinement of ``run_command`` with bubblewrap (``bwrap``, https://github.com/containers/bubblewrap).

A :class:`SandboxConfig` (frozen) says how a session's commands run; :func:`check` says whether they
can be confined here (``on``), run unconfined (``unconfined``: mode "auto" without bwrap or off
Linux), must not run (``refused``: mode "required" without bwrap) or are not confined by choice
(``off``); :func:`bwrap_argv` builds the command line that wraps ``bash -c``:

- the whole filesystem read-only (``--ro-bind / /``), a fresh ``/dev`` and ``/proc``, a private
  empty ``/tmp``;
- writable: the session's root (its working directory, or the root a caller passes, e.g. a lane's
  worktree) and the existing paths of ``writable``, except the files that change paragents' security
  posture (:func:`paragents.protected.protected_paths`: its config and permission files, ``.mcp.json``,
  lane setup files, ``.git/config`` and hooks), bound read-only over themselves;
- hidden: paths that ``Read(...)`` deny rules name (a directory gets an empty read-only tmpfs, a
  file an empty read-only file bound over it);
- its own PID and IPC namespaces, so killing bwrap ends every process of the command
  (``--die-with-parent``); no capabilities (``--cap-drop ALL``: bwrap run by root keeps them
  otherwise, and could remount ``/`` read-write); no network (``--unshare-net``) unless
  ``network`` is ``"all"``. There is no loopback-only mode: a network namespace has its own
  loopback, so host servers on 127.0.0.1 are unreachable with the network off.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Literal

import pathspec

from paragents.protected import protected_paths

SandboxMode = Literal["off", "auto", "required"]
NetworkMode = Literal["none", "all"]
SandboxState = Literal["on", "unconfined", "refused", "off"]

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; "
    'Arch: pacman -S bubblewrap) or set sandbox.mode to "auto" or "off"'
)
BASE_FLAGS = (
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL",
)  # fmt: skip
"""Flags every sandboxed command gets (see the module docstring)."""
HIDE_WALK_LIMIT = 5000
"""Most directory entries looked at to expand the glob patterns of Read deny rules, per command."""
SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})
"""Directories not searched for glob matches (too big to walk on every command)."""
_GLOB_CHARS = frozenset("*?[\\")


@dataclass(frozen=True)
class SandboxConfig:
    """How one session's commands are confined.

    - ``mode``: "off" (never), "auto" (when bwrap works, else unconfined with a warning),
      "required" (never run a command unconfined).
    - ``network``: "none" (own empty network namespace) or "all" (the host's network).
    - ``writable``: more writable paths (``~`` expanded; relative ones are under the root).
    - ``hidden_rules``: ``(root, gitignore pattern)`` pairs of Read deny rules (paths to hide).
    - ``root``: the writable root; None means the command's working directory.
    - ``auto_allow``: commands that would ask only because they are commands run without asking.
    - ``bwrap``: the bwrap program (a name looked up in PATH, or a path).
    """

    mode: SandboxMode = "auto"
    network: NetworkMode = "none"
    writable: tuple[str, ...] = ()
    hidden_rules: tuple[tuple[str, str], ...] = ()
    root: Path | None = None
    auto_allow: bool = False
    bwrap: str = "bwrap"


@dataclass(frozen=True)
class SandboxStatus:
    """What :func:`check` found: ``state``, a sentence for people and the bwrap path (when found)."""

    state: SandboxState
    message: str
    bwrap: str | None = None

    @property
    def active(self) -> bool:
        """True when commands run inside bwrap."""
        return self.state == "on"


@lru_cache(maxsize=8)
def _probe(bwrap: str) -> str | None:
    """Run ``bwrap <BASE_FLAGS> --unshare-net true`` once per path; return None or why it failed."""
    try:
        done = subprocess.run(
            [bwrap, *BASE_FLAGS, "--unshare-net", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
        return text.splitlines()[-1]
    return None


def check(config: SandboxConfig, platform: str = sys.platform) -> SandboxStatus:
    """Return whether commands under ``config`` run confined, unconfined or not at all (and why)."""
    if config.mode == "off":
        return SandboxStatus("off", "commands run unconfined")
    found = shutil.which(config.bwrap) if platform.startswith("linux") else None
    if not platform.startswith("linux"):
        why = f"sandboxing needs Linux and bubblewrap (this is {platform})"
    elif found is None:
        why = f"bubblewrap ({config.bwrap}) was not found"
    else:
        error = _probe(found)
        if error is None:
            net = "no network" if config.network == "none" else "full network"
            return SandboxStatus("on", f"sandboxed with {found}: read-only outside the root, {net}", found)
        why = f"{found} cannot create a sandbox here ({error})"
    if config.mode == "required":
        return SandboxStatus("refused", f"sandbox required but {why}: not run; {INSTALL_HINT}", found)
    return SandboxStatus("unconfined", f"sandbox unavailable ({why}): commands run unconfined", found)


@lru_cache(maxsize=1)
def _empty_file() -> str:
    """Return the path of an empty read-only file (bound over hidden files); removed at exit."""
    fd, name = tempfile.mkstemp(prefix="paragents-hidden-")
    os.close(fd)
    os.chmod(name, 0o444)
    atexit.register(_remove, name)
    return name


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _literal_prefix(pattern: str) -> tuple[list[str], bool]:
    """Split a gitignore pattern into its leading glob-free components and whether that is all of it."""
    parts = [p for p in pattern.strip("/").split("/") if p]
    literal: list[str] = []
    for part in parts:
        if _GLOB_CHARS & set(part):
            return literal, False
        literal.append(part)
    return literal, True


def hidden_paths(rules: Iterable[tuple[str, str]], search_root: Path) -> list[Path]:
    """Return the existing paths that the Read deny ``rules`` ((root, pattern) pairs) name.

    An anchored glob-free pattern names one path; ``dir/**`` names ``dir``; other patterns are expanded
    below their glob-free directory (below ``search_root`` when that is ``/``), looking at no more
    than :data:`HIDE_WALK_LIMIT` entries and skipping :data:`SKIPPED_DIRS`."""
    found: dict[str, None] = {}
    budget = [HIDE_WALK_LIMIT]
    for root, pattern in rules:
        stem = pattern[:-3] if pattern.endswith("/**") else pattern
        anchored = "/" in pattern.rstrip("/")  # gitignore: else it matches at any depth
        literal, complete = _literal_prefix(stem) if anchored else ([], False)
        if complete:
            path = os.path.join(root, *literal)
            if path != "/" and os.path.lexists(path):
                found[os.path.realpath(path)] = None
            continue
        base = os.path.join(root, *literal)
        if base == "/":
            base = str(search_root)
        for path in _walk_matches(base, _matcher(root, pattern, anchored), budget):
            found[os.path.realpath(path)] = None
    return [Path(p) for p in found]


def _matcher(root: str, pattern: str, anchored: bool) -> Callable[[str, str, bool], bool]:
    """Return ``match(path, name, is_dir)`` for a gitignore ``pattern`` relative to ``root``."""
    if not anchored:  # a slash-free pattern matches names (fnmatch is much faster than pathspec)
        name_pattern, dir_only = pattern.rstrip("/"), pattern.endswith("/")
        return lambda _path, name, is_dir: (is_dir or not dir_only) and fnmatchcase(name, name_pattern)
    spec = pathspec.PathSpec.from_lines("gitignore", [pattern])
    prefix = root.rstrip("/") + "/"
    return lambda path, _name, is_dir: spec.match_file(path.removeprefix(prefix) + ("/" if is_dir else ""))


def _walk_matches(base: str, match: Callable[[str, str, bool], bool], budget: list[int]) -> Iterable[str]:
    """Yield the paths under ``base`` that ``match`` (not those below a matching directory)."""
    for top, dirs, files in os.walk(base):
        kept = []
        for name in dirs:
            budget[0] -= 1
            path = os.path.join(top, name)
            if match(path, name, True):
                yield path
            elif name not in SKIPPED_DIRS:
                kept.append(name)
        dirs[:] = kept
        for name in files:
            budget[0] -= 1
            path = os.path.join(top, name)
            if match(path, name, False):
                yield path
        if budget[0] <= 0:
            return


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def bwrap_argv(bwrap: str, config: SandboxConfig, cwd: Path, command: Sequence[str]) -> list[str]:
    """Return the argv running ``command`` in ``cwd`` inside bwrap under ``config`` (see the module)."""
    root = os.path.realpath(config.root or cwd)
    argv = [bwrap, *BASE_FLAGS, "--tmpfs", "/tmp"]
    if config.network == "none":
        argv.append("--unshare-net")
    binds = [root]
    for text in config.writable:
        path = os.path.realpath(os.path.join(root, os.path.expanduser(text)))
        if os.path.exists(path) and path not in binds:
            binds.append(path)
    for path in binds:
        argv += ["--bind", path, path]
    # --- protected paths: read-only inside every writable root (paragents.protected, issue 25) ---
    for path in protected_paths(binds):
        argv += ["--ro-bind", path, path]
    # --- end of protected paths ---
    for hidden in hidden_paths(config.hidden_rules, Path(root)):
        text = str(hidden)
        if text == "/" or (_under(text, ["/tmp"]) and not _under(text, binds)):
            continue  # the private /tmp already hides it
        if any(_under(bind, [text]) for bind in binds):
            continue  # hiding it would hide the writable root (or a writable path) too
        if hidden.is_dir():
            argv += ["--tmpfs", text, "--remount-ro", text]
        else:
            argv += ["--ro-bind", _empty_file(), text]
    argv += ["--chdir", str(cwd), "--", *command]
    return argv


def describe(config: SandboxConfig, status: SandboxStatus, cwd: Path) -> str:
    """Return the few lines ``/sandbox`` shows: mode, state, network, writable and hidden paths."""
    root = config.root or cwd
    lines = [f"sandbox mode {config.mode}: {status.message}"]
    if status.state in ("on", "refused"):
        net = "none (own loopback only)" if config.network == "none" else "all (the host's network)"
        lines.append(f"network: {net}")
        lines.append("writable: " + ", ".join([str(root), "/tmp (private)", *config.writable]))
        hidden = hidden_paths(config.hidden_rules, Path(root))
        lines.append("hidden: " + (", ".join(str(p) for p in hidden) if hidden else "(none)"))
        lines.append(f"auto-allow of commands: {'on' if config.auto_allow else 'off'}")
    lines.append("switch with /sandbox off|auto|required")
    return "\n".join(lines)
