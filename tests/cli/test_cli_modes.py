"""The CLI's ``--mode`` choices are exactly the permission modes (one list, checked here)."""

from __future__ import annotations

from paragents.cli.parser import MODE_CHOICES
from paragents.permissions import PermissionMode
from paragents.sessions.lifecycle import MODE_NAMES
from paragents.ui.core.commands import PERMISSION_MODES


def test_mode_choices_of_the_cli_and_slash_mode_are_the_permission_modes() -> None:
    modes = tuple(mode.value for mode in PermissionMode)
    assert MODE_CHOICES == modes == MODE_NAMES == PERMISSION_MODES
