"""Who may use the API: an API key, an HS256 JWT, the token a paired browser keeps, or a one-time
websocket ticket; and which projects' asks each may answer.

Keys and tokens are compared in constant time (``hmac.compare_digest``) and never logged; at most
:func:`mask` shows a key's last four characters.

A paired browser holds a **browser token** ``b1.<issued>.<project>.<nonce>.<hmac>`` (the HMAC-SHA256
of the rest under a secret kept in the state directory) in the page's ``localStorage`` and sends it
in the :data:`SESSION_HEADER` header. It is never a cookie: cookies ignore ports (RFC 6265 §8.5), so
a cookie for 127.0.0.1 reaches every other server on 127.0.0.1, which could replay it; an origin's
``localStorage`` is bound to its port. The server decides how long a token lives: from ``issued``
for ``browser_ttl`` seconds, and a token issued in the future is refused (issue 28 items 1 and 5)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any, Literal

import jwt

SESSION_HEADER = "X-Paragents-Session"
"""The header a paired browser's page sends its browser token in."""
KEY_HEADER = "X-Paragents-Key"
MIN_SECRET_BYTES = 32
"""The shortest API key or JWT secret accepted off loopback (bytes)."""
CLOCK_SKEW = 60.0
"""Seconds a token's issue time may lie ahead of the server's clock."""
TOKEN_PREFIX = "b1"

CredentialKind = Literal["key", "jwt", "browser", "ticket", "pairing"]
"""What a request offered: failures are counted per kind (:class:`~paragents.serve.limits.Guard`)."""


def mask(key: str | None) -> str:
    """A key as it may be shown: ``sk-…abcd`` (its last four characters only), or "(none)"."""
    if not key:
        return "(none)"
    return f"sk-…{key[-4:]}" if len(key) >= 12 else "sk-…"


@dataclass(frozen=True)
class AuthConfig:
    """The server's credentials and their limits.

    ``api_key``; ``jwt_secret`` (HS256) with the ``jwt_issuer`` / ``jwt_audience`` a token must name
    (when set) and ``jwt_max_lifetime`` (seconds: a token whose ``exp`` lies further ahead, or whose
    ``iat`` lies further back, is refused); ``browser_secret`` signing browser tokens valid
    ``browser_ttl`` seconds from their issue; ``project`` the project this server serves (named in
    the browser tokens it issues); ``key_projects`` the projects whose asks the key (and a JWT without
    a ``projects`` claim) may answer (empty: ``project`` alone)."""

    api_key: str | None = None
    jwt_secret: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_max_lifetime: float = 24 * 3600
    browser_secret: bytes = b""
    browser_ttl: float = 7 * 24 * 3600
    project: str = ""
    key_projects: tuple[str, ...] = ()

    def __repr__(self) -> str:  # never show a secret
        return f"AuthConfig(api_key={mask(self.api_key)}, jwt={'set' if self.jwt_secret else 'unset'})"

    @property
    def has_credentials(self) -> bool:
        """True when an API key or a JWT secret is set (required for a non-loopback bind)."""
        return bool(self.api_key or self.jwt_secret)

    @property
    def scope(self) -> tuple[str, ...]:
        """The projects the API key (and a JWT naming none) may answer asks of."""
        return self.key_projects or ((self.project,) if self.project else ())


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking a request: ``principal`` ("key", "jwt:SUB", "browser:ID", "ticket")
    with its ``kind`` and the ``projects`` whose asks it may answer when it passed; else "" with
    ``error`` saying why (None: no credentials were offered at all) and the ``kind`` that failed."""

    principal: str = ""
    error: str | None = None
    kind: CredentialKind | None = None
    projects: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return bool(self.principal)


def bearer_of(headers: Any) -> str | None:
    """The credential in ``Authorization: Bearer X`` or ``X-Paragents-Key: X``, or None."""
    value = headers.get("Authorization", "")
    if value[:7].lower() == "bearer ":
        return value[7:].strip() or None
    return headers.get(KEY_HEADER) or None


def _jwt_projects(claims: dict[str, Any], config: AuthConfig) -> tuple[str, ...] | None:
    """The ``projects`` claim (a list of directories), the key's scope when absent, None when malformed."""
    named = claims.get("projects")
    if named is None:
        return config.scope
    if not isinstance(named, list) or not all(isinstance(p, str) and p for p in named):
        return None
    return tuple(named)


def check_token(token: str, config: AuthConfig, now: float) -> Verdict:
    """Check a bearer credential: the API key, else (when a JWT secret is set) an HS256 JWT with its
    signature, expiry, lifetime (at most ``jwt_max_lifetime``) and, when configured, issuer and
    audience."""
    if config.api_key and hmac.compare_digest(token.encode(), config.api_key.encode()):
        return Verdict("key", kind="key", projects=config.scope)
    if not (config.jwt_secret and token.count(".") == 2):
        return Verdict(error="wrong API key or token", kind="key")
    options = {"require": ["exp"]}
    try:
        claims = jwt.decode(
            token,
            config.jwt_secret,
            algorithms=["HS256"],
            audience=config.jwt_audience,
            issuer=config.jwt_issuer,
            options=options,  # type: ignore[arg-type]
        )
    except jwt.ExpiredSignatureError:
        return Verdict(error="token expired", kind="jwt")
    except jwt.InvalidAudienceError:
        return Verdict(error="token has the wrong audience", kind="jwt")
    except jwt.InvalidIssuerError:
        return Verdict(error="token has the wrong issuer", kind="jwt")
    except jwt.InvalidSignatureError:
        return Verdict(error="token signature is not valid", kind="jwt")
    except jwt.InvalidTokenError as exc:
        return Verdict(error=f"token refused: {type(exc).__name__}", kind="jwt")
    hours = f"{config.jwt_max_lifetime / 3600:g} h"
    if float(claims["exp"]) > now + config.jwt_max_lifetime + CLOCK_SKEW:
        return Verdict(
            error=f"token lives longer than this server allows ({hours}): issue a shorter one", kind="jwt"
        )
    issued = claims.get("iat")
    if isinstance(issued, int | float) and issued < now - config.jwt_max_lifetime:
        return Verdict(error=f"token is older than this server allows ({hours})", kind="jwt")
    projects = _jwt_projects(claims, config)
    if projects is None:
        return Verdict(error="token's projects claim must be a list of directories", kind="jwt")
    return Verdict(f"jwt:{str(claims.get('sub', '?'))[:64]}", kind="jwt", projects=projects)


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def _mac(secret: bytes, body: str) -> str:
    return hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()


def sign_browser_token(secret: bytes, issued: float, project: str) -> str:
    """A new browser token issued at ``issued`` (Unix seconds) for ``project``."""
    body = f"{TOKEN_PREFIX}.{int(issued)}.{_b64(project)}.{secrets.token_urlsafe(16)}"
    return f"{body}.{_mac(secret, body)}"


def browser_token_id(token: str) -> str:
    """A short id of a browser token for the access log and ``answered_by`` (not the secret part)."""
    return hashlib.sha256(token.rsplit(".", 1)[0].encode()).hexdigest()[:8]


def check_browser_token(value: str, config: AuthConfig, now: float) -> Verdict:
    """Check a browser token's signature and age: valid from its issue (a token issued in the future
    is refused) for ``browser_ttl`` seconds, whatever it claims."""
    parts = value.split(".")
    secret = config.browser_secret
    refused = Verdict(error="browser token is not valid: pair again", kind="browser")
    if len(parts) != 5 or parts[0] != TOKEN_PREFIX or not secret:
        return refused
    if not hmac.compare_digest(_mac(secret, ".".join(parts[:4])).encode(), parts[4].encode()):
        return refused
    try:
        issued, project = int(parts[1]), _unb64(parts[2])
    except (ValueError, UnicodeDecodeError):
        return refused
    if issued > now + CLOCK_SKEW:
        return Verdict(error="browser token is issued in the future: pair again", kind="browser")
    if now >= issued + config.browser_ttl:
        return Verdict(error="browser token expired: pair again", kind="browser")
    return Verdict(f"browser:{browser_token_id(value)}", kind="browser", projects=(project,))


def authenticate(headers: Any, config: AuthConfig, now: float) -> Verdict:
    """Check a request's credentials: a bearer key/token first, else a browser token. Cookies are
    never read (see the module docstring)."""
    token = bearer_of(headers)
    if token is not None:
        return check_token(token, config, now)
    browser = headers.get(SESSION_HEADER)
    if browser:
        return check_browser_token(browser, config, now)
    return Verdict()


def code_hash(code: str) -> str:
    """The hash under which a pairing code or ticket is stored (the code itself is never stored)."""
    return hashlib.sha256(code.encode()).hexdigest()


def weak_secret(value: str | None) -> bool:
    """True for a key or JWT secret shorter than :data:`MIN_SECRET_BYTES` bytes."""
    return value is not None and len(value.encode()) < MIN_SECRET_BYTES
