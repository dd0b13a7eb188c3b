"""The value types of the settings that are secret, and the checks of the URL-shaped ones.

A secret is masked **by its type**, never by a list of field names: every setting
that may hold a credential is a :class:`~pydantic.SecretStr` (tokens, the Sentry
DSN, the webhook URL) or a :class:`SecretUrl` (the Redis URLs, whose password
sits inside). Their ``str`` and ``repr`` never show the secret, so neither can a
log line, an error message, ``memory-worker config``, the console or a traceback
that prints them; the value is read only by an explicit ``get_secret_value()``
(:func:`reveal`) where a client is built.

:class:`SecretUrl` shows the URL with its password (and every query value)
replaced by ``***``: an operator still sees which host and scheme are meant.

The checked types at the end (:data:`RedisUrl`, :data:`HttpUrl`, :data:`Name`,
:data:`ServiceName`, :data:`Directory`, …) say what is wrong with a value without ever
quoting it (a URL may carry the secret); :func:`check_decodable` refuses any text the
environment could not decode, and :func:`field_defaults` gives every field's default, a
derived one included.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Self, get_args
from urllib.parse import urlsplit

from pydantic import AfterValidator, AliasChoices, BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

#: Durations in seconds, for the settings' bounds.
MINUTE, HOUR, DAY = 60, 3600, 86_400
#: Shortest token accepted (:data:`Token`).
MIN_TOKEN_CHARS = 8
#: Longest name accepted (:data:`Name`): a route target's model name is at most this long.
MAX_NAME_CHARS = 200
#: Longest service name (:data:`ServiceName`): a route target's provider, which a Discovery
#: target's service name becomes, is at most this long.
MAX_SERVICE_CHARS = 64
#: What a service name may hold (a route target's provider: ``llm_client``'s routes).
SERVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: What a masked part of a URL reads as.
MASKED = "***"
#: Schemes of a Redis/Valkey URL (``connections.client_from_url``).
REDIS_SCHEMES = frozenset(
    {"redis", "rediss", "unix", "valkey", "valkeys", "redis+sentinel", "rediss+sentinel"}
)
#: The card store may also be a cluster (``connections.cluster_from_url``).
CLUSTER_SCHEMES = frozenset(
    {"redis+cluster", "rediss+cluster", "valkey+cluster", "valkeys+cluster"}
)


def mask_url(url: str) -> str:
    """``url`` with its password and query values replaced by ``***`` (user, host, path kept)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASKED
    userinfo, at, hosts = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at:
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}{':' + MASKED if colon else ''}@{hosts}"
    query = "&".join(
        f"{name}={MASKED}" if sep else name
        for name, sep, _ in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    shown = f"{parts.scheme}://{netloc}{parts.path}"
    return shown + (f"?{query}" if query else "") + (f"#{MASKED}" if parts.fragment else "")


class SecretUrl(SecretStr):
    """A URL that may carry a password: printed with the password masked (see :func:`mask_url`)."""

    def _display(self) -> str:
        return mask_url(self.get_secret_value())


def reveal(secret: SecretStr | None) -> str | None:
    """The secret's value (None when unset): the one explicit way to read one."""
    return None if secret is None else secret.get_secret_value()


class SecretSafeSettings(BaseSettings):
    """A settings model whose copies keep secrets typed.

    ``model_copy(update=...)`` does not validate, so a plain string given for a
    secret setting (tests, the demo, ``run --serve`` pass URLs) is wrapped here in
    that setting's secret type: it stays masked wherever the copy goes.
    """

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        if update:
            fields = type(self).model_fields
            update = {
                name: _as_secret(fields[name], value) if name in fields else value
                for name, value in update.items()
            }
        return super().model_copy(update=update, deep=deep)


def _as_secret(info: FieldInfo, value: Any) -> Any:
    """``value``, wrapped in the field's secret type when it is a plain string."""
    kind = secret_type(info.annotation)
    return kind(value) if kind is not None and isinstance(value, str) else value


def field_env_name(model: type[BaseSettings], field: str) -> str:
    """The environment variable that sets ``field``: its alias, else prefix + name."""
    alias = model.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices) and isinstance(alias.choices[0], str):
        return alias.choices[0]
    return str(model.model_config.get("env_prefix") or "") + field.upper()


def field_defaults(
    model: type[BaseModel], based_on: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Every field's default, in declaration order. A default derived from other settings
    (a factory taking the validated data: the lease renewal, the heartbeat) is derived from
    ``based_on`` (the values in force), else from the defaults declared before it."""
    defaults: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        data = dict(based_on) if based_on is not None else defaults
        defaults[name] = info.get_default(call_default_factory=True, validated_data=data)
    return defaults


def secret_values(settings: BaseModel) -> list[str]:
    """Every secret string in ``settings``: each secret-typed value, and the credential
    inside a URL-shaped one (its password, or a DSN's key: its user part)."""
    found: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if not isinstance(value, SecretStr) or not value.get_secret_value():
            continue
        secret = value.get_secret_value()
        found.append(secret)
        try:
            parts = urlsplit(secret)
            key = parts.password or parts.username  # a Redis URL's user name is no secret
        except ValueError:
            continue
        if key:
            found.append(key)
    return found


def is_secret_field(info: FieldInfo) -> bool:
    """Whether a settings field holds a secret: its type is (or includes) a ``SecretStr``."""
    return secret_type(info.annotation) is not None


def check_redis_url(url: str, *, cluster: bool = False) -> None:
    """Raise ``ValueError`` (never quoting ``url``) unless it is a usable Redis URL."""
    try:
        parts = urlsplit(url)
        port = parts.port if "," not in parts.netloc else None
    except ValueError:
        raise ValueError("is not a valid URL (bad host or port)") from None
    allowed = REDIS_SCHEMES | (CLUSTER_SCHEMES if cluster else frozenset())
    if parts.scheme not in allowed:
        shown = ", ".join(f"{s}://" for s in sorted(allowed))
        raise ValueError(f"has scheme {parts.scheme or 'none'!r}; use one of {shown}")
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError("needs a socket path (unix:///path/to/redis.sock)")
        return
    if not parts.netloc.rpartition("@")[2]:
        raise ValueError("names no host")
    if port is not None and not 0 < port < 65536:
        raise ValueError("has a port outside 1-65535")


def check_http_url(url: str) -> None:
    """Raise ``ValueError`` (never quoting ``url``) unless it is an http(s) URL with a host."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise ValueError("is not a valid URL (bad host or port)") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"has scheme {parts.scheme or 'none'!r}; use http:// or https://")
    if not parts.hostname:
        raise ValueError("names no host")


def secret_type(annotation: Any) -> type[SecretStr] | None:
    """The ``SecretStr`` type (or subclass) an annotation holds, if any."""
    if isinstance(annotation, type) and issubclass(annotation, SecretStr):
        return annotation
    for arg in get_args(annotation):
        found = secret_type(arg)
        if found is not None:
            return found
    return None


# --- the checked value types of the settings -------------------------------------------------


def _redis(value: SecretUrl) -> SecretUrl:
    check_redis_url(value.get_secret_value())
    return value


def _cards(value: SecretUrl) -> SecretUrl:
    check_redis_url(value.get_secret_value(), cluster=True)
    return value


def _http(value: str) -> str:
    check_http_url(value)
    if "@" in urlsplit(value).netloc:  # this URL is printed (config, logs): no secret in it
        raise ValueError("must not carry credentials (it is shown in logs and the console)")
    return value


def _secret_http(value: SecretStr) -> SecretStr:
    check_http_url(value.get_secret_value())
    return value


def _token(value: SecretStr) -> SecretStr:
    secret = value.get_secret_value()
    if len(secret) < MIN_TOKEN_CHARS or any(ch.isspace() or not ch.isprintable() for ch in secret):
        raise ValueError(f"must be at least {MIN_TOKEN_CHARS} characters, without whitespace")
    return value


def _name(value: str) -> str:
    if not value or any(ch.isspace() or not ch.isprintable() for ch in value):
        raise ValueError("must be a non-empty name without whitespace")
    if len(value) > MAX_NAME_CHARS:
        raise ValueError(f"must be at most {MAX_NAME_CHARS} characters")
    return value


def _service(value: str) -> str:
    if len(value) > MAX_SERVICE_CHARS or not SERVICE_NAME.fullmatch(value):
        raise ValueError(
            f"must be at most {MAX_SERVICE_CHARS} letters, digits, '.', '_' or '-' "
            "(it names the route's provider)"
        )
    return value


def _level(value: str) -> str:
    if not isinstance(logging.getLevelName(value.upper()), int):
        raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
    return value


def _file(value: Path) -> Path:
    try:
        found = value.is_file()
    except OSError as exc:  # a name too long for the file system, …
        raise ValueError(f"cannot be used as a path ({_os_reason(exc)})") from None
    if not found:
        raise ValueError("names no readable file")
    return value


def _directory(value: Path) -> Path:
    try:
        exists, is_dir = value.exists(), value.is_dir()
    except OSError as exc:
        raise ValueError(f"cannot be used as a path ({_os_reason(exc)})") from None
    if exists and not is_dir:
        raise ValueError("exists and is not a directory")
    return value


def _os_reason(exc: OSError) -> str:
    """What the OS said, without the path (``strerror``; the errno name when there is none)."""
    return exc.strerror or type(exc).__name__


def check_decodable(value: object) -> object:
    """Raise ``ValueError`` (never quoting it) when a text holds a lone surrogate: bytes the
    environment could not decode as UTF-8 arrive so, and no Redis key, HTTP request or log
    line can carry them."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("is not UTF-8 text (it holds bytes that cannot be decoded)") from None
    return value


#: A Redis/Valkey URL (the queue's), password masked.
RedisUrl = Annotated[SecretUrl, AfterValidator(_redis)]
#: A Redis/Valkey URL or a cluster's (the card store's), password masked.
CardsUrl = Annotated[SecretUrl, AfterValidator(_cards)]
#: An http(s) URL with a host and no credentials (it is not secret, so it is shown).
HttpUrl = Annotated[str, AfterValidator(_http)]
#: An http(s) URL that may carry a credential (a DSN, a webhook): wholly masked.
SecretHttpUrl = Annotated[SecretStr, AfterValidator(_secret_http)]
#: A token (a bot's, the console's): masked, at least 8 characters, no whitespace (a
#: pasted newline would make every comparison or request fail).
Token = Annotated[SecretStr, AfterValidator(_token)]
#: A service, endpoint, model or host name: non-empty, no whitespace, at most 200 characters.
Name = Annotated[str, AfterValidator(_name)]
#: A Discovery service name: it becomes a route target's provider, so it follows that rule.
ServiceName = Annotated[str, AfterValidator(_service)]
#: A standard-library log level name.
LogLevel = Annotated[str, AfterValidator(_level)]
#: A path that must name an existing file.
ExistingFile = Annotated[Path, AfterValidator(_file)]
#: A directory, created when missing (so only an existing non-directory is refused).
Directory = Annotated[Path, AfterValidator(_directory)]
