"""FanoutError and the exit codes of ``paragents fanout`` (those of the parallel-agents pipeline)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_CONFIG = 2
EXIT_JUDGE = 3
EXIT_WORKER = 4
EXIT_NO_PATCH = 5
EXIT_PATCH = 6

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_RUNTIME: "runtime failure",
    EXIT_CONFIG: "authentication or configuration error (bad N, unknown model, no git repository)",
    EXIT_JUDGE: "the judge's answer could not be parsed (after one retry)",
    EXIT_WORKER: "a worker (candidate session) failed",
    EXIT_NO_PATCH: "no patch available (no candidate changed anything, or none passed verify)",
    EXIT_PATCH: "the patch does not apply",
}


class FanoutError(Exception):
    """A fan-out refused or failed, with one readable message and the exit code it maps to."""

    def __init__(self, message: str, exit_code: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.exit_code = exit_code
