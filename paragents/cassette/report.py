"""The replay report: the final state per session, the files changed, the replay's own errors, and
the check of the cassette's ``expect`` (with a unified diff of expected vs actual); plus a text
rendering for ``paragents replay`` without ``--json``."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents import treefiles

if TYPE_CHECKING:
    from paragents.store.messages import MessagesRepo

_SKIP_DIRS = {".paragents", ".git", "__pycache__"}


def _normalise_obj(value: Any, norm: Any) -> Any:
    if isinstance(value, str):
        return norm(value)
    if isinstance(value, list):
        return [_normalise_obj(v, norm) for v in value]
    if isinstance(value, dict):
        return {k: _normalise_obj(v, norm) for k, v in value.items()}
    return value


def snapshot_files(root: Path, *, skip: set[str] | None = None) -> dict[str, str]:
    """Return ``{relative posix path: text}`` of every regular file under ``root`` (bytes decoded as
    UTF-8 with replacement), skipping ``.paragents``, ``.git``, ``__pycache__`` and the paths in ``skip``."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts) or not treefiles.is_regular(path):
            continue  # a link the session left (to ~/.ssh/id_rsa) is never read (paragents.treefiles)
        key = rel.as_posix()
        if skip and key in skip:
            continue
        try:
            out[key] = treefiles.read_bytes(path, root=root).decode("utf-8", "replace")
        except OSError:
            continue
    return out


def files_changed(before: dict[str, str], after: dict[str, str]) -> list[dict[str, Any]]:
    """List ``{"path", "change": added|modified|deleted, "diff"}`` for every file that differs."""
    out: list[dict[str, Any]] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        change = "added" if old is None else "deleted" if new is None else "modified"
        diff = "".join(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                f"a/{path}",
                f"b/{path}",
            )
        )
        out.append({"path": path, "change": change, "diff": diff})
    return out


async def build_report(player: Any, runtime: Any, messages_repo: MessagesRepo | None) -> dict[str, Any]:
    """Build the report dict from a finished :class:`~paragents.cassette.player.Player` and its last
    runtime (read before shutdown; messages come from its store's ``messages_repo``, incomplete replies
    included).
    Keys: ``cassette``, ``sessions`` (cassette order), ``files`` (final content of changed files),
    ``files_changed``, ``replay_errors``, ``warnings``, ``expect``."""
    cassette = player.cassette
    norm = player._normalise
    sessions: list[dict[str, Any]] = []
    for spec in cassette.sessions:
        log = player.journal.log(spec.name)
        view = runtime.sessions.get(player.ids.get(spec.name, ""))
        turns = log.turns
        status = turns[-1]["status"] if turns and turns[-1]["status"] else "idle"
        for turn in turns:
            if turn["error"] and "no scripted response left" in turn["error"]:
                player.errors.append(
                    f"session {spec.name} asked the model more often than it has scripted replies "
                    f"({len(spec.replies)})"
                )
                break
        messages: list[dict[str, Any]] = []
        if view is not None and messages_repo is not None:
            for stored in await messages_repo.load(view.id):
                msg = dict(stored.message)
                if not stored.complete:
                    msg["incomplete"] = True
                messages.append(_normalise_obj(msg, norm))
        sessions.append(
            {
                "name": spec.name,
                "status": status,
                "state": view.state.value if view is not None else "closed",
                "model": view.model if view is not None else None,
                "mode": view.mode if view is not None else None,
                "error": turns[-1]["error"] if turns else None,
                "turns": turns,
                "message_count": len(messages),
                "messages": messages,
                "approvals": log.approvals,
                "conflicts": log.conflicts,
                "tool_results": log.tool_results,
                "events": log.events,
            }
        )
    skip = (
        {"permissions.json"}
        if cassette.permissions is not None and "permissions.json" not in cassette.workspace
        else set()
    )
    after = snapshot_files(player.workspace, skip=skip)
    changed = files_changed(dict(cassette.workspace), after)
    report: dict[str, Any] = {
        "cassette": cassette.title or Path(cassette.source).name,
        "sessions": sessions,
        "files_changed": changed,
        "files": {c["path"]: after.get(c["path"]) for c in changed},
        "replay_errors": list(player.errors),
        "warnings": list(player.warnings),
        "expect": check_expect(cassette, sessions, after),
    }
    return report


def check_expect(
    cassette: Any, sessions: list[dict[str, Any]], files: dict[str, str]
) -> dict[str, Any] | None:
    """Compare the cassette's ``expect`` with the final state. Returns None without ``expect``, else
    ``{"ok", "failures": [sentence...], "diff": unified diff of expected vs actual (JSON)}``."""
    if not cassette.expect:
        return None
    by_name = {s["name"]: s for s in sessions}
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {}
    failures: list[str] = []
    for name, exp in cassette.expect.items():
        got = by_name[name]
        e: dict[str, Any] = {}
        a: dict[str, Any] = {}
        if exp.status is not None:
            e["status"], a["status"] = exp.status, got["status"]
        if exp.messages is not None:
            e["messages"], a["messages"] = exp.messages, got["message_count"]
        if exp.error_contains is not None:
            error = got["error"] or ""
            e["error_contains"] = exp.error_contains
            a["error_contains"] = exp.error_contains if exp.error_contains.lower() in error.lower() else error
        if exp.files:
            e["files"] = dict(exp.files)
            a["files"] = {path: files.get(path) for path in exp.files}
        for key in e:
            if e[key] != a[key]:
                failures.append(f"{name}.{key}: expected {json.dumps(e[key])}, got {json.dumps(a[key])}")
        expected[name], actual[name] = e, a
    diff = "".join(
        difflib.unified_diff(
            json.dumps(expected, indent=2, sort_keys=True).splitlines(keepends=True),
            json.dumps(actual, indent=2, sort_keys=True).splitlines(keepends=True),
            "expected",
            "actual",
        )
    )
    return {"ok": not failures, "failures": failures, "diff": diff}


def report_ok(report: dict[str, Any]) -> bool:
    """True when the replay had no errors and every expectation held."""
    expect = report.get("expect")
    return not report["replay_errors"] and (expect is None or bool(expect["ok"]))


def _short(text: str, limit: int = 160) -> str:
    text = text.replace("\n", "⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_text(report: dict[str, Any]) -> str:
    """Render the report as readable text (what ``paragents replay`` prints without ``--json``)."""
    lines = [f"replay: {report['cassette']}"]
    for s in report["sessions"]:
        lines.append("")
        lines.append(f"== session {s['name']}: {s['status']} ({s['message_count']} messages)")
        if s["error"]:
            lines.append(f"   error: {_short(s['error'])}")
        for m in s["messages"]:
            role = m.get("role")
            text = m.get("content") or ""
            calls = ", ".join(
                f"{c['function']['name']}({c['function']['arguments']})" for c in m.get("tool_calls", [])
            )
            mark = " [incomplete]" if m.get("incomplete") else ""
            lines.append(f"   {role}{mark}: {_short(text)}" + (f" -> {_short(calls)}" if calls else ""))
        for ask in s["approvals"]:
            lines.append(f"   approval: {_short(ask['summary'])} -> {ask['answer']}")
        for c in s["conflicts"]:
            lines.append(f"   conflict: {c.get('path', '')} -> {c.get('answer')}")
        for r in s["tool_results"]:
            first = r["output"].splitlines()[0] if r["output"] else ""
            lines.append(f"   tool {r['tool']}: {r['status']} {_short(first, 100)}")
    lines.append("")
    if report["files_changed"]:
        lines.append("files changed:")
        for f in report["files_changed"]:
            lines.append(f"  {f['change']}: {f['path']}")
            lines.extend("    " + d for d in f["diff"].splitlines())
    else:
        lines.append("files changed: none")
    for w in report["warnings"]:
        lines.append(f"warning: {w}")
    for e in report["replay_errors"]:
        lines.append(f"REPLAY ERROR: {e}")
    expect = report.get("expect")
    if expect is not None:
        if expect["ok"]:
            lines.append("expect: all expectations hold")
        else:
            lines.append("EXPECT FAILED:")
            lines.extend(f"  {f}" for f in expect["failures"])
            lines.append(expect["diff"].rstrip("\n"))
    return "\n".join(lines) + "\n"
