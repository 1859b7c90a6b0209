"""What a sandboxed command never sees: paragents' own files, the usual credentials and the host's
Unix sockets (paragents.tools.sandbox hides each with an empty read-only tmpfs or file).

- :func:`paragents_paths`: paragents' config dir (the user config with the model key, ``serve.json``
  and ``serve-cookie.key``, permissions) and state dir (the store of every project, lanes' recovery
  bundles); a lane's worktree, which lives below the state dir, is bound back writable.
- :data:`CREDENTIAL_PATHS`: ssh keys, cloud and cluster credentials, package-registry tokens, shell
  histories, ... (``~`` is the user's home); ``sandbox.hidden`` adds more.
- :data:`RUNTIME_PATHS` and :func:`host_sockets`: the runtime directories holding sockets
  (``/run/user/<uid>``, ``$XDG_RUNTIME_DIR``, the D-Bus system bus, Docker, containerd, Podman,
  PostgreSQL...) and every other Unix socket the host listens on (``/proc/net/unix``), so even
  with the network off no host service can be reached by its socket. Abstract sockets belong to
  the network namespace: with ``network: "none"`` they are out of reach, with ``"all"`` they are not.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from paragents import paths

CREDENTIAL_PATHS = (
    "~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.config/gh", "~/.config/hub",
    "~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.docker", "~/.kube",
    "~/.pypirc", "~/.npmrc", "~/.yarnrc.yml", "~/.cargo/credentials", "~/.cargo/credentials.toml",
    "~/.gem/credentials", "~/.pgpass", "~/.my.cnf", "~/.terraform.d", "~/.vault-token",
    "~/.password-store", "~/.local/share/keyrings", "~/.config/op", "~/.oci", "~/.config/doctl",
    "~/.s3cfg", "~/.boto", "~/.config/rclone", "~/.codex", "~/.claude", "~/.claude.json",
    "~/.config/github-copilot", "~/.config/google-chrome", "~/.config/chromium", "~/.mozilla",
    "~/.bash_history", "~/.zsh_history", "~/.python_history", "~/.psql_history", "~/.mysql_history",
)  # fmt: skip
"""Credential places hidden from every sandboxed command (when they exist)."""

RUNTIME_PATHS = (
    "/run/user", "/run/dbus", "/run/docker.sock", "/run/docker", "/run/containerd", "/run/podman",
    "/run/crio", "/run/k3s", "/run/snapd.socket", "/run/snapd-snap.socket", "/run/systemd/private",
    "/run/systemd/userdb", "/run/systemd/journal", "/run/libvirt", "/run/lxd", "/run/avahi-daemon",
    "/run/cups", "/run/postgresql", "/run/mysqld", "/run/screen", "/var/lib/lxd/unix.socket",
)  # fmt: skip
"""Runtime directories and sockets hidden from every sandboxed command (``/var/run`` is ``/run``)."""

MAX_SOCKETS = 256
"""Most host sockets (outside the paths above and ``/tmp``) hidden one by one per command."""


def paragents_paths() -> list[str]:
    """paragents' config and state directories (see the module docstring)."""
    return [str(paths.config_dir()), str(paths.state_dir())]


def _expand(text: str, home: str) -> str:
    if text == "~" or text.startswith("~/"):
        return home + text[1:]
    return os.path.expandvars(text)


def secret_paths(extra: Iterable[str] = (), env: dict[str, str] | None = None) -> list[str]:
    """The existing paths to hide (real paths, without duplicates): paragents' own, the credential
    places, the runtime directories, ``$XDG_RUNTIME_DIR`` and ``extra`` (``sandbox.hidden``)."""
    source = os.environ if env is None else env
    home = source.get("HOME") or os.path.expanduser("~")
    names = [*paragents_paths(), *CREDENTIAL_PATHS, *RUNTIME_PATHS, *extra]
    if source.get("XDG_RUNTIME_DIR"):
        names.append(source["XDG_RUNTIME_DIR"])
    found: dict[str, None] = {}
    for name in names:
        path = _expand(name, home)
        if not os.path.isabs(path) or not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        if real != "/" and os.path.exists(real):
            found[real] = None
    return list(found)


def host_sockets(skip: Iterable[str] = ("/tmp",), table: str = "/proc/net/unix") -> list[str]:
    """Paths of the Unix sockets listed in ``table`` that exist as sockets, except those under
    ``skip`` (at most :data:`MAX_SOCKETS`)."""
    prefixes = [s.rstrip("/") + "/" for s in skip]
    found: dict[str, None] = {}
    try:
        with open(table, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed or abstract (the network namespace keeps those away)
        path = fields[7]
        if path in found or any(path.startswith(p) for p in prefixes):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        found[path] = None
        if len(found) >= MAX_SOCKETS:
            break
    return list(found)


def is_under(path: str, roots: Iterable[str]) -> bool:
    """True when ``path`` is one of ``roots`` or below one."""
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def hide_kind(path: str) -> str:
    """``dir`` for a directory (hidden by an empty tmpfs), ``file`` for anything else."""
    return "dir" if Path(path).is_dir() else "file"
