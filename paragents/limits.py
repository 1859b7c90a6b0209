"""Budget values: what a cap is made of and how it is written (``2.00usd``, ``500k``, ``30m``).

A :class:`Budget` holds up to three caps, any of which may be None (no cap of that kind):

- ``usd``: money, counted from the models' prices in the config (``input_price_per_mtok`` /
  ``output_price_per_mtok``); written ``2.00usd``, ``$2`` or ``2 usd``.
- ``tokens``: prompt + completion tokens; written ``500k``, ``2000``, ``1.5mtok`` or ``500ktok``.
- ``seconds``: wall-clock time spent running turns; written ``90s``, ``30m`` or ``2h``.

Several parts combine, separated by commas or spaces: ``"2usd, 500k"``. A bare ``m`` is minutes,
never million tokens (write ``1000k`` or ``1mtok``). Nothing here imports anything but pydantic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

_PART = re.compile(
    r"""^(?:\$(?P<dollars>\d+(?:\.\d+)?)
        |(?P<num>-?\d+(?:\.\d+)?)\s*(?P<unit>usd|\$|k|ktok|mtok|tok|tokens|s|sec|m|min|h)?)$""",
    re.IGNORECASE | re.VERBOSE,
)
_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
_TOKENS = {"": 1, "tok": 1, "tokens": 1, "k": 1000, "ktok": 1000, "mtok": 1_000_000}


MAX_USD = 1_000_000.0
"""The largest money cap accepted (a larger one is a typo, not a budget)."""
MAX_TOKENS = 10**12
"""The largest token cap accepted."""
MAX_SECONDS = 366 * 24 * 3600.0
"""The largest wall-clock cap accepted (a year)."""
_MAX = {"usd": MAX_USD, "tokens": MAX_TOKENS, "seconds": MAX_SECONDS}
KIND_NAMES = {"usd": "money", "tokens": "token", "seconds": "wall-clock"}
"""How messages name each kind of cap."""


class BudgetError(ValueError):
    """A budget string that does not parse, or a negative or zero cap; ``str()`` says how to write it."""


HOW = "write e.g. 2.00usd (money), 500k (tokens) or 30m (wall-clock), or several: '2usd, 500k'"


class Budget(BaseModel):
    """Caps of one budget level; None means no cap of that kind. A string is parsed by
    :func:`parse_budget` (so config files may write ``"session": "2.00usd"``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    usd: float | None = Field(None, gt=0, le=MAX_USD, description="Cap in USD (needs the model's prices).")
    tokens: int | None = Field(None, gt=0, le=MAX_TOKENS, description="Cap in tokens (prompt + completion).")
    seconds: float | None = Field(
        None, gt=0, le=MAX_SECONDS, description="Cap in wall-clock seconds of running turns."
    )

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_budget(value).model_dump()
        return value

    @property
    def empty(self) -> bool:
        """True when no cap is set."""
        return self.usd is None and self.tokens is None and self.seconds is None

    def merged(self, other: Budget) -> Budget:
        """Return this budget with the caps ``other`` sets replaced (the ones it leaves None kept)."""
        return Budget(
            usd=other.usd if other.usd is not None else self.usd,
            tokens=other.tokens if other.tokens is not None else self.tokens,
            seconds=other.seconds if other.seconds is not None else self.seconds,
        )

    def describe(self) -> str:
        """Return the caps as written, e.g. ``"$2.00, 500k tokens"`` ("no cap" when empty)."""
        parts = []
        if self.usd is not None:
            parts.append(format_usd(self.usd))
        if self.tokens is not None:
            parts.append(f"{format_tokens(self.tokens)} tokens")
        if self.seconds is not None:
            parts.append(format_seconds(self.seconds))
        return ", ".join(parts) or "no cap"


def parse_budget(text: str) -> Budget:
    """Parse ``"2.00usd"``, ``"500k"``, ``"30m"`` or several of them into a Budget.

    Raises BudgetError (readable, saying how to write it) for text that does not parse, a negative
    or zero amount, one over the largest cap of its kind (:data:`MAX_USD`, :data:`MAX_TOKENS`,
    :data:`MAX_SECONDS`), or the same kind given twice."""
    parts = [p for p in re.split(r"[,\s]+(?=[$\d-])", text.strip()) if p.strip()]
    if not parts:
        raise BudgetError(f"empty budget: {HOW}")
    found: dict[str, float | int] = {}
    for raw in parts:
        part = raw.strip().rstrip(",").strip()
        match = _PART.match(part)
        if match is None:
            raise BudgetError(f"budget {part!r} does not parse: {HOW}")
        if match["dollars"] is not None:
            kind, value = "usd", float(match["dollars"])
        else:
            amount = float(match["num"])
            unit = (match["unit"] or "").lower()
            if amount <= 0:
                raise BudgetError(f"budget {part!r} must be more than zero: {HOW}")
            if unit in ("usd", "$"):
                kind, value = "usd", amount
            elif unit in _SECONDS:
                kind, value = "seconds", amount * _SECONDS[unit]
            else:
                kind, value = "tokens", round(amount * _TOKENS[unit])
        if value <= 0:
            raise BudgetError(f"budget {part!r} must be more than zero: {HOW}")
        if value > _MAX[kind]:
            most = {"usd": format_usd(MAX_USD), "tokens": f"{format_tokens(MAX_TOKENS)} tokens"}
            raise BudgetError(
                f"budget {shorten_part(part)!r} is too large: a {KIND_NAMES[kind]} cap is at most "
                f"{most.get(kind, format_seconds(MAX_SECONDS))}"
            )
        if kind in found:
            raise BudgetError(f"budget {text!r} gives the {kind} cap twice: {HOW}")
        found[kind] = value
    return Budget.model_construct(**found)  # type: ignore[arg-type]


def shorten_part(part: str, limit: int = 40) -> str:
    """``part`` cut to ``limit`` characters (a pasted wall of digits stays one line in a message)."""
    return part if len(part) <= limit else part[: limit - 1] + "…"


def format_usd(value: float) -> str:
    """Return ``$2.00`` (four decimals below a cent: ``$0.0042``)."""
    return f"${value:.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def format_tokens(value: int) -> str:
    """Return ``500k``, ``1.2M``, ``2M``, ``950`` or ``1000000M`` (whole millions stay integers)."""
    if value >= 1_000_000:
        millions = f"{value / 1_000_000:.1f}".removesuffix(".0")
        return f"{millions}M" if value < 10**9 else f"{round(value / 1_000_000)}M"
    if value >= 10_000:
        return f"{value // 1000}k"
    return str(value)


def format_seconds(value: float) -> str:
    """Return ``30m``, ``2h``, ``45s`` or ``8784h``."""
    if value >= 3600 and (value % 3600 == 0 or value >= 100 * 3600):
        return f"{int(value // 3600)}h"
    if value >= 60:
        return f"{value / 60:.0f}m"
    return f"{value:.0f}s"


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens (prompt, of which ``cached``, and completion), money (USD, None when no model used had
    prices) and whether any of it was estimated locally."""

    prompt: int = 0
    cached: int = 0
    completion: int = 0
    usd: float | None = None
    estimated: bool = False

    @property
    def tokens(self) -> int:
        """Prompt + completion tokens (what a token cap counts)."""
        return self.prompt + self.completion

    def __add__(self, other: Spend) -> Spend:
        usd = None if self.usd is None and other.usd is None else (self.usd or 0.0) + (other.usd or 0.0)
        return Spend(
            self.prompt + other.prompt,
            self.cached + other.cached,
            self.completion + other.completion,
            usd,
            self.estimated or other.estimated,
        )

    def money(self) -> str:
        """Return ``$0.0123`` (``~$0.0123`` when estimated), "" when nothing is priced."""
        if self.usd is None:
            return ""
        return ("~" if self.estimated else "") + format_usd(self.usd)

    def percents(self, cap: Budget | None, seconds: float = 0.0) -> str:
        """Return how much of ``cap`` is used, per kind: "60% of $0.05 · 24% of 50k tok"; "" when no
        cap. A "~" marks a figure counted from estimated tokens."""
        if cap is None or cap.empty:
            return ""
        mark = "~" if self.estimated else ""
        parts = []
        if cap.usd is not None and self.usd is not None:
            parts.append(f"{mark}{round(100 * self.usd / cap.usd)}% of {format_usd(cap.usd)}")
        if cap.tokens is not None:
            parts.append(f"{mark}{round(100 * self.tokens / cap.tokens)}% of {format_tokens(cap.tokens)} tok")
        if cap.seconds is not None:
            parts.append(f"{round(100 * seconds / cap.seconds)}% of {format_seconds(cap.seconds)}")
        return " · ".join(parts)
