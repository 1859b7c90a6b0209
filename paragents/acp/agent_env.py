"""The environment an external agent asks for in ``terminal/create``: the policy judged the command
line alone, so a variable that changes what the command runs would run something nobody approved
(``true`` with ``BASH_ENV=./x.sh`` runs ``x.sh``; ``git status`` with ``XDG_CONFIG_HOME`` pointing at
a committed ``git/config`` ran its fsmonitor on the host). No list of dangerous names is complete
(``GOFLAGS``, ``PYTEST_ADDOPTS``, ``MAKEFLAGS``, ``GCONV_PATH``, ``OPENSSL_CONF``,
``AWS_CONFIG_FILE``, ``CC``, ``KUBECONFIG`` ...), so only the harmless names of
:data:`paragents.permissions.env_names.HARMLESS` (locale, time zone, colours, terminal size, CI
markers, buffering; a pager set to ``cat``) are passed; every other one is refused by name. Nothing
here imports Textual."""

from __future__ import annotations

from collections.abc import Mapping

from paragents.permissions.env_names import harmless


def unsafe_names(env: Mapping[str, str]) -> list[str]:
    """The names in ``env`` an agent may not set (every name off the harmless allow-list), in order."""
    return [name for name, value in env.items() if not name or "=" in name or not harmless(name, value)]
