"""An API key never shows in a repr, a log line or an exception message."""

from __future__ import annotations

import logging
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcore.errors import AuthenticationError, LlmError
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider, OpenAIProvider, OpenAIResponsesProvider
from agentcore.providers._base import HttpProvider
from agentcore.providers._secret import MASK, MIN_MASKED_ANYWHERE_CHARS, mask_secrets

from .loopback import LlmServer
from .payloads import anthropic_error, openai_error

SECRET = "sk-secret-DO-NOT-LEAK-8f3a9c2e1b7d"
REQUEST = LlmRequest([Message.user("Hi")])


def make(kind: str, server: LlmServer) -> HttpProvider:
    if kind in ("openai", "responses"):
        cls = OpenAIProvider if kind == "openai" else OpenAIResponsesProvider
        return cls(
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
    if kind in ("openai", "responses"):
        return openai_error(message, "invalid_request_error", "invalid_api_key")
    return anthropic_error("authentication_error", message)


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
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


# -- short keys are masked as whole tokens, long ones everywhere ------------------------

TOKEN_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
short_secrets = st.text(TOKEN_CHARS, min_size=1, max_size=MIN_MASKED_ANYWHERE_CHARS - 1)
long_secrets = st.text(TOKEN_CHARS, min_size=MIN_MASKED_ANYWHERE_CHARS, max_size=40)
prose = st.text(
    st.characters(exclude_categories=["Cs"]) | st.sampled_from(" .:=\"'/@\n"), max_size=30
)


def _as_token(secret: str, text: str) -> bool:
    """Whether ``secret`` stands in ``text`` with no letter, digit, ``_`` or ``-`` beside it."""
    pattern = rf"(?<![\w-]){re.escape(secret)}(?![\w-])"
    return re.search(pattern, text) is not None


@given(secret=long_secrets, parts=st.lists(prose, min_size=1, max_size=5))
def test_a_long_secret_is_masked_wherever_it_stands(secret: str, parts: list[str]) -> None:
    text = secret.join(parts) + secret
    masked = mask_secrets(text, [secret])
    assert secret not in masked
    assert masked.count(MASK) >= text.count(secret)


@given(secret=short_secrets, parts=st.lists(prose, min_size=2, max_size=5))
def test_a_short_secret_is_masked_where_it_stands_alone(secret: str, parts: list[str]) -> None:
    text = f" {secret} ".join(parts)
    masked = mask_secrets(text, [secret])
    assert not _as_token(secret, masked)
    assert masked.count(MASK) >= len(parts) - 1


@given(secret=short_secrets, words=st.lists(st.text(TOKEN_CHARS, min_size=1), max_size=6))
def test_a_short_secret_inside_words_leaves_them_alone(secret: str, words: list[str]) -> None:
    # Each word holds the secret with a token character on at least one side.
    glued = [
        f"{word}{secret}" if index % 2 else f"{secret}{word}" for index, word in enumerate(words)
    ]
    text = " ".join(glued)
    assert mask_secrets(text, [secret]) == text


@given(text=prose, secret=short_secrets | long_secrets)
def test_text_without_the_secret_is_unchanged(text: str, secret: str) -> None:
    if secret not in text:
        assert mask_secrets(text, [secret]) == text


def test_one_character_key_examples() -> None:
    assert mask_secrets("lookup failed for key k", ["k"]) == "lookup failed for key ***"
    assert mask_secrets('{"api_key": "k"}; key=k, Bearer k.', ["k"]) == (
        '{"api_key": "***"}; key=***, Bearer ***.'
    )
    assert mask_secrets("the knock-knock joke", ["k"]) == "the knock-knock joke"
    assert mask_secrets("EMPTY is not a valid key: EMPTYING", ["EMPTY"]) == (
        "*** is not a valid key: EMPTYING"
    )
    long = "sk-abcdef0123456789"
    assert mask_secrets(f"x{long}y and {long}", [long, "k"]) == "x***y and ***"
    assert mask_secrets("", ["k"]) == ""
    assert mask_secrets("no secrets", [""]) == "no secrets"


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_a_one_character_key_leaves_the_words_of_an_error_alone(
    kind: str, llm_server: LlmServer
) -> None:
    message = "Key lookup failed: the key k is unknown; check your keys at https://example.com"
    llm_server.reply_json(error_body(kind, message), status=401)
    classes = {"openai": OpenAIProvider, "responses": OpenAIResponsesProvider}
    cls = classes.get(kind, AnthropicProvider)
    url = llm_server.url if kind == "anthropic" else llm_server.openai_url
    async with cls("m", base_url=url, api_key="k") as provider:
        with pytest.raises(AuthenticationError) as info:
            await provider.complete(REQUEST)
    text = str(info.value)
    assert "Key lookup failed: the key *** is unknown; check your keys at https://example.com" in (
        text
    )
    assert "loo***up" not in text and " k " not in text
    assert info.value.body is not None and '"k"' not in info.value.body
