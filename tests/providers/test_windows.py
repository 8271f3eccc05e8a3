"""Context windows: the table of hosted models and what local servers report."""

from __future__ import annotations

import pytest

from agentcore.errors import ConfigError
from agentcore.providers import AnthropicProvider, OllamaProvider, OpenAIProvider, get_provider
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
        ("gpt-5", 400_000),
        ("gpt-5-2025-08-07", 400_000),
        ("gpt-5-mini", 400_000),
        ("gpt-5-nano-2025-08-07", 400_000),
        ("gpt-5-chat-latest", 128_000),
        ("gpt-5.1", 400_000),
        ("gpt-5.1-chat-latest", 128_000),
        ("gpt-5.4", None),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-haiku-4-5-20251001", 200_000),
        ("claude-opus-4-5-20251101", 200_000),
        ("claude-opus-4-8", 1_000_000),
        ("claude-opus-5", 1_000_000),
        ("gemini-2.5-pro", 1_048_576),
        ("gemini-2.5-flash", 1_048_576),
        ("gemini-2.5-flash-lite", 1_048_576),
        ("models/gemini-2.0-flash-001", 1_048_576),
        ("gemini-2.0-flash-lite", 1_048_576),
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


async def test_a_user_entry_comes_before_the_table_and_the_server(llm_server: LlmServer) -> None:
    windows = {"My-Model": 8192, "gpt-4o": 64_000}
    async with OpenAIProvider(
        "my-model-2026-01", base_url=llm_server.openai_url, context_windows=windows
    ) as provider:
        assert provider.context_windows == {"my-model": 8192, "gpt-4o": 64_000}
        assert await discover_context_window(provider, None) == 8192
        assert await discover_context_window(provider, "gpt-4o-mini") == 128_000
        assert await discover_context_window(provider, "gpt-4o") == 64_000
    assert llm_server.requests == []


async def test_user_entries_reach_every_provider_and_get_provider(llm_server: LlmServer) -> None:
    async with AnthropicProvider(
        "claude-next", base_url=llm_server.url, api_key="k", context_windows={"claude-next": 500}
    ) as anthropic:
        assert await discover_context_window(anthropic, None) == 500
    async with OllamaProvider(
        "llama3.2:1b", base_url=llm_server.openai_url, context_windows={"llama3.2:1b": 2048}
    ) as ollama:
        assert await discover_context_window(ollama, None) == 2048
    provider = get_provider(
        "openai:local-gguf", base_url=llm_server.openai_url, context_windows={"local-gguf": 2048}
    )
    assert isinstance(provider, OpenAIProvider)
    try:
        assert await discover_context_window(provider, None) == 2048
    finally:
        await provider.aclose()
    assert llm_server.requests == []


@pytest.mark.parametrize(
    ("windows", "problem"),
    [
        ([("m", 1)], "must map model names"),
        ({"": 100}, "model name ''"),
        ({"m": 0}, r"context_windows\['m'\] must be a token count > 0, got 0"),
        ({"m": "8k"}, "got '8k'"),
        ({"m": True}, "got True"),
    ],
)
def test_bad_user_entries_are_refused_at_build(windows: object, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        OpenAIProvider("m", context_windows=windows)  # type: ignore[arg-type]


def test_an_unknown_option_names_itself() -> None:
    with pytest.raises(ConfigError, match=r"does not take the options \['context_window'\]"):
        OpenAIProvider("m", context_window={"m": 1})  # type: ignore[call-arg]


async def test_ollama_num_ctx_parameter_wins_over_the_trained_length(
    llm_server: LlmServer,
) -> None:
    # Ollama's /api/show: "parameters" is the Modelfile's PARAMETER lines as text.
    llm_server.reply_json({}, status=404)
    llm_server.reply_json({}, status=404)
    llm_server.reply_json(
        {
            "parameters": 'num_ctx                        4096\nstop    "<|eot_id|>"',
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
        }
    )
    assert await _discover(llm_server, "llama3.2") == 4096


async def test_vllm_with_one_model_reports_it_under_any_name(llm_server: LlmServer) -> None:
    # vLLM's GET /v1/models: {"object": "list", "data": [{"id", "object": "model", "root",
    # "max_model_len", ...}]}; a served-model-name alias may differ from the request's name.
    llm_server.reply_json({"error": "not found"}, status=404)
    llm_server.reply_json(
        {
            "object": "list",
            "data": [{"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 16384}],
        }
    )
    assert await _discover(llm_server, "qwen") == 16384


async def test_llama_cpp_python_reports_no_window_and_a_user_entry_gives_it(
    llm_server: LlmServer,
) -> None:
    # llama-cpp-python's server: /props is 404, /v1/models lists no length, no /api/show.
    llm_server.reply_json({"detail": "Not Found"}, status=404)
    llm_server.reply_json(
        {
            "object": "list",
            "data": [{"id": "smollm2", "object": "model", "owned_by": "me", "permissions": []}],
        }
    )
    llm_server.reply_json({"detail": "Not Found"}, status=404)
    assert await _discover(llm_server, "smollm2") is None
    async with OpenAIProvider(
        "smollm2", base_url=llm_server.openai_url, context_windows={"smollm2": 2048}
    ) as provider:
        assert await discover_context_window(provider, None) == 2048


def test_the_known_windows_agree_with_genai_prices_where_it_has_the_same_model() -> None:
    """A cross-check of the hand-kept table against genai-prices' maintained one.

    Where genai-prices has a model under the same id and knows its window, the two agree
    within 5% (its figures are often rounded: 1,000,000 for OpenAI's 1,047,576).
    """
    genai = pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    from agentcore.providers.windows import KNOWN_CONTEXT_WINDOWS

    compared, disagreeing = 0, []
    for model, window in KNOWN_CONTEXT_WINDOWS.items():
        try:
            found = genai.calc_price(genai.Usage(input_tokens=1), model_ref=model).model
        except LookupError:
            continue
        if found.id != model or found.context_window is None:
            continue  # matched another model's entry by prefix, or no window known there
        compared += 1
        if abs(window - found.context_window) > 0.05 * found.context_window:
            disagreeing.append((model, window, found.context_window))
    assert compared >= 20
    assert disagreeing == []
