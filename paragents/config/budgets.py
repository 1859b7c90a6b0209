"""What stops a session: default budgets (``budgets``) and the loop guard (``loop_guard``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from paragents.limits import Budget


class BudgetSettings(BaseModel):
    """Default budgets (docs in README "Budgets"): each a string like ``"2.00usd"``, ``"500k"``,
    ``"30m"`` or several (``"2usd, 500k"``), or null for no cap. ``/budget`` changes them at run time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session: Budget | None = Field(None, description="Cap per session (its whole usage), e.g. '2.00usd'.")
    project_day: Budget | None = Field(
        None, description="Cap per project per local day, summed over every session and process."
    )
    group: Budget | None = Field(None, description="Cap per fan-out group (all its sibling sessions).")


class LoopGuardSettings(BaseModel):
    """The loop guard: pauses a session whose model repeats itself (README "Loop guard")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    identical_calls: int = Field(
        3,
        ge=0,
        description="Pause at this many identical tool calls in a row (same tool and arguments; 0 off).",
    )
    idle_requests: int = Field(
        6,
        ge=0,
        description="Pause at this many requests in a row whose tool results were all seen before and that "
        "changed no file (0 off).",
    )
