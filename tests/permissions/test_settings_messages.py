"""A permission file paragents cannot use is refused with one message naming the file, the field
(``permissions.allow[1]``, ``examples[0].expect``, ``(top level)``) and what is wrong; keys that only
look like a rule list are ignored with a note, near misses of one are refused (``settings.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.permissions import Policy, PolicyError
from paragents.permissions.decision import parse_mode
from paragents.permissions.settings import AUTO_MODE_NOTE


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "(top level): Input should be a valid dictionary or instance of PermissionsFile"),
        ('"x"', "(top level): Input should be a valid dictionary or instance of PermissionsFile"),
        ('{"permissions": {"allow": ["ok", 3]}}', "permissions.allow[1]: Input should be a valid string"),
        ('{"permissions": {"deny": "Bash"}}', "permissions.deny: Input should be a valid list"),
        (
            '{"permissions": []}',
            "permissions: Input should be a valid dictionary or instance of PermissionsBlock",
        ),
        ('{"examples": [{"tool": "Bash"}]}', "examples[0].input: Field required"),
        (
            '{"examples": [{"tool": "Bash", "input": {}, "expect": "maybe"}]}',
            "examples[0].expect: Input should be 'allow', 'ask' or 'deny'",
        ),
        (
            '{"permissions": {"additionalDirectories": [1]}}',
            "permissions.additionalDirectories[0]: Input should be a valid string",
        ),
        (
            '{"permissions": {"alow": []}}',
            "permissions.alow: unknown key; did you mean 'allow'? (its rules would be lost)",
        ),
        (
            '{"Permissions": {}}',
            "unknown key 'Permissions'; did you mean 'permissions'? (its rules would be lost)",
        ),
        (
            '{"permisions": {}}',
            "unknown key 'permisions'; did you mean 'permissions'? (its rules would be lost)",
        ),
    ],
)
def test_refused_with_the_field_named(project: Path, content: str, message: str) -> None:
    path = project / "permissions.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        Policy.load(project)
    assert str(info.value) == f"{path}: {message}"


def test_keys_that_only_resemble_a_rule_list_are_ignored_with_a_note(project: Path) -> None:
    """``allowlist`` and ``denyRules`` are not close enough to ``allow``/``deny`` (similarity
    0.71 and 0.62, under 0.75) to be taken for misspellings: they are ignored, and said so."""
    path = project / "permissions.json"
    path.write_text(
        '{"permissions": {"allowlist": ["Bash"], "denyRules": []}, "hooks": {}}', encoding="utf-8"
    )
    policy = Policy.load(project)
    assert policy.notes == [
        f"{path}: ignored (not used by paragents' permission layer): hooks, permissions.allowlist, "
        "permissions.denyRules"
    ]
    assert policy.rules_table() == []


def test_the_ignored_keys_are_noted_before_the_mode_it_maps(project: Path) -> None:
    path = project / "permissions.json"
    path.write_text('{"permissions": {"defaultMode": "auto", "x": 1}, "hooks": {}}', encoding="utf-8")
    assert Policy.load(project).notes == [
        f"{path}: ignored (not used by paragents' permission layer): hooks, permissions.x",
        f"{path}: {AUTO_MODE_NOTE}",
    ]


def test_an_unknown_mode_names_the_valid_ones() -> None:
    with pytest.raises(ValueError) as info:
        parse_mode("auto-ish")
    assert str(info.value) == (
        "unknown permission mode 'auto-ish'; use one of: default, acceptEdits, plan, dontAsk, "
        "bypassPermissions"
    )
