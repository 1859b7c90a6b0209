"""Environments under a writable root whose files are shared with other places through hard links.

uv installs packages by hard link from its cache by default (pnpm does the same from its store), so
a project's ``.venv/lib/python3.11/site-packages/rich/__init__.py`` can be the very inode of uv's
cache entry and of every other virtualenv made from it, paragents' own included. The project root is
writable in the sandbox, so an in-place write there (``cat >>``, ``open(..., "r+")``,
``git log --output``) would change the code every one of those environments runs. So the sandbox
binds such an environment read-only (:func:`linked_envs`); the fix is one copy:
``uv sync --link-mode=copy`` (or ``UV_LINK_MODE=copy``) makes the files the venv's own, and the next
command finds it writable again.

Detection is cheap and cached: the candidates are the folders named :data:`ENV_NAMES` at a root and
one level below it; for each, up to :data:`SAMPLE` files of its packages are stat'ed (the first
files of each package folder of ``site-packages``, or each package's ``package.json`` and first
files in ``node_modules``, pnpm's ``.pnpm`` too). One file with more than one link marks the whole
environment. The answer is kept per folder until its package folder's modification time changes
(an install or a ``uv sync --link-mode=copy``). A hard link elsewhere in the root is not looked for.

:func:`own_install` is paragents' own environment (``sys.prefix``): bound read-only whenever it
lies under a writable root, linked or not."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable

ENV_NAMES = (".venv", "venv", "node_modules")
"""Folder names of environments looked at (at a writable root and one level below)."""
SAMPLE = 200
"""Most files stat'ed per environment to decide whether it is hard-linked."""
_cache: dict[str, tuple[tuple[int, int], bool]] = {}


def _packages_dir(env: str) -> str | None:
    """The folder whose entries are the environment's packages (``site-packages``, or the
    ``node_modules`` folder itself)."""
    if os.path.basename(env) == "node_modules":
        return env
    lib = os.path.join(env, "lib")
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(lib)):
            if name.startswith(("python", "pypy")):
                site = os.path.join(lib, name, "site-packages")
                if os.path.isdir(site):
                    return site
    site = os.path.join(env, "Lib", "site-packages")
    return site if os.path.isdir(site) else None


def _sample(folder: str, budget: list[int]) -> bool:
    """True when a file among the first ones of ``folder``'s package folders has st_nlink > 1."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return False
    for entry in entries:
        if budget[0] <= 0:
            return False
        try:
            if entry.is_file(follow_symlinks=False):
                budget[0] -= 1
                if entry.stat(follow_symlinks=False).st_nlink > 1:
                    return True
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name == ".pnpm" or entry.name.startswith("@"):
                if _sample(entry.path, budget):
                    return True
                continue
            inner = entry.path
            if os.path.basename(folder) == ".pnpm":  # .pnpm/<pkg@ver>/node_modules/<pkg>
                inner = os.path.join(entry.path, "node_modules")
                if _sample(inner, budget):
                    return True
                continue
            for sub in sorted(os.scandir(inner), key=lambda e: e.name)[:3]:
                if sub.is_file(follow_symlinks=False):
                    budget[0] -= 1
                    if sub.stat(follow_symlinks=False).st_nlink > 1:
                        return True
        except OSError:
            continue
    return False


def is_linked(env: str) -> bool:
    """True when environment folder ``env`` holds hard-linked files (sampled, cached)."""
    packages = _packages_dir(env)
    if packages is None:
        return False
    try:
        st = os.stat(packages)
    except OSError:
        return False
    key = (st.st_ino, st.st_mtime_ns)
    cached = _cache.get(packages)
    if cached is not None and cached[0] == key:
        return cached[1]
    found = _sample(packages, [SAMPLE])
    _cache[packages] = (key, found)
    return found


def _candidates(root: str) -> list[str]:
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if not entry.is_dir(follow_symlinks=False) or entry.name == ".git":
                continue
            if entry.name in ENV_NAMES:
                found.append(entry.path)
                continue
            for name in ENV_NAMES:
                inner = os.path.join(entry.path, name)
                if os.path.isdir(inner) and not os.path.islink(inner):
                    found.append(inner)
    return found


def linked_envs(roots: Iterable[str]) -> list[str]:
    """The environments under ``roots`` (see the module docstring) that share files by hard link."""
    return [env for root in roots for env in _candidates(root) if is_linked(env)]


def own_install() -> list[str]:
    """paragents' own environment (``sys.prefix``) and, when different, the base Python's prefix."""
    found = [os.path.realpath(sys.prefix)]
    base = os.path.realpath(sys.base_prefix)
    if base not in found:
        found.append(base)
    return found


READ_ONLY_HINT = (
    "{envs} is read-only in the sandbox: its files are hard links shared with uv's cache (or pnpm's "
    "store) and every environment made from it, paragents' own included. Give it its own copies once, "
    "outside paragents: `uv sync --link-mode=copy` (or `UV_LINK_MODE=copy`; pnpm: "
    "`package-import-method=copy`)"
)
"""The note a failed write there gets (docs/sandbox.md "Hard-linked environments")."""
