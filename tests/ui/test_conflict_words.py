"""What a stale-read conflict says: who changed the file and when, who else read it; or that no
session here changed it. The inbox line names the writer too."""

from __future__ import annotations

import asyncio

from paragents.events import ConflictDetected
from paragents.models import ToolCall
from paragents.ui.widgets.conflict_bar import describe, stale_summary

NOW = 1_800_000_000.0


def stale(holder: str, others: tuple[str, ...] = ()) -> ConflictDetected:
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
    finally:
        loop.close()
    call = ToolCall("c1", "edit_file", '{"path": "src/config.py"}')
    return ConflictDetected(
        "s1", "k1", call, "edit_file src/config.py", "stale_read", "/p/src/config.py", holder, "",
        NOW - 40, "--- a\n+++ b\n", ("reread", "run_anyway", "skip"), future, others,
    )  # fmt: skip


def test_a_stale_read_names_who_wrote_the_file_when_and_who_else_read_it() -> None:
    text = describe(stale("api", ("docs", "web")), NOW).plain
    assert "api wrote /p/src/config.py 40s ago, after this session read it" in text
    assert "also read by docs, web" in text
    assert stale_summary(stale("api")) == " (api wrote config.py)"


def test_a_stale_read_no_session_here_caused_says_so() -> None:
    text = describe(stale(""), NOW).plain
    assert "changed on disk since this session read it (40s ago; not by a session of this paragents)" in text
    assert "also read by" not in text
    assert stale_summary(stale("")) == " (config.py changed on disk)"
