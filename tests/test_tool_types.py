"""Tool parameters of structured types, called by a scripted model through a session."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import subprocess
import sys
from typing import Any, Literal, Optional, TypedDict

import attrs
import pytest

from agentcore import Agent, AgentBuilder, AgentSession, Message, ToolRegistry, ToolUseBlock
from agentcore.errors import ToolArgumentError
from agentcore.llm import LlmResponse
from agentcore.testing import MockProvider


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    """A point on the grid."""

    x: int
    y: int = 0


@attrs.define
class Box:
    corner: Point
    color: Color = Color.RED
    tags: list[str] = attrs.Factory(list)
    label: Optional[str] = None  # noqa: UP045


class Span(TypedDict):
    start: datetime.date
    end: datetime.datetime


async def run_call(registry: ToolRegistry, name: str, arguments: dict[str, Any]) -> Message:
    """One turn in which the model calls ``name`` with ``arguments``; the tool result message."""
    provider = MockProvider(
        [
            LlmResponse(
                Message.assistant("", [ToolUseBlock("c1", name, arguments)]), stop_reason="tool_use"
            ),
            "done",
        ]
    )
    bundle = AgentBuilder().provider(provider).tool_registry(registry).load_plugins(False).build()
    session = AgentSession(Agent("a", system_prompt="s"), "tools", bundle)
    assert (await session.submit_turn("go")).text == "done"
    result = (await session.history())[2]
    assert result.role == "tool"
    offered = provider.calls[0].tools
    assert [tool.name for tool in offered] == [tool.name for tool in registry.tools]
    return result


async def test_dataclass_parameter_with_a_default_field() -> None:
    registry, seen = ToolRegistry(), dict[str, Any]()

    @registry.tool
    def move(to: Point) -> str:
        """Move there."""
        seen["to"] = to
        return "moved"

    schema = registry["move"].parameters["properties"]["to"]
    assert schema["type"] == "object" and schema["required"] == ["x"]
    assert schema["properties"]["y"] == {"type": "integer", "default": 0}
    assert schema["description"] == "A point on the grid."
    result = await run_call(registry, "move", {"to": {"x": 3}})
    assert (result.text, result.is_error) == ("moved", False)
    assert seen["to"] == Point(3, 0)


async def test_attrs_class_with_nested_dataclass_enum_and_optional() -> None:
    registry, seen = ToolRegistry(), dict[str, Any]()

    @registry.tool
    def draw(box: Box) -> str:
        """Draw a box."""
        seen["box"] = box
        return "drawn"

    schema = registry["draw"].parameters["properties"]["box"]
    assert schema["properties"]["color"] == {
        "type": "string",
        "enum": ["red", "blue"],
        "default": "red",
    }
    assert schema["required"] == ["corner"]
    arguments = {"box": {"corner": {"x": 1, "y": 2}, "color": "blue", "tags": ["a"]}}
    assert (await run_call(registry, "draw", arguments)).text == "drawn"
    assert seen["box"] == Box(Point(1, 2), Color.BLUE, ["a"], None)


async def test_typeddict_with_date_and_datetime() -> None:
    registry, seen = ToolRegistry(), dict[str, Any]()

    @registry.tool
    def book(span: Span) -> str:
        """Book a span."""
        seen["span"] = span
        return "booked"

    properties = registry["book"].parameters["properties"]["span"]["properties"]
    assert properties == {
        "start": {"type": "string", "format": "date"},
        "end": {"type": "string", "format": "date-time"},
    }
    arguments = {"span": {"start": "2026-03-01", "end": "2026-03-02T09:30:00Z"}}
    assert (await run_call(registry, "book", arguments)).text == "booked"
    assert seen["span"] == {
        "start": datetime.date(2026, 3, 1),
        "end": datetime.datetime(2026, 3, 2, 9, 30, tzinfo=datetime.timezone.utc),
    }


async def test_top_level_dates_tuples_and_literals() -> None:
    registry, seen = ToolRegistry(), dict[str, Any]()

    @registry.tool
    def plan(
        day: datetime.date,
        at: datetime.time,
        size: tuple[int, int],
        rest: tuple[float, ...] = (),
        mode: Literal["fast", "slow"] = "fast",
    ) -> str:
        """Plan."""
        seen.update(day=day, at=at, size=size, rest=rest, mode=mode)
        return "planned"

    properties = registry["plan"].parameters["properties"]
    assert properties["size"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "integer"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert properties["rest"] == {"type": "array", "items": {"type": "number"}, "default": []}
    arguments = {"day": "2026-01-31", "at": "08:15", "size": [3, 4], "rest": [1, 2.5]}
    assert (await run_call(registry, "plan", arguments)).text == "planned"
    assert seen == {
        "day": datetime.date(2026, 1, 31),
        "at": datetime.time(8, 15),
        "size": (3, 4),
        "rest": (1.0, 2.5),
        "mode": "fast",
    }


async def test_list_and_optional_of_dataclasses() -> None:
    registry, seen = ToolRegistry(), dict[str, Any]()

    @registry.tool
    def path(points: list[Point], end: Point | None = None) -> str:
        """A path."""
        seen.update(points=points, end=end)
        return "ok"

    arguments = {"points": [{"x": 1}, {"x": 2, "y": 5}], "end": {"x": 9}}
    assert (await run_call(registry, "path", arguments)).text == "ok"
    assert seen == {"points": [Point(1), Point(2, 5)], "end": Point(9)}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"day": "2026-02-30", "size": [1, 2]},
            "argument 'day': '2026-02-30' is not an ISO 8601 date",
        ),
        (
            {"day": 20260201, "size": [1, 2]},
            "argument 'day' must be a string, got integer 20260201",
        ),
        (
            {"day": "2026-02-01", "size": [1, 2, 3]},
            "argument 'size' must have exactly 2 items, got 3",
        ),
        ({"day": "2026-02-01", "size": [1, "2"]}, "argument 'size[1]' must be an integer"),
        (
            {"day": "2026-02-01", "size": [1, 2], "box": {"corner": {"x": 1, "z": 2}}},
            "unexpected argument 'box.corner.z' (expected: x, y)",
        ),
        (
            {"day": "2026-02-01", "size": [1, 2], "box": {"color": "red"}},
            "missing required argument 'box.corner'",
        ),
        (
            {"day": "2026-02-01", "size": [1, 2], "span": {"start": "2026-01-01", "end": "soon"}},
            "argument 'span': 'soon' is not an ISO 8601 date and time",
        ),
    ],
)
async def test_bad_arguments_are_tool_errors_the_model_sees(
    arguments: dict[str, Any], expected: str
) -> None:
    registry = ToolRegistry()
    called: list[object] = []

    @registry.tool
    def check(
        day: datetime.date, size: tuple[int, int], box: Box | None = None, span: Span | None = None
    ) -> str:
        """Check."""
        called.append(day)
        return "ran"

    result = await run_call(registry, "check", arguments)
    assert result.is_error
    assert result.text.startswith("invalid arguments for tool 'check': ")
    assert expected in result.text
    assert called == []


def test_convert_arguments_raises_tool_argument_error_naming_the_parameter() -> None:
    registry = ToolRegistry()

    @registry.tool
    def when(day: datetime.date) -> None:
        """When."""

    assert registry["when"].convert_arguments({"day": "2026-05-01"}) == {
        "day": datetime.date(2026, 5, 1)
    }
    with pytest.raises(ToolArgumentError, match="argument 'day': 'May 1' is not an ISO 8601 date"):
        registry["when"].convert_arguments({"day": "May 1"})


def test_a_class_that_refers_to_itself_is_refused_clearly() -> None:
    registry = ToolRegistry()

    def walk(node: Node) -> None:
        """Walk."""

    with pytest.raises(Exception, match="parameter 'node' has an unsupported annotation Node"):
        registry.register(walk)


@dataclasses.dataclass
class Node:
    value: int
    child: Node | None = None


# -- pydantic -------------------------------------------------------------------


def test_pydantic_is_never_imported_by_tools() -> None:
    code = (
        "import sys, dataclasses\n"
        "from agentcore import ToolRegistry\n"
        "@dataclasses.dataclass\n"
        "class P:\n    x: int\n"
        "r = ToolRegistry()\n"
        "@r.tool\n"
        "def f(p: P) -> None:\n    'F.'\n"
        "print('pydantic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


async def test_pydantic_models_as_parameters() -> None:
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed")

    class Address(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        city: str
        zip_code: str = pydantic.Field(pattern=r"^\d{5}$")

    class Customer(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        name: str
        address: Address
        since: datetime.date | None = None

    registry, seen = ToolRegistry(), dict[str, Any]()

    def register(customer: Customer) -> str:
        """Register a customer."""
        seen["customer"] = customer
        return "registered"

    register.__annotations__ = {"customer": Customer, "return": str}
    registry.register(register)
    schema = registry["register"].parameters["properties"]["customer"]
    assert "$defs" not in schema and "$ref" not in str(schema)
    assert schema["properties"]["address"]["properties"]["zip_code"]["pattern"] == r"^\d{5}$"
    arguments = {"customer": {"name": "Ada", "address": {"city": "Oslo", "zip_code": "01234"}}}
    assert (await run_call(registry, "register", arguments)).text == "registered"
    assert seen["customer"] == Customer(name="Ada", address=Address(city="Oslo", zip_code="01234"))

    bad = {"customer": {"name": "Ada", "address": {"city": "Oslo", "zip_code": "12"}}}
    result = await run_call(registry, "register", bad)
    assert result.is_error
    assert "argument 'customer': address.zip_code: String should match pattern" in result.text


async def test_explicit_schemas_with_item_counts_are_checked() -> None:
    registry = ToolRegistry()
    schema = {
        "type": "object",
        "properties": {
            "few": {"type": "array", "maxItems": 2},
            "many": {"type": "array", "minItems": 2},
            "some": {"type": "array", "minItems": 1, "maxItems": 3},
        },
    }
    registry.register(lambda **values: "ok", name="count", parameters=schema)
    cases = {
        "few": ([1, 2, 3], "argument 'few' must have at most 2 items, got 3"),
        "many": ([1], "argument 'many' must have at least 2 items, got 1"),
        "some": ([], "argument 'some' must have 1 to 3 items, got 0"),
    }
    for name, (value, expected) in cases.items():
        result = await run_call(registry, "count", {name: value})
        assert result.is_error and expected in result.text
