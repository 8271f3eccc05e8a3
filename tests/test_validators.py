"""Bad settings are refused with a ConfigError that names the field and shows the value.

One kit (``agentcore.validators``) checks the agent, the cycle, the request,
the builder, the providers, the prices and the tool registry, so the same
rule gives the same words wherever a value is set.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from attrs import field, frozen

from agentcore import Agent, AgentBuilder
from agentcore.cycle import LlmCycle
from agentcore.errors import ConfigError
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.pricing import Price
from agentcore.providers import AnthropicProvider, OpenAIProvider
from agentcore.testing import MockProvider
from agentcore.tools import ToolRegistry
from agentcore.validators import (
    BOOL,
    NON_EMPTY_STR,
    POSITIVE_INT,
    RATIO,
    Rule,
    is_int,
    is_number,
    one_of,
)


def _agent(**settings: Any) -> object:
    return Agent("helper", **settings)


def _cycle(**settings: Any) -> object:
    return LlmCycle(MockProvider(["hi"]), **settings)


def _request(**settings: Any) -> object:
    return LlmRequest([Message.user("hi")], **settings)


MAKERS = {"Agent": _agent, "LlmCycle": _cycle, "LlmRequest": _request}


@pytest.mark.parametrize("owner", sorted(MAKERS))
@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("max_tokens", 0, "an int >= 1 or None"),
        ("max_tokens", True, "an int >= 1 or None"),
        ("temperature", 2.5, "a number in [0, 2] or None"),
        ("temperature", float("nan"), "a number in [0, 2] or None"),
        (
            "tool_choice",
            "any tool",
            "'auto', 'none', 'required' or a tool name (1-64 letters, digits, '_' or '-') or None",
        ),
    ],
)
def test_the_sampling_settings_share_one_rule(
    owner: str, setting: str, value: Any, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        MAKERS[owner](**{setting: value})
    assert str(caught.value) == f"{owner}.{setting} must be {expected}, got {value!r}"


@pytest.mark.parametrize("owner", sorted(MAKERS))
def test_stop_sequences_are_refused_the_same_way_everywhere(owner: str) -> None:
    with pytest.raises(ConfigError, match="stop sequences must be non-empty str, got ''"):
        MAKERS[owner](stop=["ok", ""])


def test_an_agent_names_its_field_and_the_value() -> None:
    with pytest.raises(ConfigError, match=r"^Agent\.name must be a non-empty str, got '  '$"):
        Agent("  ")
    with pytest.raises(ConfigError, match=r"^Agent\.model must be a non-empty str or None"):
        Agent("helper", model="")
    with pytest.raises(ConfigError, match=r"Agent\.token_counter must be a TokenCounter"):
        Agent("helper", token_counter="tiktoken")  # type: ignore[arg-type]


def test_a_cycle_refuses_a_bool_for_a_count() -> None:
    with pytest.raises(ConfigError, match=r"^LlmCycle\.max_tool_rounds must be an int >= 1"):
        LlmCycle(MockProvider(["hi"]), max_tool_rounds=True)
    with pytest.raises(ConfigError, match=r"^LlmCycle\.purpose must be a non-empty str"):
        LlmCycle(MockProvider(["hi"]), purpose="")


def test_the_builder_checks_with_the_same_words() -> None:
    builder = AgentBuilder()
    with pytest.raises(ConfigError, match=r"^max_tool_rounds must be an int >= 1, got 0$"):
        builder.max_tool_rounds(0)
    with pytest.raises(ConfigError, match=r"^session_lease must be True or False, got 1$"):
        builder.session_lease(1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^turn_timeout must be a positive finite number"):
        builder.turn_timeout(float("inf"))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cache": "always"}, "OpenAIProvider: cache must be one of 'auto', 'on' or 'off'"),
        ({"cache_prompt": 1}, "OpenAIProvider: cache_prompt must be True or False, got 1"),
        ({"prompt_cache_key": ""}, "OpenAIProvider: prompt_cache_key must be a non-empty"),
        ({"idle_timeout": 0}, "OpenAIProvider: idle_timeout must be a number of seconds > 0"),
        ({"timeout": True}, "OpenAIProvider: timeout must be a number of seconds > 0 or an"),
        ({"max_reply_bytes": 0.5}, "OpenAIProvider: max_reply_bytes must be an int > 0"),
        ({"max_retries": -1}, "OpenAIProvider: RetryPolicy.max_retries must be an int >= 0"),
        (
            {"context_windows": {"m": True}},
            "OpenAIProvider: context_windows['m'] must be a token count > 0, got True",
        ),
    ],
)
def test_provider_options_are_refused_naming_the_option(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", **options)


def test_anthropic_options_are_refused_naming_the_option() -> None:
    with pytest.raises(ConfigError, match=r"default_max_tokens must be an int >= 1, got True"):
        AnthropicProvider("m", api_key="k", default_max_tokens=True)
    with pytest.raises(ConfigError, match=r"cache_ttl must be one of '5m' or '1h', got '1d'"):
        AnthropicProvider("m", api_key="k", cache_ttl="1d")  # type: ignore[arg-type]


def test_prices_and_tool_timeouts_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^Price\.output must be a finite number of dollars"):
        Price(input=1.0, output=-0.5)
    with pytest.raises(ConfigError, match=r"timeout must be a positive, finite number"):
        ToolRegistry(timeout=0)


def test_a_plugin_checks_its_own_config_with_the_kit() -> None:
    @frozen
    class RecallConfig:
        share: float = field(default=0.5, validator=RATIO)
        limit: int | None = field(default=None, validator=POSITIVE_INT.or_none())
        mode: str = field(default="fast", validator=one_of("fast", "slow"))
        verbose: bool = field(default=False, validator=BOOL)
        _label: str = field(default="recall", alias="label", validator=NON_EMPTY_STR)

    assert RecallConfig(share=1, limit=3).limit == 3
    refused: dict[str, tuple[Any, str]] = {
        "share": (0, "RecallConfig.share must be a number in (0, 1], got 0"),
        "limit": (0, "RecallConfig.limit must be an int >= 1 or None, got 0"),
        "mode": ("quick", "RecallConfig.mode must be one of 'fast' or 'slow', got 'quick'"),
        "verbose": (1, "RecallConfig.verbose must be True or False, got 1"),
        "label": ("", "RecallConfig.label must be a non-empty str, got ''"),
    }
    for name, (value, message) in refused.items():
        with pytest.raises(ConfigError) as caught:
            RecallConfig(**{name: value})
        assert str(caught.value) == message
        assert isinstance(caught.value, ValueError)  # ConfigError is a ValueError too


def test_a_rule_checks_outside_attrs_and_can_be_reworded() -> None:
    seconds = Rule("a number of seconds > 0", lambda value: is_number(value) and value > 0)
    assert seconds.check("wait", 1.5) == 1.5
    with pytest.raises(ConfigError, match=r"^wait must be a number of seconds > 0 or None"):
        seconds.or_none().check("wait", -1)
    even = POSITIVE_INT.where(lambda value: value % 2 == 0, "an even int >= 1")
    assert even.accepts(4) and not even.accepts(3) and not even.accepts(True)
    assert [is_int(True), is_int(3), is_number(float("inf")), is_number(2.0)] == [
        False,
        True,
        False,
        True,
    ]
