"""Who may use the API: an API key, an HS256 JWT, or the signed cookie a pairing link sets.

Keys and tokens are compared in constant time (``hmac.compare_digest``) and never logged; at most
:func:`mask` shows a key's last four characters. The cookie is ``v1.<expiry>.<nonce>.<hmac>``, the
HMAC-SHA256 of the rest under a secret kept in the state directory."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

import jwt

COOKIE_NAME = "paragents_session"
KEY_HEADER = "X-Paragents-Key"


def mask(key: str | None) -> str:
    """A key as it may be shown: ``sk-…abcd`` (its last four characters only), or "(none)"."""
    if not key:
        return "(none)"
    return f"sk-…{key[-4:]}" if len(key) >= 12 else "sk-…"


@dataclass(frozen=True)
class AuthConfig:
    """The server's credentials: ``api_key``, ``jwt_secret`` (HS256) with the ``jwt_issuer`` /
    ``jwt_audience`` a token must name (when set), ``cookie_secret`` signing pairing cookies and
    ``cookie_ttl`` (seconds a pairing cookie stays valid)."""

    api_key: str | None = None
    jwt_secret: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    cookie_secret: bytes = b""
    cookie_ttl: float = 7 * 24 * 3600

    def __repr__(self) -> str:  # never show a secret
        return f"AuthConfig(api_key={mask(self.api_key)}, jwt={'set' if self.jwt_secret else 'unset'})"

    @property
    def has_credentials(self) -> bool:
        """True when an API key or a JWT secret is set (required for a non-loopback bind)."""
        return bool(self.api_key or self.jwt_secret)


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking a request: ``principal`` ("key", "jwt:SUB", "cookie") when it passed,
    else "" with ``error`` saying why (None: no credentials were offered at all)."""

    principal: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return bool(self.principal)


def bearer_of(headers: Any) -> str | None:
    """The credential in ``Authorization: Bearer X`` or ``X-Paragents-Key: X``, or None."""
    value = headers.get("Authorization", "")
    if value[:7].lower() == "bearer ":
        return value[7:].strip() or None
    return headers.get(KEY_HEADER) or None


def check_token(token: str, config: AuthConfig) -> Verdict:
    """Check a bearer credential: the API key, else (when a JWT secret is set) an HS256 JWT with its
    signature, expiry and (when configured) issuer and audience."""
    if config.api_key and hmac.compare_digest(token.encode(), config.api_key.encode()):
        return Verdict("key")
    if config.jwt_secret and token.count(".") == 2:
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
            return Verdict(error="token expired")
        except jwt.InvalidAudienceError:
            return Verdict(error="token has the wrong audience")
        except jwt.InvalidIssuerError:
            return Verdict(error="token has the wrong issuer")
        except jwt.InvalidSignatureError:
            return Verdict(error="token signature is not valid")
        except jwt.InvalidTokenError as exc:
            return Verdict(error=f"token refused: {type(exc).__name__}")
        return Verdict(f"jwt:{str(claims.get('sub', '?'))[:64]}")
    return Verdict(error="wrong API key or token")


def sign_cookie(secret: bytes, expires: float) -> str:
    """A new pairing cookie value valid until ``expires`` (Unix seconds)."""
    body = f"v1.{int(expires)}.{secrets.token_urlsafe(12)}"
    mac = hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()
    return f"{body}.{mac}"


def check_cookie(value: str, secret: bytes, now: float) -> Verdict:
    """Check a pairing cookie's signature and expiry."""
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != "v1" or not secret:
        return Verdict(error="cookie is not valid")
    body = ".".join(parts[:3])
    mac = hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac.encode(), parts[3].encode()):
        return Verdict(error="cookie is not valid")
    try:
        expires = int(parts[1])
    except ValueError:
        return Verdict(error="cookie is not valid")
    if expires <= now:
        return Verdict(error="cookie expired: pair again")
    return Verdict("cookie")


def authenticate(headers: Any, cookies: Any, config: AuthConfig, now: float) -> Verdict:
    """Check a request's credentials: a bearer key/token first, else the pairing cookie."""
    token = bearer_of(headers)
    if token is not None:
        return check_token(token, config)
    cookie = cookies.get(COOKIE_NAME)
    if cookie:
        return check_cookie(cookie, config.cookie_secret, now)
    return Verdict()


def code_hash(code: str) -> str:
    """The hash under which a pairing code is stored (the code itself is never stored)."""
    return hashlib.sha256(code.encode()).hexdigest()
