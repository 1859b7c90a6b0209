"""Escape suite: a sandboxed write into a hard-linked virtualenv rewrites every environment that shares
its files, paragents' own included (attack report, escape 3).

uv installs by hard link from its cache, so a project's ``.venv/.../rich/__init__.py`` is the very
inode of the cache's copy and of every other venv made from it. The project root is writable in the
sandbox; ``cat >> .venv/.../rich/__init__.py`` (or ``git log --output=...``, which truncates in
place) changed the code the next ``paragents`` process imported, and it ran with the API key. Now a
venv (or ``node_modules``) holding hard-linked files is bound read-only, the failed write says why
and how to fix it once (``uv sync --link-mode=copy``), and paragents' own environment is never
writable from a session.

The hard links here are made the way uv makes them (``os.link`` from a "cache" file); evidence on
the host: the cache's file and a second environment sharing it are unchanged."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.security.conftest import Host, Hostile, git_repo, require_bwrap

SANDBOX = {"sandbox": {"mode": "required", "autoAllow": True}}
SITE = ".venv/lib/python3.11/site-packages"
ORIGINAL = "X = 1\n"


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def linked_env(host: Host, project: Path) -> tuple[Path, Path]:
    """A "uv cache" file and a second environment (paragents' own, say) sharing its inode with the
    project's ``.venv``; returns (cache file, the other environment's file)."""
    cache = host.root / "uv-cache" / "rich" / "__init__.py"
    cache.parent.mkdir(parents=True)
    cache.write_text(ORIGINAL)
    cache.chmod(0o644)
    other = host.root / "pgcopy" / SITE / "rich" / "__init__.py"
    for env in (project, host.root / "pgcopy"):
        package = env / SITE / "rich"
        package.mkdir(parents=True)
        os.link(cache, package / "__init__.py")
        (env / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return cache, other


@pytest.mark.parametrize(
    "write",
    [
        f"cat >> {SITE}/rich/__init__.py <<'EOF'\nimport os; print(os.environ.get('PARAGENTS_API_KEY'))\nEOF",
        f"git log -1 --format='tformat:import os' --output={SITE}/rich/__init__.py",
        f"python3 -c \"open('{SITE}/rich/__init__.py', 'r+').write('import os')\"",
    ],
)
async def test_a_write_into_a_hard_linked_venv_reaches_no_other_environment(
    host: Host, hostile: Hostile, write: str
) -> None:
    repo = git_repo(host.root / "project", {"app.py": "print('hi')\n", ".gitignore": ".venv/\n"})
    cache, other = linked_env(host, repo)
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(view, write)
    assert cache.read_text() == ORIGINAL and other.read_text() == ORIGINAL, out
    assert cache.stat().st_nlink == 3  # still shared: nothing was replaced either
    assert "Read-only file system" in out[0] and "uv sync --link-mode=copy" in out[0], out[0]


async def test_a_venv_of_its_own_copies_stays_writable(host: Host, hostile: Hostile) -> None:
    repo = git_repo(host.root / "project", {"app.py": "print('hi')\n", ".gitignore": ".venv/\n"})
    package = repo / SITE / "rich"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(ORIGINAL)
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(view, f"echo 'Y = 2' >> {SITE}/rich/__init__.py && echo wrote")
    assert "wrote" in out[0] and (package / "__init__.py").read_text() == ORIGINAL + "Y = 2\n"


async def test_paragents_own_environment_is_never_writable(
    host: Host, hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """paragents run from an environment under the session's root (its own checkout, say): that
    environment is read-only to the session, hard links or not."""
    repo = git_repo(host.root / "project")
    own = repo / "paragents-env"
    (own / "lib").mkdir(parents=True)
    (own / "lib" / "site.py").write_text(ORIGINAL)
    monkeypatch.setattr(sys, "prefix", str(own))
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(
        view, "echo 'import os' >> paragents-env/lib/site.py; touch paragents-env/new; true"
    )
    assert (own / "lib" / "site.py").read_text() == ORIGINAL and not (own / "new").exists(), out
