"""The verify command of a fan-out, run in one candidate's lane (``/bin/sh -c``, own process group,
killed at the timeout, off the UI loop: a subprocess awaited with asyncio), and pytest's failing test
names read from its output. The command runs unconfined, like the lanes' ``verify`` (it is the
user's own command line, as in ``paragents lanes merge``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

TAIL_CHARS = 4000
"""Characters of the output's end kept as evidence."""

_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$", re.MULTILINE)


def failing_tests(output: str) -> list[str]:
    """Return the test ids pytest names on its ``FAILED x::y`` / ``ERROR x::y`` summary lines, in order,
    without duplicates."""
    return list(dict.fromkeys(m.group(1) for m in _FAILED.finditer(output)))


@dataclass(frozen=True)
class VerifyResult:
    """What the verify command did in one lane: ``exit_code`` (None when it was stopped at the
    timeout), the output's ``tail``, the ``failing`` test names and the ``seconds`` it took."""

    command: str
    exit_code: int | None
    tail: str
    failing: list[str] = field(default_factory=list)
    seconds: float = 0.0
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerifyResult:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


async def run_verify(command: str, cwd: Path, env: dict[str, str], timeout: float) -> VerifyResult:
    """Run ``command`` in ``cwd`` with ``env`` added; stop it (the whole process group) after ``timeout``
    seconds. Never raises for the command's own failure: that is the evidence."""
    start = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=str(cwd),
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return VerifyResult(command, 127, f"cannot run the verify command: {exc}", [], 0.0)
    timed_out = False
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        timed_out, out = True, b""
    text = out.decode("utf-8", "replace")
    seconds = round(time.monotonic() - start, 3)
    if timed_out:
        note = (
            f"the verify command did not finish within {timeout:g} s and was stopped (fanout.verify_timeout)"
        )
        return VerifyResult(command, None, note, [], seconds, True)
    return VerifyResult(command, proc.returncode, text[-TAIL_CHARS:], failing_tests(text), seconds)
