"""The user's home inside the sandbox: hidden by default, with an allow-list of what commands need.

A deny-list of credential places is never complete (podman's ``auth.json``, the Hugging Face
token, ``~/.m2/settings.xml``, ``gradle.properties``, ``pip.conf``, ``~/.terraformrc``, sops age
keys, ``~/.databrickscfg``, ``kaggle.json``, fish and atuin histories, ``.viminfo`` ...), so the
home is covered by an empty private tmpfs (writable: a tool writing a dotfile works, and what it
writes is gone with the command) and only these come back, read-only:

- :data:`HOME_VISIBLE`: toolchains and the places their programs live (``~/.cargo``, ``~/.rustup``,
  ``~/.pyenv``, uv's Python installs and tools, ``~/.local/bin``, ``~/.nvm``, ``~/go``...);
- every ``PATH`` entry below the home (not the home itself);
- ``sandbox.homeVisible``: the user's additions (``~`` itself shows the whole home, as before;
  the credential places of :mod:`paragents.tools.sandbox_hide` stay hidden inside it);
- the project roots and paragents' own binds (bound after, as always).

``~/.gitconfig`` is not among them (a ``url.*.insteadOf`` or ``http.extraHeader`` there may hold
a token): :func:`gitconfig` writes a file holding only the identity and the harmless keys of the
user's global config (:data:`paragents.tools.git_config.PASSED_ON`), bound read-only at
``~/.gitconfig``, so ``git commit`` in the sandbox has the user's name and a repository's own
``user.*`` still wins."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence

HOME_VISIBLE = (
    "~/.cargo", "~/.rustup", "~/.pyenv", "~/.local/share/uv/python", "~/.local/share/uv/tools",
    "~/.local/bin", "~/.local/lib", "~/.nvm", "~/.volta", "~/.bun", "~/.deno", "~/go", "~/.sdkman",
    "~/.asdf", "~/.local/share/mise", "~/.rbenv", "~/.jenv", "~/.dotnet", "~/.ghcup", "~/.cabal/bin",
    "~/.elan", "~/.juliaup", "~/.nix-profile", "~/bin", "~/.local/share/pnpm", "~/.m2/repository",
    "~/.gradle/wrapper", "~/.cache/ms-playwright",
)  # fmt: skip
"""Read-only in the sandbox below the hidden home, when they exist (toolchains and their programs;
never a file known to hold credentials: ``~/.cargo/credentials*`` stays hidden inside ``~/.cargo``)."""


def home_dir(env: Mapping[str, str] | None = None) -> str | None:
    """The user's home (``$HOME``, real path), None when it is ``/`` or missing."""
    source = os.environ if env is None else env
    home = source.get("HOME") or os.path.expanduser("~")
    if not home or not os.path.isabs(home) or not os.path.isdir(home):
        return None
    real = os.path.realpath(home)
    return None if real == "/" else real


def _expand(text: str, home: str) -> str:
    if text == "~" or text.startswith("~/"):
        return home + text[1:]
    return os.path.expandvars(text)


def _below(path: str, home: str) -> bool:
    return path.startswith(home.rstrip("/") + "/")


def home_view(
    extra: Iterable[str] = (), env: Mapping[str, str] | None = None
) -> tuple[str | None, list[str]]:
    """(the home to hide, or None when ``sandbox.homeVisible`` shows all of it or there is none;
    the existing paths below it to show read-only, real paths without duplicates)."""
    source = os.environ if env is None else env
    home = home_dir(source)
    if home is None:
        return None, []
    names = [*HOME_VISIBLE, *extra]
    if any(os.path.realpath(_expand(n, home)) == home for n in extra):
        return None, []
    names += [e for e in source.get("PATH", "").split(os.pathsep) if os.path.isabs(e)]
    found: dict[str, None] = {}
    for name in names:
        path = _expand(name, home)
        if not os.path.isabs(path) or not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if _below(real, home):
            found[real] = None
    return home, list(found)


def _quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\t", " ")
    return f'"{escaped}"'


def gitconfig_text(pairs: Sequence[tuple[str, str]]) -> str:
    """A git config file holding ``pairs`` (``section.name`` or ``section.sub.name`` keys)."""
    sections: dict[tuple[str, str | None], list[tuple[str, str]]] = {}
    for key, value in pairs:
        section, _, rest = key.partition(".")
        sub, _, name = rest.rpartition(".")
        if not section or not name or not section.replace("-", "").isalnum():
            continue
        sections.setdefault((section, sub or None), []).append((name, value))
    out = ["# paragents: the identity and harmless settings of your global git config (docs/sandbox.md)"]
    for (section, subsection), items in sections.items():
        head = f"[{section}]" if subsection is None else f"[{section} {_quoted(subsection)}]"
        out.append(head)
        out += [f"\t{name} = {_quoted(value)}" for name, value in items]
    return "\n".join(out) + "\n"


def write_gitconfig(path: str, pairs: Sequence[tuple[str, str]]) -> str | None:
    """Write :func:`gitconfig_text` of ``pairs`` to ``path`` (0600) when it changed; the path, or
    None when it cannot be written."""
    text = gitconfig_text(pairs)
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as f:
        if f.read() == text:
            return path
    try:
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    except OSError:
        return None
    return path
