"""Per-model settings (``models.NAME``): context window, tool calling, prices."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ModelSettings(BaseModel):
    """Per-model settings, keyed by model name in ``RuntimeConfig.models``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    context_window: int = Field(8192, gt=0, description="Context window of the model, in tokens.")
    tools: bool = Field(
        True,
        description="Send the tool specs to this model. Set false for models or servers that cannot do "
        "tool calling (the session then chats without tools).",
    )
    input_price_per_mtok: float | None = Field(
        None, ge=0, description="Price in USD per million prompt tokens, for cost display (optional)."
    )
    output_price_per_mtok: float | None = Field(
        None, ge=0, description="Price in USD per million completion tokens, for cost display (optional)."
    )
    cached_price_per_mtok: float | None = Field(
        None,
        ge=0,
        description="Price in USD per million prompt tokens read from the server's cache (default: the "
        "input price).",
    )
