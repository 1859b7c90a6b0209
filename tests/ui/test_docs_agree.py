"""What the docs say the app shows is what it shows (fresh-user findings: README showed a flag as
``FR`` where the app shows ``[FR]``; docs/cassettes.md said the demo answers asks after two seconds
where it waits for the first and answers the others after eight)."""

from __future__ import annotations

import re
from pathlib import Path

from paragents.demo.launcher import AUTO_ANSWER_AFTER
from paragents.ui.core.text import clean

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_shows_a_flag_as_the_app_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"a flag `(\S+)` as `([^`]+)`", readme)
    assert found is not None, "README no longer says how a flag is shown"
    assert found.group(2) == clean(found.group(1))


def test_the_demo_doc_gives_the_demos_own_answer_delay() -> None:
    doc = " ".join((ROOT / "docs" / "cassettes.md").read_text(encoding="utf-8").split())
    assert "The first approval waits for you" in doc
    assert f"answered by the script after {AUTO_ANSWER_AFTER:g} seconds" in doc
