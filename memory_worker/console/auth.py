"""Who may read the operator console (§15): the pure decisions, no HTTP, no clock.

The console's pages are personal data (chats' cards, error logs). This module decides:

- :func:`is_loopback` — whether a bind address keeps the console on this machine
  (127.0.0.0/8, ``::1``, ``localhost``); ``0.0.0.0``, ``::``, an empty host and any
  other name or address reach the network;
- :func:`reads_need_token` and :func:`exposure_problem` — off loopback (or with a read
  token configured) every page needs a token, and a console that would be served off
  loopback with no token at all must not start;
- :func:`token_kind` — which configured token a presented one is (constant time; the full
  token is ``"full"``, the read token ``"read"``: only the full one ever opens actions,
  and that check stays in :meth:`~memory_worker.console.app.Console.authorize`);
- :func:`csrf_pair_ok` — the double-submit CSRF check every form POST passes first (the
  login's too: a page elsewhere cannot make an operator's browser burn its address's
  wrong-token budget);
- :func:`mint_session` / :func:`session_kind` — the login cookie: ``kind.issued.mac``, an
  HMAC under a per-process key, never the token itself, valid for ``max_age_s``;
- :class:`LimitPolicy`, :class:`Bucket`, :func:`wait_for`, :func:`after_failure` — a
  token bucket per client address for *wrong* tokens (a burst, then a few a minute;
  successes cost nothing), and :func:`client_key` — the address a bucket belongs to
  (an IPv6 client by its /64, since one host holds a whole /64).

:mod:`memory_worker.console.gate` is the HTTP side that applies them.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
from dataclasses import dataclass
from typing import Literal

from pydantic import SecretStr

TokenKind = Literal["full", "read"]
KINDS: tuple[TokenKind, ...] = ("full", "read")
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
#: A session issued this far in the future (clock skew between restarts) is still accepted.
SKEW_S = 60
#: The CSRF cookie (double submit: the same value in a hidden field of every form).
CSRF_COOKIE = "mw_console_csrf"
#: Float slack in the bucket: waiting the whole seconds Retry-After names is always enough.
EPSILON = 1e-9


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a bind address or a request's host name) is this machine only."""
    name = (host or "").strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # "", "0.0.0.0"-like names, any DNS name: assume the network
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _secret(token: SecretStr | None) -> str:
    return token.get_secret_value() if token is not None else ""


def reads_need_token(host: str, read_token: SecretStr | None) -> bool:
    """Every page needs a token: off loopback, or whenever a read token is configured."""
    return not is_loopback(host) or bool(_secret(read_token))


def exposure_problem(
    host: str, token: SecretStr | None, read_token: SecretStr | None
) -> str | None:
    """Why the console must not start on ``host`` (None: it may)."""
    if is_loopback(host) or _secret(token) or _secret(read_token):
        return None
    where = host or "every address"
    return (
        f"the console would serve chats' memory on {where} (off loopback) with no token: set "
        "MEMORY_CONSOLE_TOKEN or MEMORY_CONSOLE_READ_TOKEN, bind 127.0.0.1 (--host / "
        "MEMORY_SERVE_HOST), or serve only /metrics, /healthz, /readyz (serve --metrics-only)"
    )


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def token_kind(
    given: str, token: SecretStr | None, read_token: SecretStr | None
) -> TokenKind | None:
    """Which configured token ``given`` is, compared in constant time (None: neither).

    Both comparisons always run, over equal-length digests, so neither the time nor the
    answer says how long a token is or how much of a guess was right.
    """
    presented = _digest(given)
    full, read = _secret(token), _secret(read_token)
    full_match = hmac.compare_digest(presented, _digest(full)) and bool(full)
    read_match = hmac.compare_digest(presented, _digest(read)) and bool(read)
    if full_match:
        return "full"
    return "read" if read_match else None


def valid_csrf(value: str) -> bool:
    """A CSRF value this console could have handed out (token_urlsafe's alphabet and size)."""
    return 20 <= len(value) <= 64 and value.replace("-", "").replace("_", "").isalnum()


def csrf_pair_ok(cookie: str, field: str) -> bool:
    """The double submit holds: a well-formed cookie and the same value in the form."""
    return valid_csrf(cookie) and hmac.compare_digest(cookie, field)


def _mac(key: bytes, payload: str) -> str:
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def mint_session(key: bytes, kind: TokenKind, now_s: float) -> str:
    """The login cookie's value: which token logged in, when, and their HMAC under ``key``."""
    payload = f"{kind}.{int(now_s)}"
    return f"{payload}.{_mac(key, payload)}"


def session_kind(value: str, key: bytes, now_s: float, max_age_s: float) -> TokenKind | None:
    """The kind of token behind a login cookie still valid at ``now_s`` (None: not one)."""
    parts = value.split(".")
    if len(parts) != 3 or parts[0] not in KINDS or not parts[1].isdigit():
        return None
    kind, issued, mac = parts
    if not hmac.compare_digest(mac, _mac(key, f"{kind}.{issued}")):
        return None
    age = now_s - int(issued)
    if age > max_age_s or age < -SKEW_S:
        return None
    return "full" if kind == "full" else "read"


# --- wrong-token rate limit ---------------------------------------------------------------------


@dataclass(frozen=True)
class LimitPolicy:
    """``burst`` wrong tokens back to back, then ``per_minute`` (a token bucket)."""

    burst: int
    per_minute: float

    @property
    def refill_per_s(self) -> float:
        return self.per_minute / 60.0


@dataclass(frozen=True)
class Bucket:
    """Wrong tries a client has left (``level``, fractional while refilling) as of ``at_s``."""

    level: float
    at_s: float


def refilled(bucket: Bucket | None, now_s: float, policy: LimitPolicy) -> Bucket:
    """``bucket`` as of ``now_s`` (a client never seen has a full one)."""
    if bucket is None:
        return Bucket(float(policy.burst), now_s)
    grown = bucket.level + max(0.0, now_s - bucket.at_s) * policy.refill_per_s
    return Bucket(min(float(policy.burst), grown), max(now_s, bucket.at_s))


def wait_for(bucket: Bucket | None, now_s: float, policy: LimitPolicy) -> int:
    """Whole seconds before the client may try a token again (0: now)."""
    level = refilled(bucket, now_s, policy).level
    if level >= 1.0 - EPSILON:  # (a refill of exactly one try may land a rounding short)
        return 0
    return max(1, math.ceil((1.0 - level) / policy.refill_per_s))


def after_failure(bucket: Bucket | None, now_s: float, policy: LimitPolicy) -> Bucket:
    """The bucket once a wrong token was tried at ``now_s``."""
    current = refilled(bucket, now_s, policy)
    return Bucket(max(0.0, current.level - 1.0), current.at_s)


def is_full(bucket: Bucket, now_s: float, policy: LimitPolicy) -> bool:
    """A full bucket is the same as none (the limiter may forget it)."""
    return refilled(bucket, now_s, policy).level >= policy.burst


def client_key(remote: str | None) -> str:
    """The address a bucket is kept for: IPv4 as is, IPv6 by its /64, else the text."""
    text = (remote or "").strip("[]")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return text or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
