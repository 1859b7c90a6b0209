"""The fault suite's scoreboard: each test records, per fault, how many runs it made, how many ended
in a correct recovered state and how many complete messages were lost. ``conftest.py`` prints it
as a table at the end of the session (``pytest_terminal_summary``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FaultRow:
    """Totals for one fault name: ``runs`` injections, ``recovered`` of them ended correctly,
    ``lost`` complete messages lost over all runs (must stay 0)."""

    runs: int = 0
    recovered: int = 0
    lost: int = 0


TALLY: dict[str, FaultRow] = {}
"""fault name -> totals, in first-recorded order."""


def record(fault: str, *, recovered: bool, lost: int = 0, runs: int = 1) -> None:
    """Add ``runs`` injections of ``fault`` (all recovered when ``recovered``) losing ``lost`` messages."""
    row = TALLY.setdefault(fault, FaultRow())
    row.runs += runs
    row.recovered += runs if recovered else 0
    row.lost += lost


def table_lines() -> list[str]:
    """Return the scoreboard as aligned text lines (header first); [] when nothing was recorded."""
    if not TALLY:
        return []
    width = max(len("fault"), *(len(name) for name in TALLY))
    lines = [f"{'fault':<{width}}  {'runs':>5}  {'recovered':>9}  {'lost messages':>13}"]
    for name, row in TALLY.items():
        lines.append(f"{name:<{width}}  {row.runs:>5}  {row.recovered:>9}  {row.lost:>13}")
    total = FaultRow(
        sum(r.runs for r in TALLY.values()),
        sum(r.recovered for r in TALLY.values()),
        sum(r.lost for r in TALLY.values()),
    )
    lines.append(f"{'TOTAL':<{width}}  {total.runs:>5}  {total.recovered:>9}  {total.lost:>13}")
    return lines
