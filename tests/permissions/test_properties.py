"""Property tests: compound commands never let a denied or unmatched part through, quoting never
splits, and the rule suggested for "always allow" makes the same call pass next time."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paragents.permissions import Policy

ALLOWED = ["ls -la", "echo hi", "git status", "cat notes.txt", "ls"]
DENIED = ["rm -rf build", "reboot now", "rm x"]
UNMATCHED = ["curl example.invalid", "python3 tool.py", "make all"]
RULES = {
    "allow": ["Bash(ls *)", "Bash(echo *)", "Bash(git status)", "Bash(cat *)"],
    "deny": ["Bash(rm *)", "Bash(reboot*)"],
}
JOINERS = [" && ", " || ", "; ", " | ", " |& ", "\n", " & "]
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _wrap(kind: str, inner: str) -> str:
    return {
        "plain": inner,
        "subshell": f"( {inner} )",
        "brace": f"{{ {inner}; }}",
        "dollar": f"echo $( {inner} )",
        "quoted_dollar": f'echo "x $( {inner} ) y"',
        "procsub": f"cat <( {inner} )",
        "nested": f"( echo $( {{ {inner}; }} ) )",
    }[kind]


WRAPS = st.sampled_from(["plain", "subshell", "brace", "dollar", "quoted_dollar", "procsub", "nested"])
PART = st.tuples(st.sampled_from(["allowed", "denied", "unmatched"]), st.integers(0, 2), WRAPS, st.booleans())


@st.composite
def compound(draw: st.DrawFn) -> tuple[str, set[str], bool]:
    parts = draw(st.lists(PART, min_size=1, max_size=6))
    joiners = draw(st.lists(st.sampled_from(JOINERS), min_size=len(parts) - 1, max_size=len(parts) - 1))
    pieces: list[str] = []
    kinds: set[str] = set()
    for kind, index, wrap, backtick in parts:
        pool = {"allowed": ALLOWED, "denied": DENIED, "unmatched": UNMATCHED}[kind]
        text = pool[index % len(pool)]
        kinds.add(kind)
        pieces.append(f"echo `{text}`" if backtick and wrap == "plain" else _wrap(wrap, text))
    command = pieces[0]
    for joiner, piece in zip(joiners, pieces[1:], strict=True):
        command += joiner + piece
    background = " & " in joiners
    return command, kinds, background


@PROPS
@given(compound())
def test_no_denied_or_unmatched_part_is_ever_allowed(case: tuple[str, set[str], bool]) -> None:
    command, kinds, background = case
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        decision = Policy.load(project, cli_rules=RULES).decide("Bash", {"command": command}, cwd=project)
    if "denied" in kinds:
        assert decision.decision == "deny", command
    elif "unmatched" in kinds or background:
        assert decision.decision == "ask", command
    else:
        assert decision.decision == "allow", (command, decision.reason)


QUOTABLE = st.lists(
    st.sampled_from([*"abc ;&|()<>$`{}!*\n#=", "rm -rf /", "&&", "||", "$(rm x)", "`reboot`"]), max_size=15
).map("".join)


@PROPS
@given(QUOTABLE)
def test_operators_inside_single_quotes_never_split(text: str) -> None:
    command = "echo '" + text.replace("'", "") + "'"
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        decision = Policy.load(project, cli_rules=RULES).decide("Bash", {"command": command}, cwd=project)
    assert decision.decision == "allow", (command, decision.reason)
    assert len(decision.subcommands) == 1


@PROPS
@given(QUOTABLE)
def test_operators_inside_double_quotes_never_split(text: str) -> None:
    safe = text.replace("$(rm x)", "").replace("$", "").replace("`", "").replace('"', "").replace("\\", "")
    command = f'echo "{safe}"'
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        decision = Policy.load(project, cli_rules=RULES).decide("Bash", {"command": command}, cwd=project)
    assert decision.decision == "allow", (command, decision.reason)


RESERVED = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
            "function", "select", "time", "coproc", "timeout", "nice", "nohup", "env", "command", "builtin",
            "exec", "stdbuf", "xargs", "sudo", "eval", "source", "bash", "sh", "zsh", "dash", "ksh", "cd",
            "pushd", "cat", "head", "tail", "grep", "sed", "less", "more", "wc", "cp", "mv", "rm", "touch",
            "mkdir", "truncate", "chmod", "chown", "chgrp", "ln", "tee", "dd", "find", "export", "declare",
            "local", "readonly", "typeset", "unset", "watch", "setsid", "ionice", "flock", "doas", "chrt",
            "taskset", "rmdir", "unlink", "shred", "srm", "wipefs"}  # fmt: skip
NAME = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True).filter(
    lambda w: w not in RESERVED and not w.startswith("mkfs")
)
ARG = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)


@PROPS
@given(NAME, st.lists(ARG, max_size=4))
def test_suggested_rule_makes_the_same_command_pass(name: str, args: list[str]) -> None:
    command = " ".join([name, *(shlex.quote(a) for a in args)])
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        policy = Policy.load(project)
        first = policy.decide("Bash", {"command": command}, cwd=project)
        assert first.decision == "ask", (command, first.reason)
        assert first.suggested_rules, command
        policy.remember_always(list(first.suggested_rules))
        again = policy.decide("Bash", {"command": command}, cwd=project)
    assert again.decision == "allow", (command, first.suggested_rules, again.reason)


SEGMENT = st.text(alphabet=st.sampled_from(list("ab-_. *?[]!#~\\")), min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..") and s.lower() not in (".git", ".paragents")
)


@PROPS
@given(st.lists(SEGMENT, min_size=1, max_size=3), st.sampled_from(["Edit", "Read"]))
def test_suggested_path_rule_makes_the_same_call_pass(segments: list[str], tool: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        project.mkdir()
        policy = Policy.load(project)
        # Reads ask only outside the working directories; edits ask inside them too.
        path = str(Path(tmp, "outside", *segments)) if tool == "Read" else "/".join(["sub", *segments])
        first = policy.decide(tool, {"path": path}, cwd=project)
        assert first.decision == "ask", (path, first.reason)
        policy.remember_always(list(first.suggested_rules))
        again = policy.decide(tool, {"path": path}, cwd=project)
    assert again.decision == "allow", (path, first.suggested_rules, again.reason)
