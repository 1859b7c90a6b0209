"""Every trial recorded as a cassette (docs/cassettes.md): the target's
:class:`~paragents.cassette.recorder.CassetteRecorder` collects every session's raw replies and answers;
:func:`trial_cassette` cuts out the sessions of one trial. A replay (:mod:`paragents.eval.replay`)
serves those replies again from the loopback replay server. Nothing here imports Textual."""

from __future__ import annotations

from typing import Any

from paragents.cassette.recorder import CassetteRecorder


def trial_cassette(
    recorder: CassetteRecorder, names: set[str], title: str, *, cut: bool = False
) -> dict[str, Any]:
    """The cassette of the sessions ``names`` (a trial's), secrets redacted: their prompts, replies,
    answers and final status. Its workspace is empty: the trial's files come from the task's base
    commit, not from the cassette. ``cut``: the trial ran into the agent's timeout; a last reply whose
    stream had not ended is marked ``cancel`` with the text streamed until then (the response is
    reported to the recorder only after the turn ended, so the recorder cannot mark it itself)."""
    whole = recorder.to_cassette()
    sessions = [s for s in whole.get("sessions", []) if s.get("name") in names]
    if cut:
        for session in sessions:
            raw = recorder.sessions.get(session["name"], {}).get("replies", [])
            last = session["replies"][-1] if session.get("replies") else None
            if last is None or last.get("cancel") or "[DONE]" in "".join(last.get("reads", [])):
                continue
            last["cancel"] = True
            last["cancel_after_text"] = raw[-1].get("_streamed", "") if raw else ""
            last.pop("truncate", None)
    return {
        "version": 1,
        "title": title,
        "model": whole.get("model", "replay-model"),
        "workspace": {},
        "sessions": sessions,
        "answers": [a for a in whole.get("answers", []) if a.get("session") in names],
        "expect": {k: v for k, v in whole.get("expect", {}).items() if k in names},
        "recorded": {"notes": ["an eval trial: replay it with `paragents eval run --replay DIR`"]},
    }
