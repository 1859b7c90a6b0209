"""Confinement of ``run_command`` with bubblewrap (``bwrap``, https://github.com/containers/bubblewrap).

A :class:`SandboxConfig` (frozen) says how a session's commands run; :func:`check` says whether they
can be confined here (``on``), run unconfined (``unconfined``: mode "auto" without bwrap or off
Linux), must not run (``refused``: mode "required" without bwrap) or are not confined by choice
(``off``); :func:`bwrap_argv` builds the command line that wraps ``bash -c``:

- the whole filesystem read-only (``--ro-bind / /``), a fresh ``/dev`` and ``/proc``, a private
  empty ``/tmp``;
- writable: the session's root (its working directory, or the root a caller passes, e.g. a lane's
  worktree), the existing paths of ``writable``, the session's private cache area (``UV_CACHE_DIR``,
  ``npm_config_cache``, ``PIP_CACHE_DIR``, ``XDG_CACHE_HOME`` point there) and the root's own git
  state, but never what host-side git executes (paragents.tools.sandbox_git), nor the files that
  change paragents' security posture (:func:`paragents.protected.protected_paths`: its config and
  permission files, ``.mcp.json``, lane setup files, ``.git/config`` and hooks), bound read-only over
  themselves;
- hidden: paragents' config and state directories, the usual credential places, the host's
  runtime socket directories and Unix sockets (paragents.tools.sandbox_hide), the ``hidden`` paths
  of the config (a directory gets an empty tmpfs of its own, mode 0555, that nothing outside the
  command sees; a file or socket an empty read-only file), and the paths that ``Read(...)`` deny
  rules name (an empty read-only tmpfs or file);
- its own user, PID and IPC namespaces, and no new user namespaces inside (``--disable-userns``,
  when this bwrap supports it), so killing bwrap ends every process of the command
  (``--die-with-parent``); no capabilities (``--cap-drop ALL``: bwrap run by root keeps them
  otherwise, and could remount ``/`` read-write); no network (``--unshare-net``) unless
  ``network`` is ``"all"``. There is no loopback-only mode: a network namespace has its own
  loopback, so host servers on 127.0.0.1 are unreachable with the network off.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Literal

import pathspec

from paragents import paths
from paragents.protected import protected_paths
from paragents.tools.git_config import PASSED_ON
from paragents.tools.git_exec import outer_entries
from paragents.tools.sandbox_git import git_state
from paragents.tools.sandbox_hide import host_sockets, is_under, secret_paths
from paragents.tools.sandbox_home import home_view, write_gitconfig
from paragents.tools.sandbox_links import READ_ONLY_HINT, linked_envs, own_install
from paragents.tools.sandbox_watch import Watch, watch

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
NO_USERNS_FLAGS = ("--unshare-user", "--disable-userns")
"""Added when this bwrap and kernel support them (bubblewrap 0.8): no nested user namespaces, so
a command cannot gain capabilities in a namespace of its own."""
CACHE_ENV = {
    "UV_CACHE_DIR": "uv",
    "npm_config_cache": "npm",
    "PIP_CACHE_DIR": "pip",
    "XDG_CACHE_HOME": "xdg",
    "YARN_CACHE_FOLDER": "yarn",
    "npm_config_store_dir": "pnpm-store",
}
"""Cache variables pointed into the session's private area (the host's caches stay read-only: uv
hard-links cache files into virtualenvs, so a writable host cache would make host envs writable)."""
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
    - ``hidden``: more paths to hide besides the built-in ones (``~`` expanded).
    - ``env_allow``: more variables of the user's environment commands get (names or globs).
    - ``session``: whose private cache area to use (``<state>/sandbox/<session>``); None: one per
      writable root.
    - ``home_visible``: more paths below the user's home that commands see read-only (the home is
      hidden but for a toolchain allow-list: paragents.tools.sandbox_home); ``~`` shows all of it.
    - ``visible``: more paths commands see read-only (the session's ``additionalDirectories``).
    """

    mode: SandboxMode = "auto"
    network: NetworkMode = "none"
    writable: tuple[str, ...] = ()
    hidden_rules: tuple[tuple[str, str], ...] = ()
    root: Path | None = None
    auto_allow: bool = False
    bwrap: str = "bwrap"
    hidden: tuple[str, ...] = ()
    env_allow: tuple[str, ...] = ()
    session: str | None = None
    home_visible: tuple[str, ...] = ()
    visible: tuple[str, ...] = ()


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


@lru_cache(maxsize=8)
def userns_flags(bwrap: str) -> tuple[str, ...]:
    """:data:`NO_USERNS_FLAGS` when ``bwrap`` accepts them here, else () (checked once per path)."""
    try:
        done = subprocess.run(
            [bwrap, *BASE_FLAGS, *NO_USERNS_FLAGS, "--unshare-net", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return NO_USERNS_FLAGS if done.returncode == 0 else ()


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


def private_dir(config: SandboxConfig, root: str) -> Path:
    """The session's private area (``<state>/sandbox/<session>``, or one per writable root)."""
    name = config.session or "root-" + hashlib.sha256(root.encode()).hexdigest()[:12]
    return paths.state_dir() / "sandbox" / name.replace("/", "_")


def _private_area(config: SandboxConfig, root: str) -> str | None:
    """Create the private area and its cache folders (0700); None when that fails."""
    base = private_dir(config, root)
    try:
        paths.ensure_dir(base)
        os.chmod(base, 0o700)
        for sub in CACHE_ENV.values():
            paths.ensure_dir(base / sub)
    except OSError:
        return None
    return os.path.realpath(base)


def _visible(path: str, shown: Sequence[str], covered: Sequence[str] = ()) -> bool:
    """False when ``path`` is already out of sight (below the private ``/tmp`` or a ``covered``
    tmpfs) and no ``shown`` (writable) path brings it back."""
    return not is_under(path, ["/tmp", *covered]) or is_under(path, shown)


@dataclass
class Prepared:
    """A sandboxed command ready to start: its ``argv``, the :class:`~paragents.tools.sandbox_watch.
    Watch` to :meth:`settle` once it ended (what it left behind is quarantined, a lane's new objects
    imported) and the environments bound read-only because their files are hard links (named when a
    write fails)."""

    argv: list[str]
    watch: Watch
    readonly_envs: list[str] = field(default_factory=list)

    async def settle(self) -> list[str]:
        """Call after the command ended (every process of it is gone): the notices for its result."""
        return await self.watch.settle()

    def write_hint(self, output: str) -> str | None:
        """The note for a failed command whose output says a write was refused in a read-only
        hard-linked environment, else None."""
        if not self.readonly_envs or "Read-only file system" not in output:
            return None
        named = [e for e in self.readonly_envs if e in output or os.path.basename(e) in output]
        return READ_ONLY_HINT.format(envs=", ".join(named or self.readonly_envs))


def bwrap_argv(bwrap: str, config: SandboxConfig, cwd: Path, command: Sequence[str]) -> list[str]:
    """Return the argv running ``command`` in ``cwd`` inside bwrap under ``config`` (see the module).
    A caller that runs it should use :func:`prepare` and settle what the command left behind."""
    return prepare(bwrap, config, cwd, command).argv


def _git_identity(private: str | None) -> str | None:
    """A file holding the identity and harmless keys of the user's global git config (bound at
    ``~/.gitconfig`` below the hidden home), in the private area; None when there is none."""
    if private is None:
        return None
    try:
        entries = outer_entries(None)
    except (OSError, subprocess.SubprocessError):
        entries = []
    pairs = [(e.key, e.value) for e in entries if e.key in PASSED_ON and e.value is not None]
    return write_gitconfig(os.path.join(private, "gitconfig"), pairs)


def prepare(bwrap: str, config: SandboxConfig, cwd: Path, command: Sequence[str]) -> Prepared:
    """Build the argv running ``command`` in ``cwd`` inside bwrap under ``config`` (see the module)
    and look at what the command could leave behind (:mod:`paragents.tools.sandbox_watch`)."""
    root = os.path.realpath(config.root or cwd)
    argv = [bwrap, *BASE_FLAGS, *userns_flags(bwrap), "--tmpfs", "/tmp"]
    if config.network == "none":
        argv.append("--unshare-net")
    binds = [root]
    for text in config.writable:
        path = os.path.realpath(os.path.join(root, os.path.expanduser(text)))
        if os.path.exists(path) and path not in binds:
            binds.append(path)
    private = _private_area(config, root)
    if private is not None and not is_under(private, binds):
        binds.append(private)
    home, home_shown = home_view(config.home_visible)
    if home is not None and not _visible(home, binds):
        home = None  # below the private /tmp: hidden already
    pre_secrets = secret_paths(config.hidden)
    git = git_state(root, pre_secrets)
    readable = [os.path.realpath(os.path.expanduser(v)) for v in config.visible]
    readable = [v for v in readable if os.path.exists(v)]
    shown_ro = [*home_shown, *(v for v in git.visible if not (home and is_under(home, [v]))), *readable]
    shown = [*binds, *shown_ro]
    # the private /tmp hides what is below /tmp (and the hidden home what is below it) unless shown
    covered = [home] if home else []
    secrets = [p for p in pre_secrets if p not in binds and _visible(p, shown, covered)]
    tmpfs = [p for p in secrets if os.path.isdir(p)]
    early = [p for p in tmpfs if any(is_under(b, [p]) for b in shown)]  # holds a shown path
    for path in early:
        argv += ["--perms", "0555", "--tmpfs", path]
    if home is not None:
        argv += ["--perms", "0700", "--tmpfs", home]
    for path in shown_ro:
        argv += ["--ro-bind-try", path, path]
    identity = _git_identity(private) if home is not None else None
    if identity is not None:
        argv += ["--ro-bind", identity, os.path.join(home or "", ".gitconfig")]
    for path in binds:
        argv += ["--bind", path, path]
    for path in git.writable:
        argv += ["--bind", path, path]
    if git.objects is not None:  # a linked worktree's own object store over the shared one
        store, objects, shared = git.objects
        argv += ["--bind", store, objects, "--ro-bind", objects, shared]
    for path in git.readonly:  # "-try": a sibling lane's branch deleted before bwrap starts is no error
        argv += ["--ro-bind-try", path, path]
    # --- protected paths: read-only inside every writable root (paragents.protected, issue 25) ---
    for path in protected_paths(binds):
        argv += ["--ro-bind-try", path, path]
    # --- end of protected paths ---
    writable = [*binds, *git.writable]
    envs = linked_envs(writable)
    for path in [*envs, *(p for p in own_install() if is_under(p, writable))]:
        argv += ["--ro-bind", path, path]
    for path in tmpfs:
        if path not in early:
            argv += ["--perms", "0555", "--tmpfs", path]
    hidden_files = [p for p in secrets if p not in tmpfs]
    hidden_files += [
        s
        for s in host_sockets(())
        if _visible(s, [*shown, *git.writable], [*tmpfs, *covered]) and s not in hidden_files
    ]
    for path in hidden_files:
        argv += ["--ro-bind", _empty_file(), path]
    for text in _denied(config, root, binds):
        if os.path.isdir(text):
            argv += ["--tmpfs", text, "--remount-ro", text]
        else:
            argv += ["--ro-bind", _empty_file(), text]
    if private is not None:
        for name, sub in CACHE_ENV.items():
            argv += ["--setenv", name, os.path.join(private, sub)]
    argv += ["--setenv", "TMPDIR", "/tmp", "--chdir", str(cwd), "--", *command]
    return Prepared(argv, watch(binds, git, root), envs)


def _denied(config: SandboxConfig, root: str, binds: Sequence[str]) -> list[str]:
    """The paths of Read deny rules :func:`prepare` hides (mounts over) for the writable ``binds``."""
    found = []
    for hidden in hidden_paths(config.hidden_rules, Path(root)):
        text = str(hidden)
        if text == "/" or (is_under(text, ["/tmp"]) and not is_under(text, binds)):
            continue  # the private /tmp already hides it
        if any(is_under(bind, [text]) for bind in binds):
            continue  # hiding it would hide the writable root (or a writable path) too
        found.append(text)
    return found


def denied_out_of_sight(config: SandboxConfig, cwd: Path) -> list[str]:
    """The real paths a command run in ``cwd`` under ``config`` cannot see because Read deny rules
    name them: those :func:`prepare` hides, found the same way now (a matching file made later is not
    among them; the private ``/tmp`` and hidden home hide more). The permission check of a recursive
    read uses it (``grep -r`` over a folder holding a denied file runs when the sandbox hides it)."""
    root = os.path.realpath(config.root or cwd)
    binds = [root]
    for text in config.writable:
        path = os.path.realpath(os.path.join(root, os.path.expanduser(text)))
        if os.path.exists(path) and path not in binds:
            binds.append(path)
    binds.append(os.path.realpath(private_dir(config, root)))
    return _denied(config, root, binds)


def describe(config: SandboxConfig, status: SandboxStatus, cwd: Path) -> str:
    """Return the few lines ``/sandbox`` shows: mode, state, network, writable and hidden paths."""
    root = config.root or cwd
    lines = [f"sandbox mode {config.mode}: {status.message}"]
    if status.state in ("on", "refused"):
        net = "none (own loopback only)" if config.network == "none" else "all (the host's network)"
        lines.append(f"network: {net}")
        private = private_dir(config, os.path.realpath(root))
        writable = [str(root), "/tmp (private)", f"{private} (caches)", *config.writable]
        lines.append(
            "writable: " + ", ".join(writable) + "; the git state of the root, not its config or hooks"
        )
        secrets = secret_paths(config.hidden)
        home, shown = home_view(config.home_visible)
        if home is not None:
            lines.append(
                f"your home {home}: hidden (a private empty one), but for {len(shown)} toolchain path(s) "
                "read-only (~/.cargo, ~/.local/bin, PATH entries...; sandbox.homeVisible adds more) "
                "and your git identity"
            )
        lines.append(
            f"never seen: paragents' config and state, {len(secrets)} credential and socket paths found "
            "(~/.ssh, ~/.aws, /run/user, ...; sandbox.hidden adds more) and the host's Unix sockets"
        )
        envs = linked_envs([os.path.realpath(root), *config.writable])
        if envs:
            lines.append(READ_ONLY_HINT.format(envs=", ".join(envs)))
        hidden = hidden_paths(config.hidden_rules, Path(root))
        lines.append(
            "hidden by Read deny rules: " + (", ".join(str(p) for p in hidden) if hidden else "(none)")
        )
        lines.append(f"auto-allow of commands: {'on' if config.auto_allow else 'off'}")
    lines.append("switch with /sandbox off|auto|required")
    return "\n".join(lines)
