"""Specialist review (``/review [security,test,...]``, ``paragents fanout --review LIST``): a read-only
review of ``git diff BASE`` (or of the current lane against its base) fanned out to the chosen
specialists, each a session running under the scheduler in plan mode with only read tools; each
answers findings in a JSON schema (retried once, else "specialist X failed", never guessed); the
findings are merged into one deduplicated report. With ``patch``, one more request writes a patch
for the findings, offered only when ``git apply --check`` accepts it. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paragents.config import SessionProfile
from paragents.fanout.asking import WorkerFailed, ask_json, close_workers, open_worker, run_turn
from paragents.fanout.host import FanoutHost
from paragents.fanout.recording import add_member, finish_group, open_group, resolve_commit
from paragents.fanout.report import FindingsAnswer, ReviewReport, merge_findings
from paragents.fanout.specialists import choose
from paragents.lanes import LaneError
from paragents.lanes.git import git
from paragents.sessions.api import SessionsAPI
from paragents.sessions.view import SessionError, SessionView

MAX_DIFF_CHARS = 60_000
"""Longest diff put into a specialist's prompt (a longer one is cut, and the prompt says so)."""


class ReviewError(Exception):
    """A review that cannot run or produced nothing usable; ``code`` is the headless exit code (2
    config, 3 unparsable answers, 4 a specialist failed, 5 no diff / no patch, 6 patch does not apply)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ReviewRequest:
    """What to review: the specialists (None: every built-in), the ``base`` of ``git diff BASE``, the
    directory (a lane's worktree or the project), whether to ask for a patch, and whether to keep the
    specialist sessions open afterwards (the TUI keeps their panels)."""

    specialists: Sequence[str] | None = None
    base: str = "HEAD"
    workdir: Path | None = None
    patch: bool = False
    keep_sessions: bool = False


async def collect_diff(workdir: Path, base: str) -> str:
    """``git diff BASE`` in ``workdir`` (tracked changes, staged or not). Raises ReviewError (exit 2)
    when it is not a repository or the base is unknown."""
    inside = await git("rev-parse", "--is-inside-work-tree", cwd=workdir, check=False)
    if inside.out.strip() != "true":
        raise ReviewError(f"nothing to review: {workdir} is not in a git repository", 2)
    try:
        result = await git(
            "diff", "--no-color", "--no-ext-diff", base, "--", cwd=workdir, what=f"git diff {base}"
        )
    except LaneError as exc:
        raise ReviewError(str(exc), 2) from exc
    return result.out


def review_prompt(diff: str, base: str) -> str:
    """The prompt every specialist gets: the diff to review (cut at :data:`MAX_DIFF_CHARS`)."""
    cut = ""
    if len(diff) > MAX_DIFF_CHARS:
        diff, cut = diff[:MAX_DIFF_CHARS], "\n[the diff was cut here; read the files for the rest]"
    return (
        f"Review this change (git diff {base}) with your focus. Read files when you need more context. "
        'Answer {"findings": [...]} with file, line, severity, title and evidence for each problem, '
        f'or {{"findings": []}} when you find none.\n\n```diff\n{diff}\n```{cut}'
    )


async def run_review(
    host: FanoutHost, request: ReviewRequest, on_open: Callable[[SessionView], Any] | None = None
) -> ReviewReport:
    """Run the review (see the module docstring) and return the merged report. Raises ReviewError:
    unknown specialist (2), nothing to review (5), every specialist failed (3 when they answered
    unusable JSON, 4 otherwise). A failed specialist among others is listed in ``report.failed``."""
    rt = host.rt
    try:
        chosen = choose(request.specialists, rt.config)
    except ValueError as exc:
        raise ReviewError(str(exc), 2) from exc
    workdir = request.workdir or rt.project_dir
    diff = await collect_diff(workdir, request.base)
    if not diff.strip():
        raise ReviewError(f"nothing to review: git diff {request.base} is empty in {workdir}", 5)
    names = list(chosen)
    group_id = await open_group(
        host.store.fanout,
        kind="review",
        project_dir=rt.project_dir,
        name="review-" + "-".join(names)[:50],
        prompt=f"review by {', '.join(names)} of git diff {request.base}",
        base_ref=request.base,
        base_commit=await resolve_commit(workdir, request.base),
        settings={
            "specialists": names,
            "base": request.base,
            "workdir": str(workdir),
            "patch": request.patch,
        },
    )
    views: list[SessionView] = []
    try:
        report = await _review(host, request, chosen, diff, workdir, group_id, views, on_open)
    except ReviewError as exc:
        await finish_group(host.store.fanout, group_id, "failed", error=str(exc), exit_code=exc.code)
        raise
    except Exception as exc:
        await finish_group(
            host.store.fanout, group_id, "failed", error=f"{type(exc).__name__}: {exc}", exit_code=1
        )
        raise
    finally:
        if not request.keep_sessions:
            await close_workers(rt, views)
    await finish_group(
        host.store.fanout, group_id, "done", report=report.model_dump(mode="json", exclude={"group_id"})
    )
    return report


async def _review(
    host: FanoutHost,
    request: ReviewRequest,
    chosen: dict[str, SessionProfile],
    diff: str,
    workdir: Path,
    group_id: str,
    views: list[SessionView],
    on_open: Callable[[SessionView], Any] | None,
) -> ReviewReport:
    """Ask the specialists (each recorded as a candidate of the group with its answer or failure)
    and merge their findings."""
    rt = host.rt
    for idx, (name, profile) in enumerate(chosen.items(), 1):
        schema = FindingsAnswer.model_json_schema()
        view = await open_worker(
            rt, f"review-{name}", profile, schema=schema, workdir=workdir, on_open=on_open
        )
        views.append(view)
        await add_member(host, group_id, idx, view, {"specialist": name})
    prompt = review_prompt(diff, request.base)
    outcomes = await asyncio.gather(
        *(ask_json(rt, view, prompt, FindingsAnswer) for view in views), return_exceptions=True
    )
    answers: dict[str, list[Any]] = {}
    failed: dict[str, str] = {}
    for idx, (name, outcome) in enumerate(zip(chosen, outcomes, strict=True), 1):
        if isinstance(outcome, WorkerFailed):
            failed[name] = str(outcome)
            evidence: dict[str, Any] = {"specialist": name, "error": str(outcome)}
            await host.store.fanout.update_candidate(group_id, idx, state="failed", evidence=evidence)
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            answers[name] = list(outcome.findings)
            found = [f.model_dump(mode="json") for f in outcome.findings]
            evidence = {"specialist": name, "findings": found}
            await host.store.fanout.update_candidate(group_id, idx, state="done", evidence=evidence)
    if not answers:
        unparsable = all("invalid answer" in reason for reason in failed.values())
        detail = "; ".join(f"specialist {n} failed: {r}" for n, r in failed.items())
        raise ReviewError(detail, 3 if unparsable else 4)
    report = ReviewReport(
        base=request.base,
        specialists=tuple(answers),
        failed=failed,
        findings=tuple(merge_findings(answers)),
        group_id=group_id,
    )
    if request.patch:
        report = await _with_patch(host, report, workdir, views, on_open)
    return report


_DIFF_BLOCK = re.compile(r"```(?:diff|patch)\s*\n(.*?)```", re.DOTALL)


def extract_patch(reply: str | None) -> str | None:
    """The unified diff of a patch reply: its one fenced diff block, or the whole reply when it is a
    bare diff; None otherwise (no guessing)."""
    text = (reply or "").strip()
    blocks = _DIFF_BLOCK.findall(text)
    if len(blocks) == 1:
        text = blocks[0].strip()
    elif blocks:
        return None
    return text + "\n" if text.startswith(("diff --git", "--- ")) else None


async def check_patch(workdir: Path, patch: str) -> str | None:
    """None when ``git apply --check`` accepts ``patch`` in ``workdir``, else git's reason (git run
    the hardened way: lanes/git.py)."""
    try:
        result = await git("apply", "--check", "-", cwd=workdir, stdin=patch, check=False)
    except LaneError as exc:
        return str(exc)
    return None if result.ok else (result.err or f"exit {result.code}")


async def _with_patch(
    host: FanoutHost,
    report: ReviewReport,
    workdir: Path,
    views: list[SessionView],
    on_open: Callable[[SessionView], Any] | None,
) -> ReviewReport:
    """One patch request for the report's findings; the patch is kept only when it applies."""
    if not report.findings:
        return report.model_copy(update={"patch_error": "no findings to fix"})
    view = await open_worker(host.rt, "review-patch", None, workdir=workdir, on_open=on_open)
    views.append(view)
    idx = len(views)
    if report.group_id is not None:
        await add_member(host, report.group_id, idx, view, {"role": "patch"})
    report = await _ask_patch(host.rt, report, workdir, view)
    if report.group_id is not None:
        state = "done" if report.patch is not None else "failed"
        evidence = {"role": "patch", **({"error": report.patch_error} if report.patch_error else {})}
        await host.store.fanout.update_candidate(
            report.group_id, idx, state=state, evidence=evidence, patch=report.patch
        )
    return report


async def _ask_patch(rt: SessionsAPI, report: ReviewReport, workdir: Path, view: SessionView) -> ReviewReport:
    """Ask ``view`` (no tools) for the patch; keep it only when ``git apply --check`` accepts it."""
    try:
        rt.controls.use_tools(view.id, [])  # the patch is written as text, nothing runs
    except SessionError as exc:
        raise WorkerFailed(view.name, str(exc)) from None
    findings = "\n".join(report.lines()[1:])
    prompt = (
        "Write one unified diff (as `git diff` prints it, paths a/ and b/ from the repository root) that "
        f"fixes these review findings, in one ```diff block and nothing else:\n\n{findings}"
    )
    try:
        patch = extract_patch(await run_turn(rt, view, prompt))
    except WorkerFailed as exc:
        return report.model_copy(update={"patch_error": f"the patch request failed: {exc}"})
    if patch is None:
        return report.model_copy(update={"patch_error": "the reply held no unified diff"})
    problem = await check_patch(workdir, patch)
    if problem is not None:
        return report.model_copy(update={"patch_error": f"the patch does not apply: {problem}"})
    return report.model_copy(update={"patch": patch})
