from __future__ import annotations

import asyncio
import enum
import json
import threading
import time
from typing import Annotated, Any, Literal, Optional, Union

import pytest

from agentcore.errors import ConfigError, ToolError
from agentcore.llm import ToolSpec
from agentcore.messages import Message, ToolUseBlock
from agentcore.tools import Tool, ToolRegistry


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def schema_of(func: Any, **kwargs: Any) -> dict[str, Any]:
    registry = ToolRegistry()
    tool = registry.register(func, **kwargs)
    return dict(tool.parameters)


def prop(func: Any, name: str) -> dict[str, Any]:
    return dict(schema_of(func)["properties"][name])


def use(name: str, call_id: str = "c1", **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(call_id, name, arguments)


# -- schema derivation --------------------------------------------------------


def test_scalar_types_and_object_shape() -> None:
    def f(s: str, i: int, x: float, b: bool, n: None) -> None:
        pass

    schema = schema_of(f)
    assert schema == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
            "n": {"type": "null"},
        },
        "required": ["s", "i", "x", "b", "n"],
        "additionalProperties": False,
    }


def test_optional_and_union_types() -> None:
    def f(
        a: Optional[str],  # noqa: UP045
        b: int | None,
        c: Union[int, str],  # noqa: UP007
        d: list[int] | None = None,
    ) -> None:
        pass

    assert prop(f, "a") == {"type": ["string", "null"]}
    assert prop(f, "b") == {"type": ["integer", "null"]}
    assert prop(f, "c") == {"type": ["integer", "string"]}
    assert prop(f, "d") == {
        "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}],
        "default": None,
    }


def test_containers() -> None:
    def f(
        tags: list[str],
        grid: list[list[float]],
        scores: dict[str, int],
        anything: list,  # type: ignore[type-arg]
        mapping: dict,  # type: ignore[type-arg]
    ) -> None:
        pass

    assert prop(f, "tags") == {"type": "array", "items": {"type": "string"}}
    assert prop(f, "grid") == {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}},
    }
    assert prop(f, "scores") == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert prop(f, "anything") == {"type": "array"}
    assert prop(f, "mapping") == {"type": "object"}


def test_literal_and_enums() -> None:
    def f(
        mode: Literal["fast", "slow"],
        mixed: Literal[1, "one"],
        color: Color,
        level: Level = Level.LOW,
    ) -> None:
        pass

    assert prop(f, "mode") == {"type": "string", "enum": ["fast", "slow"]}
    assert prop(f, "mixed") == {"enum": [1, "one"]}
    assert prop(f, "color") == {"type": "string", "enum": ["red", "green"]}
    assert prop(f, "level") == {"type": "integer", "enum": [1, 2], "default": 1}
    assert schema_of(f)["required"] == ["mode", "mixed", "color"]


def test_defaults_are_not_required_and_are_shown_when_json() -> None:
    marker = object()

    def f(a: int, b: str = "x", c: bool = False, d: int | None = None, e: Any = marker) -> None:
        pass

    with pytest.raises(ToolError, match="'e'"):
        schema_of(f)

    def g(a: int, b: str = "x", c: bool = False, d: int | None = None) -> None:
        pass

    schema = schema_of(g)
    assert schema["required"] == ["a"]
    assert schema["properties"]["b"]["default"] == "x"
    assert schema["properties"]["c"]["default"] is False
    assert schema["properties"]["d"]["default"] is None


def test_docstring_description_and_args() -> None:
    def get_weather(city: str, unit: Literal["C", "F"] = "C", days: int = 1) -> str:
        """Get the weather forecast
        for a city.

        More details that are not part of the description.

        Args:
            city: The city name,
                for example "Paris".
            unit (str): Temperature unit.
            days (int, optional): How many days.

        Returns:
            The forecast.
        """
        return ""

    registry = ToolRegistry()
    tool = registry.register(get_weather)
    assert tool.name == "get_weather"
    assert tool.description == "Get the weather forecast for a city."
    props = tool.parameters["properties"]
    assert props["city"] == {"description": 'The city name, for example "Paris".', "type": "string"}
    assert props["unit"]["description"] == "Temperature unit."
    assert props["days"]["description"] == "How many days."


def test_docstring_without_summary_and_annotated_descriptions() -> None:
    def f(q: Annotated[str, "The query."], n: int) -> None:
        """
        Args:
            n: How many.
        """

    tool = Tool.from_function(f)
    assert tool.description == ""
    assert tool.parameters["properties"]["q"] == {"description": "The query.", "type": "string"}
    assert tool.parameters["properties"]["n"] == {"description": "How many.", "type": "integer"}


def test_name_and_description_override() -> None:
    def f(x: int) -> int:
        """Original."""
        return x

    tool = ToolRegistry().register(f, name="renamed", description="Better.")
    assert (tool.name, tool.description) == ("renamed", "Better.")


def test_explicit_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "depth": {"type": "integer"}},
        "required": ["path"],
    }

    def walk(path, depth=1):  # type: ignore[no-untyped-def]
        return [path, depth]

    registry = ToolRegistry()
    tool = registry.register(walk, parameters=schema, description="Walk a tree.")
    assert tool.parameters == schema
    assert registry.specs() == [ToolSpec("walk", "Walk a tree.", schema)]


def test_explicit_schema_with_kwargs_function() -> None:
    def anything(**kwargs: Any) -> Any:
        return kwargs

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tool = ToolRegistry().register(anything, parameters=schema)
    assert tool.parameters == schema


# -- bad definitions -------------------------------------------------------------


class Point:
    pass


def _unannotated(x, y: int) -> None:  # type: ignore[no-untyped-def]
    pass


def _star_args(*values: int) -> None:
    pass


def _star_kwargs(**options: str) -> None:
    pass


def _unsupported(p: Point) -> None:
    pass


def _int_keys(p: dict[int, str]) -> None:
    pass


def _positional_only(x: int, /) -> None:
    pass


@pytest.mark.parametrize(
    ("func", "pattern"),
    [
        (_unannotated, r"tool '_unannotated': parameter 'x' has no type annotation"),
        (_star_args, r"tool '_star_args': parameter 'values'.*\*args"),
        (_star_kwargs, r"tool '_star_kwargs': parameter 'options'.*\*\*kwargs"),
        (_unsupported, r"tool '_unsupported': parameter 'p' has an unsupported annotation Point"),
        (_int_keys, r"parameter 'p' .*dict keys must be str"),
        (_positional_only, r"parameter 'x' is positional-only"),
    ],
)
def test_bad_definitions_raise_tool_error(func: Any, pattern: str) -> None:
    with pytest.raises(ToolError, match=pattern):
        ToolRegistry().register(func)


def test_duplicate_name() -> None:
    registry = ToolRegistry()

    @registry.tool
    def ping() -> str:
        return "pong"

    with pytest.raises(ToolError, match="'ping' is already registered"):
        registry.register(ping)
    assert len(registry) == 1


def test_invalid_names() -> None:
    with pytest.raises(ToolError, match="invalid tool name '<lambda>'"):
        ToolRegistry().register(lambda: None)
    with pytest.raises(ToolError, match="invalid tool name 'has space'"):
        ToolRegistry().register(_positional_only, name="has space")


@pytest.mark.parametrize(
    ("schema", "pattern"),
    [
        ({"type": "string"}, "must be an object schema"),
        ([1, 2], "must be a JSON schema mapping"),
        ({"type": "object", "properties": {"x": 1}}, "'properties' must map"),
        ({"type": "object", "properties": {}, "required": ["x"]}, "'x' is not in 'properties'"),
        ({"type": "object", "required": "x"}, "'required' must be a list"),
        ({"type": "object", "properties": {"x": {"default": object()}}}, "not JSON-serializable"),
    ],
)
def test_invalid_explicit_schema(schema: Any, pattern: str) -> None:
    def tool_fn(**kwargs: Any) -> None:
        pass

    with pytest.raises(ToolError, match=f"tool 'tool_fn': .*{pattern}"):
        ToolRegistry().register(tool_fn, parameters=schema)


def test_explicit_schema_must_fit_the_function() -> None:
    def needs_x(x: int) -> None:
        pass

    with pytest.raises(ToolError, match="parameter 'x' has no default"):
        ToolRegistry().register(needs_x, parameters={"type": "object", "properties": {}})
    with pytest.raises(ToolError, match="parameter 'y' is not a parameter"):
        ToolRegistry().register(
            needs_x,
            parameters={
                "type": "object",
                "properties": {"x": {}, "y": {}},
                "required": ["x"],
            },
        )


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "5"])
def test_bad_timeout(timeout: object) -> None:
    with pytest.raises(ConfigError, match="timeout must be a positive, finite number"):
        ToolRegistry(timeout=timeout)  # type: ignore[arg-type]


def test_tools_have_a_default_timeout_and_none_turns_it_off() -> None:
    from agentcore.tools import DEFAULT_TOOL_TIMEOUT

    assert DEFAULT_TOOL_TIMEOUT == 60.0
    assert ToolRegistry().timeout == 60.0
    assert ToolRegistry(timeout=None).timeout is None


# -- registry API ----------------------------------------------------------------


def test_decorators_and_lookup() -> None:
    registry = ToolRegistry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @registry.tool(name="shout", description="Upper-case text.")
    async def upper(text: str) -> str:
        return text.upper()

    assert add(1, 2) == 3  # the decorator returns the function unchanged
    assert len(registry) == 2
    assert "add" in registry and "shout" in registry and "upper" not in registry
    assert registry.get("missing") is None
    tool = registry.get("shout")
    assert tool is not None and tool.function is upper
    assert registry["add"].description == "Add two numbers."
    with pytest.raises(KeyError, match="missing"):
        registry["missing"]
    assert [spec.name for spec in registry.specs()] == ["add", "shout"]
    assert [t.name for t in registry.tools] == ["add", "shout"]
    assert registry.specs()[1] == ToolSpec(
        "shout",
        "Upper-case text.",
        {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    )


# -- calls -------------------------------------------------------------------------


async def test_sync_and_async_tools_and_result_encoding() -> None:
    registry = ToolRegistry()
    loop_thread = threading.get_ident()
    threads: list[int] = []

    @registry.tool
    def sync_tool(x: int) -> dict[str, Any]:
        threads.append(threading.get_ident())
        return {"x": x, "text": "héllo", "when": Color.RED}

    @registry.tool
    async def async_tool(text: str) -> str:
        return text * 2

    @registry.tool
    def nothing() -> None:
        return None

    result = await registry.call(use("sync_tool", x=3))
    assert result == Message.tool_result("c1", '{"x": 3, "text": "héllo", "when": "Color.RED"}')
    assert threads and threads[0] != loop_thread  # ran in a worker thread
    assert (await registry.call(use("async_tool", "c2", text="ab"))).text == "abab"
    empty = await registry.call(use("nothing", "c3"))
    assert (empty.text, empty.is_error, empty.tool_call_id) == ("", False, "c3")


async def test_arguments_are_converted_to_annotated_types() -> None:
    registry = ToolRegistry()
    seen: dict[str, Any] = {}

    @registry.tool
    def paint(
        color: Color, level: Level, size: float, count: int, colors: list[Color] | None = None
    ) -> None:
        seen.update(color=color, level=level, size=size, count=count, colors=colors)

    result = await registry.call(
        use("paint", color="green", level=2, size=3, count=4.0, colors=["red"])
    )
    assert not result.is_error, result.text
    assert seen == {
        "color": Color.GREEN,
        "level": Level.HIGH,
        "size": 3.0,
        "count": 4,
        "colors": [Color.RED],
    }
    assert isinstance(seen["size"], float) and isinstance(seen["count"], int)


async def test_unknown_tool_is_an_error_result() -> None:
    registry = ToolRegistry()
    registry.register(lambda: None, name="known", parameters={"type": "object"})
    result = await registry.call(use("nope"))
    assert result.is_error and result.tool_call_id == "c1"
    assert result.text == "unknown tool 'nope'; available tools: known"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "missing required argument 'city'"),
        ({"city": "Paris", "extra": 1}, "unexpected argument 'extra' (expected: city, days, unit)"),
        ({"city": 3}, "argument 'city' must be a string, got integer 3"),
        ({"city": "Paris", "days": "2"}, "argument 'days' must be an integer, got string '2'"),
        ({"city": "Paris", "days": True}, "argument 'days' must be an integer, got boolean True"),
        ({"city": "Paris", "days": 1.5}, "argument 'days' must be an integer, got number 1.5"),
        ({"city": "Paris", "unit": "K"}, 'argument \'unit\' must be one of "C", "F"'),
        ({"city": None}, "argument 'city' must be a string, got null None"),
    ],
)
async def test_bad_arguments_are_error_results(arguments: dict[str, Any], expected: str) -> None:
    registry = ToolRegistry()
    ran = []

    @registry.tool
    def weather(city: str, days: int = 1, unit: Literal["C", "F"] = "C") -> str:
        ran.append(city)
        return "sunny"

    result = await registry.call(ToolUseBlock("c1", "weather", arguments))
    assert result.is_error
    assert result.text.startswith("invalid arguments for tool 'weather': ")
    assert expected in result.text
    assert ran == []


async def test_nested_argument_errors_name_the_path() -> None:
    registry = ToolRegistry()

    @registry.tool
    def f(rows: list[dict[str, int]]) -> None:
        pass

    result = await registry.call(use("f", rows=[{"a": 1}, {"b": "x"}]))
    assert result.is_error
    assert "argument 'rows[1].b' must be an integer, got string 'x'" in result.text


async def test_explicit_schema_arguments_are_validated() -> None:
    registry = ToolRegistry()
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    registry.register(lambda n: n * 2, name="double", parameters=schema)
    assert (await registry.call(use("double", n=4))).text == "8"
    bad = await registry.call(use("double", n="4"))
    assert bad.is_error and "argument 'n' must be an integer" in bad.text


async def test_non_mapping_arguments_are_error_results() -> None:
    registry = ToolRegistry()
    registry.register(lambda: "ok", name="ok", parameters={"type": "object"})
    result = await registry.call(ToolUseBlock("c1", "ok", "not a dict"))  # type: ignore[arg-type]
    assert result.is_error and "must be a JSON object" in result.text


async def test_raising_tools_are_error_results() -> None:
    registry = ToolRegistry()

    @registry.tool
    def boom(x: int) -> int:
        raise ValueError(f"bad x {x}")

    @registry.tool
    async def aboom() -> None:
        raise KeyError("k")

    @registry.tool
    def silent() -> None:
        raise RuntimeError

    result = await registry.call(use("boom", x=1))
    assert result == Message.tool_result(
        "c1", "tool 'boom' raised ValueError: bad x 1", is_error=True
    )
    assert (await registry.call(use("aboom"))).text == "tool 'aboom' raised KeyError: 'k'"
    assert (await registry.call(use("silent"))).text == "tool 'silent' raised RuntimeError"


async def test_unencodable_result_is_an_error_result() -> None:
    registry = ToolRegistry()

    @registry.tool
    def weird() -> Any:
        return {(1, 2): "tuple key"}

    result = await registry.call(use("weird"))
    assert result.is_error and "returned a value that is not JSON" in result.text


async def test_timeout_is_an_error_result() -> None:
    registry = ToolRegistry(timeout=1)  # `fast` must finish within it even at load 10
    cancelled = asyncio.Event()

    @registry.tool
    async def slow() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    @registry.tool
    def slow_sync() -> str:
        time.sleep(2)
        return "late"

    @registry.tool
    async def fast() -> str:
        return "quick"

    @registry.tool
    async def own_timeout() -> str:
        raise TimeoutError("upstream timed out")

    result = await registry.call(use("slow"))
    assert result == Message.tool_result(
        "c1", "tool 'slow' did not finish within 1 seconds", is_error=True
    )
    await asyncio.wait_for(cancelled.wait(), 30)  # the timed-out tool was cancelled
    assert (await registry.call(use("slow_sync"))).is_error
    assert (await registry.call(use("fast"))).text == "quick"
    own = await registry.call(use("own_timeout"))
    assert own.text == "tool 'own_timeout' raised TimeoutError: upstream timed out"


@pytest.mark.parametrize("timeout", [None, 5.0])
async def test_cancellation_propagates(timeout: float | None) -> None:
    registry = ToolRegistry(timeout=timeout)
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @registry.tool
    async def wait_forever() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    task = asyncio.ensure_future(registry.call(use("wait_forever")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), 1)


async def test_parallel_calls_overlap_and_keep_call_order() -> None:
    registry = ToolRegistry()
    running = 0
    peak = 0
    both_started = asyncio.Event()

    @registry.tool
    async def slow(label: str, delay: float) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 2)  # fails unless the calls overlap
        await asyncio.sleep(delay)
        running -= 1
        return label

    calls = [
        ToolUseBlock("a", "slow", {"label": "first", "delay": 0.2}),
        ToolUseBlock("b", "slow", {"label": "second", "delay": 0.2}),
    ]
    results = await registry.call_all(calls)
    assert peak == 2  # both ran at once (each waited for the other to start)
    assert [(r.tool_call_id, r.text) for r in results] == [("a", "first"), ("b", "second")]


async def test_parallel_results_keep_call_order_when_later_calls_finish_first() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def nap(delay: float) -> float:
        await asyncio.sleep(delay)
        return delay

    calls = [ToolUseBlock(str(i), "nap", {"delay": d}) for i, d in enumerate([0.05, 0.0, 0.02])]
    results = await registry.call_all(calls)
    assert [r.tool_call_id for r in results] == ["0", "1", "2"]
    assert [json.loads(r.text) for r in results] == [0.05, 0.0, 0.02]


async def test_sync_tools_run_in_parallel_threads() -> None:
    registry = ToolRegistry()
    barrier = threading.Barrier(2, timeout=2)

    @registry.tool
    def meet(label: str) -> str:
        barrier.wait()  # raises BrokenBarrierError unless both run at once
        return label

    results = await registry.call_all([use("meet", "a", label="x"), use("meet", "b", label="y")])
    assert [r.text for r in results] == ["x", "y"]


async def test_sequential_registry_runs_calls_one_by_one() -> None:
    registry = ToolRegistry(concurrent=False)
    order: list[str] = []

    @registry.tool
    async def step(label: str) -> str:
        order.append(f"start {label}")
        await asyncio.sleep(0.01)
        order.append(f"end {label}")
        return label

    results = await registry.call_all([use("step", "a", label="1"), use("step", "b", label="2")])
    assert order == ["start 1", "end 1", "start 2", "end 2"]
    assert [r.text for r in results] == ["1", "2"]


async def test_callable_objects_and_methods() -> None:
    class Counter:
        """Counts."""

        def __init__(self) -> None:
            self.total = 0

        def add(self, amount: int) -> int:
            """Add an amount."""
            self.total += amount
            return self.total

        async def __call__(self, amount: int) -> int:
            return self.total + amount

    counter = Counter()
    registry = ToolRegistry()
    registry.register(counter.add)
    registry.register(counter, name="peek")
    assert registry["add"].description == "Add an amount."
    assert list(registry["peek"].parameters["properties"]) == ["amount"]
    assert (await registry.call(use("add", amount=2))).text == "2"
    assert (await registry.call(use("peek", amount=1))).text == "3"
