"""What a recorder of a live run is (``--record FILE``): the typed interface the runtime calls.

The runtime hands :meth:`Recorder.on_response` to its :class:`~paragents.llm.ChatClient` as the
``recorder`` callback (one call per HTTP response, secrets already scrubbed) and calls
:meth:`Recorder.attach` once the runtime exists. The cassette recorder
(:class:`paragents.cassette.recorder.CassetteRecorder`) is the implementation.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from paragents import events as ev

ResponseRecord = dict[str, Any]
"""One HTTP response as the ChatClient reports it: ``request``, ``path``, ``status``, ``headers`` and
the body as ``reads`` (text chunks) or ``reads_b64`` (see ``ChatClient``'s docstring)."""


class RecordedRuntime(Protocol):
    """The part of a runtime a recorder sees when attached."""

    @property
    def project_dir(self) -> Path: ...

    @property
    def config(self) -> Any: ...

    def observe(self, sink: ev.EventSink) -> None: ...


class Recorder(Protocol):
    """Records a run: every model response and, once attached, every event of the runtime."""

    def on_response(self, record: ResponseRecord) -> None:
        """The ChatClient ``recorder`` callback; must not block (it runs on the event loop)."""

    def attach(self, runtime: RecordedRuntime) -> None:
        """Called once by ``Runtime.create`` with the new runtime (add an observer, note the project)."""


ACTIVE_RECORDER: ContextVar[Recorder | None] = ContextVar("paragents_active_recorder", default=None)
"""The recorder ``Runtime.create`` attaches when none is passed (set by ``--record FILE`` for the run
that ``paragents.cli.cassette`` wraps)."""
