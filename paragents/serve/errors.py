"""The API's one error type: :class:`ApiError` (an HTTP status and a readable message)."""

from __future__ import annotations


class ApiError(Exception):
    """A request the Runtime refused: ``status`` (HTTP) and a readable ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
