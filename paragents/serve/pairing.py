"""Pairing a phone: a one-time code kept (hashed) in the store, its link and QR code, and the secret
that signs paired browsers' tokens (a file in the state directory, mode 0600, made on first use)."""

from __future__ import annotations

import io
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any, Protocol

from paragents import paths
from paragents.serve.auth import code_hash

PAIRING_TTL = 300.0
"""Seconds a pairing link stays usable (once)."""


class PairingCodes(Protocol):
    """Where the one-time pairing codes are kept: the store's ``api_access`` repository (``serve``
    imports only the store's records, so it names what it uses here)."""

    async def add_pairing_code(self, code_hash: str, *, created_at: float, expires_at: float) -> None: ...


class AccessLog(PairingCodes, Protocol):
    """The API server's own records: the access log and the pairing codes (the store's ``api_access``
    repository, handed to the server by the composition root)."""

    async def record(
        self,
        *,
        remote: str,
        method: str,
        path: str,
        status: int,
        principal: str = "",
        note: str = "",
        at: float | None = None,
    ) -> None: ...
    async def prune(self, before: float) -> int: ...
    async def use_pairing_code(self, code_hash: str, *, at: float) -> str: ...


def _private_file(path: Path, data: bytes) -> None:
    paths.ensure_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def browser_secret(state_dir: Path | None = None) -> bytes:
    """The secret signing paired browsers' tokens (``serve-browser.key`` in the state dir, 0600; made
    when missing; delete it to sign every browser out)."""
    path = (state_dir or paths.state_dir()) / "serve-browser.key"
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except FileNotFoundError:
        pass
    data = secrets.token_bytes(32)
    _private_file(path, data)
    return data


def info_path(state_dir: Path | None = None) -> Path:
    """Where a running ``paragents serve`` writes its URL (and a generated key) for ``paragents pair``."""
    return (state_dir or paths.state_dir()) / "serve.json"


def write_info(url: str, api_key: str | None, state_dir: Path | None = None) -> Path:
    """Write the running server's URL (and the key it generated, if any) to :func:`info_path` (0600)."""
    path = info_path(state_dir)
    _private_file(path, json.dumps({"url": url, "pid": os.getpid(), "api_key": api_key}).encode())
    return path


def read_info(state_dir: Path | None = None) -> dict[str, Any] | None:
    """What :func:`write_info` wrote, or None when no server wrote one (or it is unreadable)."""
    try:
        data = json.loads(info_path(state_dir).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def live_info(state_dir: Path | None = None) -> dict[str, Any] | None:
    """What a running server wrote (:func:`read_info`), or None when none did or its process is gone."""
    info = read_info(state_dir)
    return info if info is not None and _alive(info.get("pid")) else None


def claim_info(url: str, api_key: str | None, state_dir: Path | None = None) -> Path | None:
    """Write this server's :func:`info_path` unless another live server's is there (``paragents
    pair`` keeps pointing at that one); return the path when written, else None."""
    other = live_info(state_dir)
    if other is not None and other.get("pid") != os.getpid():
        return None
    return write_info(url, api_key, state_dir)


async def new_pairing(
    codes: PairingCodes, base_url: str, now: float | None = None, ttl: float = PAIRING_TTL
) -> str:
    """Create a one-time pairing code valid for ``ttl`` seconds; return its link under ``base_url``."""
    code = secrets.token_urlsafe(24)
    start = time.time() if now is None else now
    await codes.add_pairing_code(code_hash(code), created_at=start, expires_at=start + ttl)
    return f"{base_url.rstrip('/')}/pair/{code}"


def qr_text(link: str) -> str:
    """The link as a QR code drawn with Unicode half blocks (plain text, no escape sequences)."""
    import segno

    out = io.StringIO()
    segno.make(link, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()
