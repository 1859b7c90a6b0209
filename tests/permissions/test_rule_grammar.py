"""The rule grammar's edges (``rules.py``): ``WebFetch(domain:)`` hosts, specifiers of other tools,
MCP server rules and per-receiver ``MessageSession(name)`` rules, each through ``Policy.decide``
where a call can reach it (mutation testing found these unpinned, docs/permissions.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.permissions import Policy, PolicyError, parse_rule
from paragents.permissions.rules import domain_matches, specifier_matches, tool_matches, url_host


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def fetch(policy: Policy, url: str, cwd: Path) -> str:
    return policy.decide("WebFetch", {"url": url}, cwd=cwd).decision


# ---- WebFetch(domain:) -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        ("example.com.", "https://example.com/x", True),  # a trailing dot in the rule is ignored
        ("example.com", "https://example.com./x", True),  # ... and in the URL's host
        ("Example.COM", "https://EXAMPLE.com/", True),
        (".example.com", "https://example.com/", False),  # a leading dot is not stripped
        ("example.com", "https://.example.com/", False),
        ("*.example.com", "https://api.example.com/", True),
        ("*.example.com", "https://a.b.example.com/", True),
        ("*.example.com", "https://example.com/", False),  # subdomains only
        ("*.example.com", "https://notexample.com/", False),  # a label boundary, not a suffix
        ("*.example.com", "https://evil-example.com/", False),
        ("*", "https://anything.example/", True),
        ("", "https://example.com/", False),
        ("example.com", "https:///no-host", False),
        ("example.com", "example.com/path", True),  # a bare host/path is read as https://
    ],
)
def test_domain_patterns(pattern: str, url: str, matches: bool) -> None:
    assert domain_matches(pattern, url) is matches


def test_url_host_without_a_host_is_none() -> None:
    assert url_host("https:///x") is None
    assert url_host("   ") is None
    assert url_host("http://[::1") is None  # urlsplit refuses it: no host rather than an error
    assert url_host("https://user:pw@Example.com.:8080/x") == "example.com"


def test_domain_rule_through_the_policy(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["WebFetch(domain:*.example.com)"]})
    assert fetch(policy, "https://api.example.com/v1", project) == "allow"
    assert fetch(policy, "https://notexample.com/steal", project) == "ask"
    assert fetch(policy, "https://example.com/", project) == "ask"


def test_a_fetch_without_a_host_asks_and_suggests_nothing(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["WebFetch(domain:example.com)"]})
    got = policy.decide("WebFetch", {"url": "https:///x"}, cwd=project)
    assert (got.decision, got.reason, got.suggested_rules) == (
        "ask",
        "no rule allows a fetch without a URL host",
        (),
    )


def test_domain_is_only_special_for_web_fetch() -> None:
    """``domain:`` is WebFetch's keyword; for WebSearch it is a plain pattern over the query."""
    rule = parse_rule("WebSearch(domain:example.com)")
    assert specifier_matches(rule, "WebSearch", {"query": "example.com"}) is False
    assert specifier_matches(rule, "WebSearch", {"query": "domain:example.com"}) is True


def test_web_search_rule_matches_its_query(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["WebSearch(domain:example.com)"]})
    assert policy.decide("WebSearch", {"query": "example.com"}, cwd=project).decision == "ask"
    assert policy.decide("WebSearch", {"query": "domain:example.com"}, cwd=project).decision == "deny"


# ---- MCP server rules --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "tool", "matches"),
    [
        ("mcp__fs", "mcp__fs__read", True),
        ("mcp__fs__*", "mcp__fs__read", True),
        ("mcp__fs__*", "mcp__fsx__read", False),
        ("mcp__fs", "mcp__fsx__read", False),
        ("mcp__fs__read", "mcp__fs__read", True),
        ("mcp__fs__read", "mcp__fs__read_all", False),
        ("mcp__fs(x)", "mcp__fs__read", False),  # a server rule has no specifier form
        ("mcp__fs", "mcp__fs__odd(", True),  # a "(" alone does not make a name(argument) tool
        ("mcp__fs", "mcp__fs__odd)", True),
    ],
)
def test_mcp_rules_name_tools(rule: str, tool: str, matches: bool) -> None:
    assert tool_matches(parse_rule(rule), tool) is matches


def test_server_wildcard_rule_through_the_policy(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["mcp__fs__*"], "allow": ["mcp__git"]})
    got = policy.decide("mcp__fs__read", {}, cwd=project)
    assert (got.decision, got.rule) == ("deny", "mcp__fs__*")
    assert policy.decide("mcp__git__log", {}, cwd=project).decision == "allow"
    assert policy.decide("mcp__gitx__log", {}, cwd=project).decision == "ask"


# ---- MessageSession(name) ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rules", "receiver", "decision"),
    [
        ({"allow": ["MessageSession(api)"]}, "api", "allow"),
        ({"allow": ["MessageSession(api)"]}, "web", "ask"),
        ({"allow": ["MessageSession(a*)"]}, "api", "allow"),
        ({"allow": ["MessageSession"]}, "web", "allow"),
        ({"deny": ["MessageSession(web)"], "allow": ["MessageSession"]}, "web", "deny"),
        ({"allow": ["Bash"]}, "api", "ask"),
    ],
)
def test_message_session_rules_per_receiver(
    project: Path, rules: dict[str, list[str]], receiver: str, decision: str
) -> None:
    policy = Policy.load(project, cli_rules=rules)
    got = policy.decide("message_session", {"name": receiver, "message": "hi"}, cwd=project)
    assert got.decision == decision


def test_message_session_reason_and_suggestion(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["MessageSession(api)"]})
    allowed = policy.decide("message_session", {"name": "api"}, cwd=project)
    assert allowed.reason == "MessageSession(api) matches rule MessageSession(api) (allow, cli)"
    asked = policy.decide("message_session", {"name": "w)eb"}, cwd=project)  # ")" cannot close it early
    assert asked.reason == "no rule allows the tool MessageSession(web)"
    assert asked.suggested_rules == ("MessageSession(web)",)


# ---- parse errors: one message naming the rule and the fix ------------------------------------
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "'' is empty; write a tool name such as Bash or Bash(git status)"),
        ("  ", "'  ' is empty; write a tool name such as Bash or Bash(git status)"),
        ("Bash(ls", "\"Bash(ls\" has an unclosed parenthesis; end it with ')'"),
        ("Bash()", '"Bash()" has an empty specifier; write Bash alone to match every call'),
        ("Bash)", "\"Bash)\" has a ')' without a matching '('"),
        ("9x", "\"9x\" does not start with a tool name (letters, digits, '_'), e.g. Bash(...)"),
        ("Ba sh", "\"Ba sh\" does not start with a tool name (letters, digits, '_'), e.g. Bash(...)"),
        ("Read(!x)", "\"Read(!x)\" is a negated pattern ('!'), which permission rules do not support"),
        ("Write(!x)", "\"Write(!x)\" is a negated pattern ('!'), which permission rules do not support"),
        ("Edit(a\x00b)", "'Edit(a\\x00b)' contains a NUL byte"),  # escaped, not an invisible byte
    ],
)
def test_malformed_rules_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_rule(text)
    assert str(info.value) == message


def test_a_command_line_rule_error_names_the_option_and_index(project: Path) -> None:
    with pytest.raises(PolicyError) as info:
        Policy.load(project, cli_rules={"deny": ["Bash(rm *)", "Bash(ls"]})
    assert (
        str(info.value) == "command line --deny[1]: \"Bash(ls\" has an unclosed parenthesis; end it with ')'"
    )


@pytest.mark.parametrize(
    ("text", "tool", "family", "specifier"),
    [
        ("  Bash(ls *)  ", "Bash", "Bash", "ls *"),  # surrounding blanks are not part of the rule
        ("Bash(!x)", "Bash", "Bash", "!x"),  # '!' is only refused in path patterns
        ("Glob(src/**)", "Glob", "Read", "src/**"),
        ("Grep", "Grep", "Read", None),
        ("LS(x)", "LS", "Read", "x"),
        ("Write(out/**)", "Write", "Edit", "out/**"),
        ("MultiEdit", "MultiEdit", "Edit", None),
        ("NotebookEdit(a.ipynb)", "NotebookEdit", "Edit", "a.ipynb"),
        ("mcp__fs__*", "mcp__fs__*", "mcp__fs__*", None),
        ("my-tool_2", "my-tool_2", "my-tool_2", None),
    ],
)
def test_rules_parse_into_tool_family_and_specifier(
    text: str, tool: str, family: str, specifier: str
) -> None:
    rule = parse_rule(text)
    assert (rule.text, rule.tool, rule.family, rule.specifier) == (text.strip(), tool, family, specifier)


# ---- specifiers of the other tools ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "tool", "arguments", "matches"),
    [
        ("Task(Explore)", "Task", {"subagent_type": "Explore"}, True),
        ("Task(Explore)", "Task", {"subagent_type": "Plan"}, False),
        ("Agent(Exp*)", "Agent", {"subagent_type": "Explore"}, True),
        ("Skill(pdf)", "Skill", {"skill": "pdf"}, True),
        ("Skill(pdf)", "Skill", {"name": "pdf"}, True),
        ("Skill(pdf)", "Skill", {"skill": 3, "name": "pdf"}, True),  # the first string subject counts
        ("Skill(pdf)", "Skill", {}, False),
        ("WebFetch(https://docs.example.com/*)", "WebFetch", {"url": "https://docs.example.com/a"}, True),
        ("WebFetch(https://docs.example.com/*)", "WebFetch", {"url": "https://evil.example/a"}, False),
        ("WebFetch", "WebFetch", {}, True),
        ("TodoWrite(x)", "TodoWrite", {"x": "x"}, False),  # no subject: a specifier matches nothing
    ],
)
def test_specifiers_match_the_tools_subject(
    rule: str, tool: str, arguments: dict[str, object], matches: bool
) -> None:
    assert specifier_matches(parse_rule(rule), tool, arguments) is matches
