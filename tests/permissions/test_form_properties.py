"""Property tests (issue 26): equivalent forms of one command (quoting, wrappers, options, shells
reading ``-c`` strings or their stdin, ``env -S``, busybox, git's global options, groups) never
change the decision of the rule that covers the command, in bypass mode and in default mode with
the sandbox's auto-allow (where nothing asks)."""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paragents.permissions import Policy

PROPS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RULES = {
    "deny": ["Bash(rm *)", "Bash(git push *)", "Read(.env)"],
    "allow": ["Bash(*)"],
}


def _project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="forms-"))
    (root / "src").mkdir()
    (root / ".env").write_text("KEY=secret\n")
    return root


PROJECT = _project()
POLICY = Policy.load(PROJECT, cli_rules=RULES)


def _quote_word(word: str, style: int) -> str:
    if style == 0 or not word or set("*?[{") & set(word):  # a quoted glob is a literal name
        return word
    if style == 1:
        return shlex.quote(word) if "'" not in word else word
    if style == 2:
        return (
            '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`") + '"'
        )
    if style == 3 and word.isalnum():
        return "\\" + word[0] + word[1:]  # r\m: the backslash goes, the word stays
    if style == 4 and "'" not in word:
        return "$'" + word + "'"
    return word


Transform = Callable[[str], str]


def _simple(command: str) -> str:
    """``command`` when it is one simple command (a wrapper can run it), else ``bash -c COMMAND``."""
    from paragents.permissions.shell import _parser

    root = _parser().parse(command.encode()).root_node
    if len(root.named_children) == 1 and root.named_children[0].type == "command" and "\n" not in command:
        return command
    return f"bash -c {shlex.quote(command)}"


WRAPPERS: list[Transform] = [
    lambda c: f"timeout 5 {_simple(c)}",
    lambda c: f"timeout -s KILL 5 {_simple(c)}",
    lambda c: f"nice -n 5 {_simple(c)}",
    lambda c: f"nohup {_simple(c)}",
    lambda c: f"time {_simple(c)}",
    lambda c: f"stdbuf -o0 {_simple(c)}",
    lambda c: f"command {_simple(c)}",
    lambda c: f"env {_simple(c)}",
    lambda c: f"env FOO=1 {_simple(c)}",
    lambda c: f"sudo {_simple(c)}",
    lambda c: f"busybox {_simple(c)}",
    lambda c: f"exec {_simple(c)}",
]
SHELLS: list[Transform] = [
    lambda c: f"bash -c {shlex.quote(c)}",
    lambda c: f"sh -c {shlex.quote(c)}",
    lambda c: f"bash -o errexit -c {shlex.quote(c)}",
    lambda c: f"bash -O extglob -c {shlex.quote(c)}",
    lambda c: f"bash -e -c {shlex.quote(c)}",
    lambda c: f"zsh -fc {shlex.quote(c)}",
    lambda c: f"fish -c {shlex.quote(c)}",
    lambda c: f"busybox sh -c {shlex.quote(c)}",
    lambda c: f"script -q -c {shlex.quote(c)} /dev/null",
    lambda c: f"env -S{shlex.quote(c)}",
    lambda c: f"env --split-string={shlex.quote(c)}",
    lambda c: f"eval {shlex.quote(c)}",
    lambda c: f"bash <<< {shlex.quote(c)}",
    lambda c: f"echo {shlex.quote(c)} | sh",
    lambda c: f"printf '%s\\n' {shlex.quote(c)} | bash" if "%" not in c else f"echo {shlex.quote(c)} | bash",
    lambda c: f"sh <<'EOF{c.count('EOF')}'\n{c}\nEOF{c.count('EOF')}",
    lambda c: f"cat <<'EOF{c.count('EOF')}' | bash\n{c}\nEOF{c.count('EOF')}",
]
GROUPS: list[Transform] = [
    lambda c: f"( {c} )",
    lambda c: f"{{ {c}; }}",
    lambda c: f"true && {c}",
    lambda c: f"false || {c}",
    lambda c: f"{c}; echo done",
    lambda c: f"echo $({c})",
    lambda c: f"if true; then {c}; fi",
    lambda c: f"for i in 1; do {c}; done",
]
LAYERS = st.lists(st.sampled_from([*WRAPPERS, *SHELLS, *GROUPS]), min_size=0, max_size=3)


@st.composite
def quoted(draw: st.DrawFn, words: list[str]) -> str:
    return " ".join(_quote_word(w, draw(st.integers(0, 4))) for w in words)


def _decide(command: str, rule: str) -> list[tuple[str, str | None]]:
    """The decision in bypass and sandboxed default mode, each as (decision, ``rule``) when the
    deciding rule is ``rule`` or the form could not be seen into (then any deny rule that could
    match denies it: the principle of item 6)."""
    out: list[tuple[str, str | None]] = []
    for got in (
        POLICY.decide("Bash", {"command": command}, cwd=PROJECT, mode="bypassPermissions"),
        POLICY.decide("Bash", {"command": command}, cwd=PROJECT, mode="default", sandboxed=True),
    ):
        unseen = "could not be" in got.reason or "only known when it runs" in got.reason
        out.append((got.decision, rule if unseen and got.decision == "deny" else got.rule))
    return out


RM_FORMS = [["rm", "-rf", "build"], ["rm", "x"], ["/bin/rm", "-f", "a"], ["rm", "--", "-x"]]
GIT_PUSH_FORMS = [
    ["git", "push"],
    ["git", "-C", ".", "push", "origin"],
    ["git", "--git-dir=.git", "push"],
    ["git", "-c", "k=v", "push", "-f"],
    ["git", "--no-pager", "--work-tree", ".", "push"],
]
READ_FORMS = [
    ["cat", ".env"],
    ["base64", ".env"],
    ["xxd", "./.env"],
    ["od", "-c", "src/../.env"],
    ["tac", ".env"],
    ["nl", ".env"],
    ["sort", ".env"],
    ["awk", "1", ".env"],
    ["strings", ".env"],
    ["cut", "-c1-", ".env"],
    ["head", "-n", "1", ".env"],
    ["grep", "-r", "KEY", "."],
    ["dd", "if=.env"],
    ["base64", ".en*"],
]


@PROPS
@given(st.sampled_from(RM_FORMS), LAYERS, st.data())
def test_every_form_of_rm_meets_its_deny_rule(
    words: list[str], layers: list[Transform], data: st.DataObject
) -> None:
    command = data.draw(quoted(words))
    for layer in layers:
        command = layer(command)
    assert _decide(command, "Bash(rm *)") == [("deny", "Bash(rm *)")] * 2, command


@PROPS
@given(st.sampled_from(GIT_PUSH_FORMS), LAYERS, st.data())
def test_every_form_of_git_push_meets_its_deny_rule(
    words: list[str], layers: list[Transform], data: st.DataObject
) -> None:
    command = data.draw(quoted(words))
    for layer in layers:
        command = layer(command)
    assert _decide(command, "Bash(git push *)") == [("deny", "Bash(git push *)")] * 2, command


@PROPS
@given(st.sampled_from(READ_FORMS), LAYERS, st.data())
def test_every_reader_of_a_denied_file_is_denied(
    words: list[str], layers: list[Transform], data: st.DataObject
) -> None:
    command = data.draw(quoted(words))
    for layer in layers:
        command = layer(command)
    bypass, sandboxed = (
        POLICY.decide("Bash", {"command": command}, cwd=PROJECT, mode="bypassPermissions"),
        None,
    )
    unseen = "could not be" in bypass.reason  # then any deny rule that could match denies it (item 6)
    assert (bypass.decision, "Read(.env)" if unseen else bypass.rule) == ("deny", "Read(.env)"), (
        command,
        bypass.reason,
    )
    sandboxed = POLICY.decide("Bash", {"command": command}, cwd=PROJECT, mode="default", sandboxed=True)
    if words[:2] != ["grep", "-r"]:  # a recursive read runs in the sandbox, which hides .env
        rule = "Read(.env)" if "could not be" in sandboxed.reason else sandboxed.rule
        assert (sandboxed.decision, rule) == ("deny", "Read(.env)"), command


ALLOWING = Policy.load(PROJECT, cli_rules={"allow": ["Bash(ls *)", "Bash(git status)"]})
STRIPPED: list[Transform] = [
    lambda c: f"timeout 5 {_simple(c)}",
    lambda c: f"nice {_simple(c)}",
    lambda c: f"nohup {_simple(c)}",
    lambda c: f"time {_simple(c)}",
    lambda c: f"stdbuf -oL {_simple(c)}",
]


@PROPS
@given(st.sampled_from([["ls"], ["ls", "-la"], ["ls", "src"], ["git", "status"]]), st.data())
def test_quoting_and_stripped_wrappers_keep_an_allowed_command_allowed(
    words: list[str], data: st.DataObject
) -> None:
    command = data.draw(quoted(words))
    for layer in data.draw(st.lists(st.sampled_from(STRIPPED), max_size=3)):
        command = layer(command)
    got = ALLOWING.decide("Bash", {"command": command}, cwd=PROJECT)
    assert got.decision == "allow", (command, got.reason)


# ---- options that write a file (attack report, escape 1) -------------------------------------------
WRITING = Policy.load(PROJECT, cli_rules={"deny": ["Edit(./locked/**)"], "allow": ["Bash(*)"]})
OPTION_WRITERS = [  # (words before the option, long spelling, short spelling, words after)
    (["git", "log", "-1"], "--output", "-o", []),
    (["git", "diff", "HEAD"], "--output", "-o", []),
    (["sort"], "--output", "-o", ["in.txt"]),
    (["sort", "-r"], "--outp", "-o", ["in.txt"]),  # an abbreviation
    (["curl", "-s"], "--output", "-o", ["https://example.com/x"]),
    (["wget", "-q"], "--output-document", "-O", ["https://example.com/x"]),
    (["iconv", "-f", "utf8"], "--output", "-o", ["in.txt"]),
    (["time"], "--output", "-o", ["true"]),
    (["strace"], "--output", "-o", ["true"]),
]
OPTION_FORMS: list[Callable[[str, str, str], list[str]]] = [
    lambda long, short, target: [f"{long}={target}"],
    lambda long, short, target: [long, target],
    lambda long, short, target: [f"{short}{target}"],
    lambda long, short, target: [short, target],
]


@st.composite
def option_write(draw: st.DrawFn, target: str) -> str:
    before, long, short, after = draw(st.sampled_from(OPTION_WRITERS))
    form = draw(st.sampled_from(OPTION_FORMS))
    command = draw(quoted([*before, *form(long, short, target), *after]))
    for layer in draw(LAYERS):
        command = layer(command)
    return command


@PROPS
@given(option_write("locked/out.txt"))
def test_every_spelling_of_an_output_option_meets_an_edit_deny_rule(command: str) -> None:
    for mode, sandboxed in (("bypassPermissions", False), ("default", True)):
        got = WRITING.decide("Bash", {"command": command}, cwd=PROJECT, mode=mode, sandboxed=sandboxed)
        assert (got.decision, got.rule) == ("deny", "Edit(./locked/**)"), (command, got.reason)


@PROPS
@given(option_write(".claude/settings.local.json"))
def test_every_spelling_of_an_output_option_to_a_protected_path_never_runs_unasked(command: str) -> None:
    for mode, sandboxed in (("bypassPermissions", False), ("default", True), ("acceptEdits", False)):
        got = WRITING.decide("Bash", {"command": command}, cwd=PROJECT, mode=mode, sandboxed=sandboxed)
        assert got.decision != "allow", (command, mode, got.reason)
