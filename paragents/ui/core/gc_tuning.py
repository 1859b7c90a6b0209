"""Garbage-collector tuning of the TUI process (``make_app(..., tune_gc=True)``: the CLI and the demo,
never the tests): rarer full collections while streaming, and a freeze of what lives as long as the app."""

from __future__ import annotations

import gc

GC_THRESHOLDS = (10_000, 20, 20)
"""``gc.set_threshold`` of a tuned app (Python's default is 700, 10, 10). Streaming allocates many
short-lived objects; with the defaults a full (generation 2) collection ran about once a second and
stalled the loop 60-100 ms each time with eight panels streaming (docs/performance.md)."""


def tune_gc() -> None:
    """Make full garbage collections rare for a long-running TUI process: raise the collection
    thresholds to :data:`GC_THRESHOLDS`. Process-wide; the app calls it at mount when tuned."""
    gc.set_threshold(*GC_THRESHOLDS)


def freeze_startup_objects() -> None:
    """Everything alive once the app has started (modules, widgets, restored records) lives as long as
    the app: move it out of the collector's view so full collections only walk what streaming allocates."""
    gc.freeze()
