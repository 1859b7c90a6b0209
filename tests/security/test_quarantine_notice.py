"""What paragents moves out of the project after a sandboxed command (a posture file the command
created, paragents.tools.sandbox_watch) is said in a warning notice line of the session's
transcript, not only in the tool result (which the panel shows collapsed: the user saw "WROTE
runtime_config.json ..." and nothing about the file being taken away). Through the real engine
(scripted hostile model, real bwrap)."""

from __future__ import annotations

from paragents import events as ev
from tests.security.hostile import Hostile, hostile, needs_bwrap

__all__ = ["hostile"]

PLANT = "import json; open('runtime_config.json', 'w').write(json.dumps({'model': 'x'}))"


@needs_bwrap
async def test_a_quarantined_posture_file_is_a_warning_notice_in_the_transcript(hostile: Hostile) -> None:
    (hostile.project / "plant.py").write_text(PLANT)
    rt = await hostile.runtime({"allow": ["Bash(python3 *)"]}, sandbox={"mode": "required"})
    sid = await hostile.attack(rt, [("run_command", {"command": "python3 plant.py"})])
    await rt.shutdown()
    assert not (hostile.project / "runtime_config.json").exists()  # moved away after the command
    [finished] = hostile.sink.of(ev.ToolCallFinished, sid)
    assert "paragents moved what this command left behind" in finished.output
    notices = [e for e in hostile.sink.of(ev.Notice, sid) if "left behind" in e.text]
    assert len(notices) == 1 and notices[0].level == "warning", notices
    text = notices[0].text
    assert text.startswith("run_command python3 plant.py: paragents moved what this command left behind")
    assert "runtime_config.json" in text and "quarantine" in text
    events = hostile.sink.events
    assert events.index(finished) < events.index(notices[0])  # under the tool's row
