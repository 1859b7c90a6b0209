"""A trial's figures read back from the store's evidence: tokens and cost (the usage rows, priced per
request), turns (model requests), and the human burden (approvals rows, the audit of the policy's
denials, conflict and budget-pause events). Nothing here imports Textual."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from paragents.agent.spend import priced
from paragents.eval.answers import ANSWERED_BY
from paragents.eval.results import Burden

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.store.approvals import ApprovalsRepo
    from paragents.store.audit import AuditRepo
    from paragents.store.budgets import BudgetsRepo
    from paragents.store.session_events import SessionEventsRepo
    from paragents.store.turns import TurnsRepo

ALLOW_ANSWERS = frozenset({"allow_once", "allow_session", "allow_always"})
REJECT_ANSWERS = frozenset({"reject_once", "reject_with_note"})
AUDIT_LIMIT = 100_000


@dataclass(frozen=True)
class Usage:
    """Tokens, cost (None: unpriced), whether any count was estimated locally, and model requests."""

    prompt: int = 0
    completion: int = 0
    cost: float | None = None
    estimated: bool = False
    requests: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.prompt + other.prompt,
            self.completion + other.completion,
            cost,
            self.estimated or other.estimated,
            self.requests + other.requests,
        )


class UsageStore(Protocol):
    """The store's tables :func:`usage_of` reads (``paragents.store.Store`` is one)."""

    @property
    def budgets(self) -> BudgetsRepo: ...
    @property
    def turns(self) -> TurnsRepo: ...


class BurdenStore(Protocol):
    """The store's tables :func:`burden_of` reads (``paragents.store.Store`` is one)."""

    @property
    def approvals(self) -> ApprovalsRepo: ...
    @property
    def audit(self) -> AuditRepo: ...
    @property
    def events(self) -> SessionEventsRepo: ...


async def usage_of(store: UsageStore, config: RuntimeConfig, session_id: str) -> Usage:
    """The session's usage from its rows (priced as the budgets price them)."""
    spend = priced(config, await store.budgets.spend_rows(session_id=session_id))
    requests = len(await store.turns.list_usage(session_id))
    cost = round(spend.usd, 9) if spend.usd is not None else None
    return Usage(spend.prompt, spend.completion, cost, spend.estimated, requests)


async def burden_of(store: BurdenStore, session_id: str) -> Burden:
    """The session's human burden (see :class:`~paragents.eval.results.Burden`)."""
    rows = await store.approvals.find(state=None, session_id=session_id)
    asks = [r for r in rows if r.kind == "approval"]
    by_policy = [r for r in asks if (r.answered_by or "").startswith(ANSWERED_BY)]
    auto = sum(1 for r in by_policy if r.answer in ALLOW_ANSWERS)
    rejected = sum(1 for r in asks if r.answer in REJECT_ANSWERS)
    audit = await store.audit.recent(session_id, limit=AUDIT_LIMIT)
    policy_denials = sum(1 for a in audit if a["decision"] == "deny" and a["answered_by"] == "policy")
    conflicts = len(await store.events.all(session_id, "conflict"))
    pauses = [e["data"] for e in await store.events.all(session_id, "budget_pause")]
    return Burden(
        asks=len(asks),
        auto_allows=auto,
        denials=rejected + policy_denials,
        left_to_person=len(asks) - len(by_policy),
        conflicts=conflicts,
        budget_pauses=sum(1 for p in pauses if p.get("level") != "loop"),
        loop_guard_trips=sum(1 for p in pauses if p.get("level") == "loop"),
    )
