"""Fault-suite hooks: print the scoreboard (fault, runs, recovered, lost messages) at the end."""

from __future__ import annotations

from typing import Any

from tests.faults.tally import table_lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """Print the fault table collected by :func:`tests.faults.tally.record` (nothing if no fault ran)."""
    lines = table_lines()
    if not lines:
        return
    terminalreporter.section("fault suite summary")
    for line in lines:
        terminalreporter.write_line(line)
