"""LLM providers over HTTP and their selection by name.

:class:`OpenAIProvider` speaks OpenAI's Chat Completions API (and so vLLM,
LM Studio...), :class:`OllamaProvider` the same API on an Ollama server,
:class:`OpenAIResponsesProvider` OpenAI's Responses API,
:class:`AnthropicProvider` Anthropic's Messages API.
:func:`get_provider` builds either, or one a plugin registers, from a name
such as ``"openai:gpt-4o-mini"``. :class:`HttpOptions` lists the keyword
options every one of them takes.
"""

from agentcore.providers._options import HttpOptions
from agentcore.providers.anthropic import AnthropicProvider
from agentcore.providers.ollama import OllamaProvider, ollama_base_url
from agentcore.providers.openai import OpenAIProvider
from agentcore.providers.openai_responses import OpenAIResponsesProvider
from agentcore.providers.registry import (
    available_providers,
    check_provider_name,
    get_provider,
)

__all__ = [
    "AnthropicProvider",
    "HttpOptions",
    "OllamaProvider",
    "OpenAIProvider",
    "OpenAIResponsesProvider",
    "available_providers",
    "check_provider_name",
    "get_provider",
    "ollama_base_url",
]
