"""Notification settings (``notify``, README "Notifications")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class NotifySettings(BaseModel):
    """Notifications when a background session needs you or ends (README "Notifications").
    ``"notify": true`` is short for ``{"enabled": true}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(False, description="Send terminal notifications (and a BEL) at all.")
    method: Literal["auto", "osc9", "osc777", "osc99", "bel", "off"] = Field(
        "auto",
        description="Escape sequence: auto (from the terminal), osc9, osc777, osc99 (kitty), bel, off.",
    )
    webhook: str | None = Field(
        None, description="URL receiving one JSON POST per notification (Slack, Discord and ntfy accept it)."
    )
    command: tuple[str, ...] = Field(
        (), description="Program run per notification, argv without a shell; the text is the last argument."
    )
    escalate_after: float = Field(
        300.0, ge=0, description="Seconds after which one reminder is sent while still blocked (0: never)."
    )
