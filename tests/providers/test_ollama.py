"""``ollama:MODEL``: Ollama's OpenAI-compatible API, found through OLLAMA_HOST."""

from __future__ import annotations

from urllib.parse import urlsplit

import pluggy
import pytest

from agentcore.errors import ConfigError, ModelNotFoundError
from agentcore.llm import LlmRequest, ResponseComplete
from agentcore.messages import Message
from agentcore.plugins import create_plugin_manager
from agentcore.providers import OllamaProvider, OpenAIProvider, get_provider
from agentcore.providers.ollama import ollama_base_url

from .loopback import LlmServer
from .payloads import openai_completion, openai_error, openai_stream

REQUEST = LlmRequest([Message.user("Hi")])


@pytest.fixture
def pm(monkeypatch: pytest.MonkeyPatch) -> pluggy.PluginManager:
    monkeypatch.setenv("AGENTCORE_DISABLED_PLUGINS", "autosummary")
    return create_plugin_manager()


async def test_ollama_prefix_talks_to_ollama_host(
    llm_server: LlmServer, pm: pluggy.PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loopback server stands in for Ollama; OLLAMA_HOST is host:port, as Ollama documents.
    netloc = urlsplit(llm_server.url).netloc
    monkeypatch.setenv("OLLAMA_HOST", netloc)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-reach-ollama")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    llm_server.reply_json(openai_completion("Hello from llama", model="llama3.1:8b"))
    llm_server.reply_sse(openai_stream(["str", "eamed"], model="llama3.1:8b"))

    provider = get_provider("ollama:llama3.1:8b", plugin_manager=pm)
    async with provider:  # type: ignore[attr-defined]
        assert isinstance(provider, OllamaProvider)
        assert isinstance(provider, OpenAIProvider)
        assert provider.base_url == f"http://{netloc}/v1"
        assert (await provider.complete(REQUEST)).text == "Hello from llama"
        events = [event async for event in provider.stream(REQUEST)]
    assert isinstance(events[-1], ResponseComplete)
    assert events[-1].response.text == "streamed"
    first, second = llm_server.requests
    assert first.path == second.path == "/v1/chat/completions"
    assert first.json["model"] == "llama3.1:8b"
    assert "authorization" not in first.headers  # no key needed, and OpenAI's is not sent
    assert repr(provider).startswith("OllamaProvider(model='llama3.1:8b'")


async def test_ollama_api_key_and_base_url_options(
    llm_server: LlmServer, pm: pluggy.PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # overridden by base_url=
    monkeypatch.setenv("OLLAMA_API_KEY", "ollama-proxy-token")
    llm_server.reply_json(
        openai_error('model "nope" not found, try pulling it first', "x"), status=404
    )
    provider = get_provider("ollama:nope", plugin_manager=pm, base_url=llm_server.openai_url)
    async with provider:  # type: ignore[attr-defined]
        with pytest.raises(ModelNotFoundError, match=r"Ollama API at .*ollama pull"):
            await provider.complete(REQUEST)
    assert llm_server.requests[0].headers["authorization"] == "Bearer ollama-proxy-token"


@pytest.mark.parametrize(
    ("host", "url"),
    [
        (None, "http://127.0.0.1:11434/v1"),
        ("", "http://127.0.0.1:11434/v1"),
        ("0.0.0.0", "http://127.0.0.1:11434/v1"),
        ("0.0.0.0:11500", "http://127.0.0.1:11500/v1"),
        ("gpu-box", "http://gpu-box:11434/v1"),
        ("gpu-box:8000", "http://gpu-box:8000/v1"),
        ("http://gpu-box", "http://gpu-box:80/v1"),
        ("https://ollama.example.com/base/", "https://ollama.example.com:443/base/v1"),
        ("::1", "http://[::1]:11434/v1"),
        ("[::1]:5000", "http://[::1]:5000/v1"),
    ],
)
def test_ollama_host_is_read_as_ollama_reads_it(host: str | None, url: str) -> None:
    assert ollama_base_url(host) == url


def test_a_bad_ollama_host_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "ftp://gpu-box")
    with pytest.raises(ConfigError, match="OLLAMA_HOST"):
        OllamaProvider("llama3.1")
