"""The verify command of a fan-out, run in one candidate's lane, and pytest's failing test names read
from its output. It runs code the candidate wrote (a ``conftest.py``, a package script), so it runs
in the lane's sandbox like the session's own commands (:func:`paragents.lanes.contained.run_in_lane`:
the lane writable, nothing else, no secrets, network as ``lanes.verify_network``), killed with its
whole sandbox at the timeout."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from paragents.lanes.contained import LaneSandbox, run_in_lane

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


async def run_verify(
    command: str, cwd: Path, env: dict[str, str], timeout: float, sandbox: LaneSandbox | None = None
) -> VerifyResult:
    """Run ``command`` in the candidate's lane ``cwd``, in the lane's sandbox (``sandbox``; default:
    the default settings), with ``env`` added; stop it after ``timeout`` seconds. Never raises for
    the command's own failure: that is the evidence."""
    done = await run_in_lane(command, cwd, sandbox or LaneSandbox(), env=env, timeout=timeout)
    if done.exit_code is None:
        note = (
            f"the verify command did not finish within {timeout:g} s and was stopped (fanout.verify_timeout)"
        )
        return VerifyResult(command, None, note, [], done.seconds, True)
    text = done.output
    return VerifyResult(command, done.exit_code, text[-TAIL_CHARS:], failing_tests(text), done.seconds)
