# ruff: noqa: E501  (pinned reasons)
"""Arguments of every command against Read rules, directories read whole, path literals of code
and commands the parser cannot see into (``evaluate.py``): which parts they add, what each says,
and the limits (globs, braces, tree sizes). Bugs this found and fixed: a relative argument after a
``cd`` to an unknown directory was not checked (``cd "$PWD" && base64 .env`` ran past
``Read(.env)``), and over 64 brace spellings raised instead of asking."""

from __future__ import annotations

from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Decision, Policy
from paragents.permissions.evaluate import MAX_BRACE_SPELLINGS, MAX_GLOB_MATCHES, MAX_TREE_ENTRIES


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_rsa").write_text("k\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "proj"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "a").write_text("s\n")
    (root / ".env").write_text("KEY=1\n")
    (root / ".envrc").write_text("x\n")
    return root


@pytest.fixture
def policy(project: Path) -> Policy:
    return Policy.load(
        project,
        cli_rules={
            "deny": ["Read(.env)", "Read(~/.ssh/**)", "Edit(locked/**)"],
            "ask": ["Read(secrets/**)"],
            "allow": ["Bash(grep *)", "Bash(python3 *)"],
        },
    )


def shown(got: Decision, project: Path, home: Path) -> tuple[str, str | None, str, list[str]]:
    def text(value: str) -> str:
        return value.replace(str(project), "{root}").replace(str(home), "{home}")

    return got.decision, got.rule, text(got.reason), [text(s.command) for s in got.subcommands]


@pytest.mark.parametrize(
    ("command", "mode", "expected"),
    [
        (
            "base64 $(ls)",
            "bypassPermissions",
            (
                "ask",
                None,
                "`base64 $(ls)`: an argument is computed when it runs, so it could name a path that "
                "Read(.env), Read(~/.ssh/**), Read(secrets/**) covers",
                ["base64 $(ls)", "ls", "base64 $(ls)"],
            ),
        ),
        (
            "base64 .env .env",  # the same path is one part
            "bypassPermissions",
            (
                "deny",
                "Read(.env)",
                "`base64 .env .env` names {root}/.env: Read of {root}/.env is denied by rule Read(.env) (deny, cli)",
                ["base64 .env .env", "`base64 .env .env` names {root}/.env"],
            ),
        ),
        (
            "base64 locked/x",  # arguments meet Read rules, not Edit rules
            "bypassPermissions",
            ("allow", None, "bypassPermissions mode (no rule allows `base64 locked/x`)", ["base64 locked/x"]),
        ),
        (
            "base64 .git/config",  # an argument is read, not changed: a protected path does not ask
            "bypassPermissions",
            (
                "allow",
                None,
                "bypassPermissions mode (no rule allows `base64 .git/config`)",
                ["base64 .git/config"],
            ),
        ),
        (
            "base64 ~/.ssh/id_*",
            "bypassPermissions",
            (
                "deny",
                "Read(~/.ssh/**)",
                "`base64 ~/.ssh/id_*` names {home}/.ssh/id_*: Read of {home}/.ssh/id_* is denied by rule "
                "Read(~/.ssh/**) (deny, cli)",
                [
                    "base64 ~/.ssh/id_*",
                    "`base64 ~/.ssh/id_*` names {home}/.ssh/id_*",
                    "`base64 ~/.ssh/id_*` names {home}/.ssh/id_rsa",
                ],
            ),
        ),
        (
            "base64 .{nope,env}",  # each brace spelling, whether it exists or not
            "bypassPermissions",
            (
                "deny",
                "Read(.env)",
                "`base64 .{nope,env}` names {root}/.env: Read of {root}/.env is denied by rule Read(.env) "
                "(deny, cli)",
                ["base64 .{nope,env}", "`base64 .{nope,env}` names {root}/.env"],
            ),
        ),
        (
            "grep -r KEY ~/.ssh",
            "bypassPermissions",
            (
                "deny",
                "Read(~/.ssh/**)",
                "`grep -r KEY ~/.ssh` reads every file under {home}/.ssh, and Read of {home}/.ssh/id_rsa is "
                "denied by rule Read(~/.ssh/**) (deny, cli); name the files to read instead",
                ["grep -r KEY ~/.ssh", "Read {home}/.ssh", "grep -r KEY ~/.ssh"],
            ),
        ),
        (
            "grep -r KEY secrets",
            "default",
            (
                "ask",
                "Read(secrets/**)",
                "`grep -r KEY secrets` reads {root}/secrets/a, which asks because of rule Read(secrets/**) "
                "(ask, cli)",
                ["grep -r KEY secrets", "Read {root}/secrets", "grep -r KEY secrets"],
            ),
        ),
        (
            "python3 -c \"open('secrets/a')\"",
            "default",
            (
                "ask",
                "Read(secrets/**)",
                "python3 code names 'secrets/a': Read of {root}/secrets/a asks because of rule Read(secrets/**) "
                "(ask, cli)",
                ["python3 -c \"open('secrets/a')\"", "python3 code names 'secrets/a'"],
            ),
        ),
        (
            "python3 -c \"open('~/.bashrc','w')\"",
            "bypassPermissions",
            (
                "ask",
                None,
                "python3 code names '~/.bashrc': protected path: {home}/.bashrc is a shell start-up file; it "
                "may change it, so it asks",
                ["python3 -c \"open('~/.bashrc','w')\"", "python3 code names '~/.bashrc'"],
            ),
        ),
        (
            'cd "$PWD" && base64 .env',  # was allowed: relative arguments after an unknown cd were skipped
            "bypassPermissions",
            (
                "ask",
                None,
                "`base64 .env`: '.env' is relative to a directory only known when it runs (cd), so it could name "
                "a path that Read(.env), Read(~/.ssh/**), Read(secrets/**) covers",
                ['cd "$PWD"', "base64 .env", "base64 .env"],
            ),
        ),
        (
            "cd - && base64 .env",  # cd - goes to $OLDPWD: not known either
            "bypassPermissions",
            (
                "ask",
                None,
                "`base64 .env`: '.env' is relative to a directory only known when it runs (cd), so it could name "
                "a path that Read(.env), Read(~/.ssh/**), Read(secrets/**) covers",
                ["cd -", "base64 .env", "base64 .env"],
            ),
        ),
        (
            'cd "$PWD" && base64 ~/.ssh/id_rsa',  # a path from ~ or / does not depend on the cd
            "bypassPermissions",
            (
                "deny",
                "Read(~/.ssh/**)",
                "`base64 ~/.ssh/id_rsa` names {home}/.ssh/id_rsa: Read of {home}/.ssh/id_rsa is denied by rule "
                "Read(~/.ssh/**) (deny, cli)",
                ['cd "$PWD"', "base64 ~/.ssh/id_rsa", "`base64 ~/.ssh/id_rsa` names {home}/.ssh/id_rsa"],
            ),
        ),
    ],
)
def test_argument_parts(
    policy: Policy, project: Path, home: Path, command: str, mode: str, expected: tuple[object, ...]
) -> None:
    assert shown(bash(policy, command, project, mode=mode), project, home) == expected


def test_an_absolute_argument_after_an_unknown_cd_is_checked_as_written(
    policy: Policy, project: Path
) -> None:
    """Only relative arguments depend on where an unknown ``cd`` went: ``/etc/hostname`` is the
    same file wherever the shell is, so it runs as any read no rule covers (bypass: allowed)."""
    got = bash(policy, 'cd "$PWD" && base64 /etc/hostname', project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("allow", None), got.reason


def test_every_file_a_glob_names_is_checked(project: Path) -> None:
    """``.env`` is checked first (an earlier argument), then the glob's other files still are."""
    policy = Policy.load(project, cli_rules={"deny": ["Read(.envrc)"]})
    got = bash(policy, "base64 .env .e*", project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Read(.envrc)")


def test_braces_past_the_limit_ask(policy: Policy, project: Path) -> None:
    assert MAX_BRACE_SPELLINGS == 64
    fits = ".{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}"  # 64 spellings
    assert bash(policy, f"base64 {fits}", project, mode="bypassPermissions").decision == "allow"
    got = bash(policy, f"base64 {fits}{{m,n}}", project, mode="bypassPermissions")
    assert (got.decision, got.reason) == (
        "ask",
        f"`base64 {fits}{{m,n}}`: the glob '{fits}{{m,n}}' names too many files to check",
    )


def test_globs_past_the_limit_ask(policy: Policy, project: Path) -> None:
    many = project / "many"
    many.mkdir()
    for i in range(MAX_GLOB_MATCHES - 1):
        (many / f"f{i}").touch()
    assert bash(policy, "base64 many/*", project, mode="bypassPermissions").decision == "allow"
    (many / "last").touch()
    got = bash(policy, "base64 many/*", project, mode="bypassPermissions")
    assert (got.decision, got.reason) == (
        "ask",
        "`base64 many/*`: the glob 'many/*' names too many files to check",
    )


def test_trees_past_the_limit_ask(policy: Policy, project: Path) -> None:
    tree = project / "tree"
    tree.mkdir()
    for i in range(MAX_TREE_ENTRIES):
        (tree / f"f{i}").touch()
    assert bash(policy, "grep -r KEY tree", project, mode="bypassPermissions").decision == "allow"
    (tree / "one-more").touch()
    got = bash(policy, "grep -r KEY tree", project, mode="bypassPermissions")
    assert (got.decision, got.reason) == (
        "ask",
        "`grep -r KEY tree` reads more than 5000 files, too many to check for paths Read rules cover",
    )
    assert [s.command for s in got.subcommands] == [
        "grep -r KEY tree",
        f"Read {project}/tree",
        "grep -r KEY tree",  # the tree's part is named by the command that reads it
    ]


def test_a_denied_path_in_a_tree_wins_over_an_asking_one(project: Path) -> None:
    (project / "d" / "a").mkdir(parents=True)
    (project / "d" / "a" / "x").write_text("x\n")
    (project / "d" / "z").mkdir()
    (project / "d" / "z" / ".env").write_text("x\n")
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"], "ask": ["Read(d/a/**)"]})
    got = bash(policy, "grep -r KEY d", project)
    assert (got.decision, got.rule) == ("deny", "Read(.env)")


@pytest.mark.parametrize(
    ("deny", "decision", "rule"),
    [
        (["WebFetch", "Edit(//etc/**)"], "deny", "Edit(//etc/**)"),  # the first Bash/Read/Edit deny rule
        (["WebFetch"], "ask", None),  # no deny rule it could meet
        (["Read(.env)"], "deny", "Read(.env)"),
        (["Bash(rm *)"], "deny", "Bash(rm *)"),
    ],
)
def test_a_command_not_seen_into_meets_any_deny_rule_it_could(
    project: Path, deny: list[str], decision: str, rule: str | None
) -> None:
    policy = Policy.load(project, cli_rules={"deny": deny})
    got = bash(policy, 'eval "$X"', project, mode="bypassPermissions")
    assert (got.decision, got.rule, [s.command for s in got.subcommands]) == (decision, rule, ['eval "$X"'])
    could = f"; it could run what rule {rule} (deny, cli) denies" if rule else ""
    assert got.reason == f'`eval "$X"`: eval runs a string that is only known when it runs{could}'


@pytest.mark.parametrize(
    ("allow", "command"),
    [
        ("Bash(*)", "watch -n 1 ls"),
        ("Bash", "watch -n 1 ls"),
        ("Bash(watch -n 1 'ls -la')", "watch -n 1 'ls -la'"),  # the exact rule as written, quotes and all
        ("Bash(watch -n 1 ls -la)", "watch -n 1 'ls -la'"),  # or as its words
    ],
)
def test_exact_rules_allow_exec_wrapped_commands(project: Path, allow: str, command: str) -> None:
    policy = Policy.load(project, cli_rules={"allow": [allow]})
    got = bash(policy, command, project)
    assert (got.decision, got.rule) == ("allow", allow)


@pytest.mark.parametrize(
    ("tool", "arguments", "reason", "label", "suggested"),
    [
        ("WebFetch", {}, "no rule allows a fetch without a URL host", "WebFetch", ()),
        ("WebFetch", {"url": 3}, "no rule allows a fetch without a URL host", "WebFetch", ()),
        (
            "WebFetch",
            {"url": "https://a.example/x"},
            "no rule allows fetching a.example",
            "WebFetch https://a.example/x",
            ("WebFetch(domain:a.example)",),
        ),
        (
            "mcp__x__y",
            {"url": "https://a.example"},
            "no rule allows the tool mcp__x__y",
            "mcp__x__y",
            ("mcp__x__y",),
        ),
        ("WebSearch", {"query": "q"}, "no rule allows the tool WebSearch", "WebSearch", ("WebSearch",)),
    ],
)
def test_other_tools_are_labelled_by_name(
    project: Path,
    tool: str,
    arguments: dict[str, object],
    reason: str,
    label: str,
    suggested: tuple[str, ...],
) -> None:
    got = Policy.load(project).decide(tool, arguments, cwd=project)
    assert (got.decision, got.reason, [s.command for s in got.subcommands], got.suggested_rules) == (
        "ask", reason, [label], suggested,
    )  # fmt: skip


def test_a_matching_tool_rule_names_the_label(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["WebFetch(domain:a.example)", "mcp__x"]})
    fetch = policy.decide("WebFetch", {"url": "https://a.example/x"}, cwd=project)
    assert fetch.reason == "WebFetch https://a.example/x matches rule WebFetch(domain:a.example) (allow, cli)"
    assert [s.command for s in fetch.subcommands] == ["WebFetch https://a.example/x"]
    tool = policy.decide("mcp__x__y", {"url": "https://b.example"}, cwd=project)
    assert tool.reason == "mcp__x__y matches rule mcp__x (allow, cli)"
