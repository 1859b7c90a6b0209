"""Fan-out settings (``fanout``, docs/fanout.md) and the session profiles its teams use (``profiles``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class FanoutSettings(BaseModel):
    """Fan-out: one prompt to several sibling sessions, each in its own lane (docs/fanout.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max: int = Field(8, ge=1, le=64, description="Most sibling sessions one /fanout may open.")
    verify_timeout: float = Field(
        600.0, gt=0, description="Seconds a candidate's verify command may run before it is stopped."
    )
    judge_model: str | None = Field(None, description="Model of the judge request (default: the model).")


class SessionProfile(BaseModel):
    """A session profile (``profiles`` in the config; wt/fanteam): the built-in specialists of
    ``/review`` (security, test, perf, devops, arch, docs, code, review) and any the user adds. A
    field written in the config replaces the built-in one; the others keep the built-in values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str = Field("", description="One line saying what this specialist looks for.")
    system_prompt: str = Field("", description="Instructions added to the session's system prompt.")
    model: str | None = Field(None, description="Model of the profile's sessions (null: the configured one).")
    allowed_tools: tuple[str, ...] = Field(
        ("read_file", "list_dir", "glob", "grep"),
        description="The tools the profile's sessions may call (others are not offered to the model).",
    )
    read_only: bool = Field(
        True,
        description="Run in plan mode: only reads run, every write and command is denied by the policy.",
    )
