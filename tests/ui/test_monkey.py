"""The UI monkey test: Hypothesis drives a Pilot session against three sessions streaming hostile
content and asking for approvals at random moments (tests/ui/monkey_driver.py lists the acts and
the invariants). The normal suite runs a short seeded version; ``--monkey-minutes N`` runs random
seeds for N minutes and saves the seed of any failure in ``monkey-failures.txt`` (repo root)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tests.ui.monkey_driver import Tally, run_monkey

FAILURES = Path(__file__).resolve().parents[2] / "monkey-failures.txt"
SHORT = settings(
    max_examples=2,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
"""The normal suite: two fixed examples (well under a minute on a loaded 2-core machine)."""
SHORT_STEPS = 15
LONG_STEPS = 60


def monkey_body(steps: int | None, tallies: list[Tally]) -> Callable[[st.DataObject], None]:
    """The example: a server seed and ``steps`` acts (None: drawn, so the simplest example is short)."""

    def body(data: st.DataObject) -> None:
        count = steps if steps is not None else data.draw(st.integers(1, LONG_STEPS), label="acts")
        server_seed = data.draw(st.integers(0, 2**31), label="server seed")
        tallies.append(asyncio.run(run_monkey(data.draw, count, server_seed)))

    return body


def test_monkey_short_seeded() -> None:
    tallies: list[Tally] = []
    SHORT(given(st.data())(monkey_body(SHORT_STEPS, tallies)))()
    assert tallies, "no example ran"
    assert sum(t.acts for t in tallies) >= SHORT_STEPS, "the monkey did (almost) nothing"
    assert sum(t.asks for t in tallies) > 0, "no approval was asked: the hostile model is too tame"


def test_monkey_long(request: pytest.FixtureRequest) -> None:
    minutes = float(request.config.getoption("--monkey-minutes"))
    if minutes <= 0:
        pytest.skip("the long monkey runs with --monkey-minutes N")
    deadline = time.monotonic() + minutes * 60
    tallies: list[Tally] = []
    seeds: list[int] = []
    # Hypothesis's first example of a run is the simplest (one act); the next one is random. No
    # shrinking: the seed and the failing example's blob are reported while time is left.
    long = settings(SHORT, max_examples=2, derandomize=False, phases=[Phase.generate])
    while time.monotonic() < deadline:
        seeds.append(random.randrange(2**32))
        test = seed(seeds[-1])(long(given(st.data())(monkey_body(None, tallies))))
        try:
            test()
        except BaseException:
            with FAILURES.open("a", encoding="utf-8") as out:
                out.write(f"seed={seeds[-1]} (test_monkey_long)\n")
            print(f"\nmonkey failure with seed {seeds[-1]} (saved in {FAILURES})")
            raise
    runs = len(tallies)
    acts = sum(t.acts for t in tallies)
    asks = sum(t.asks for t in tallies)
    conflicts = sum(t.conflicts for t in tallies)
    answered = sum(t.answered_by_user for t in tallies)
    submitted = sum(t.submitted for t in tallies)
    print(
        f"\nmonkey: seeds {seeds}, {runs} runs, {acts} acts, {asks} asks, {conflicts} conflicts, "
        f"{answered} answered by the "
        f"user, {submitted} prompts"
    )
    assert runs > 0
