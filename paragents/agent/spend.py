"""What a session (or a project today) spent (a ``paragents.limits.Spend``), priced per request at the
model used.

Each request's usage row in the store carries the cost computed when it was recorded, at the prices
of the model that served it (``cost_usd``); rows written before costs were stored (or for a model
without prices at the time) are priced now at their own model's prices, never at the session's
current model. ``estimated`` says that part of the tokens was counted locally (the server sent no
``usage``), so the figures are estimates; the UI writes them with a "~". Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from paragents.agent.tokens import cost_usd
from paragents.limits import Spend
from paragents.models import Usage

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig


def request_cost(config: RuntimeConfig, model: str, usage: Usage) -> float | None:
    """Return the USD cost of one request's ``usage`` at ``model``'s prices, None without prices."""
    s = config.model_settings(model)
    return cost_usd(usage, s.input_price_per_mtok, s.output_price_per_mtok, s.cached_price_per_mtok)


def priced(config: RuntimeConfig, rows: Iterable[Mapping[str, Any]]) -> Spend:
    """Return the :class:`Spend` of the store's per-model usage rows (``store.budgets.spend_rows``): their
    stored costs, plus the rows without a stored cost priced now at their own model's prices."""
    total = Spend()
    for r in rows:
        usd: float | None = float(r["cost"]) if r["priced_rows"] else None
        if r["unpriced_rows"]:
            later = request_cost(
                config,
                str(r["model"]),
                Usage(int(r["unpriced_prompt"]), int(r["unpriced_completion"]), 0, int(r["unpriced_cached"])),
            )
            if later is not None:
                usd = (usd or 0.0) + later
        total = total + Spend(
            int(r["prompt"]), int(r["cached"]), int(r["completion"]), usd, bool(r["estimated"])
        )
    return total


__all__ = ["Spend", "priced", "request_cost"]
