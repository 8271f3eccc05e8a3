"""Fixtures for provider tests: a scripted loopback server and providers pointed at it."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator

import pytest

from agentcore.providers import AnthropicProvider, OpenAIProvider, _http

from .loopback import LlmServer

ENV_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_HOST",
    "OLLAMA_API_KEY",
)

OPENAI_KEY = "sk-test-openai-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def _clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def llm_server() -> Iterator[LlmServer]:
    """A scripted HTTP server on 127.0.0.1 (random port) that records every request."""
    server = LlmServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def openai_provider(llm_server: LlmServer) -> AsyncIterator[OpenAIProvider]:
    """An OpenAIProvider on ``llm_server``, with fast backoff."""
    async with OpenAIProvider(
        "gpt-4o-mini",
        base_url=llm_server.openai_url,
        api_key=OPENAI_KEY,
        backoff_base=0.01,
        backoff_max=0.05,
    ) as provider:
        yield provider


@pytest.fixture
async def anthropic_provider(llm_server: LlmServer) -> AsyncIterator[AnthropicProvider]:
    """An AnthropicProvider on ``llm_server``, with fast backoff and no cache breakpoints.

    The wire-format tests compare whole bodies; ``test_prompt_cache.py``
    checks the breakpoints that ``cache="auto"`` (the default) adds.
    """
    async with AnthropicProvider(
        "claude-sonnet-4-5",
        base_url=llm_server.url,
        api_key=ANTHROPIC_KEY,
        backoff_base=0.01,
        backoff_max=0.05,
        cache="off",
    ) as provider:
        yield provider


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The backoff delays the providers ask for, recorded instead of slept."""
    delays: list[float] = []

    async def record(delay: float) -> None:
        delays.append(delay)
        await asyncio.sleep(0)

    monkeypatch.setattr(_http, "_sleep", record)
    return delays


@pytest.fixture
def unused_port() -> int:
    """A port on 127.0.0.1 where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
