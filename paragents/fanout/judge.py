"""The optional judge of a fan-out: one request that gets each candidate's diff and verify output and
a rubric, and must answer JSON matching :class:`JudgeAnswer` (ranking, a reason per candidate,
risks), validated with pydantic. An invalid answer is retried once with the error; a second invalid
answer is "judge failed" (exit 3 headless), never guessed. Every attempt is kept as evidence. The
ranking is advice shown next to the evidence, never instead of it. Nothing here imports Textual."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from paragents.agent.tokens import counted_usage, estimate_messages_tokens, estimate_text_tokens
from paragents.fanout.errors import EXIT_JUDGE, FanoutError
from paragents.fanout.evidence import CandidateView, candidate_view
from paragents.llm.errors import LLMError
from paragents.models import Usage

Bill = Callable[[str, Usage, bool], Awaitable[None]]
"""Records one judge request the server answered: ``(model, usage, estimated)``."""

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.llm import ChatClient
    from paragents.store.fanout import FanoutRepo

DIFF_LIMIT = 12000
"""Characters of each candidate's diff sent to the judge."""

RUBRIC = """You judge candidate patches for one task. Rank them, best first, by: (1) execution
evidence (the verify command passed; fewer failing tests), (2) whether the patch does what the task
asks and nothing else, (3) smaller, clearer changes, (4) risk (deleted tests, broad rewrites).
Answer with ONE JSON object and nothing else:
{"ranking": ["<candidate name>", ...], "reasons": {"<candidate name>": "<why>", ...},
 "risks": ["<risk>", ...]}
"ranking" names every candidate exactly once; "reasons" has one entry per candidate."""


class JudgeFailed(FanoutError):
    """The judge answered twice with something that is not the schema (or could not be asked)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_JUDGE)


class JudgeAnswer(BaseModel):
    """The judge's answer; ``names`` in the validation context are the candidates' names."""

    model_config = ConfigDict(extra="forbid")

    ranking: list[str] = Field(min_length=1)
    reasons: dict[str, str]
    risks: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _names(self, info: Any) -> JudgeAnswer:
        names = set((info.context or {}).get("names", ()))
        if names:
            if sorted(self.ranking) != sorted(names):
                raise ValueError(f"ranking must name each of {sorted(names)} exactly once")
            if set(self.reasons) != names:
                raise ValueError(f"reasons must have one entry for each of {sorted(names)}")
        return self


def parse_answer(text: str, names: list[str]) -> JudgeAnswer:
    """Validate the judge's text (a JSON object, optionally inside one ```json fence); ValueError
    (ValidationError included) says what is wrong."""
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, re.DOTALL)
    if fenced:
        stripped = fenced.group(1)
    return JudgeAnswer.model_validate_json(stripped, context={"names": names})


def judge_prompt(prompt: str, cands: list[CandidateView]) -> str:
    """The judge's user message: the task, then per candidate its verify result and diff."""
    parts = [f"Task given to every candidate:\n{prompt}\n"]
    for c in cands:
        v = c.verify
        verify = (
            "not run"
            if v is None
            else f"exit {v.exit_code}" + (f", failing: {', '.join(v.failing)}" if v.failing else "")
        )
        tail = f"\nverify output (end):\n{v.tail[-1500:]}" if v is not None and not v.passed else ""
        state = "the worker failed" if c.worker_failed else "finished"
        if c.deleted_tests:
            state += f"; it DELETED test files: {', '.join(c.deleted_tests)}"
        patch = (c.record.patch or "(no changes)")[:DIFF_LIMIT]
        parts.append(
            f"## Candidate {c.name} ({state}; {c.diffstat()}; verify: {verify}){tail}\n```diff\n{patch}\n```"
        )
    return "\n".join(parts)


async def judge_group(
    fanout: FanoutRepo,
    client: ChatClient,
    config: RuntimeConfig,
    group_id: str,
    model: str | None = None,
    bill: Bill | None = None,
) -> JudgeAnswer:
    """Ask the judge (one request with ``client``) about group ``group_id``'s candidates; store every
    attempt in ``fanout``; return the answer. Raises JudgeFailed after two invalid answers (or when the
    request fails). ``bill`` records each request the server answered (its usage, else an estimate),
    valid answer or not: it is spent either way."""
    group = await fanout.get_group(group_id)
    if group is None:
        raise JudgeFailed(f"no fan-out group {group_id}")
    cands = [candidate_view(c) for c in group.candidates]
    names = [c.name for c in cands]
    model = model or config.fanout.judge_model or config.model
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": RUBRIC},
        {"role": "user", "content": judge_prompt(group.prompt, cands)},
    ]
    error = ""
    for attempt in (1, 2):
        try:
            reply = await client.stream_chat(
                model=model, messages=messages, tools=None, session_label=f"{group.name}-judge"
            )
        except LLMError as exc:
            if bill is not None and exc.partial is not None and exc.partial.usage is not None:
                await bill(model, exc.partial.usage, False)  # the server reported what it billed
            await fanout.add_judge_answer(group_id, {"attempt": attempt, "model": model, "error": str(exc)})
            raise JudgeFailed(f"judge failed: the request failed: {exc}") from None
        text = reply.content or ""
        if bill is not None:
            usage, estimated = counted_usage(
                reply.usage,
                functools.partial(estimate_messages_tokens, list(messages)),
                functools.partial(estimate_text_tokens, text),
            )
            await bill(model, usage, estimated)
        try:
            answer = parse_answer(text, names)
        except ValueError as exc:
            error = _short(exc)
            await fanout.add_judge_answer(
                group_id, {"attempt": attempt, "model": model, "raw": text, "error": error}
            )
            messages += [
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": f"That answer is not valid ({error}). Answer again with only the JSON object "
                    "described above.",
                },
            ]
            continue
        await fanout.add_judge_answer(
            group_id, {"attempt": attempt, "model": model, "raw": text, "answer": answer.model_dump()}
        )
        return answer
    raise JudgeFailed(f"judge failed: two answers did not match the schema ({error})")


def _short(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()
        )[:300]
    return str(exc)[:300]


def latest_answer(judge: list[Any]) -> tuple[JudgeAnswer | None, str | None]:
    """From a group's stored judge attempts: the valid answer (or None) and the last error (or None)."""
    for item in reversed(judge):
        if isinstance(item, dict) and "answer" in item:
            return JudgeAnswer.model_validate(item["answer"]), None
    last = judge[-1] if judge else None
    return None, (last.get("error") if isinstance(last, dict) else None)


def answer_json(answer: JudgeAnswer) -> str:
    return json.dumps(answer.model_dump(), indent=2)
