"""OllamaProvider: a model served by Ollama, through its OpenAI-compatible API.

``get_provider("ollama:llama3.1:8b")`` builds one. The server is found the
way Ollama's own command line finds it: ``OLLAMA_HOST`` (``host``,
``host:port`` or a URL; port 11434 by default), else ``127.0.0.1:11434``;
``/v1`` is appended. No key is needed; ``OLLAMA_API_KEY`` (or ``api_key=``)
is sent as a bearer token when set, for a server behind a proxy that wants
one. ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` are never read.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from agentcore.errors import ConfigError
from agentcore.providers.openai import OpenAIProvider

DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where Ollama listens when ``OLLAMA_HOST`` is not set."""

DEFAULT_PORT = 11434


def ollama_base_url(host: str | None) -> str:
    """The OpenAI-compatible base URL (``.../v1``) for an ``OLLAMA_HOST`` value.

    Follows Ollama's own reading of the variable: no scheme means
    ``http``; no port means 11434 (80 or 443 after an explicit ``http://`` or
    ``https://``); a path is kept; ``0.0.0.0`` and ``::`` (the addresses a
    server listens on) are reached through the loopback address.
    """
    value = (host or "").strip()
    if not value:
        return DEFAULT_HOST + "/v1"
    scheme, sep, rest = value.partition("://")
    default_port = DEFAULT_PORT
    if not sep:
        scheme, rest = "http", value
    elif scheme == "http":
        default_port = 80
    elif scheme == "https":
        default_port = 443
    else:
        raise ConfigError(f"OLLAMA_HOST must be host[:port] or an http(s) URL, got {value!r}")
    hostport, slash, path = rest.partition("/")
    if _is_ip(hostport.strip("[]")):  # A bare address, IPv6 ones included: no port.
        name, port = hostport.strip("[]"), default_port
    else:
        try:
            parts = urlsplit(f"{scheme}://{hostport}")
            port = parts.port or default_port
            name = parts.hostname or "127.0.0.1"
        except ValueError as exc:
            raise ConfigError(f"OLLAMA_HOST is not a valid address ({exc}): {value!r}") from None
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        netloc = name
    else:
        if address.is_unspecified:
            address = ipaddress.ip_address("127.0.0.1")
        netloc = f"[{address}]" if address.version == 6 else str(address)
    path = (slash + path).rstrip("/")
    return f"{scheme}://{netloc}:{port}{path}/v1"


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class OllamaProvider(OpenAIProvider):
    """A model served by Ollama, through ``POST {base_url}/chat/completions``.

    Takes the arguments of :class:`~agentcore.providers.OpenAIProvider`;
    ``base_url`` defaults to the one :func:`ollama_base_url` makes of
    ``OLLAMA_HOST`` and ``api_key`` to ``OLLAMA_API_KEY`` (optional).
    """

    display_name = "Ollama"
    default_base_url = DEFAULT_HOST + "/v1"
    base_url_env = "OLLAMA_HOST"
    api_key_env = "OLLAMA_API_KEY"
    api_key_required = False

    def _resolve_base_url(self, cls: str, given: str | None) -> str:
        if given is not None:
            return super()._resolve_base_url(cls, given)
        return ollama_base_url(os.environ.get("OLLAMA_HOST"))

    def _label_kind(self) -> str:
        return self.display_name
