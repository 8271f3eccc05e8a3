"""SummaryConfig refuses a bad value with a ConfigError naming the field, from any entry point."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import AgentBuilder, ConfigError
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig

REFUSED: list[tuple[str, Any, str]] = [
    ("trigger_token_ratio", True, "a number in (0, 1]"),
    ("trigger_token_ratio", float("inf"), "a number in (0, 1]"),
    ("max_context_tokens", 0, "an int >= 1 or None"),
    ("debounce_turns", -1, "an int >= 0"),
    ("keep_recent_messages", True, "an int >= 0 or None"),
    ("mode", "later", "one of 'inline' or 'background'"),
    ("summary_role", "admin", "one of 'user', 'system' or None"),
    ("window_guard", 1, "True or False"),
    ("gate", 1, "True or False"),
    ("gate", "no", "True or False"),
    ("summary_model", " ", "a non-empty str or None"),
    ("timeout", 0, "'auto', a positive finite number of seconds or None"),
    (
        "summary_provider",
        "gpt-4o",
        "an LlmProvider, a 'prefix:model' name such as 'openai:gpt-4o-mini', or None",
    ),
]


@pytest.mark.parametrize(("name", "value", "expected"), REFUSED)
def test_a_bad_value_names_the_field_and_the_value(name: str, value: Any, expected: str) -> None:
    message = f"SummaryConfig.{name} must be {expected}, got {value!r}"
    with pytest.raises(ConfigError) as direct:
        SummaryConfig(**{name: value})
    assert str(direct.value) == message
    with pytest.raises(ConfigError) as from_dict:
        SummaryConfig.coerce({name: value})
    assert str(from_dict.value) == message


def test_the_builder_reaches_the_same_check() -> None:
    builder = AgentBuilder().provider(MockProvider(["hi"])).summary_config({"debounce_turns": -1})
    with pytest.raises(ConfigError, match=r"SummaryConfig\.debounce_turns must be an int >= 0"):
        builder.build()


def test_a_key_of_the_plugin_is_refused_as_memory_key() -> None:
    with pytest.raises(ConfigError, match=r"^SummaryConfig\.memory_key 'autosummary/x' is a key"):
        SummaryConfig(memory_key="autosummary/x")
    with pytest.raises(ConfigError, match=r"^SummaryConfig\.memory_key must be a non-empty str"):
        SummaryConfig(memory_key="")


def test_a_segments_ratio_out_of_range_is_refused() -> None:
    for bad in (0, 1.5, -0.2, "0.3"):
        with pytest.raises(ConfigError, match="segments_ratio"):
            SummaryConfig(segments_ratio=bad)  # type: ignore[arg-type]
