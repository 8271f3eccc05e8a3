"""The built-in plugin that registers the ``openai``, ``anthropic`` and ``ollama`` providers.

The provider classes are the factories: ``get_provider("openai:gpt-4o-mini",
api_key=...)`` calls ``OpenAIProvider("gpt-4o-mini", api_key=...)``.
"""

from __future__ import annotations

from collections.abc import Callable

from agentcore.hookspecs import ProviderFactory, hookimpl
from agentcore.providers.anthropic import AnthropicProvider
from agentcore.providers.ollama import OllamaProvider
from agentcore.providers.openai import OpenAIProvider


@hookimpl
def register_providers(register: Callable[[str, ProviderFactory], None]) -> None:
    """Register ``openai:<model>``, ``anthropic:<model>`` and ``ollama:<model>``."""
    register("openai", OpenAIProvider)
    register("anthropic", AnthropicProvider)
    register("ollama", OllamaProvider)
