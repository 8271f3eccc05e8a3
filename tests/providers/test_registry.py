from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pluggy
import pytest

import agentcore.hookspecs
import agentcore.providers.builtin
from agentcore.errors import ConfigError
from agentcore.hookspecs import ProviderFactory, hookimpl
from agentcore.providers import (
    AnthropicProvider,
    OpenAIProvider,
    available_providers,
    get_provider,
)
from agentcore.testing import MockProvider


@pytest.fixture
def pm() -> Iterator[pluggy.PluginManager]:
    manager = pluggy.PluginManager("agentcore")
    manager.add_hookspecs(agentcore.hookspecs)
    manager.register(agentcore.providers.builtin)
    yield manager


class EchoPlugin:
    """A third-party plugin registering the prefix 'echo'."""

    @hookimpl
    def register_providers(self, register: Callable[[str, ProviderFactory], None]) -> None:
        register("echo", lambda model: MockProvider(["echo"], model=model))


def test_builtin_prefixes(pm: pluggy.PluginManager) -> None:
    assert sorted(available_providers(pm)) == ["anthropic", "ollama", "openai", "openai-responses"]


def test_openai_by_name(pm: pluggy.PluginManager) -> None:
    provider = get_provider("openai:gpt-4o-mini", plugin_manager=pm)
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "gpt-4o-mini"


def test_anthropic_by_name_with_options(pm: pluggy.PluginManager) -> None:
    provider = get_provider(
        "anthropic:claude-sonnet-4-5",
        plugin_manager=pm,
        api_key="k",
        base_url="http://127.0.0.1:9/",
        max_retries=5,
    )
    assert isinstance(provider, AnthropicProvider)
    assert provider.model == "claude-sonnet-4-5"
    assert provider.base_url == "http://127.0.0.1:9"
    assert provider.max_retries == 5


def test_model_names_may_hold_colons(pm: pluggy.PluginManager) -> None:
    provider = get_provider("openai:llama3.1:8b", plugin_manager=pm)
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "llama3.1:8b"


def test_prefix_is_case_insensitive(pm: pluggy.PluginManager) -> None:
    assert isinstance(get_provider("OpenAI:gpt-4o", plugin_manager=pm), OpenAIProvider)


@pytest.mark.parametrize("name", ["gpt-4o-mini", "", ":gpt-4o", "openai:", "openai:  "])
def test_malformed_names(pm: pluggy.PluginManager, name: str) -> None:
    with pytest.raises(ConfigError, match="prefix:model"):
        get_provider(name, plugin_manager=pm)


def test_unknown_prefix_lists_the_known_ones(pm: pluggy.PluginManager) -> None:
    with pytest.raises(
        ConfigError, match=r"'mistral'.*known prefixes: anthropic, ollama, openai, openai-responses"
    ):
        get_provider("mistral:large", plugin_manager=pm)


def test_bad_options_are_a_config_error(pm: pluggy.PluginManager) -> None:
    with pytest.raises(ConfigError, match="temprature"):
        get_provider("openai:gpt-4o", plugin_manager=pm, temprature=0)
    with pytest.raises(ConfigError, match="timeout"):
        get_provider("openai:gpt-4o", plugin_manager=pm, timeout=-1)


async def test_hook_register_providers(pm: pluggy.PluginManager) -> None:
    plugin = EchoPlugin()
    pm.register(plugin)
    try:
        provider = get_provider("echo:any-model", plugin_manager=pm)
        assert isinstance(provider, MockProvider)
        assert provider.model == "any-model"
        assert sorted(available_providers(pm)) == [
            "anthropic",
            "echo",
            "ollama",
            "openai",
            "openai-responses",
        ]
    finally:
        pm.unregister(plugin)
    with pytest.raises(ConfigError):
        get_provider("echo:any-model", plugin_manager=pm)


def test_factory_without_options_rejects_them(pm: pluggy.PluginManager) -> None:
    plugin = EchoPlugin()
    pm.register(plugin)
    try:
        with pytest.raises(ConfigError, match="does not take the options"):
            get_provider("echo:m", plugin_manager=pm, api_key="x")
    finally:
        pm.unregister(plugin)


def test_duplicate_prefix_names_both_plugins(pm: pluggy.PluginManager) -> None:
    class Shadow:
        @hookimpl
        def register_providers(self, register: Callable[[str, ProviderFactory], None]) -> None:
            register("openai", lambda model: MockProvider(model=model))

    pm.register(Shadow(), name="shadow")
    with pytest.raises(ConfigError, match=r"'openai' is registered by 'shadow' and"):
        get_provider("openai:gpt-4o", plugin_manager=pm)
    # Other prefixes still work.
    assert isinstance(
        get_provider("anthropic:c", plugin_manager=pm, api_key="k"), AnthropicProvider
    )


@pytest.mark.parametrize(
    ("prefix", "factory"),
    [("", lambda model: None), ("a:b", lambda model: None), ("ok", "not callable")],
)
def test_bad_registrations(pm: pluggy.PluginManager, prefix: str, factory: Any) -> None:
    class Bad:
        @hookimpl
        def register_providers(self, register: Callable[[str, Any], None]) -> None:
            register(prefix, factory)

    pm.register(Bad(), name="bad")
    with pytest.raises(ConfigError, match="'bad'"):
        get_provider("openai:x", plugin_manager=pm)


def test_factory_must_return_a_provider(pm: pluggy.PluginManager) -> None:
    class Wrong:
        @hookimpl
        def register_providers(self, register: Callable[[str, Any], None]) -> None:
            register("wrong", lambda model: object())

    pm.register(Wrong())
    with pytest.raises(ConfigError, match="does not implement LlmProvider"):
        get_provider("wrong:x", plugin_manager=pm)


def test_default_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentcore.plugins

    monkeypatch.setenv("AGENTCORE_DISABLE_PLUGIN_AUTOLOAD", "1")
    if "agentcore.providers.builtin" not in agentcore.plugins.BUILTIN_PLUGIN_MODULES:
        monkeypatch.setattr(
            agentcore.plugins,
            "BUILTIN_PLUGIN_MODULES",
            (*agentcore.plugins.BUILTIN_PLUGIN_MODULES, "agentcore.providers.builtin"),
        )
    assert isinstance(get_provider("openai:gpt-4o-mini"), OpenAIProvider)
