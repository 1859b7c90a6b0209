"""Which paths are protected and what each reason says (``resolve.protected_reason``): found
unpinned by mutation testing (docs/permissions.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.permissions.resolve import protected_reason


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/p/.git/config", "/p/.git/config is inside .git/ (repository internals)"),
        (
            "/p/.paragents/permissions.local.json",
            "/p/.paragents/permissions.local.json is inside .paragents/ (saved permission answers)",
        ),
        ("/p/.Paragents/x", "/p/.Paragents/x is inside .paragents/ (saved permission answers)"),  # any case
        ("/p/sub/permissions.json", "/p/sub/permissions.json is a permission/config file"),
        ("/h/.bashrc", "/h/.bashrc is a shell start-up file"),
        ("/h/.zprofile", "/h/.zprofile is a shell start-up file"),
        ("/m/managed.json", "/m/managed.json is the managed permissions file"),
        ("/p/.bashrc", None),  # a start-up file's name outside the home directory
        ("/h/notes.txt", None),  # another file of the home directory
        ("/h/sub/.bashrc", None),
        ("/p/src/a.py", None),
    ],
)
def test_protected_reason(path: str, reason: str | None) -> None:
    assert protected_reason(path, "/h", "/m/managed.json") == reason


def test_a_home_reached_through_a_link_protects_its_start_up_files(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    rc = f"{tmp_path}/real/.profile"
    assert protected_reason(rc, str(tmp_path / "link"), "/m") == f"{rc} is a shell start-up file"
    assert protected_reason(rc, str(tmp_path / "link"), "/m", {}) == f"{rc} is a shell start-up file"
