"""Masking for what operators see: logs, Sentry, the run error log, CLI and console errors.

Stricter than the farm's masking (:func:`~memory_worker.privacy.masking.mask`), which
keeps ordinary text as written, because an operator never needs a URL's query
or a webhook's path to diagnose a failure:

- :func:`scrub` — the secrets this process was configured with
  (:func:`remember_secrets`: every ``SecretStr`` setting, the Redis URLs'
  passwords) replaced wherever they stand, whatever their shape; every URL
  keeps its scheme, host and ordinary path segments only (query and fragment
  values, webhook paths, Telegram ``/bot<token>/`` segments and long
  token-like segments are filtered) — after :func:`mask`, every secret shape and
  label, with ``[Filtered]`` for all of them (first, as a URL's parser reads a raw
  ``user:pa?ss@host`` password as a query).
- :func:`mask_error` — an error text as the run error log keeps it: text the
  farm echoed from the run's own messages replaced by ``[message text]``
  (:func:`strip_echoes`), then scrubbed, then bounded.
- :func:`forget_echoes` — where a farm call's inputs are known (the routed chat call and
  embedder, the bot's embedding edge), every farm error of the chain loses what it echoed
  of them: the prompt's senders and cards, an embedded card, a bot's query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import SplitResult, urlsplit, urlunsplit

import orjson

from llm_client import LLMError
from memory_worker.privacy.masking.detect import mask

FILTERED = "[Filtered]"
ECHO = "[message text]"
#: Shortest run of characters shared with a message that counts as an echo of it.
ECHO_MIN_CHARS = 10

#: A path segment after one of these names is a credential (Slack/Discord/generic webhooks).
SECRET_PATH_PARENTS = frozenset(
    {"services", "webhooks", "webhook", "hooks", "hook", "triggers", "workflows"}
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+", re.I)
_TELEGRAM_SEGMENT = re.compile(r"(?i)^bot\d+:")
#: A long token-like path segment (letters and digits mixed): a key, not a name.
_TOKEN_SEGMENT = re.compile(r"^(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9_\-.~%]{20,}$")
#: Secrets this process was configured with (see :func:`remember_secrets`).
_known_secrets: tuple[str, ...] = ()


def redact_query(query: str) -> str:
    """``a=1&token=x`` → ``a=[Filtered]&token=[Filtered]``: names kept, every value gone."""
    if not query:
        return query
    parts = []
    for pair in query.split("&"):
        name, sep, _ = pair.partition("=")
        parts.append(f"{name}={FILTERED}" if sep else FILTERED if name else name)
    return "&".join(parts)


def _redact_path(path: str) -> str:
    segments = path.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        if i > 0 and segments[i - 1].lower() in SECRET_PATH_PARENTS and segment:
            out.append(FILTERED)  # everything after services/ or webhooks/ is the credential
            break
        if _TELEGRAM_SEGMENT.match(segment):
            out.append("bot" + FILTERED)
        elif _TOKEN_SEGMENT.match(segment):
            out.append(FILTERED)
        else:
            out.append(segment)
    return "/".join(out)


#: Stands for ``[Filtered]`` while a URL is parsed (a ``[`` in the host part reads as IPv6).
_HELD = "__filtered__"


def redact_url(url: str) -> str:
    """A URL with its password, query and fragment values and secret path segments filtered
    (a URL filtered before comes out the same)."""
    if FILTERED in url:
        return redact_url(url.replace(FILTERED, _HELD)).replace(_HELD, FILTERED)
    try:
        parts = urlsplit(url)
    except ValueError:
        return FILTERED
    netloc = parts.netloc
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = userinfo.partition(":")[0] + ":" + FILTERED + "@" + host
    cleaned = SplitResult(
        parts.scheme,
        netloc,
        _redact_path(parts.path),
        redact_query(parts.query),
        FILTERED if parts.fragment else "",
    )
    return urlunsplit(cleaned)


#: Shorter exact secrets are not replaced (they would mask ordinary words).
MIN_SECRET_CHARS = 6


def _longest_first(secrets: Iterable[str]) -> tuple[str, ...]:
    # longest first, so a secret containing another is replaced whole
    return tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True))


def scrub_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of these exact strings replaced (short ones are ignored)."""
    for secret in _longest_first(secrets):
        text = text.replace(secret, FILTERED)
    return text


def remember_secrets(secrets: Iterable[str]) -> None:
    """Replace these exact strings wherever :func:`scrub` sees them (short ones are ignored)."""
    global _known_secrets
    _known_secrets = _longest_first(secrets)


def scrub(text: str) -> str:
    """``text`` as an operator may see it (see the module doc)."""
    for secret in _known_secrets:
        text = text.replace(secret, FILTERED)
    # first: a URL's parser misreads a raw password; an error's status codes and ids are kept
    text = mask(text, placeholder=FILTERED, others=False)
    if "://" in text:
        text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    return text


# --- the run error log ----------------------------------------------------------------------------


def _echo_sources(sources: Iterable[str]) -> list[str]:
    """Each message text, and its JSON-escaped form when it differs (a farm that quotes
    the prompt back quotes it as JSON)."""
    out: list[str] = []
    for text in sources:
        if len(text) < ECHO_MIN_CHARS:
            continue
        out.append(text)
        escaped = orjson.dumps(text).decode()[1:-1]
        if escaped != text:
            out.append(escaped)
    return out


def _covered(text: str, sources: Sequence[str], k: int) -> bytearray:
    grams: dict[str, list[int]] = {}
    for i in range(len(text) - k + 1):
        grams.setdefault(text[i : i + k], []).append(i)
    covered = bytearray(len(text))
    for source in sources:
        for j in range(len(source) - k + 1):
            for i in grams.get(source[j : j + k], ()):
                covered[i : i + k] = b"\x01" * k
    return covered


def strip_echoes(text: str, sources: Iterable[str], *, k: int = ECHO_MIN_CHARS) -> str:
    """``text`` with every run of ``k``+ characters it shares with one of ``sources`` (and
    the gaps shorter than ``k`` between such runs) replaced by ``[message text]``."""
    found = _echo_sources(sources)
    if len(text) < k or not found:
        return text
    covered = _covered(text, found, k)
    runs = [m.span() for m in re.finditer(b"\x01+", covered)]
    if not runs:
        return text
    merged = [runs[0]]
    for start, end in runs[1:]:
        if start - merged[-1][1] < k:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    out, at = [], 0
    for start, end in merged:
        out += [text[at:start], ECHO]
        at = end
    return "".join(out) + text[at:]


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut before a word rather than inside one."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return head[:space] if space > limit // 2 else head


def mask_error(text: str, *, echoes: Iterable[str] = (), limit: int) -> str:
    """An error text as the run error log keeps it: echoes of the run's messages, secrets
    and URL details gone, at most ``limit`` characters (``…`` marks a cut)."""
    text = strip_echoes(_cut(text, limit * 4), echoes)
    text = scrub(text)
    if len(text) <= limit:
        return text
    return _cut(text, limit - 1) + "…"


def forget_echoes(error: BaseException, sent: Iterable[str]) -> None:
    """Every farm answer in ``error``'s chain (causes and contexts) loses what it echoed of
    ``sent``, the inputs of the call that failed (§14). A farm that quotes its input back in
    an error quotes the senders' names and the chat's cards beside the messages, the card
    texts an embedder was given, a bot's query: the run's error log, its route's last error
    (admin pages) and the chain a bot's logger prints keep the answer, so its echo goes where
    the inputs are known — the routed chat call and embedder, the bot's embedding edge."""
    sources = list(sent)
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, LLMError):
            cause.message = strip_echoes(cause.message, sources)
            cause.args = (cause.message,)
        cause = cause.__cause__ or cause.__context__
