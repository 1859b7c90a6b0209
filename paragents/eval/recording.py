"""Every trial recorded as a cassette (docs/cassettes.md): the target's
:class:`~paragents.cassette.recorder.CassetteRecorder` collects every session's raw replies and answers;
:func:`trial_cassette` cuts out the sessions of one trial. A replay (:mod:`paragents.eval.replay`)
serves those replies again from the loopback replay server. Nothing here imports Textual."""

from __future__ import annotations

from typing import Any

from paragents.cassette.recorder import CassetteRecorder


def trial_cassette(recorder: CassetteRecorder, names: set[str], title: str) -> dict[str, Any]:
    """The cassette of the sessions ``names`` (a trial's), secrets redacted: their prompts, replies,
    answers and final status. Its workspace is empty: the trial's files come from the task's base
    commit, not from the cassette."""
    whole = recorder.to_cassette()
    return {
        "version": 1,
        "title": title,
        "model": whole.get("model", "replay-model"),
        "workspace": {},
        "sessions": [s for s in whole.get("sessions", []) if s.get("name") in names],
        "answers": [a for a in whole.get("answers", []) if a.get("session") in names],
        "expect": {k: v for k, v in whole.get("expect", {}).items() if k in names},
        "recorded": {"notes": ["an eval trial: replay it with `paragents eval run --replay DIR`"]},
    }
