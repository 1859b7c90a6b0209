"""Fixtures for the tool tests: a ToolContext rooted in tmp_path and a validate-then-run helper."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from paragents.tools import ToolContext, ToolResult, default_registry

Call = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    """A ToolContext whose workdir is a fresh ``work`` folder under tmp_path."""
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(workdir=work, session_id="test")


@pytest.fixture
def call(ctx: ToolContext) -> Call:
    """``await call(name, args, ctx=None)``: validate ``args`` with the named tool and run it."""
    registry = default_registry()

    async def _call(name: str, args: dict[str, Any], context: ToolContext | None = None) -> ToolResult:
        tool = registry.get(name)
        assert tool is not None, name
        return await tool.run(tool.validate(args), context or ctx)

    return _call
