"""Words as the shell passes them and what a command feeds the next one's stdin (``words.py``):
quotes and escapes undone, ``echo``/``printf``/``cat`` output and heredocs/here-strings read as the
program of the shell they feed, expansions kept unknown. Pinned as the simple commands the parser
finds (docs/permissions.md, "Mutation testing")."""

from __future__ import annotations

import pytest

from paragents.permissions.shell import parse_command


def ran(command: str) -> list[str]:
    """The commands that run (nested ones included; ``[opaque]``: cannot be seen into)."""
    parsed = parse_command(command)
    found = [
        " ".join(c.effective) + (" [opaque]" if c.opaque else "")
        for c in parsed.commands
        if not c.transparent
    ]
    return found + (["[problem]"] if parsed.problem else [])


@pytest.mark.parametrize(
    ("command", "commands"),
    [
        ("echo -n 'rm x' | sh", ["echo -n rm x", "rm x"]),
        ("echo -e 'rm x' | sh", ["echo -e rm x", "rm x"]),
        ("echo -E 'rm x' | sh", ["echo -E rm x", "rm x"]),
        ("echo -ne 'rm x' | sh", ["echo -ne rm x", "rm x"]),
        ("echo -en 'rm x' | sh", ["echo -en rm x", "rm x"]),
        ("echo -x 'rm x' | sh", ["echo -x rm x", "-x rm x"]),
        ("echo -n -e 'rm x' | sh", ["echo -n -e rm x", "rm x"]),
        ("printf 'rm %s\\n' x | sh", ["printf rm %s\\n x", "rm x"]),
        ("printf '%s %s\\n' rm a rm b | sh", ["printf %s %s\\n rm a rm b", "rm a", "rm b"]),
        ("printf '%s %s\\n' rm a rm | sh", ["printf %s %s\\n rm a rm", "rm a", "rm"]),
        ("printf '%s\\n' | sh", ["printf %s\\n"]),
        ("printf '%d' 1 | sh", ["printf %d 1", "sh [opaque]"]),
        ("printf 'rm\\tx' | sh", ["printf rm\\tx", "rm x"]),
        ("printf 'rm %s' '50%' | sh", ["printf rm %s 50%", "rm 50%"]),
        ("printf | sh", ["printf", "sh [opaque]"]),
        ("printf 'rm x%%' | sh", ["printf rm x%%", "rm x%"]),
        ("printf '%s' 'rm x' 'y' | sh", ["printf %s rm x y", "rm xy"]),
        ("printf '\\xZZ' | sh", ["printf \\xZZ", "sh [opaque]"]),
        ("cat <<'EOF' | sh\nrm x\nEOF", ["cat", "rm x"]),
        ("cat <<< 'rm x' | sh", ["cat", "rm x"]),
        ("cat a | sh", ["cat a", "sh [opaque]"]),
        ("cat <<EOF | sh\n$X\nEOF", ["cat", "sh [opaque]"]),
        ("cat <<EOF | sh\nrm y\nEOF", ["cat", "rm y"]),
        ("timeout 5 echo 'rm x' | sh", ["echo rm x", "rm x"]),
        ("echo $X | sh", ["echo $X", "sh [opaque]"]),
        ("x=1 echo 'rm x' | sh", ["echo rm x", "rm x"]),
        ("echo 'rm x' 2>/dev/null | sh", ["echo rm x", "rm x"]),
        ("echo 'rm x' | sh -s", ["echo rm x", "rm x"]),
        ("echo rm x >&2 | sh", ["echo rm x", "rm x"]),
        ("sh <<-EOF\n\trm x\n\tEOF", ["rm x"]),
        ("sh <<EOF\nrm $X\nEOF", ["sh [opaque]"]),
        ("sh <<EOF\nrm `x`\nEOF", ["sh [opaque]"]),
        ('sh <<"EOF"\nrm $X\nEOF', ["rm $X"]),
        ("sh <<\\EOF\nrm $X\nEOF", ["rm $X"]),
        ("sh <<EOF\nrm x\nEOF", ["rm x"]),
        ("sh <<EOF\n\trm x\nEOF", ["rm x"]),
        ('sh <<< "$X"', ["sh [opaque]"]),
        ("sh <<< rm\\ x", ["rm x"]),
        ("sh <<< 'rm x'", ["rm x"]),
        ("sh <<< $'rm\\tx'", ["rm x"]),
        ("sh -c $'rm\\x20x'", ["rm x"]),
        ("sh -c $'\\xZZ'", ["sh -c $'\\xZZ' [opaque]"]),
        ('sh -c $"rm x"', ["rm x"]),
        ('r"m" x', ["rm x"]),
        ("r\\m x", ["rm x"]),
        ("rm \\\nx", ["rm x"]),
        ('echo "a\\$b" "\\x" "a\\\\b" "q\\"" "l\\`s"', ['echo a$b \\x a\\b q" l`s']),
        ("echo a\\ b", ["echo a b"]),
        ("echo 'a'\"b\"c", ["echo abc"]),
        ("echo a$X", ["echo a$X"]),
        ('echo "a$X"', ['echo "a$X"']),
        ('echo "$(ls)"', ['echo "$(ls)"', "ls"]),
        ("echo 12 '' \"\"", ["echo 12  "]),
        ("r$'m' x", ["rm x"]),
        ("echo $'a\\x00b' c", ["echo a c"]),  # bash ends a $'...' string at a NUL
        ("r$'m\\0zz' x", ["rm x"]),
        ("sh <<'EOF'\nrm $X\nEOF", ["rm $X"]),  # a quoted delimiter: the body does not expand
        # a heredoc's command line: what follows is fed the command's output (also after &&: bash
        # would not, so this is the stricter reading), to the last command of a pipeline or list
        ("cat <<EOF && sh\nrm x\nEOF", ["cat", "rm x"]),
        ("cat <<EOF && sh 2>/dev/null\nrm x\nEOF", ["cat", "rm x"]),
        ("cat <<EOF | sh 2>/dev/null\nrm x\nEOF", ["cat", "rm x"]),
        ("cat <<EOF | sh -s\nrm x\nEOF", ["cat", "rm x"]),
        ("cat <<'EOF' && bash\n\\rm x\nEOF", ["cat", "bash \nrm x", "[problem]"]),  # body read as the line
        ("a | b | sh <<EOF\nrm x\nEOF", ["a", "b", "rm x"]),
        ("true && # c\nsh <<EOF\nrm x\nEOF", ["true", "rm x"]),
        ("true && (sh) <<EOF\nrm x\nEOF", ["true", "sh [opaque]"]),
        ("PATH=/tmp/evil; ls", ["ls"]),  # an assignment alone runs nothing
        # heredoc bodies: <<- strips leading tabs (only tabs), << keeps them
        ("bash <<EOF\nrm 'a\n\tb'\nEOF", ["rm a\n\tb"]),
        ("bash <<-EOF\nrm 'a\n\tb'\nEOF", ["rm a\nb"]),
        ("sh <<-EOF\n\tXz\nEOF", ["Xz"]),
        # bytes that are not UTF-8 are kept (as surrogates), not an error
        ("sh <<EOF\nrm \udcff\nEOF", ["rm \udcff"]),
        ("cat <<EOF | sh\nrm \udcff\nEOF", ["cat", "rm \udcff"]),
        # an unterminated heredoc does not parse: nothing in it is trusted
        ("sh <<EOF\nrm x", ["sh", "[problem]"]),
        ("sh <<EOF", ["sh", "[problem]"]),
    ],
)
def test_what_runs(command: str, commands: list[str]) -> None:
    assert ran(command) == commands


@pytest.mark.parametrize(
    ("command", "arguments"),
    [
        ("base64 .en*", [(".en*", True)]),
        ("base64 .{env,x}", [(".{env,x}", True)]),  # a brace spread over pieces is listed like a glob
        ('base64 "$HOME/.env"', [("~/.env", False)]),
        ("base64 ${HOME}/x", [("~/x", False)]),
        ("X=.env; base64 $X", [(".env", False)]),
        ("for f in a b; do base64 $f; done", [("a", False), ("b", False)]),
        ("X=$(ls); base64 $X", [(None, False)]),  # computed when it runs: it could name anything
        ("read X; base64 $X", [(None, False)]),
        ("base64 $(ls)", [(None, False)]),
        ("base64 a$X", []),  # X comes from paragents' environment, not from the model
        ("base64 --file=.env", [(".env", False)]),
        ("base64 -o out a=b", [("out", False), ("a=b", False), ("b", False)]),
        ("base64 - ''", []),
        ('base64 "*"', [("*", False)]),  # quoted: a file named *, not a glob
    ],
)
def test_arguments_that_may_name_paths(command: str, arguments: list[tuple[str | None, bool]]) -> None:
    assert [(t.path, t.glob) for t in parse_command(command).arguments] == arguments


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("cat | sh", "sh runs a program read from the output of `cat`, only known when it runs"),
        ('sh <<< "$X"', 'sh runs a program read from the here-string <<< "$X", only known when it runs'),
        ("sh <<EOF\n$X\nEOF", "sh runs a program read from a heredoc, only known when it runs"),
        (
            "(echo rm x) | sh",
            "sh runs a program read from the output of `(echo rm x)`, only known when it runs",
        ),
        (  # the producer is shown up to 60 characters
            "printf '%s\\n' " + "a" * 60 + ' "$Y" | sh',
            "sh runs a program read from the output of `printf '%s\\n' "
            + "a" * 46
            + "`, only known when it runs",
        ),
    ],
)
def test_why_a_fed_program_is_not_known(command: str, reason: str) -> None:
    opaque = [c.opaque for c in parse_command(command).commands if c.opaque]
    assert opaque == [reason]
