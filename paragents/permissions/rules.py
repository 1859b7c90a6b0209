"""Permission rule grammar and matching, in Claude Code's syntax (docs.claude.com, "IAM / permissions").

A rule is ``Tool`` or ``Tool(specifier)``. ``Bash(pattern)``: ``*`` matches any run of characters, a
trailing `` *`` also matches the bare command (``Bash(ls *)`` matches ``ls``), and the legacy ``:*``
suffix means "this prefix, then a space or the end". ``Read(glob)``/``Edit(glob)`` are gitignore-style
(matched with ``pathspec``'s gitignore patterns) with the anchors ``//abs``, ``~/home``, ``/project-root``
and ``./cwd`` (or no anchor). Claude Code's other file tools map onto the two families: Glob, Grep and
LS onto Read; Write, MultiEdit and NotebookEdit onto Edit.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import pathspec

FAMILY_ALIASES = {
    "Bash": "Bash",
    "Read": "Read",
    "Glob": "Read",
    "Grep": "Read",
    "LS": "Read",
    "Edit": "Edit",
    "Write": "Edit",
    "MultiEdit": "Edit",
    "NotebookEdit": "Edit",
}
"""Claude Code tool names -> the family whose rules they are (Bash, Read, Edit)."""

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\*?")


@dataclass(frozen=True)
class Rule:
    """One parsed rule: ``text`` as written, ``tool`` as written, ``family`` and the ``specifier``."""

    text: str
    tool: str
    family: str
    specifier: str | None


def parse_rule(text: str) -> Rule:
    """Parse ``Tool`` or ``Tool(specifier)``; raise ValueError saying what is wrong (quoted rule first).

    Example message: ``"Bash(ls" has an unclosed parenthesis``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{text!r} is empty; write a tool name such as Bash or Bash(git status)")
    stripped = text.strip()
    quoted = f'"{text}"'
    if "(" in stripped:
        name, _, rest = stripped.partition("(")
        if not rest.endswith(")"):
            raise ValueError(f"{quoted} has an unclosed parenthesis; end it with ')'")
        spec: str | None = rest[:-1]
        if spec == "":
            raise ValueError(f"{quoted} has an empty specifier; write {name} alone to match every call")
    elif ")" in stripped:
        raise ValueError(f"{quoted} has a ')' without a matching '('")
    else:
        name, spec = stripped, None
    name = name.strip()
    if not _TOOL_NAME.fullmatch(name):
        raise ValueError(f"{quoted} does not start with a tool name (letters, digits, '_'), e.g. Bash(...)")
    family = FAMILY_ALIASES.get(name, name)
    if spec is not None and family in ("Read", "Edit"):
        if spec.startswith("!"):
            raise ValueError(f"{quoted} is a negated pattern ('!'), which permission rules do not support")
        if "\x00" in spec:  # shown escaped: a NUL in a terminal is invisible
            raise ValueError(f"{stripped!r} contains a NUL byte")
    return Rule(text=stripped, tool=name, family=family, specifier=spec)


def spec_words(spec: str) -> str:
    """``spec`` with its shell quoting removed, words joined by single spaces, as commands are
    compared (``echo "hello world"`` -> ``echo hello world``); unchanged when it holds no quote or
    backslash, or does not split (an unclosed quote)."""
    if not any(ch in spec for ch in "'\"\\"):
        return spec
    try:
        return " ".join(shlex.split(spec))
    except ValueError:
        return spec


@lru_cache(maxsize=4096)
def _bash_regex(spec: str) -> re.Pattern[str]:
    tail = ""
    if spec.endswith((":*", " *")):  # legacy prefix form and "cmd *" both also match the bare "cmd"
        spec, tail = spec[:-2], r"(?: .*)?"
    body = ".*".join(re.escape(part) for part in spec.split("*"))
    return re.compile(body + tail, re.DOTALL)


def bash_matches(spec: str | None, command: str) -> bool:
    """Return True when the Bash specifier ``spec`` (None = any command) matches ``command`` entirely.

    ``command`` is one simple command's words joined by single spaces; the specifier is compared
    as written and as its words (so ``Bash(echo "hello world")`` matches ``echo "hello world"``)."""
    if spec is None or _bash_regex(spec).fullmatch(command) is not None:
        return True
    words = spec_words(spec)
    return words != spec and _bash_regex(words).fullmatch(command) is not None


def domain_matches(pattern: str, url: str) -> bool:
    """Claude Code's ``WebFetch(domain:PATTERN)``: True when the host of ``url`` is ``PATTERN``
    (case-insensitive, a trailing dot ignored); ``*.example.com`` matches its subdomains (not
    ``example.com`` itself); ``*`` matches every host. A URL without a host matches nothing."""
    host = url_host(url)
    want = pattern.strip().lower().rstrip(".")
    if host is None or not want:
        return False
    if want == "*":
        return True
    if want.startswith("*."):  # ".example.com" at the end: a subdomain, never example.com itself
        return host.endswith(want[1:])
    return host == want


def url_host(url: str) -> str | None:
    """The host name of ``url`` (lowercase, no port or credentials); a bare ``host/path`` is read as
    ``https://host/path``. None when there is none."""
    text = url.strip()
    if not text:
        return None
    if "://" not in text:
        text = "https://" + text
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


SUBJECT_KEYS: dict[str, tuple[str, ...]] = {
    "WebFetch": ("url",),
    "WebSearch": ("query",),
    "Task": ("subagent_type",),
    "Agent": ("subagent_type",),
    "Skill": ("skill", "name"),
}
"""Tools outside Bash/Read/Edit whose rules take a specifier: the argument it is matched against."""


def specifier_matches(rule: Rule, tool: str, arguments: Mapping[str, Any]) -> bool:
    """True when ``rule``'s specifier matches the call of ``tool`` with ``arguments`` (a rule without
    one matches every call). ``WebFetch(domain:HOST)`` matches the URL's host (:func:`domain_matches`),
    any other specifier is a ``*`` pattern over the tool's subject (``WebFetch``: the URL,
    ``WebSearch``: the query, ``Task``: the subagent type); a tool with no subject matches no
    specifier, so a rule never covers more than it says."""
    spec = rule.specifier
    if spec is None:
        return True
    keys = SUBJECT_KEYS.get(tool, ())
    subject = next((arguments[k] for k in keys if isinstance(arguments.get(k), str)), None)
    if subject is None:
        return False
    if tool == "WebFetch" and spec.startswith("domain:"):
        return domain_matches(spec[len("domain:") :], subject)
    return fnmatch.fnmatchcase(subject, spec)


@lru_cache(maxsize=4096)
def _spec(pattern: str) -> pathspec.PathSpec[pathspec.Pattern]:
    return pathspec.PathSpec.from_lines("gitignore", [pattern])


def path_anchor(spec: str, *, project_root: str, cwd: str, home: str, anywhere: bool) -> tuple[str, str]:
    """Return (root directory, gitwildmatch pattern relative to it) for a Read/Edit specifier.

    ``anywhere`` makes a slash-free pattern (``.env``) match at any depth of the whole filesystem
    (used for deny/ask rules, the strict reading); otherwise it matches at any depth below ``cwd``."""
    if spec.startswith("//"):
        return "/", spec[1:]
    if spec == "~":
        return home, "/**"
    if spec.startswith("~/"):
        return home, spec[1:]
    if spec.startswith("/"):
        return project_root, spec
    if spec.startswith("./"):
        return cwd, spec[1:]
    if "/" not in spec.rstrip("/"):
        return ("/" if anywhere else cwd), spec
    return cwd, spec


def path_matches(root: str, pattern: str, candidate: str) -> bool:
    """Return True when absolute ``candidate`` lies under absolute ``root`` and matches the gitignore
    ``pattern`` (relative to ``root``)."""
    root_text = root.rstrip("/")
    if not candidate.startswith(root_text + "/"):
        return False
    rel = candidate[len(root_text) + 1 :]
    return bool(rel) and _spec(pattern).match_file(rel)


def escape_path(rel: str) -> str:
    """Escape gitignore specials (``* ? [ ] \\`` and a trailing space) in a path relative to a root."""
    out = re.sub(r"([*?\[\]\\])", r"\\\1", rel)
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return out


def tool_matches(rule: Rule, tool: str) -> bool:
    """Return True when ``rule`` names ``tool`` (a family, or an ``mcp__server__tool`` name).

    ``mcp__server`` and ``mcp__server__*`` match every tool of that server; other names match exactly."""
    if rule.family == tool:
        return True
    if tool.endswith(")") and "(" in tool:  # a tool checked with its argument: MessageSession(api)
        name, _, argument = tool[:-1].partition("(")
        return rule.family == name and (
            rule.specifier is None or fnmatch.fnmatchcase(argument, rule.specifier)
        )
    if tool.startswith("mcp__") and rule.specifier is None:
        if rule.tool.endswith("__*"):
            return tool.startswith(rule.tool[:-1])
        return rule.tool.count("__") == 1 and tool.startswith(rule.tool + "__")
    return False
