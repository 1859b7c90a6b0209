"""Escape suite: the host step of a lane's environment build honoured the repository's own settings
(attack report, escape 14).

A committed ``.npmrc`` said ``logs-dir=<outside>`` and ``cache=<outside>``; making a lane ran
``npm ci --offline --ignore-scripts`` on the host in the lane, and npm wrote its debug log and cache
files there: writes outside the lane, named by repository content. The host step now runs in a
scratch folder holding only ``package.json`` and ``package-lock.json`` (``--userconfig`` pinned to
the user's own file) and moves ``node_modules`` in; a lockfile naming anything but registry packages
is left to the sandbox. uv's host step already ignores the project's settings (``--no-config``,
an explicit ``--cache-dir``): held, and kept so by the second test.

Evidence on the host: nothing appears in the folder the repository named."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys

import pytest

from tests.security.conftest import Host, Hostile, git_repo, require_bwrap

PACKAGE = {"name": "calc", "version": "1.0.0", "scripts": {"test": "node -e 1"}}
LOCK = {
    "name": "calc",
    "version": "1.0.0",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {"": {"name": "calc", "version": "1.0.0"}},
}


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
async def test_a_committed_npmrc_never_makes_the_host_write_outside_the_lane(
    host: Host, hostile: Hostile
) -> None:
    logs, cache = host.evidence_dir / "npmlogs", host.evidence_dir / "npmcache"
    npmrc = f"logs-dir={logs}\ncache={cache}\nprefix={host.evidence_dir / 'prefix'}\n"
    repo = git_repo(
        host.root / "project",
        {"package.json": json.dumps(PACKAGE), "package-lock.json": json.dumps(LOCK), ".npmrc": npmrc},
    )
    require_bwrap()  # the sandbox step runs sandboxed: what reaches the folder is the host step's
    rt = await hostile.open(repo, sandbox={"mode": "required"})
    view = await rt.lifecycle.new_session("nl", lane=True)
    assert (view.workdir / ".npmrc").is_file()  # the lane itself keeps it (its sandbox reads it)
    assert not logs.exists() and not cache.exists(), list(host.evidence_dir.iterdir())


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
async def test_a_lockfile_naming_a_folder_of_the_host_is_not_installed_on_the_host(
    host: Host, hostile: Hostile
) -> None:
    """``"resolved": "file:<folder>"`` with ``install-links`` (the project's ``.npmrc`` said so; the
    user's own ``~/.npmrc`` says so too, which paragents honours) makes npm pack that folder and unpack
    it into the lane: the host would copy another project's ``.env``, which the sandbox cannot see,
    where the lane's model reads it. Such a lockfile is left to the sandbox."""
    other = host.home / "work" / "billing"
    other.mkdir(parents=True)
    (other / "package.json").write_text(json.dumps({"name": "billing", "version": "1.0.0"}))
    (other / ".env").write_text("STRIPE_KEY=" + host.secrets["model"] + "\n")
    (host.home / ".npmrc").write_text("install-links=true\n")
    spec = "file:" + str(other)
    lock = json.loads(json.dumps(LOCK))
    lock["packages"][""]["dependencies"] = {"billing": spec}
    lock["packages"]["node_modules/billing"] = {"version": "1.0.0", "resolved": spec}
    package = {**PACKAGE, "dependencies": {"billing": spec}}
    repo = git_repo(
        host.root / "project",
        {
            "package.json": json.dumps(package),
            "package-lock.json": json.dumps(lock),
            ".npmrc": "install-links=true\n",
        },
    )
    require_bwrap()  # the sandbox step cannot see the user's home
    rt = await hostile.open(repo, sandbox={"mode": "required"})
    view = await rt.lifecycle.new_session("nl", lane=True)
    copied = [
        str(p) for p in view.workdir.rglob(".env") if host.secrets["model"] in p.read_text(errors="replace")
    ]
    assert copied == []


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
async def test_registry_packages_still_come_from_the_users_npm_cache(host: Host, hostile: Hostile) -> None:
    """The fix keeps the host step's use: a lockfile of registry packages is installed on the host
    from the user's npm cache (offline) and ``node_modules`` lands in the lane; the sandbox step could
    not have done it (offline, and the user's cache is hidden there)."""
    package_dir = host.root / "pkg"
    package_dir.mkdir()
    (package_dir / "package.json").write_text(json.dumps({"name": "padder", "version": "1.0.0"}))
    (package_dir / "index.js").write_text("module.exports = 1\n")
    subprocess.run(["npm", "pack", "-q"], cwd=package_dir, check=True, capture_output=True)
    tarball = package_dir / "padder-1.0.0.tgz"
    subprocess.run(["npm", "cache", "add", str(tarball)], cwd=host.root, check=True, capture_output=True)
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    lock = json.loads(json.dumps(LOCK))
    lock["packages"][""]["dependencies"] = {"padder": "1.0.0"}
    lock["packages"]["node_modules/padder"] = {
        "version": "1.0.0",
        "resolved": "https://registry.invalid/padder/-/padder-1.0.0.tgz",
        "integrity": integrity,
    }
    package = {**PACKAGE, "dependencies": {"padder": "1.0.0"}}
    repo = git_repo(
        host.root / "project",
        {
            "package.json": json.dumps(package),
            "package-lock.json": json.dumps(lock),
            ".gitignore": "node_modules/\n",
        },
    )
    require_bwrap()
    rt = await hostile.open(repo, sandbox={"mode": "required"})
    view = await rt.lifecycle.new_session("nl", lane=True)
    assert (view.workdir / "node_modules" / "padder" / "index.js").read_text() == "module.exports = 1\n"
    assert not list(view.workdir.parent.glob(".nl.npm-*"))  # the scratch folder is gone


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
async def test_uv_settings_of_the_repository_are_not_read_by_the_host_step(
    host: Host, hostile: Hostile
) -> None:
    """Held: ``[tool.uv] cache-dir`` and ``uv.toml`` name a folder outside; the host step's ``uv sync``
    (``--no-config``, ``--cache-dir`` of the user's cache) never writes there."""
    outside = host.evidence_dir / "uvcache"
    pyproject = (
        '[project]\nname = "calc"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = []\n'
        f'[tool.uv]\ncache-dir = "{outside}"\n'
    )
    repo = git_repo(host.root / "project", {"pyproject.toml": pyproject, ".gitignore": ".venv/\n"})
    subprocess.run(["uv", "lock", "--offline", "-q", "--no-config"], cwd=repo, check=True)
    (repo / "uv.toml").write_text(f'cache-dir = "{outside}"\n')
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "lock"], cwd=repo, check=True)
    rt = await hostile.open(repo, sandbox={"mode": "off"})
    await rt.lifecycle.new_session("ul", lane=True)
    assert not outside.exists(), sys.executable
