"""An API key never shows in a repr, a log line or an exception message."""

from __future__ import annotations

import logging

import pytest

from agentcore.errors import AuthenticationError, LlmError
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider, OpenAIProvider
from agentcore.providers._base import HttpProvider

from .loopback import LlmServer
from .payloads import anthropic_error, openai_error

SECRET = "sk-secret-DO-NOT-LEAK-8f3a9c2e1b7d"
REQUEST = LlmRequest([Message.user("Hi")])


def make(kind: str, server: LlmServer) -> HttpProvider:
    if kind == "openai":
        return OpenAIProvider(
            "gpt-4o-mini",
            base_url=server.openai_url,
            api_key=SECRET,
            backoff_base=0.001,
            backoff_max=0.002,
        )
    return AnthropicProvider(
        "claude-sonnet-4-5",
        base_url=server.url,
        api_key=SECRET,
        backoff_base=0.001,
        backoff_max=0.002,
    )


def error_body(kind: str, message: str) -> dict[str, object]:
    if kind == "openai":
        return openai_error(message, "invalid_request_error", "invalid_api_key")
    return anthropic_error("authentication_error", message)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_key_never_leaks(
    kind: str, llm_server: LlmServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The server misbehaves and echoes the key back, in errors and retries alike.
    echo = f"Incorrect API key provided: {SECRET}"
    llm_server.reply_json(error_body(kind, echo), status=500)
    llm_server.reply_json(error_body(kind, echo), status=401)
    llm_server.reply_json(error_body(kind, echo), status=400)
    llm_server.reply_raw(f"not json {SECRET}")
    caplog.set_level(logging.DEBUG)

    async with make(kind, llm_server) as provider:
        assert SECRET not in repr(provider)
        assert SECRET not in str(vars(provider))
        with pytest.raises(AuthenticationError) as auth:
            await provider.complete(REQUEST)
        errors: list[LlmError] = [auth.value]
        for _ in range(2):
            with pytest.raises(LlmError) as info:
                await provider.complete(REQUEST)
            errors.append(info.value)

    assert len(llm_server.requests) == 4
    assert all(
        SECRET in r.headers.get("authorization", r.headers.get("x-api-key", ""))
        for r in llm_server.requests
    )
    for error in errors:
        assert SECRET not in str(error)
        assert SECRET not in repr(error)
        assert "***" in str(error)
    assert caplog.records, "the retry should have logged a warning"
    assert SECRET not in caplog.text
    for record in caplog.records:
        assert SECRET not in record.getMessage()


async def test_key_cut_by_truncation_is_still_hidden(llm_server: LlmServer) -> None:
    # The key straddles the point where quoted server text is cut.
    llm_server.reply_json({"error": {"message": "x" * 490 + SECRET}}, status=400)
    async with make("openai", llm_server) as provider:
        with pytest.raises(LlmError) as info:
            await provider.complete(REQUEST)
    assert SECRET[:8] not in str(info.value)
