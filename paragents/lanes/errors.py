"""The one error type of lanes: a readable message naming what went wrong and how to fix it."""

from __future__ import annotations


class LaneError(Exception):
    """A lane operation was refused or failed; ``str(err)`` is one readable sentence for the user.

    ``exit_code`` is what ``paragents lanes`` exits with (1 failure, 2 no such lane, 4 verify failed, 5 merge
    conflict predicted, 6 refused to remove a lane holding unmerged work)."""

    def __init__(
        self, message: str, *, exit_code: int = 1, output: str = "", command_exit: int | None = None
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.output = output
        """Output kept from a failing command (a setup script's, a verify command's)."""
        self.command_exit = command_exit
        """That command's own exit code (None when it was stopped at a timeout)."""


class LaneMoved(LaneError):
    """The lane's HEAD or working tree is no longer what was reviewed: the review starts over."""
