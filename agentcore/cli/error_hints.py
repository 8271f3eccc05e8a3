"""A provider's error as one line for the command line: what went wrong, one hint."""

from __future__ import annotations

import re

from agentcore.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    LlmError,
    LlmTimeoutError,
    ModelNotFoundError,
    RateLimitError,
    ServiceUnavailableError,
)

API_KEY_ENVS = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""The variable that holds the key of each built-in provider."""

_LIBRARY_HINTS = (
    # The providers' hints name Python arguments; the command line names its own.
    re.compile(r";\s*check the API key \(argument api_key= or \w+\)"),
    re.compile(r";\s*the connection was probably dropped"),
    re.compile(r";\s*is base_url right\?.*$"),
    re.compile(r";\s*check the model name \(.*\)$"),
)


def _without_library_hints(message: str) -> str:
    text = message.strip()
    for pattern in _LIBRARY_HINTS:
        text = pattern.sub("", text)
    return text


def explain_llm_error(exc: LlmError, prefix: str, *, window: int | None = None) -> str:
    """One line saying what went wrong with the provider and one thing to try.

    The hint is worded for the command line (flags and environment
    variables), and replaces the hint the provider's message gives Python
    callers.

    :param exc: The provider's error.
    :param prefix: The provider's name in ``--model`` (``openai``, ``ollama``...).
    :param window: The context window the chat measured against, named when the
        request did not fit and the server did not say its window.
    """
    message = _without_library_hints(str(exc))
    if isinstance(exc, AuthenticationError):
        env = API_KEY_ENVS.get(prefix)
        if env is None:
            return f"{message}; the server's API key is missing or wrong"
        return (
            f"{message}; the API key in {env} is missing or wrong: set it with 'export {env}=...'"
        )
    if isinstance(exc, ContextWindowExceededError):
        limit = exc.limit_tokens or window
        size = f" of {limit:,} tokens" if limit else ""
        return (
            f"{message}; the request is too long for the model's context window{size}: "
            "start a new session (without -c or --cid), or shorten the prompt"
        )
    if isinstance(exc, ModelNotFoundError):
        if prefix == "ollama":
            return f"{message}; check the model name in --model, or fetch it: ollama pull MODEL"
        return f"{message}; check the model name in --model (a local server: the name it lists)"
    if isinstance(exc, ServiceUnavailableError):
        return f"{message}; {_unavailable_hint(exc, prefix)}"
    if isinstance(exc, LlmTimeoutError):
        return f"{message}; try a larger --timeout"
    if isinstance(exc, RateLimitError):
        return f"{message}; wait a moment and try again"
    return message


def _unavailable_hint(exc: ServiceUnavailableError, prefix: str) -> str:
    status = exc.status_code
    if status is not None and status >= 500:
        return "the server failed on its side; try again later, or with --max-retries N"
    if "ended before" in str(exc):
        return "the server closed the reply early; try again, or with --no-stream"
    if prefix == "ollama":
        return (
            "is Ollama running ('ollama serve')? It is looked for at $OLLAMA_HOST, "
            "else 127.0.0.1:11434; --base-url overrides both"
        )
    return "is the server running and is --base-url right? (for Ollama: --model ollama:MODEL)"
