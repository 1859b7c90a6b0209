"""The live table of ``eval run`` in a terminal: one row per task, one column per target, each trial a
mark (``·`` waiting, ``…`` running, ``✓`` resolved, ``✗`` not, ``!`` error), with the running pass
rate per target, trials done and an ETA (rich's ``Live``). Without a terminal it prints one line per
finished trial instead. Task ids and labels are shown as plain text (never markup). Nothing here
imports Textual."""

from __future__ import annotations

import time
from collections import defaultdict

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from paragents.eval.results import TrialResult
from paragents.eval.runner import Progress
from paragents.eval.trial import TrialSpec

MARKS = {"waiting": "·", "done-ok": "✓", "done-no": "✗", "error": "!"}


class LiveTable(Progress):
    """See the module docstring. Use as a context manager around the run."""

    def __init__(self, console: Console | None = None, *, live: bool | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        self.live_mode = self.console.is_terminal if live is None else live
        self.specs: list[TrialSpec] = []
        self.states: dict[str, str] = {}
        self.results: dict[str, TrialResult] = {}
        self.started = time.monotonic()
        self._live: Live | None = None

    def __enter__(self) -> LiveTable:
        if self.live_mode:
            self._live = Live(
                console=self.console, refresh_per_second=2, transient=False, get_renderable=self.render
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.__exit__(None, None, None)

    def start(self, specs: list[TrialSpec]) -> None:
        self.specs = specs
        self.started = time.monotonic()
        self._refresh()

    def state(self, name: str, text: str) -> None:
        self.states[name] = text
        self._refresh()

    def finished(self, result: TrialResult) -> None:
        self.results[result.name] = result
        if not self.live_mode:
            mark = (
                "error" if result.status == "error" else ("resolved" if result.resolved else "not resolved")
            )
            line = f"[{len(self.results)}/{len(self.specs)}] {result.name}: {mark}"
            if result.error:
                line += f" ({result.error[:120]})"
            self.console.print(Text(line))
        self._refresh()

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.refresh()

    def _mark(self, spec: TrialSpec) -> str:
        result = self.results.get(spec.name)
        if result is None:
            return "…" if spec.name in self.states else MARKS["waiting"]
        if result.status == "error":
            return MARKS["error"]
        return MARKS["done-ok"] if result.resolved else MARKS["done-no"]

    def eta(self) -> str:
        """The time left at the pace so far ("-" before the first trial finished)."""
        done = len(self.results)
        if not done or done >= len(self.specs):
            return "-"
        per = (time.monotonic() - self.started) / done
        left = int(per * (len(self.specs) - done))
        return f"{left // 60}m{left % 60:02d}s"

    def render(self) -> Table:
        targets = list(dict.fromkeys(s.target.label for s in self.specs))
        cells: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for spec in self.specs:
            cells[spec.task.id][spec.target.label].append(self._mark(spec))
        done = len(self.results)
        spent = time.monotonic() - self.started
        title = f"eval: {done}/{len(self.specs)} trials · {spent:.0f}s · ETA {self.eta()}"
        table = Table(title=Text(title), show_edge=False, pad_edge=False)
        table.add_column(Text("task"))
        for label in targets:
            table.add_column(Text(label), justify="center")
        for task, row in cells.items():
            table.add_row(Text(task), *(Text("".join(row[label])) for label in targets))
        rates = []
        for label in targets:
            finished = [r for r in self.results.values() if r.target == label]
            ok = sum(r.resolved for r in finished)
            rates.append(Text(f"{ok}/{len(finished)}" + (f" {ok / len(finished):.0%}" if finished else "")))
        table.add_section()
        table.add_row(Text("pass rate"), *rates)
        return table
