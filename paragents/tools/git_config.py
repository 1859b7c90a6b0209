"""What paragents' own git commands make of the config git would read: every key that names a
program (:data:`PROGRAM_KEYS`) gets a harmless value, whatever scope set it (see
:mod:`paragents.tools.git_exec`, which runs git with these). Pure functions; nothing runs here."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

INTERNAL_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.alternateRefsCommand", "true"),
    ("core.attributesFile", "/dev/null"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("protocol.file.allow", "always"),  # local repositories and bundle files (git's own upload-pack)
    ("protocol.ext.allow", "never"),
    ("protocol.fd.allow", "never"),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.ssh.defaultKeyCommand", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("merge.verifySignatures", "false"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "dirty"),
    ("status.submoduleSummary", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),
    ("uploadpack.packObjectsHook", ""),
    ("interactive.diffFilter", ""),
)
"""Config every internal git command gets, whatever the repository says."""

PROGRAM_KEYS: tuple[tuple[str, str], ...] = (
    (r"core\.fsmonitor", "false"),
    (r"core\.hookspath", "/dev/null"),
    (r"core\.editor", ":"),
    (r"sequence\.editor", ":"),
    (r"core\.pager", "cat"),
    (r"pager\..+", "cat"),
    (r"core\.askpass", ""),
    (r"core\.sshcommand", "false"),
    (r"core\.gitproxy", ""),
    (r"core\.alternaterefscommand", "true"),
    (r"core\.attributesfile", "/dev/null"),
    (r"credential(\..+)?\.helper", ""),
    (r"diff\.external", "false"),
    (r"diff\..+\.(command|textconv)", "false"),
    (r"merge\..+\.driver", "false"),
    (r"filter\..+\.(clean|smudge|process)", ""),
    (r"filter\..+\.required", "false"),
    (r"gpg(\..+)?\.program", "false"),
    (r"gpg\.ssh\.defaultkeycommand", "false"),
    (r"protocol(\..+)?\.allow", "never"),
    (r"remote\..+\.(receivepack|uploadpack)", "false"),
    (r"remote\..+\.vcs", "none"),
    (r"(difftool|mergetool|browser|man|guitool)\..+\.(cmd|path)", "false"),
    (r"(web|help|instaweb)\.browser", "false"),
    (r"imap\.tunnel", "false"),
    (r"submodule\..+\.update", "none"),
    (r"uploadpack\.packobjectshook", ""),
    (r"interactive\.difffilter", ""),
)
"""Keys (lower-cased section and name, any subsection) whose value git runs, or that route a
transport to a program, and the harmless value each gets."""
_PROGRAM_KEY = [(re.compile(pattern + r"\Z", re.IGNORECASE), value) for pattern, value in PROGRAM_KEYS]

USER_NEUTRAL = (
    (r"core\.sshcommand", "ssh"),
    (r"remote\..+\.receivepack", "git-receive-pack"),
    (r"remote\..+\.uploadpack", "git-upload-pack"),
)
"""Harmless values that differ for a command the user asked for (a push still needs ssh and the
remote's own receive-pack)."""
_USER_NEUTRAL = [(re.compile(pattern + r"\Z", re.IGNORECASE), value) for pattern, value in USER_NEUTRAL]

PASSED_ON = (
    "user.name", "user.email", "core.excludesfile", "core.autocrlf", "core.eol", "core.safecrlf",
    "core.ignorecase", "core.precomposeunicode", "init.defaultbranch", "safe.directory",
)  # fmt: skip
"""Keys of the user's global and system config internal commands still get (the files are not
read): identity, ignore file, line endings, ``safe.directory``."""


class GitConfigRefused(Exception):
    """The repository's config asks for something paragents will not run (named in the message)."""


@dataclass(frozen=True)
class ConfigEntry:
    """One ``git config --list --show-scope`` entry (``key`` as git prints it: section and name
    lower-cased)."""

    scope: str
    key: str
    value: str | None


def parse_config_list(raw: bytes) -> list[ConfigEntry]:
    """Parse ``git config -z --list --show-scope`` output (entries of scope ``command``, which
    come from the environment, are left out)."""
    fields = raw.split(b"\0")
    entries = []
    for i in range(0, len(fields) - 1, 2):
        scope = fields[i].decode("utf-8", "replace")
        key, newline, value = fields[i + 1].decode("utf-8", "replace").partition("\n")
        if scope != "command":
            entries.append(ConfigEntry(scope, key, value if newline else None))
    return entries


def neutral_value(key: str) -> str | None:
    """The harmless value of a program key (:data:`PROGRAM_KEYS`), None for any other key."""
    for pattern, value in _PROGRAM_KEY:
        if pattern.match(key):
            return value
    return None


def internal_overrides(entries: Iterable[ConfigEntry]) -> list[tuple[str, str]]:
    """Config pairs for an internal command, given what git would read: :data:`INTERNAL_CONFIG`, a
    harmless value for every program key of any scope, and the :data:`PASSED_ON` keys of the global
    and system config that the repository does not set itself."""
    entries = list(entries)
    pairs = list(INTERNAL_CONFIG)
    fixed = {k.lower() for k, _ in INTERNAL_CONFIG}
    seen: set[str] = set()
    repo_keys = {e.key.lower() for e in entries if e.scope in ("local", "worktree")}
    for entry in entries:
        lower = entry.key.lower()
        value = neutral_value(entry.key)
        if value is not None and lower not in fixed and entry.key not in seen:
            seen.add(entry.key)
            pairs.append((entry.key, value))
            if lower.startswith("filter.") and lower.endswith((".clean", ".smudge")):
                driver = entry.key[: entry.key.rindex(".")]
                for extra, harmless in ((".process", ""), (".required", "false")):
                    if driver + extra not in seen:
                        seen.add(driver + extra)
                        pairs.append((driver + extra, harmless))
        elif (
            entry.scope in ("global", "system")
            and lower in PASSED_ON
            and entry.value is not None
            and (lower not in repo_keys or lower == "safe.directory")
        ):
            pairs.append((entry.key, entry.value))
    return pairs


def user_overrides(entries: Iterable[ConfigEntry]) -> list[tuple[str, str]]:
    """Config pairs for a command the user asked for (a push): each program key the repository's
    own config (``local``/``worktree``) sets gets the user's global/system value back (the last one),
    or its harmless value; hooks stay off unless the global config names a hooks path. Raises
    :class:`GitConfigRefused` for a repository ``credential.*.helper``."""
    entries = list(entries)
    outer: dict[str, str] = {}
    for entry in entries:
        if entry.scope in ("global", "system") and entry.value is not None:
            outer[entry.key.lower()] = entry.value
    pairs: list[tuple[str, str]] = [("core.hooksPath", outer.get("core.hookspath", "/dev/null"))]
    pairs += [("core.fsmonitor", "false"), ("protocol.ext.allow", outer.get("protocol.ext.allow", "never"))]
    pairs += [("submodule.recurse", "false"), ("push.recurseSubmodules", "no")]
    done = {"core.hookspath", "core.fsmonitor", "protocol.ext.allow"}
    for entry in entries:
        lower = entry.key.lower()
        if entry.scope not in ("local", "worktree") or lower in done:
            continue
        value = neutral_value(entry.key)
        if value is None:
            continue
        if re.match(r"credential(\..+)?\.helper\Z", lower):
            raise GitConfigRefused(
                f"the repository's own config sets {entry.key} (a program git would run with your "
                "credentials): paragents does not push with it; remove it (`git config --unset-all "
                f"{entry.key}`) or push by hand"
            )
        done.add(lower)
        harmless = next((v for p, v in _USER_NEUTRAL if p.match(entry.key)), value)
        pairs.append((entry.key, outer.get(lower, harmless)))
    return pairs
