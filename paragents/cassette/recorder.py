"""Record a live run as a cassette (``paragents --record FILE``, ``paragents run --record FILE``).

The recorder is attached by :meth:`paragents.sessions.runtime.Runtime.create` (``recorder=`` or
``paragents.sessions.ACTIVE_RECORDER``). It collects:

- each chat-completions response's raw network reads, from the ChatClient's ``recorder`` callback
  (request bodies and auth headers are dropped; the client already scrubs the key), queued under the
  session whose turn made the request;
- the prompts (``TurnStarted``), the user's answers to approvals and conflicts (with note/rules);
- the workspace files the tools read or edit, with their content at the first call that names them
  (directories of list_dir/glob/grep: the files under them, bounded); shell commands' inputs cannot
  be known and are not captured;
- the project's permissions (``permissions.json`` + ``.paragents/permissions.local.json`` as they were
  when the run started) and an ``expect`` block with each session's final status, message count and
  the final content of the files the tools wrote, so replaying checks the same outcome.

Secrets: every API key known to the config and the ``PARAGENTS_API_KEY`` / ``OPENAI_API_KEY`` values
are replaced by ``<redacted>`` anywhere in the written file.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents import treefiles
from paragents.cassette.session_logs import call_args

_PATH_TOOLS = {"read_file", "write_file", "edit_file", "list_dir", "glob", "grep"}
_WRITE_TOOLS = {"write_file", "edit_file"}
_KEEP_HEADERS = {"content-type", "retry-after"}
REDACTED = "<redacted>"


class CassetteRecorder:
    """Collects one live run; :meth:`to_cassette` / :meth:`save` write it. ``max_file_bytes`` and
    ``max_files`` bound the captured workspace (bytes per file, files in all)."""

    def __init__(self, *, max_file_bytes: int = 256 * 1024, max_files: int = 500) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.runtime: Any = None
        self.project_dir: Path | None = None
        self.permissions: dict[str, Any] | None = None
        self.sessions: dict[str, dict[str, Any]] = {}
        self.answers: list[dict[str, Any]] = []
        self.workspace: dict[str, str] = {}
        self.notes: list[str] = []
        self._seen_paths: set[str] = set()
        self._written: set[str] = set()
        self._secrets: set[str] = set()
        self._task_session: weakref.WeakKeyDictionary[asyncio.Task[Any], str] = weakref.WeakKeyDictionary()
        self._streamed: dict[str, str] = {}
        self._open_reply: dict[str, bool] = {}
        self._had_history: set[str] = set()

    # -- hooks -----------------------------------------------------------------------------------------
    def attach(self, runtime: Any) -> None:
        """Called by ``Runtime.create``: observe its events and note the project, key and permissions."""
        self.runtime = runtime
        self.project_dir = Path(runtime.project_dir)
        runtime.observe(self.observe)
        for name in ("PARAGENTS_API_KEY", "OPENAI_API_KEY"):
            if os.environ.get(name):
                self._secrets.add(os.environ[name])
        try:
            key = runtime.config.resolve_api_key()
        except Exception:
            key = None
        if key:
            self._secrets.add(key)
        self.permissions = self._read_permissions(self.project_dir)

    def on_response(self, record: dict[str, Any]) -> None:
        """The ChatClient ``recorder`` callback: one HTTP response (see ``ChatClient``'s docstring)."""
        if not str(record.get("path", "")).endswith("/chat/completions"):
            return
        task = asyncio.current_task()
        name = self._task_session.get(task) if task is not None else None
        if name is None:
            self.notes.append("a response could not be tied to a session and was dropped")
            return
        status = int(record.get("status", 200))
        headers = {k: v for k, v in (record.get("headers") or {}).items() if k.lower() in _KEEP_HEADERS}
        reply: dict[str, Any]
        if status >= 300:
            body = "".join(record.get("reads") or [])
            reply = {"status": status, "headers": headers, "body": body}
        else:
            reply = {k: record[k] for k in ("reads", "reads_b64") if k in record}
            if status != 200:
                reply["status"] = status
            ctype = headers.get("content-type") or headers.get("Content-Type") or ""
            if ctype and "event-stream" not in ctype:
                reply["headers"] = headers
        self._session(name)["replies"].append(reply)
        self._open_reply[name] = status < 300
        reply["_streamed"] = self._streamed.pop(name, "")

    def observe(self, event: ev.Event) -> None:
        """Runtime observer: prompts, answers, captured files, cancels (see the module docstring)."""
        view = self.runtime.sessions.get(event.session_id) if self.runtime is not None else None
        if view is None:
            return
        name = view.name
        session = self._session(name, view)
        if isinstance(event, ev.TurnStarted):
            task = asyncio.current_task()
            if task is not None:
                self._task_session[task] = name
            if not session["prompts"] and len(view.messages) > 0:
                self._had_history.add(name)
                self.notes.append(
                    f"session {name} had history before the recording; it is not in the cassette"
                )
            session["prompts"].append(event.prompt)
        elif isinstance(event, ev.TextDelta | ev.ReasoningDelta):
            self._streamed[name] = self._streamed.get(name, "") + event.text
        elif isinstance(event, ev.MessageAdded) and event.message.get("role") == "assistant":
            self._open_reply[name] = False
        elif isinstance(event, ev.ToolCallStarted):
            self._capture(view, event.call.name, call_args(event.call))
        elif isinstance(event, ev.PermissionRequested):
            self._watch_answer(name, event.call.name, call_args(event.call), event.reply, "permission")
        elif type(event).__name__ == "ConflictDetected" and hasattr(event, "reply"):
            call = getattr(event, "call", None)
            args = call_args(call) if call is not None else {"path": getattr(event, "path", "")}
            self._watch_answer(name, call.name if call is not None else None, args, event.reply, "conflict")
        elif isinstance(event, ev.TurnFinished) and self._open_reply.get(name) and session["replies"]:
            last = session["replies"][-1]
            if event.status == "cancelled":
                last["cancel"] = True
                last["cancel_after_text"] = last.get("_streamed", "")
            elif event.status == "failed" and "[DONE]" not in "".join(last.get("reads", [])):
                last["truncate"] = True
            self._open_reply[name] = False

    # -- collecting ------------------------------------------------------------------------------------
    def _session(self, name: str, view: Any = None) -> dict[str, Any]:
        if name not in self.sessions:
            entry: dict[str, Any] = {"name": name, "prompts": [], "replies": []}
            if view is not None:
                entry["model"] = view.model
                entry["mode"] = view.mode
                if self.project_dir is not None and Path(view.workdir) != self.project_dir:
                    try:
                        entry["dir"] = Path(view.workdir).relative_to(self.project_dir).as_posix()
                    except ValueError:
                        self.notes.append(
                            f"session {name} works outside the project ({view.workdir}); dir not kept"
                        )
            self.sessions[name] = entry
        return self.sessions[name]

    def _watch_answer(
        self, name: str, tool: str | None, args: dict[str, Any], reply: asyncio.Future[Any], kind: str
    ) -> None:
        entry: dict[str, Any] = {"session": name}
        if kind == "conflict":
            entry["kind"] = "conflict"
        if tool:
            entry["tool"] = tool
        for key in ("path", "command"):
            if isinstance(args.get(key), str):
                entry[key] = args[key]
        self.answers.append(entry)

        def done(fut: asyncio.Future[Any]) -> None:
            if fut.cancelled():
                self.answers.remove(entry)
                return
            result = fut.result()
            if not isinstance(result, ev.PermissionAnswer):  # a conflict's choice
                entry["answer"] = str(result)
                return
            entry["answer"] = result.kind
            if result.kind == "reject_with_note" and result.note:
                entry["note"] = result.note
            elif result.kind == "reject_once":
                if result.headless:
                    entry["headless"] = True
                if result.note:
                    root = str(self.project_dir.resolve()) if self.project_dir else ""
                    entry["reason"] = result.note.replace(root, "<workspace>") if root else result.note
            elif result.rules:
                entry["rules"] = list(result.rules)

        reply.add_done_callback(done)

    def _capture(self, view: Any, tool: str, args: dict[str, Any]) -> None:
        if tool not in _PATH_TOOLS or self.project_dir is None:
            return
        raw = args.get("path", ".")
        if not isinstance(raw, str):
            return
        target = (Path(view.workdir) / raw).resolve()
        root = self.project_dir.resolve()
        try:
            rel = target.relative_to(root).as_posix()
        except ValueError:
            return
        if tool in _WRITE_TOOLS:
            self._written.add(rel)
        if target.is_dir():
            for path in sorted(target.rglob("*")):
                if any(p.startswith(".") for p in path.relative_to(root).parts):
                    continue
                self._capture_file(path, root)
        else:
            self._capture_file(target, root)

    def _capture_file(self, path: Path, root: Path) -> None:
        rel = path.relative_to(root).as_posix()
        if rel in self._seen_paths or not treefiles.is_regular(path):
            self._seen_paths.add(rel)  # a link (to ~/.ssh/id_rsa) is never copied into the cassette
            return
        self._seen_paths.add(rel)
        if len(self.workspace) >= self.max_files:
            return
        try:
            data = treefiles.read_bytes(path, limit=self.max_file_bytes, root=root)
        except treefiles.NotRegularFile:
            self.notes.append(f"{rel} was too large or not a regular file and was not captured")
            return
        except OSError:
            return
        if len(data) > self.max_file_bytes or b"\0" in data:
            self.notes.append(f"{rel} was too large or binary and was not captured")
            return
        self.workspace[rel] = data.decode("utf-8", "replace")

    @staticmethod
    def _read_permissions(project_dir: Path) -> dict[str, Any] | None:
        merged: dict[str, Any] = {}
        for rel in ("permissions.json", ".paragents/permissions.local.json"):
            path = project_dir / rel
            try:
                data = json.loads(treefiles.read_text(path, root=project_dir))
            except (OSError, ValueError):
                continue
            block = data.get("permissions", data) if isinstance(data, dict) else {}
            for key, value in block.items():
                if isinstance(value, list):
                    merged.setdefault(key, [])
                    merged[key] += [v for v in value if v not in merged[key]]
                elif key not in merged:
                    merged[key] = value
        return {"permissions": merged} if merged else None

    # -- output ----------------------------------------------------------------------------------------
    def to_cassette(self) -> dict[str, Any]:
        """Return the cassette dict (valid against ``schema.json``), secrets redacted."""
        sessions = []
        expect: dict[str, Any] = {}
        for name, entry in self.sessions.items():
            if not entry["prompts"]:
                continue
            replies = [{k: v for k, v in r.items() if not k.startswith("_")} for r in entry["replies"]]
            sessions.append({**entry, "replies": replies})
            view = (
                next((v for v in self.runtime.sessions.values() if v.name == name), None)
                if self.runtime
                else None
            )
            result = getattr(view, "last_result", None)
            exp: dict[str, Any] = {}
            if result is not None:
                exp["status"] = result.status.value
            if view is not None and name not in self._had_history:
                exp["messages"] = len(view.messages)
            if exp:
                expect[name] = exp
        if self.project_dir is not None and self._written and expect:
            files: dict[str, str | None] = {}
            for rel in sorted(self._written):
                path = self.project_dir / rel
                files[rel] = _text_or_none(path, self.project_dir)
            next(iter(expect.values()))["files"] = files
        cassette: dict[str, Any] = {
            "version": 1,
            "title": "recorded run",
            "model": self.runtime.config.model
            if self.runtime is not None and self.runtime.config.model
            else "replay-model",
            "workspace": dict(sorted(self.workspace.items())),
            "sessions": sessions,
            "answers": [a for a in self.answers if "answer" in a],
            "expect": expect,
            "recorded": {"notes": sorted(set(self.notes))},
        }
        if self.permissions is not None:
            cassette["permissions"] = self.permissions
        return self._redact(cassette)

    def _redact(self, cassette: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(cassette, ensure_ascii=False)
        for secret in sorted(self._secrets, key=len, reverse=True):
            if len(secret) >= 4:
                text = text.replace(json.dumps(secret)[1:-1], REDACTED)
        return dict(json.loads(text))

    def save(self, path: str | Path) -> Path:
        """Write the cassette to ``path`` (UTF-8 JSON, 2-space indent, mode 0600); return the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.to_cassette(), indent=2, ensure_ascii=False) + "\n", "utf-8")
        os.chmod(p, 0o600)
        return p


def _text_or_none(path: Path, root: Path) -> str | None:
    """A written file's text for the cassette's expectations; None when absent or not a regular file."""
    try:
        return treefiles.read_bytes(path, root=root).decode("utf-8", "replace")
    except OSError:
        return None
