"""The snapshot agent of a remote lane: one long-lived process in its container or Pod that answers
"your snapshot, leaving out what I have" over one open exec stream (docs/remote.md).

A prediction round asks every lane for its snapshot. Done with one exec per lane it costs the
engine's exec (create, start, inspect, and the runtime starting a process in the container) plus
bash and five git processes there, also when nothing changed. The agent (:data:`~paragents.
backends.scripts.AGENT`, started once per lane with stdin open) keeps a private index and its last
answer: an unchanged lane costs one ``git add -A`` there and one line each way on an open stream; a
changed one sends a bundle of the new objects only, as :data:`~paragents.backends.scripts.SNAPSHOT`
does.

**The agent runs where the lane's code runs, so everything it says is hostile input.** Its process
belongs to the lane's user: the lane's code can write into its output (``/proc/PID/fd/1``), stop it
or kill it. So:

- one request at a time, with a random id the answer must carry; the answer line is at most
  :data:`MAX_LINE` bytes and must be ``ID COMMIT HEAD TREE SIZE`` (object ids, a number) or ``ID ERR
  TEXT``; SIZE must not exceed the lane's ``max_snapshot_bytes``; exactly SIZE bytes must follow and
  nothing else (bytes the host did not ask for, or more than that on stderr, break the channel);
- every request has a deadline (:data:`REQUEST_TIMEOUT`): no answer in time breaks the channel;
- a broken channel is closed (the exec stream cut; what the lane does with the process is its
  business) and the request is done by the one-exec path instead; a new agent is started only after
  a pause that doubles on every failure (:data:`RETRY_FIRST` up to :data:`RETRY_MAX`);
- what an answer carries goes through exactly the checks of the one-exec path
  (:func:`~paragents.backends.bundle.fetch_snapshot`: size cap, ``git fetch`` with fsck, the reported
  ids checked against what arrived, no ``.git``/``..`` paths); the agent names no path the host uses.

A lying agent can hide its lane's changes from this machine or send other files: the lane's code
could do that anyway (it owns its files); nothing it sends reaches the host's files unchecked."""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any

from paragents.backends import scripts
from paragents.backends.bundle import is_sha

MAX_LINE = 512
"""Bytes an answer line may have (ids, a size, or an error text), newline included."""
MAX_STDERR = 65536
"""Bytes the agent may write on stderr in all (it writes none: its stderr is /dev/null)."""
REQUEST_TIMEOUT = 120.0
"""Seconds a snapshot request may take (a first ``git add -A`` of a large tree takes a while)."""
RETRY_FIRST = 5.0
"""Seconds after a broken channel before a new agent is started (doubled per failure)."""
RETRY_MAX = 300.0
_ERR_TEXT = re.compile(rb"[^\x20-\x7e]")

Runner = Callable[
    [Sequence[str], Callable[[int, bytes], None], AsyncIterator[bytes]], Coroutine[Any, Any, int]
]
"""Runs argv in the lane with output to the callback and stdin from the iterator (the backend's
``_run``); returns the exit code."""


class AgentFailure(Exception):
    """The agent could not answer (it broke the protocol, timed out, stopped, or said ERR): the
    caller takes the one-exec path. ``str()`` says why (plain text, bounded)."""


class LaneAgent:
    """The host's end of one lane's snapshot agent (see the module docstring). Use on one loop."""

    def __init__(
        self,
        run: Runner,
        *,
        max_bytes: int,
        timeout: float = REQUEST_TIMEOUT,
        script: str = scripts.AGENT,
    ) -> None:
        self._runner = run
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.script = script
        self.broken: str | None = None
        """Why the channel broke (None while it works, or before it started)."""
        self.failures = 0
        self._retry_at = 0.0
        self._task: asyncio.Task[int] | None = None
        self._stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._lock = asyncio.Lock()
        self._buf = bytearray()
        self._stderr = 0
        self._want: tuple[bytes, asyncio.Future[tuple[list[str], bytes]]] | None = None
        """(request id, future) of the request waiting for its answer."""
        self._head: list[str] | None = None
        self._size = 0
        self.requests = 0
        """Requests answered so far (tests and the bench read it)."""
        self.starts = 0
        """Agents started so far (one exec each)."""

    @property
    def usable(self) -> bool:
        """False while a broken channel waits for its retry time."""
        return self.alive or time.monotonic() >= self._retry_at

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done() and self.broken is None

    # --- the channel ------------------------------------------------------------------------------

    def _start(self) -> None:
        self.broken = None
        self._buf.clear()
        self._stderr = 0
        self._head = None
        self._stdin = asyncio.Queue()
        self.starts += 1
        argv = ["bash", "-c", self.script, "paragents"]
        self._task = asyncio.get_running_loop().create_task(
            self._runner(argv, self._chunk, self._lines()), name="lane snapshot agent"
        )
        self._task.add_done_callback(self._ended)

    async def _lines(self) -> AsyncIterator[bytes]:
        while (line := await self._stdin.get()) is not None:
            yield line

    def _ended(self, task: asyncio.Task[int]) -> None:
        if task is not self._task:  # closed, or an earlier agent's stream
            return
        if task.cancelled():
            why = "its stream was closed"
        elif task.exception() is not None:
            why = f"its stream failed ({str(task.exception())[:200] or type(task.exception()).__name__})"
        else:
            why = f"it exited (code {task.result()})"
        self._break(f"the lane's snapshot agent stopped: {why}")

    def _break(self, why: str) -> None:
        """Close the channel for good (until a retry starts a new agent) and fail the waiting request."""
        self._buf.clear()
        if self.broken is None:
            self.broken = why
            self.failures += 1
            delay = min(RETRY_FIRST * 2 ** (self.failures - 1), RETRY_MAX)
            self._retry_at = time.monotonic() + delay
        if self._want is not None:
            _, future = self._want
            self._want = None
            if not future.done():
                future.set_exception(AgentFailure(self.broken))
        if self._task is not None and not self._task.done():
            self._stdin.put_nowait(None)
            self._task.cancel()

    def _chunk(self, stream: int, data: bytes) -> None:
        """Output of the agent (on the loop, as it arrives): parse it as the answer to the waiting
        request; anything else breaks the channel."""
        if self.broken is not None:
            return
        if stream != 1:
            self._stderr += len(data)
            if self._stderr > MAX_STDERR:
                self._break(f"the lane's snapshot agent wrote over {MAX_STDERR} bytes on stderr")
            return
        if self._want is None:
            self._break("the lane's snapshot agent wrote output nobody asked for")
            return
        self._buf += data
        if self._head is None:
            at = self._buf.find(b"\n", 0, MAX_LINE)
            if at < 0:
                if len(self._buf) >= MAX_LINE:
                    self._break(f"the lane's snapshot agent sent an answer line over {MAX_LINE} bytes")
                return
            line = bytes(self._buf[:at])
            del self._buf[: at + 1]
            problem = self._parse(line)
            if problem is not None:
                self._break(problem)
                return
        if len(self._buf) > self._size:
            self._break("the lane's snapshot agent sent more bytes than its answer holds")
            return
        if len(self._buf) == self._size and self._head is not None:
            _, future = self._want
            self._want = None
            head, data_out = self._head, bytes(self._buf)
            self._head = None
            self._buf.clear()
            if not future.done():
                future.set_result((head, data_out))

    def _parse(self, line: bytes) -> str | None:
        """Check an answer line against the waiting request; None when it is well formed (then
        ``_head``/``_size`` say what follows), else why not."""
        assert self._want is not None
        request_id = self._want[0]
        words = line.split(b" ")
        if words[0] != request_id:
            return "the lane's snapshot agent answered another request than the one asked"
        if len(words) >= 2 and words[1] == b"ERR":
            text = _ERR_TEXT.sub(b"?", line[len(request_id) + 5 :]).decode("ascii")[:200]
            _, future = self._want
            self._want = None
            if not future.done():
                future.set_exception(AgentFailure(f"the lane's snapshot agent said: {text or 'error'}"))
            self._head = None
            return None if not self._buf else "the lane's snapshot agent sent bytes after its error"
        if len(words) != 5:
            return "the lane's snapshot agent sent an answer that is not 'ID COMMIT HEAD TREE SIZE'"
        ids = [w.decode("ascii", "replace") for w in words[1:4]]
        if not all(is_sha(i) for i in ids):
            return "the lane's snapshot agent sent an answer whose ids are not object ids"
        size_text = words[4]
        if not size_text.isdigit() or len(size_text) > 12:
            return "the lane's snapshot agent sent an answer whose size is not a number"
        size = int(size_text)
        if size > self.max_bytes:
            return f"the lane's snapshot agent announced {size} bytes, over the {self.max_bytes} byte limit"
        self._head = ids
        self._size = size
        return None

    # --- requests ---------------------------------------------------------------------------------

    async def snapshot(self, known: Sequence[str]) -> bytes:
        """The lane's snapshot as :data:`~paragents.backends.scripts.SNAPSHOT` prints it (``COMMIT
        HEAD TREE`` and, unless COMMIT is in ``known``, a bundle leaving ``known`` out). Raises
        AgentFailure (the caller takes the one-exec path)."""
        async with self._lock:
            if not self.alive:
                if not self.usable:
                    raise AgentFailure(self.broken or "the lane's snapshot agent is not running")
                self._start()
            request_id = secrets.token_hex(8).encode()
            future: asyncio.Future[tuple[list[str], bytes]] = asyncio.get_running_loop().create_future()
            self._want = (request_id, future)
            self._head, self._size = None, 0
            words = [b"SNAP", request_id, str(self.max_bytes).encode(), *(k.encode() for k in known)]
            self._stdin.put_nowait(b" ".join(words) + b"\n")
            try:
                done, _ = await asyncio.wait({future}, timeout=self.timeout)
            except asyncio.CancelledError:
                self._break("a snapshot request was cancelled while the agent answered")
                _retrieve(future)
                raise
            if not done:
                self._break(f"the lane's snapshot agent did not answer within {self.timeout:g} s")
            if self._want is not None and self._want[1] is future:
                self._want = None
            if not future.done():  # cannot happen: _break fails the waiting request
                future.cancel()
                raise AgentFailure("the lane's snapshot agent's answer was lost")
            head, data = future.result()  # raises AgentFailure
            self.requests += 1
            self.failures = 0
            if data and head[0] in known:
                self._break("the lane's snapshot agent sent a bundle of a commit this machine has")
                raise AgentFailure(self.broken or "bad answer")
            return " ".join(head).encode() + b"\n" + data

    def refuse(self, why: str) -> None:
        """The caller refused the agent's answer (``why``): close the channel as for a broken one."""
        self._break(f"the lane's snapshot agent's answer was refused: {why[:300]}")

    async def close(self) -> None:
        """Stop the channel (the agent reads end-of-file and exits); a later request starts a new
        agent at once."""
        task = self._task
        self._task = None
        if task is not None and not task.done():
            self._stdin.put_nowait(None)
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self.broken = None
        self.failures = 0
        self._retry_at = 0.0


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen (nobody else awaits it)."""
    if future.done() and not future.cancelled():
        future.exception()
