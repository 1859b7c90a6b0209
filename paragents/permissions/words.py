"""Words of a bash command as the shell will pass them: quotes removed, escapes undone, expansions
flagged; and the text a command feeds to the next one's stdin (a here-string, a heredoc, the output
of ``echo``/``printf``/``cat`` in a pipeline), so a shell reading its program from stdin is checked.

Helpers of :mod:`paragents.permissions.shell` over tree-sitter-bash nodes; nothing here touches the
filesystem.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

import tree_sitter as ts
from wcmatch import glob as wglob

from paragents.permissions.known_commands import command_name, unwrap

_LITERAL_CHILDREN = frozenset({"string_content"})
GLOB_CHARS = frozenset("*?[{")


@dataclass(frozen=True)
class Word:
    """One word: ``text`` without quotes; ``known`` False when it expands (``$x``, ``$(..)``, globs);
    ``glob`` True when the only expansion is an unquoted glob or brace (``.en*``, ``.{env,x}``): the
    files it names can be listed before it runs."""

    text: str
    known: bool
    glob: bool = False


def unescape_unquoted(text: str) -> str:
    """Undo backslash escapes of an unquoted word (``a\\ b`` -> ``a b``; a backslash-newline goes)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def unescape_double(text: str) -> str:
    """Undo the backslash escapes bash honours inside double quotes (``\\$ \\` \\" \\\\``, newline)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def node_text(node: ts.Node) -> str:
    """The source text of ``node`` (undecodable bytes kept as surrogates)."""
    return (node.text or b"").decode("utf-8", "surrogateescape")


def word(node: ts.Node) -> Word:
    """Rebuild one word without quotes; ``known`` is False if it expands (``$x``, ``$(..)``, globs)."""
    kind = node.type
    raw = node_text(node)
    if kind == "word":
        globbed = bool(GLOB_CHARS & set(raw))
        return Word(unescape_unquoted(raw), not globbed, globbed)
    if kind == "number":
        return Word(raw, True)
    if kind == "raw_string":
        return Word(raw[1:-1], True)
    if kind == "ansi_c_string":  # bash ends the string at a NUL: $'.env\x00x' is .env
        try:
            return Word(codecs.decode(raw[2:-1], "unicode_escape").split("\x00", 1)[0], True)
        except (UnicodeDecodeError, ValueError):
            return Word(raw, False)
    if kind in ("string", "translated_string"):
        inner = raw[raw.index('"') + 1 : -1] if '"' in raw else raw
        known_ = all(child.type in _LITERAL_CHILDREN for child in node.named_children)
        return Word(unescape_double(inner) if known_ else raw, known_)
    if kind == "concatenation":
        parts = [word(child) for child in node.children]
        if all(part.known for part in parts):
            return Word("".join(part.text for part in parts), True)
        if all(part.known or part.glob for part in parts) and all(
            child.type == "word" or word(child).known for child in node.children
        ):  # a glob or brace spread over pieces: .{env,x}; quoted pieces are literal: ".en"*
            pattern = "".join(
                node_text(child) if child.type == "word" else wglob.escape(word(child).text)
                for child in node.children
            )
            return Word(pattern, False, True)
        return Word(raw, False)
    return Word(raw, False)


@dataclass(frozen=True)
class Feed:
    """What a command reads on stdin: ``text`` when it is known before running (a literal here-string
    or heredoc, the output of ``echo 'rm x'``), else None; ``origin`` says where it comes from."""

    text: str | None
    origin: str


def heredoc_text(redirect: ts.Node) -> Feed | None:
    """The body of a ``heredoc_redirect`` node (None when it has none), read from the source text
    between the end of the redirect's line and its end delimiter (tree-sitter's own body node is
    empty for some bodies, e.g. one starting with a backslash); unknown when an unquoted delimiter
    lets it expand (``$``, backticks)."""
    end = next((c for c in redirect.named_children if c.type == "heredoc_end"), None)
    start = next((c for c in redirect.named_children if c.type == "heredoc_start"), None)
    if end is None or start is None:
        return None
    raw = redirect.text or b""
    first = raw.find(b"\n")
    if first < 0:
        return None
    body = raw[first + 1 : end.start_byte - redirect.start_byte].decode("utf-8", "surrogateescape")
    if any(c.type == "<<-" for c in redirect.children):  # <<- strips leading tabs
        body = "".join(line.lstrip("\t") for line in body.splitlines(keepends=True))
    quoted = any(q in node_text(start) for q in ("'", '"', "\\"))
    dynamic = not quoted and ("$" in body or "`" in body)
    return Feed(None if dynamic else body, "a heredoc")


def herestring_text(redirect: ts.Node) -> Feed | None:
    """The text of a ``herestring_redirect`` node (``<<< 'rm x'``); unknown when it expands."""
    value = next((c for c in redirect.named_children), None)
    if value is None:
        return None
    found = word(value)
    return Feed(found.text + "\n" if found.known else None, f"the here-string <<< {node_text(value)}")


def _printf(fmt: str, args: list[str]) -> str | None:
    """What ``printf FMT ARGS`` prints when FMT has only ``%s`` (and ``%%``) conversions: FMT is
    applied again to the remaining arguments, as printf does; None for other formats."""
    try:
        fmt = codecs.decode(fmt.replace("%%", "\x00"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return None
    count = fmt.count("%s")
    if "%" in fmt.replace("%s", ""):
        return None
    if count == 0:
        return fmt.replace("\x00", "%")
    chunks = [args[i : i + count] for i in range(0, max(len(args), 1), count)]
    out = ""
    for chunk in chunks:
        piece = fmt
        for value in chunk + [""] * (count - len(chunk)):
            piece = piece.replace("%s", value.replace("%", "\x00"), 1)
        out += piece
    return out.replace("\x00", "%")


def output_of(node: ts.Node, stdin: Feed | None = None) -> Feed:
    """What ``node`` (a command in a pipeline) writes to the next command's stdin: known for
    ``echo``/``printf`` with literal words and ``cat`` fed a literal here-string or heredoc (its own,
    or ``stdin``: a heredoc the parser attached to the list ``node`` ends)."""
    origin = f"the output of `{node_text(node).strip()[:60]}`"
    command = node
    feed = stdin
    if node.type == "redirected_statement":  # (a here-string sits in the command node itself)
        command = node.child_by_field_name("body") or node
        for child in node.named_children:
            if child.type == "heredoc_redirect":
                feed = heredoc_text(child)
    if command.type != "command":
        return Feed(None, origin)
    words: list[Word] = []
    for child in command.named_children:
        if child.type == "command_name":
            words.append(word(child.named_children[0]) if child.named_children else Word("", True))
        elif child.type == "herestring_redirect":
            feed = herestring_text(child)
        elif child.type == "variable_assignment" or child.type.endswith("redirect"):
            continue
        else:
            words.append(word(child))
    if not words or not all(w.known for w in words):
        return Feed(None, origin)
    texts = tuple(w.text for w in words)
    while (step := unwrap(texts)) is not None and not step.split_string and step.start < len(texts):
        texts = texts[step.start :]  # timeout 5 echo ...: what runs is echo
    name, args = command_name(texts), list(texts[1:])
    if name == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        return Feed(" ".join(args) + "\n", origin)
    if name == "printf" and args:
        text = _printf(args[0], args[1:])
        return Feed(text, origin)
    if name == "cat" and not args and feed is not None:
        return Feed(feed.text, origin)
    return Feed(None, origin)
