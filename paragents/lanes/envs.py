"""Each lane's own environment (``.venv``, ``node_modules``), built when the lane is made: never a link
to another checkout's, never sharing a file (an inode) with one.

Why not share: a uv project's ``.venv`` holds an editable install of the project itself (a ``.pth``
file naming the checkout's ``src/``), so a lane using the main checkout's venv tests the main
checkout's code, and a sync in the lane rewrites the main checkout's install. And uv links installed
files from its cache with **hard links** by default (on ext4 even ``--link-mode clone`` falls back to
them): a lane's venv hard-linked from the user's cache shares every file with the main checkout's venv
and every other venv on the machine, so a write into one file of the lane's venv (the lane is writable
in the sandbox) would change all of them. Files are therefore cloned (reflinks: copy-on-write, a new
inode) where the filesystem can, else copied.

Who runs what (docs/lanes.md "Each lane's own environment", docs/security.md "Lanes"):

1. On the host, paragents' own setup step, before anything runs in the new lane: the locked
   third-party packages only, from the user's cache, offline, no builds:
   ``uv sync --frozen --offline --no-install-project --no-install-workspace --no-install-local
   --no-build --no-config --link-mode clone|copy --python <absolute path>``. Nothing of the project
   executes: no build backend, no project config (``--no-config``), no interpreter the project names
   (the interpreter is resolved by ``uv python find`` run from ``/``, and ``.python-version`` is read as
   data and used only when it is a version), no ``.venv`` the project brought (refused). For
   ``package-lock.json``: ``npm ci --offline --ignore-scripts`` in a scratch folder holding only
   ``package.json`` and ``package-lock.json`` (no project ``.npmrc``: its ``logs-dir``, ``cache`` or
   ``install-links`` would make the host write or read outside the lane), the user's ``~/.npmrc``,
   the program-valued npm settings pinned in the environment, and only when every package of the
   lockfile comes from a registry (a ``file:``, link or git package is installed by the sandbox).
2. In the lane's sandbox (:mod:`paragents.lanes.contained`: the lane and its private cache writable,
   network as ``lanes.verify_network``): everything that runs project code: the project's own
   (editable) install, which runs its build backend and hooks (``uv sync --frozen``), and the
   packages' install scripts (``npm rebuild``). The user's caches are never writable there: a
   sandboxed write into a cache file would reach every environment built from it.

When the host step cannot do it offline (a package not in the cache), the sandboxed step does it all
with the lane's private cache (and needs ``lanes.verify_network: all`` to download). A build backend
other than ``uv_build`` (which uv builds itself) is installed into the lane's venv by the host step
from the user's cache and removed after the project's install. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import shutil
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from paragents import treefiles
from paragents.lanes.contained import LaneSandbox, run_in_lane
from paragents.lanes.repo import lanes_root
from paragents.tools.shell import command_env

FICLONE = 0x40049409
"""The Linux ioctl that makes a reflink (copy-on-write clone) of a file."""
HOST_TIMEOUT = 300.0
"""Seconds a host-side install step may take."""
_VERSION = re.compile(r"^(?:cpython|python|pypy|graalpy)?-?\d+(?:\.\d+){0,2}[a-z0-9.+-]*$", re.IGNORECASE)
_NPM_PROGRAMS = ("git", "script-shell", "shell", "node-gyp", "editor", "browser", "viewer")
"""npm settings that name a program: pinned in the host step's environment (a project ``.npmrc``
could otherwise make npm run one of the lane's files on the host)."""


@dataclass
class EnvBuild:
    """What :func:`build_environments` did: a note per environment, the output of its steps, the
    seconds each step took (the bench reads them)."""

    notes: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class HostResult:
    code: int
    output: str


def host_env(lane: Path, repo: Path) -> dict[str, str]:
    """The environment of a host step: :func:`command_env` without uv's and Python's own variables and
    without ``PATH`` entries that are relative or inside the repository or the lanes (so no file a
    session wrote is found as a program)."""
    env = {
        k: v
        for k, v in command_env().items()
        if not k.startswith(("UV_", "PYTHON", "npm_config_", "NPM_CONFIG_"))
        and k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PIP_REQUIRE_VIRTUALENV")
    }
    banned = [str(repo.resolve()), str(lanes_root().resolve()), str(lane.resolve())]
    keep = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if any(real == b or real.startswith(b.rstrip("/") + "/") for b in banned):
            continue
        keep.append(entry)
    env["PATH"] = os.pathsep.join(keep)
    return env


async def run_host(
    argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float = HOST_TIMEOUT
) -> HostResult:
    """Run a fixed argv on the host (no shell); return its exit code and output (stopped at ``timeout``)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return HostResult(127, f"cannot run {argv[0]}: {exc.strerror or exc}")
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        await proc.wait()
        return HostResult(124, f"{argv[0]} did not finish within {timeout:g} s")
    return HostResult(proc.returncode or 0, out.decode("utf-8", "replace"))


@lru_cache(maxsize=16)
def _reflink_works(src_dir: str, dst_dir: str) -> bool:
    try:
        with (
            tempfile.NamedTemporaryFile(dir=src_dir, prefix=".paragents-probe-") as src,
            tempfile.NamedTemporaryFile(dir=dst_dir, prefix=".paragents-probe-") as dst,
        ):
            src.write(b"x")
            src.flush()
            fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
    except OSError:
        return False
    return True


def link_mode(cache: Path, lane: Path) -> str:
    """``clone`` when the filesystem makes reflinks from ``cache`` into ``lane`` (tried with FICLONE),
    else ``copy``; never ``hardlink`` (see the module docstring)."""
    if not cache.is_dir() or not lane.is_dir():
        return "copy"
    return "clone" if _reflink_works(str(cache), str(lane)) else "copy"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(treefiles.read_text(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def python_request(lane: Path, pyproject: dict[str, Any]) -> str | None:
    """The Python the lane asks for, as data: ``.python-version`` when it holds a version (a path or a
    program name there is ignored), else ``project.requires-python`` when it is a valid specifier."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in treefiles.read_text(lane / ".python-version").splitlines():
            text = line.strip()
            if text and not text.startswith("#"):
                return text if _VERSION.match(text) else None
    project = pyproject.get("project")
    spec = project.get("requires-python") if isinstance(project, dict) else None
    if isinstance(spec, str):
        with contextlib.suppress(InvalidSpecifier):
            return str(SpecifierSet(spec)) or None
    return None


def build_requirements(pyproject: dict[str, Any]) -> tuple[str, list[str]]:
    """(build backend, plain-name build requirements) of a project; URLs and malformed ones dropped.
    For hatchling ``editables`` is added (its editable builds ask for it)."""
    system = pyproject.get("build-system")
    if not isinstance(system, dict):
        return "", []
    backend = str(system.get("build-backend") or "")
    reqs: list[str] = []
    for text in system.get("requires") or []:
        try:
            req = Requirement(str(text))
        except InvalidRequirement:
            continue
        if req.url is None:
            reqs.append(str(req))
    if backend.startswith("hatchling"):
        reqs.append("editables")
    return backend, reqs


async def uv_cache_dir(uv: str, env: Mapping[str, str]) -> Path | None:
    """The user's uv cache (``uv cache dir`` run from ``/``: the user's settings, no project's)."""
    done = await run_host([uv, "cache", "dir"], Path("/"), env, 30)
    text = done.output.strip().splitlines()[-1:] if done.code == 0 else []
    return Path(text[0]) if text and os.path.isabs(text[0]) else None


async def find_python(uv: str, request: str | None, env: Mapping[str, str]) -> str | None:
    """The absolute path of an interpreter for ``request`` (``uv python find`` run from ``/``)."""
    argv = [uv, "python", "find", "--no-project", "--no-config", "--no-python-downloads"]
    done = await run_host([*argv, *([request] if request else [])], Path("/"), env, 60)
    lines = done.output.strip().splitlines()
    return lines[-1] if done.code == 0 and lines and os.path.isabs(lines[-1]) else None


Output = Callable[[str], None] | None


async def build_uv(
    repo: Path, lane: Path, sandbox: LaneSandbox, env: Mapping[str, str], timeout: float, on_output: Output
) -> EnvBuild:
    """The lane's own ``.venv`` of a uv project (see the module docstring)."""
    found = EnvBuild()
    hostenv = host_env(lane, repo)
    uv = shutil.which("uv", path=hostenv["PATH"])
    if uv is None:
        found.notes.append("uv.lock found but uv is not installed: the lane has no .venv (install uv)")
        return found
    venv = lane / ".venv"
    if venv.exists() or venv.is_symlink():
        found.notes.append(
            "the lane's .venv came with its commit: paragents did not build or run it (remove .venv from "
            "the repository and make the lane again)"
        )
        return found
    pyproject = _read_toml(lane / "pyproject.toml")
    cache = await uv_cache_dir(uv, {**hostenv, **_user_cache_var()})
    python = await find_python(uv, python_request(lane, pyproject), hostenv)
    host_ok = isolated = False
    started = time.monotonic()
    if cache is not None and python is not None:
        mode = link_mode(cache, lane)
        argv = [
            uv, "sync", "--frozen", "--offline", "--no-install-project", "--no-install-workspace",
            "--no-install-local", "--no-build", "--no-config", "--no-python-downloads", "--no-progress",
            "--color", "never", "--link-mode", mode, "--cache-dir", str(cache), "--python", python,
        ]  # fmt: skip
        done = await run_host(argv, lane, hostenv)
        _emit(
            found,
            on_output,
            f"$ uv sync (locked packages from the uv cache, --link-mode {mode})",
            done.output,
        )
        host_ok = done.code == 0
        backend, reqs = build_requirements(pyproject)
        isolated = not reqs or backend == "uv_build"  # uv builds uv_build projects itself, offline
        if host_ok and not isolated:
            base = [uv, "pip", "install", "--offline", "--no-build", "--no-config", "--no-progress"]
            base += ["--color", "never", "--link-mode", mode, "--cache-dir", str(cache)]
            base += ["--python", str(venv / "bin" / "python")]
            extra = await run_host([*base, *reqs], lane, hostenv)
            if extra.code != 0 and "editables" in reqs:
                extra = await run_host([*base, *[r for r in reqs if r != "editables"]], lane, hostenv)
            _emit(
                found,
                on_output,
                f"$ uv pip install {' '.join(reqs)} (build backend, removed after)",
                extra.output,
            )
    found.seconds["host"] = round(time.monotonic() - started, 3)
    started = time.monotonic()
    offline = ["--offline"] if sandbox.network == "none" else []
    sync = "uv sync --frozen --link-mode copy --no-progress --color never " + " ".join(offline)
    # the project itself (its build backend and hooks run here), then drop the build tools
    project = f"{sync} --no-build-isolation --inexact && {sync}" if host_ok and not isolated else sync
    ran = await run_in_lane(project, lane, sandbox, env=env, timeout=timeout, on_output=on_output)
    found.seconds["sandbox"] = round(time.monotonic() - started, 3)
    found.output.append(ran.output)
    if ran.ok:
        how = (
            "locked packages from the uv cache, the project installed in the sandbox"
            if host_ok
            else ("built in the sandbox with the lane's own cache")
        )
        found.notes.append(f"the lane has its own .venv ({how})")
    else:
        why = "" if sandbox.network == "all" else " (offline: `lanes.verify_network: all` lets it download)"
        found.notes.append(
            f"the lane's .venv is incomplete: `uv sync` in the lane's sandbox exited with "
            f"{ran.exit_code}{why}; run `uv sync` in the lane"
        )
    foreign = foreign_paths(venv, lane)
    if foreign:
        found.notes.append("the lane's .venv points outside the lane: " + ", ".join(foreign[:3]))
    return found


def _user_cache_var() -> dict[str, str]:
    value = os.environ.get("UV_CACHE_DIR")
    return {"UV_CACHE_DIR": value} if value else {}


def _emit(found: EnvBuild, on_output: Output, title: str, text: str) -> None:
    found.output.append(f"{title}\n{text.rstrip()}")
    if on_output:
        on_output(title)
        for line in text.rstrip().splitlines():
            on_output(line)


def foreign_paths(venv: Path, lane: Path) -> list[str]:
    """Paths named by the venv's ``.pth`` files and ``__editable__`` finders that lie outside the lane
    and outside the venv (an editable install of another checkout); [] when there are none."""
    found: list[str] = []
    mine = [str(lane.resolve()), str(venv.resolve())]
    for site in venv.glob("lib/python*/site-packages"):
        for pth in [*site.glob("*.pth"), *site.glob("__editable__*finder.py")]:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = treefiles.read_text(pth)
                for match in re.findall(r"(/[^\s'\"]+)", text) if pth.suffix == ".py" else text.splitlines():
                    path = match.strip()
                    if not path.startswith("/") or path.startswith("import "):
                        continue
                    real = os.path.realpath(path)
                    if not any(real == m or real.startswith(m + "/") for m in mine):
                        found.append(f"{pth.name} -> {path}")
    return found


def _npm_lock_is_registry_only(lock: Path) -> str | None:
    """Why the host step must not install ``lock`` (a package from a path, a link, git or anything
    but a registry URL: npm would read or run it on the host), or None."""
    try:
        data = json.loads(treefiles.read_text(lock))
    except (OSError, ValueError):
        return "package-lock.json cannot be read"
    packages = data.get("packages") if isinstance(data, dict) else None
    if not isinstance(packages, dict):
        return "package-lock.json has no `packages` (lockfile version 2 or 3)"
    for name, entry in packages.items():
        if not name or not isinstance(entry, dict):
            continue
        resolved = entry.get("resolved")
        if entry.get("link") or (
            resolved is not None and not str(resolved).startswith(("https://", "http://"))
        ):
            return f"package-lock.json installs {name} from {resolved or 'a link'}, not a registry"
    return None


async def npm_host_step(npm: str, lane: Path, hostenv: Mapping[str, str]) -> HostResult:
    """``npm ci --offline --ignore-scripts`` for the lane, on the host, from the user's npm cache, in a
    scratch folder holding only the lane's ``package.json`` and ``package-lock.json``: no ``.npmrc``
    of the project (``logs-dir``, ``cache``, ``prefix`` there would make npm write outside the lane),
    ``--userconfig`` pinned to the user's own ``~/.npmrc``, the program-valued settings pinned, and
    nothing but registry packages in the lockfile (a ``file:`` tarball would be read from anywhere).
    The ``node_modules`` made there is moved into the lane."""
    lock = lane / "package-lock.json"
    why = _npm_lock_is_registry_only(lock)
    if why is not None:
        return HostResult(1, f"{why}: the install runs in the lane's sandbox instead")
    pinned = {f"npm_config_{key.replace('-', '_')}": "" for key in _NPM_PROGRAMS}
    pinned["npm_config_git"] = shutil.which("git", path=hostenv.get("PATH", "")) or "git"
    pinned["npm_config_script_shell"] = "/bin/sh"
    home = hostenv.get("HOME") or os.path.expanduser("~")
    scratch = Path(tempfile.mkdtemp(prefix=f".{lane.name}.npm-", dir=lane.parent))
    try:
        for name in ("package.json", "package-lock.json"):
            source = lane / name
            if source.is_symlink() or not source.is_file():
                return HostResult(
                    1, f"the lane's {name} is not a plain file: the install runs in the sandbox"
                )
            shutil.copyfile(source, scratch / name)
        argv = [
            npm, "ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--no-progress",
            "--userconfig", os.path.join(home, ".npmrc"), "--no-workspaces",
        ]  # fmt: skip
        done = await run_host(argv, scratch, {**hostenv, **pinned})
        made = scratch / "node_modules"
        if done.code != 0 or not made.is_dir():
            return done if done.code != 0 else HostResult(1, done.output + "\nnpm made no node_modules")
        try:
            os.rename(made, lane / "node_modules")  # the lane is new: nothing of it has run yet
        except OSError as exc:
            return HostResult(1, f"{done.output}\ncannot move node_modules into the lane: {exc.strerror}")
        return done
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def build_npm(
    repo: Path, lane: Path, sandbox: LaneSandbox, env: Mapping[str, str], timeout: float, on_output: Output
) -> EnvBuild:
    """The lane's own ``node_modules`` from ``package-lock.json`` (see the module docstring)."""
    found = EnvBuild()
    hostenv = host_env(lane, repo)
    npm = shutil.which("npm", path=hostenv["PATH"])
    if npm is None:
        found.notes.append("package-lock.json found but npm is not installed: the lane has no node_modules")
        return found
    if (lane / "node_modules").exists() or (lane / "node_modules").is_symlink():
        found.notes.append("the lane's node_modules came with its commit: paragents did not build it")
        return found
    started = time.monotonic()
    done = await npm_host_step(npm, lane, hostenv)
    _emit(found, on_output, "$ npm ci --offline --ignore-scripts (from the npm cache)", done.output)
    found.seconds["host"] = round(time.monotonic() - started, 3)
    started = time.monotonic()
    if done.code == 0:
        command = "npm rebuild --foreground-scripts --no-audit --no-fund"
    else:
        offline = " --offline" if sandbox.network == "none" else " --prefer-offline"
        command = f"npm ci --no-audit --no-fund{offline}"
    ran = await run_in_lane(command, lane, sandbox, env=env, timeout=timeout, on_output=on_output)
    found.seconds["sandbox"] = round(time.monotonic() - started, 3)
    found.output.append(ran.output)
    if ran.ok:
        found.notes.append("the lane has its own node_modules (install scripts ran in the sandbox)")
    else:
        found.notes.append(
            f"the lane's node_modules is incomplete: `{command}` exited with {ran.exit_code}; "
            "run `npm ci` in the lane"
        )
    return found


async def build_environments(
    repo: Path,
    lane: Path,
    sandbox: LaneSandbox,
    *,
    env: Mapping[str, str],
    timeout: float,
    on_output: Output = None,
) -> EnvBuild:
    """Build the lane's own environments its lockfiles call for (``uv.lock`` with ``pyproject.toml``;
    ``package-lock.json`` with ``package.json``); other lockfiles get a note naming the command."""
    total = EnvBuild()
    builds: list[tuple[str, EnvBuild]] = []
    if (lane / "uv.lock").is_file() and (lane / "pyproject.toml").is_file():
        builds.append(("uv", await build_uv(repo, lane, sandbox, env, timeout, on_output)))
    if (lane / "package-lock.json").is_file() and (lane / "package.json").is_file():
        builds.append(("npm", await build_npm(repo, lane, sandbox, env, timeout, on_output)))
    for lock, command in (
        ("poetry.lock", "poetry install"),
        ("pnpm-lock.yaml", "pnpm install"),
        ("yarn.lock", "yarn install"),
    ):
        if (lane / lock).is_file():
            total.notes.append(
                f"{lock}: paragents does not build this environment; run `{command}` in the lane"
            )
    for name, build in builds:
        total.notes += build.notes
        total.output += build.output
        total.seconds.update({f"{name}_{k}": v for k, v in build.seconds.items()})
    return total
