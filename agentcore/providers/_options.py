"""The HTTP options every provider takes, checked once: :class:`HttpOptions` and :func:`settings`.

A provider's constructor takes ``model`` and these options as keywords
(subclasses add their own and pass the rest on as ``**options``), so the
options are declared here once and every provider checks them the same way.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from typing import Any, TypedDict

import httpx
from attrs import frozen

from agentcore.errors import ConfigError
from agentcore.providers._clock import DEFAULT_MAX_REPLY_BYTES, Limits
from agentcore.providers._http import DEFAULT_TIMEOUT
from agentcore.providers._retry import RetryPolicy
from agentcore.providers._secret import Secret
from agentcore.validators import POSITIVE_INT, POSITIVE_NUMBER


class HttpOptions(TypedDict, total=False):
    """The keyword options of every HTTP provider, each one optional, documented once here.

    Pass them to any provider's constructor (``OpenAIProvider("gpt-4o-mini",
    timeout=30)``), or build them once and spread them
    (``options = HttpOptions(max_retries=5); OpenAIProvider(model, **options)``).

    :param base_url: The API root; each provider names its environment
        variable and default.
    :param api_key: The key, sent the way the API wants it; each provider
        names its environment variable (and whether a key is required).
    :param timeout: Seconds, or an ``httpx.Timeout``; by default 10 s to
        connect and 600 s between bytes.
    :param idle_timeout: Seconds a call may go without progress: a
        server-sent event that carries content (keep-alive comments, pings,
        empty deltas and partial data do not count) or, without streaming,
        the whole reply. By default the read timeout of ``timeout`` (600 s).
    :param call_timeout: Seconds one call may take in all, retries and
        backoff included; by default no bound.
    :param max_reply_bytes: The most bytes read for one reply (8 MiB by
        default); a larger reply raises ``ResponseTooLargeError``.
    :param max_retries: Retries after a 429, 408, 5xx or connection error (2).
    :param backoff_base: The first backoff delay in seconds, doubled per retry (0.5).
    :param backoff_max: The longest backoff delay in seconds (8).
    :param http_client: An ``httpx.AsyncClient`` to use instead of a new one
        (the provider's ``aclose`` leaves it open).
    :param headers: Extra headers sent with every request.
    :param extra_body: Fields added to every request body, such as
        ``{"temperature": 0}``.
    :param context_windows: Context windows of models, in tokens, by model
        name (a name also covers its dated versions: ``"my-model"`` covers
        ``"my-model-2026-01"``), such as ``{"my-model": 8192}``. An entry
        replaces the built-in table's entry of the same name and is
        consulted before the server by
        ``agentcore.providers.windows.discover_context_window``.
    """

    base_url: str | None
    api_key: str | None
    timeout: float | httpx.Timeout | None
    max_retries: int
    backoff_base: float
    backoff_max: float
    http_client: httpx.AsyncClient | None
    headers: Mapping[str, str] | None
    extra_body: Mapping[str, Any] | None
    idle_timeout: float | None
    call_timeout: float | None
    max_reply_bytes: int
    context_windows: Mapping[str, int] | None


OPTION_NAMES = frozenset(HttpOptions.__annotations__)
"""The names :class:`HttpOptions` declares."""


@frozen
class Url:
    """A base URL split for use: ``request`` has no user-info, ``display`` masks it."""

    request: str
    display: str
    auth: httpx.BasicAuth | None
    hidden: tuple[str, ...]


@frozen
class HttpSettings:
    """:class:`HttpOptions` checked and resolved (environment variables read, defaults filled)."""

    url: Url
    secret: Secret | None
    retry: RetryPolicy
    timeout: httpx.Timeout | None
    http_client: httpx.AsyncClient | None
    headers: Mapping[str, str]
    extra_body: Mapping[str, Any]
    limits: Limits
    context_windows: Mapping[str, int]
    hidden: tuple[str, ...]
    """Texts to keep out of every message: the base URL's password and the secret headers."""


def settings(
    cls: str,
    options: Mapping[str, Any],
    *,
    base_url: str,
    key_env: str,
    key_required: bool,
) -> HttpSettings:
    """Check ``options`` for the provider class ``cls``; ``base_url`` is the resolved root.

    Raises :class:`~agentcore.errors.ConfigError` naming the first option
    that is unknown or invalid.
    """
    unknown = sorted(set(options) - OPTION_NAMES)
    if unknown:
        known = ", ".join(sorted(OPTION_NAMES))
        raise ConfigError(f"{cls} does not take the options {unknown}; it takes: {known}")
    try:
        retry = RetryPolicy(
            options.get("max_retries", 2),
            options.get("backoff_base", 0.5),
            options.get("backoff_max", 8.0),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{cls}: {exc}") from None
    http_client = options.get("http_client")
    if http_client is not None and not isinstance(http_client, httpx.AsyncClient):
        raise ConfigError(f"{cls}: http_client must be an httpx.AsyncClient, got {http_client!r}")
    headers = {
        str(key): str(value)
        for key, value in _mapping(cls, "headers", options.get("headers")).items()
    }
    timeout = _timeout(cls, options.get("timeout"))
    read = (timeout if timeout is not None else DEFAULT_TIMEOUT).read
    url = split_user_info(cls, base_url)
    return HttpSettings(
        url=url,
        secret=_api_key(cls, options.get("api_key"), key_env, required=key_required),
        retry=retry,
        timeout=timeout,
        http_client=http_client,
        headers=headers,
        extra_body=_mapping(cls, "extra_body", options.get("extra_body")),
        limits=Limits(
            idle_timeout=_seconds(cls, "idle_timeout", options.get("idle_timeout"), read),
            call_timeout=_seconds(cls, "call_timeout", options.get("call_timeout"), None),
            max_reply_bytes=_byte_count(
                cls, options.get("max_reply_bytes", DEFAULT_MAX_REPLY_BYTES)
            ),
        ),
        context_windows=context_windows(cls, options.get("context_windows")),
        hidden=(*url.hidden, *secret_header_values(headers)),
    )


SECRET_HEADER = re.compile(
    r"auth|key|token|secret|passw|cookie|session|signature|credential", re.IGNORECASE
)
"""Header names whose value is always a secret (``Authorization``, Azure's ``api-key``...)."""

PLAIN_HEADERS = frozenset(
    {
        "accept",
        "anthropic-beta",
        "anthropic-version",
        "content-type",
        "openai-beta",
        "user-agent",
    }
)
"""Header names whose value is no secret: never masked in messages."""

MIN_SECRET_CHARS = 8
"""A value of another header is masked from this many characters on."""


def secret_header_values(headers: Mapping[str, str]) -> list[str]:
    """The values among ``headers`` to keep out of every message.

    A header whose name looks like a credential's (:data:`SECRET_HEADER`) is
    a secret whatever its length; one of :data:`PLAIN_HEADERS` never is;
    any other counts from :data:`MIN_SECRET_CHARS` characters on, so a key
    in a header of any name is masked. For ``Scheme credentials`` values
    (``Bearer sk-...``) the credentials alone are masked too.
    """
    found: list[str] = []
    for name, value in headers.items():
        lowered = name.lower()
        text = value.strip()
        if not text or lowered in PLAIN_HEADERS:
            continue
        if SECRET_HEADER.search(lowered) or len(text) >= MIN_SECRET_CHARS:
            found.append(text)
            scheme, _, credentials = text.partition(" ")
            if credentials.strip() and scheme.isalpha():
                found.append(credentials.strip())
    return found


def resolve_base_url(cls: str, given: str | None, env: str, default: str) -> str:
    """The base URL: ``given``, else the environment variable ``env``, else ``default``."""
    if given is not None and not isinstance(given, str):
        raise ConfigError(f"{cls}: base_url must be a string, got {given!r}")
    url = (given or os.environ.get(env, "") or default).strip()
    if not url.startswith(("http://", "https://")):
        source = "base_url" if given else env
        raise ConfigError(f"{cls}: {source} must be an http:// or https:// URL, got {url!r}")
    return url.rstrip("/")


def split_user_info(cls: str, url: str) -> Url:
    """Take the ``user:password@`` part out of ``url``: it becomes HTTP Basic credentials.

    httpx does the same with user-info left in a URL; taking it out keeps it
    out of httpx's own log lines and of every message that names the URL.
    """
    from urllib.parse import unquote, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
        host = parts.hostname
    except ValueError as exc:
        raise ConfigError(f"{cls}: base_url is not a valid URL: {exc}") from None
    if username is None and password is None:
        return Url(request=url, display=url, auth=None, hidden=())
    netloc = parts.netloc.rpartition("@")[2]
    if not host:
        raise ConfigError(f"{cls}: base_url has no host after its user-info")
    user, secret = unquote(username or ""), unquote(password or "")
    basic = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
    hidden = {basic, password or "", secret}
    if not password:
        hidden |= {username or "", user}  # A token given as the user name.
    return Url(
        request=urlunsplit(parts._replace(netloc=netloc)),
        display=urlunsplit(parts._replace(netloc="***@" + netloc)),
        auth=httpx.BasicAuth(user, secret),
        hidden=tuple(text for text in hidden if text),
    )


def context_windows(cls: str, value: Mapping[str, int] | None) -> Mapping[str, int]:
    """The ``context_windows`` option checked: model-name prefixes to windows in tokens."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{cls}: context_windows must map model names to token counts, got {value!r}"
        )
    checked: dict[str, int] = {}
    for name, window in value.items():
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{cls}: context_windows has the model name {name!r}; use a name")
        _WINDOW.check(f"{cls}: context_windows[{name!r}]", window)
        checked[name.strip().lower()] = window
    return checked


_SECONDS = POSITIVE_NUMBER.named("a number of seconds > 0").or_none()
_BYTES = POSITIVE_INT.named("an int > 0")
_WINDOW = POSITIVE_INT.named("a token count > 0")
_TIMEOUT = POSITIVE_NUMBER.named("a number of seconds > 0 or an httpx.Timeout")


def _seconds(cls: str, name: str, value: Any, default: float | None) -> float | None:
    _SECONDS.check(f"{cls}: {name}", value)
    return default if value is None else float(value)


def _byte_count(cls: str, value: Any) -> int:
    return _BYTES.check(f"{cls}: max_reply_bytes", value)  # type: ignore[no-any-return]


def _api_key(cls: str, given: Any, env: str, *, required: bool) -> Secret | None:
    if given is not None and not isinstance(given, str):
        raise ConfigError(f"{cls}: api_key must be a string or None")
    key = (given or os.environ.get(env, "")).strip()
    if key:
        return Secret(key)
    if required:
        raise ConfigError(f"{cls} needs an API key: pass api_key= or set {env}")
    return None


def _timeout(cls: str, timeout: Any) -> httpx.Timeout | None:
    if timeout is None or isinstance(timeout, httpx.Timeout):
        return timeout
    return httpx.Timeout(float(_TIMEOUT.check(f"{cls}: timeout", timeout)))


def _mapping(cls: str, name: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{cls}: {name} must be a mapping, got {value!r}")
    return dict(value)
