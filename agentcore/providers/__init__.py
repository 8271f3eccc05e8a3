"""LLM providers over HTTP and their selection by name.

:class:`OpenAIProvider` speaks OpenAI's Chat Completions API (and so vLLM,
LM Studio...), :class:`OllamaProvider` the same API on an Ollama server,
:class:`AnthropicProvider` Anthropic's Messages API.
:func:`get_provider` builds either, or one a plugin registers, from a name
such as ``"openai:gpt-4o-mini"``.
"""

from agentcore.providers.anthropic import AnthropicProvider
from agentcore.providers.ollama import OllamaProvider, ollama_base_url
from agentcore.providers.openai import OpenAIProvider
from agentcore.providers.registry import available_providers, get_provider

__all__ = [
    "AnthropicProvider",
    "OllamaProvider",
    "OpenAIProvider",
    "available_providers",
    "get_provider",
    "ollama_base_url",
]
