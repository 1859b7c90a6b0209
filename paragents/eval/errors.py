"""The one error of ``paragents eval`` (:class:`EvalError`: a readable message and the exit code it maps
to) and the exit codes of ``paragents eval`` (docs/eval.md, the headless table in README)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1
"""A trial could not be run at all (store, git, a backend failure), or ``validate`` found a broken task."""
EXIT_CONFIG = 2
"""Bad input: an unknown target or model, a task set that does not load, a bad option or answer script,
``--on container|k8s`` (no such execution backend yet)."""
EXIT_GATE = 8
"""``eval gate``: the run is below a threshold (the one-line reason names which); the same number as
``paragents.cli.exit_codes.EXIT_GATE`` (a test checks they agree)."""
EXIT_REPLAY = 9
"""``eval run --replay``: the replayed scores differ from the recorded ones (the differences are
printed); ``paragents.cli.exit_codes.EXIT_REPLAY``."""


class EvalError(Exception):
    """A readable failure of ``paragents eval`` (naming the file, field or option and what to do), with
    the exit code it maps to (default :data:`EXIT_CONFIG`)."""

    def __init__(self, message: str, exit_code: int = EXIT_CONFIG) -> None:
        super().__init__(message)
        self.exit_code = exit_code
