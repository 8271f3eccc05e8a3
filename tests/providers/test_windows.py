"""Context windows: the table of hosted models and what local servers report."""

from __future__ import annotations

import pytest

from agentcore.providers import OpenAIProvider
from agentcore.providers.windows import discover_context_window, known_context_window

from .loopback import LlmServer


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("gpt-4o", 128_000),
        ("gpt-4o-2024-08-06", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("gpt-4", 8_192),
        ("o3-mini", 200_000),
        ("o1-mini", 128_000),
        ("claude-3-5-sonnet-20241022", 200_000),
        ("claude-sonnet-4-20250514", 200_000),
        ("anthropic/claude-opus-4-1", 200_000),
        ("llama3.2", None),
        ("gpt-4x", None),
    ],
)
def test_known_windows(model: str, window: int | None) -> None:
    assert known_context_window(model) == window


async def _discover(server: LlmServer, model: str) -> int | None:
    async with OpenAIProvider(model, base_url=server.openai_url, api_key="k") as provider:
        return await discover_context_window(provider, None)


async def test_llama_cpp_reports_n_ctx(llm_server: LlmServer) -> None:
    llm_server.reply_json({"default_generation_settings": {"n_ctx": 4096}})
    assert await _discover(llm_server, "local") == 4096
    assert [r.path for r in llm_server.requests] == ["/props"]
    assert llm_server.requests[0].headers["authorization"] == "Bearer k"


async def test_vllm_reports_max_model_len(llm_server: LlmServer) -> None:
    llm_server.reply_json({"error": "not found"}, status=404)
    llm_server.reply_json(
        {"data": [{"id": "other", "max_model_len": 1}, {"id": "qwen", "max_model_len": 32768}]}
    )
    assert await _discover(llm_server, "qwen") == 32768
    assert [r.path for r in llm_server.requests] == ["/props", "/v1/models"]


async def test_ollama_reports_context_length(llm_server: LlmServer) -> None:
    llm_server.reply_json({}, status=404)
    llm_server.reply_json({}, status=404)
    llm_server.reply_json({"model_info": {"llama.context_length": 131072}})
    assert await _discover(llm_server, "llama3.2") == 131072
    assert llm_server.requests[-1].path == "/api/show"
    assert llm_server.requests[-1].json == {"model": "llama3.2"}


async def test_a_server_that_reports_nothing_gives_none(llm_server: LlmServer) -> None:
    llm_server.reply_json({}, status=404)
    llm_server.reply_raw(b"not json")
    llm_server.reply_json({"details": {}})
    assert await _discover(llm_server, "mystery") is None


async def test_a_known_model_asks_no_server(llm_server: LlmServer) -> None:
    assert await _discover(llm_server, "gpt-4o") == 128_000
    assert llm_server.requests == []
