"""Specialist findings (the JSON schema each specialist answers in) and the merged review report:
findings of several specialists that name the same file, overlapping lines and a similar title become
one finding listing every specialist that reported it. Nothing here imports Textual."""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["critical", "high", "medium", "low", "info"]
SEVERITY_ORDER: tuple[Severity, ...] = ("critical", "high", "medium", "low", "info")
LINE_SLACK = 2
"""Two findings' line ranges overlap when they are at most this many lines apart."""
TITLE_SIMILARITY = 0.6
"""Titles at least this similar (difflib ratio of their lower-cased words) are the same finding."""


class Finding(BaseModel):
    """One finding of a specialist: where (``file``, ``line``, optional ``end_line``), how bad
    (``severity``), what (``title``) and the ``evidence`` (a short quote or reasoning from the code)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = Field(min_length=1, description="Path of the file, relative to the repository root.")
    line: int = Field(ge=0, description="First line the finding is about (0: the whole file).")
    end_line: int | None = Field(None, ge=0, description="Last line, when the finding spans several.")
    severity: Severity = Field(description="critical, high, medium, low or info.")
    title: str = Field(min_length=1, max_length=200, description="One line naming the problem.")
    evidence: str = Field(min_length=1, description="The quote or fact from the code that shows it.")

    @property
    def last_line(self) -> int:
        return max(self.line, self.end_line or self.line)


class FindingsAnswer(BaseModel):
    """What a specialist must answer: ``{"findings": [Finding, ...]}`` (an empty list is fine)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    findings: list[Finding]


FINDINGS_SCHEMA: dict[str, Any] = FindingsAnswer.model_json_schema()
"""The JSON schema the specialists are asked to answer in."""


class Evidence(BaseModel):
    """What one specialist gave as evidence for a merged finding."""

    model_config = ConfigDict(frozen=True)

    specialist: str
    text: str


class MergedFinding(BaseModel):
    """A finding of the report: the first specialist's finding, the worst severity reported, every
    specialist that reported it and each one's evidence."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    end_line: int | None
    severity: Severity
    title: str
    specialists: tuple[str, ...]
    evidence: tuple[Evidence, ...]


class ReviewReport(BaseModel):
    """The merged report: findings (worst first), the specialists that answered, those that failed
    (name -> reason), the base reviewed, the checked patch when one was asked for, and the group the
    review's evidence is kept in."""

    model_config = ConfigDict(frozen=True)

    base: str
    specialists: tuple[str, ...]
    failed: dict[str, str] = Field(default_factory=dict)
    findings: tuple[MergedFinding, ...] = ()
    patch: str | None = None
    patch_error: str | None = None
    group_id: str | None = None
    """The fan-out group this review is kept as (``paragents runs show ID``)."""

    def lines(self) -> list[str]:
        """The report as plain text lines (the TUI screen and ``--output rich`` style them)."""
        who = ", ".join(self.specialists)
        out = [f"review of git diff {self.base}: {len(self.findings)} finding(s) from {who}"]
        for name, reason in self.failed.items():
            out.append(f"specialist {name} failed: {reason}")
        for f in self.findings:
            where = f"{f.file}:{f.line}" + (f"-{f.end_line}" if f.end_line and f.end_line != f.line else "")
            out.append(f"[{f.severity}] {where} {f.title} ({', '.join(f.specialists)})")
            for item in f.evidence:
                out.append(f"    {item.specialist}: {item.text}")
        if self.patch is not None:
            out.append("patch (git apply --check passed):")
            out.extend(self.patch.splitlines())
        elif self.patch_error:
            out.append(f"no patch: {self.patch_error}")
        return out


def _words(title: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


def same_finding(a: Finding | MergedFinding, b: Finding) -> bool:
    """Same file, line ranges overlapping (within :data:`LINE_SLACK`), similar titles."""
    if a.file.strip("./") != b.file.strip("./"):
        return False
    a_last = max(a.line, a.end_line or a.line)
    if a.line > b.last_line + LINE_SLACK or b.line > a_last + LINE_SLACK:
        return False
    return difflib.SequenceMatcher(None, _words(a.title), _words(b.title)).ratio() >= TITLE_SIMILARITY


def merge_findings(answers: dict[str, list[Finding]]) -> list[MergedFinding]:
    """Deduplicate the specialists' findings (in the order of ``answers``) into report findings,
    worst severity first, then by file and line."""
    merged: list[MergedFinding] = []
    for specialist, findings in answers.items():
        for finding in findings:
            index = next((i for i, m in enumerate(merged) if same_finding(m, finding)), None)
            if index is None:
                merged.append(
                    MergedFinding(
                        file=finding.file,
                        line=finding.line,
                        end_line=finding.end_line,
                        severity=finding.severity,
                        title=finding.title,
                        specialists=(specialist,),
                        evidence=(Evidence(specialist=specialist, text=finding.evidence),),
                    )
                )
                continue
            old = merged[index]
            worst = min(old.severity, finding.severity, key=SEVERITY_ORDER.index)
            merged[index] = old.model_copy(
                update={
                    "severity": worst,
                    "specialists": tuple(dict.fromkeys((*old.specialists, specialist))),
                    "evidence": (*old.evidence, Evidence(specialist=specialist, text=finding.evidence)),
                }
            )
    return sorted(merged, key=lambda m: (SEVERITY_ORDER.index(m.severity), m.file, m.line))
