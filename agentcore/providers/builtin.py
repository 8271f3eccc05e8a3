"""The built-in plugin that registers agentcore's own providers.

Their prefixes: ``openai`` (Chat Completions), ``openai-responses`` (the
Responses API), ``anthropic`` and ``ollama``. The provider classes are the
factories: ``get_provider("openai:gpt-4o-mini", api_key=...)`` calls
``OpenAIProvider("gpt-4o-mini", api_key=...)``.
"""

from __future__ import annotations

from collections.abc import Callable

from agentcore.hookspecs import ProviderFactory, hookimpl
from agentcore.providers.anthropic import AnthropicProvider
from agentcore.providers.ollama import OllamaProvider
from agentcore.providers.openai import OpenAIProvider
from agentcore.providers.openai_responses import OpenAIResponsesProvider


@hookimpl
def register_providers(register: Callable[[str, ProviderFactory], None]) -> None:
    """Register ``openai:``, ``openai-responses:``, ``anthropic:`` and ``ollama:<model>``."""
    register("openai", OpenAIProvider)
    register("openai-responses", OpenAIResponsesProvider)
    register("anthropic", AnthropicProvider)
    register("ollama", OllamaProvider)
