"""Structured output and tool choice through sessions: what reaches the provider, what parses."""

from __future__ import annotations

import dataclasses
from typing import Any, TypedDict

import attrs
import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    Message,
    OutputError,
    OutputSpec,
    ToolRegistry,
    ToolUseBlock,
    parse_output,
)
from agentcore.llm import LlmResponse
from agentcore.testing import MockProvider


@attrs.frozen
class Verdict:
    guilty: bool
    reasons: list[str] = attrs.field(factory=list)


@dataclasses.dataclass
class City:
    name: str
    population: int


class Pair(TypedDict):
    left: str
    right: str


def session_for(
    provider: MockProvider, builder: AgentBuilder, agent: Agent | None = None
) -> AgentSession:
    bundle = builder.provider(provider).load_plugins(False).build()
    return AgentSession(agent or Agent("judge", system_prompt="Judge."), "s", bundle)


async def test_builder_output_reaches_every_call_and_the_reply_parses() -> None:
    provider = MockProvider(['{"guilty": false, "reasons": ["alibi"]}'])
    session = session_for(provider, AgentBuilder().output(Verdict))
    reply = await session.submit_turn("The case?")
    (request,) = provider.calls
    assert request.output is not None and request.output.name == "Verdict"
    assert parse_output(reply, Verdict) == Verdict(False, ["alibi"])


async def test_an_agents_output_wins_over_the_builders() -> None:
    provider = MockProvider(['{"name": "Oslo", "population": 709000}'])
    agent = Agent("geo", output=City)
    session = session_for(provider, AgentBuilder().output(Verdict), agent)
    reply = await session.submit_turn("Biggest city in Norway?")
    assert provider.calls[0].output == OutputSpec.of(City)
    assert agent.output is not None
    assert agent.output.parse(reply) == City("Oslo", 709000)


async def test_typeddict_and_schema_dict_outputs() -> None:
    assert parse_output('{"left": "a", "right": "b"}', Pair) == {"left": "a", "right": "b"}
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert parse_output('{"n": 2}', schema) == {"n": 2}
    with pytest.raises(OutputError, match="missing required field 'n'"):
        parse_output("{}", schema)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"a":' * 5000 + "1" + "}" * 5000,
        '{"a":' * 129 + "1" + "}" * 129,
    ],
    ids=["arrays", "objects", "just-too-deep"],
)
async def test_a_reply_nested_too_deeply_is_an_output_error(text: str) -> None:
    schema = {"type": "object", "properties": {"a": {}}}
    session = session_for(MockProvider([text]), AgentBuilder().output(schema))
    reply = await session.submit_turn("Anything?")
    with pytest.raises(OutputError, match="nested too deeply: more than 128 levels"):
        parse_output(reply, schema)
    assert "a" in parse_output('{"a":' * 128 + "1" + "}" * 128, schema)


async def test_pydantic_model_output() -> None:
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed")

    class Score(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        value: int = pydantic.Field(ge=0, le=10)

    spec = OutputSpec.of(Score)
    assert spec.schema["properties"]["value"]["maximum"] == 10
    assert spec.parse('{"value": 7}') == Score(value=7)
    with pytest.raises(OutputError, match="value: Input should be less than or equal to 10"):
        spec.parse('{"value": 11}')


async def test_tool_choice_required_goes_on_the_first_call_only() -> None:
    registry = ToolRegistry()

    @registry.tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return "709000"

    provider = MockProvider(
        [
            LlmResponse(
                Message.assistant("", [ToolUseBlock("c1", "lookup", {"city": "Oslo"})]),
                stop_reason="tool_use",
            ),
            "709000 people.",
        ]
    )
    session = session_for(provider, AgentBuilder().tool_registry(registry).tool_choice("required"))
    assert (await session.submit_turn("How many live in Oslo?")).text == "709000 people."
    assert [call.tool_choice for call in provider.calls] == ["required", None]


async def test_tool_choice_none_stays_on_every_call_and_agents_win() -> None:
    provider = MockProvider(["no tools"])
    agent = Agent("a", tool_choice="none")
    session = session_for(provider, AgentBuilder().tool_choice("required"), agent)
    await session.submit_turn("hi")
    assert provider.calls[0].tool_choice == "none"


def test_a_builder_tool_choice_must_name_a_registered_tool() -> None:
    registry = ToolRegistry()
    registry.register(lambda: None, name="ping")
    builder = AgentBuilder().provider(MockProvider([])).tool_registry(registry).tool_choice("pong")
    with pytest.raises(ConfigError, match="tool_choice names the tool 'pong'; registered: ping"):
        builder.build()


@pytest.mark.parametrize("choice", ["", "has space", 3])
def test_bad_tool_choices_are_config_errors(choice: Any) -> None:
    with pytest.raises(
        ConfigError, match="tool_choice must be 'auto', 'none', 'required' or a tool"
    ):
        AgentBuilder().tool_choice(choice)
    with pytest.raises(ConfigError, match=r"Agent\.tool_choice must be"):
        Agent("a", tool_choice=choice)


async def test_streamed_turn_with_output() -> None:
    provider = MockProvider(['{"guilty": true}'], chunk_size=4)
    session = session_for(provider, AgentBuilder().output(Verdict))
    reply = await session.submit_turn_stream("The case?").finalize()
    assert provider.calls[0].output is not None
    assert parse_output(reply, Verdict) == Verdict(True)
