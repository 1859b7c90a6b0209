"""The exit codes of the ``paragents`` command, and the code a finished turn maps to.

0 done, 1 runtime failure, 2 config/auth/usage error, 3 endpoint protocol error, 4 session held by
another live process (``run`` without ``--take-over``), 7 stopped at a budget (``--max-budget``,
``budgets`` in the config) or by the loop guard, before sending the request that would cross it;
130 cancelled.

``paragents eval`` (docs/eval.md) adds 8: ``eval gate`` found the run below a threshold, and 9:
``eval run --replay`` scored differently from the recorded run (:mod:`paragents.eval.errors`).
"""

from __future__ import annotations

from paragents.models import TurnStatus

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_CONFIG = 2
EXIT_PROTOCOL = 3
EXIT_HELD = 4
EXIT_BUDGET = 7
EXIT_GATE = 8
"""``eval gate``: below a threshold."""
EXIT_REPLAY = 9
"""``eval run --replay``: the replayed scores differ from the recorded ones."""
EXIT_CANCELLED = 130

_CONFIG_KINDS = {"auth", "forbidden", "not_found", "config"}
_PROTOCOL_KINDS = {"protocol"}
_BUDGET_KINDS = {"budget", "loop"}


def exit_code_for(status: str, error_kind: str | None) -> int:
    """Map a turn's status and error kind to the documented exit code."""
    if status == TurnStatus.COMPLETED:
        return EXIT_OK
    if error_kind in _BUDGET_KINDS:  # stopped at a budget or loop-guard pause (a cancel, or failed)
        return EXIT_BUDGET
    if status == TurnStatus.CANCELLED:
        return EXIT_CANCELLED
    if error_kind in _CONFIG_KINDS:
        return EXIT_CONFIG
    if error_kind in _PROTOCOL_KINDS:
        return EXIT_PROTOCOL
    return EXIT_FAILURE
