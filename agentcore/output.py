"""Structured output and tool choice: what a request asks of the model's reply.

An :class:`OutputSpec` names a JSON schema the reply must follow, from a
schema dict or from a class (a dataclass, an attrs class, a TypedDict or a
pydantic model). The OpenAI-compatible provider sends it as
``response_format: {"type": "json_schema", ...}``; the Anthropic provider
offers it as a tool the model is made to call, and gives the tool's input
back as the reply's text. Either way the reply message holds the JSON as
text, and :meth:`OutputSpec.parse` (or :func:`parse_output`) builds the
class from it.

A tool choice says whether the model may, must or must not call tools:
``"auto"`` (the model decides, the default), ``"none"``, ``"required"`` (at
least one call) or the name of one tool to call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, overload

from attrs import field, frozen

from agentcore._bounded_json import NestedTooDeeplyError, loads_bounded
from agentcore._tool_types import ArgumentValueError
from agentcore.errors import ConfigError, OutputError
from agentcore.messages import Message
from agentcore.tool_schema import NAME_PATTERN, argument_problem, identity, schema_of
from agentcore.validators import STR, Rule

T = TypeVar("T")

TOOL_CHOICES = ("auto", "none", "required")
"""The tool choices other than a tool's name."""

DEFAULT_OUTPUT_DESCRIPTION = "Give your final answer by calling this tool; its input is the answer."
"""The output tool's description on the Anthropic wire when the spec gives none."""


def _is_tool_choice(value: Any) -> bool:
    return value in TOOL_CHOICES or (isinstance(value, str) and bool(NAME_PATTERN.match(value)))


TOOL_CHOICE = Rule(
    "'auto', 'none', 'required' or a tool name (1-64 letters, digits, '_' or '-')",
    _is_tool_choice,
).or_none()
"""The tool choice a request, a cycle, an agent or a builder may set (None: the default)."""


def check_tool_choice(value: Any, where: str = "tool_choice") -> str | None:
    """``value`` if it is a tool choice (or None); raise :class:`ConfigError` otherwise."""
    return TOOL_CHOICE.check(where, value)  # type: ignore[no-any-return]


_NAME = STR.where(lambda value: bool(NAME_PATTERN.match(value)), "1-64 letters, digits, '_' or '-'")


def _object_schema(instance: object, attribute: Any, value: Any) -> None:
    if not isinstance(value, Mapping) or value.get("type") != "object":
        raise ConfigError(
            "an output schema must describe a JSON object ('type': 'object'), got "
            f"{value!r:.200}; wrap a list or a scalar in a class with one field"
        )


@frozen
class OutputSpec(Generic[T]):
    """A JSON schema the model's reply must follow, and how to build ``T`` from it.

    Make one with :meth:`of`. ``name`` names the schema on the wire (and the
    output tool on Anthropic's); ``strict`` asks an OpenAI model to follow
    the schema exactly (OpenAI then requires every property to be listed in
    ``required`` and ``additionalProperties: false``).
    """

    name: str = field(validator=_NAME)
    schema: Mapping[str, Any] = field(validator=_object_schema)
    description: str = ""
    strict: bool = False
    _convert: Callable[[Any], T] = field(default=identity, alias="convert", eq=False, repr=False)

    @overload
    @classmethod
    def of(
        cls,
        output: type[T],
        *,
        name: str | None = None,
        description: str = "",
        strict: bool = False,
    ) -> OutputSpec[T]: ...

    @overload
    @classmethod
    def of(
        cls,
        output: Mapping[str, Any] | OutputSpec[Any],
        *,
        name: str | None = None,
        description: str = "",
        strict: bool = False,
    ) -> OutputSpec[Any]: ...

    @classmethod
    def of(
        cls,
        output: Any,
        *,
        name: str | None = None,
        description: str = "",
        strict: bool = False,
    ) -> OutputSpec[Any]:
        """The spec of ``output``: a JSON schema dict or a class, or a spec (returned as is).

        A class (a dataclass, an attrs class, a TypedDict or a pydantic
        model) gives its schema the way tool parameters do, and
        :meth:`parse` builds an instance; ``name`` defaults to the class's
        name. A schema dict is used as given, and :meth:`parse` returns the
        checked JSON value; ``name`` defaults to its ``title``, else
        ``"output"``. Raises :class:`ConfigError` for anything else.
        """
        if isinstance(output, OutputSpec):
            return output
        if isinstance(output, Mapping):
            try:
                schema = json.loads(json.dumps(output))
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"an output schema must be JSON: {exc}") from None
            title = schema.get("title")
            default = _safe_name(title) if isinstance(title, str) else "output"
            return cls(name or default, schema, description, strict)
        if not isinstance(output, type):
            raise ConfigError(
                "output takes a JSON schema dict or a class (dataclass, attrs class, TypedDict "
                f"or pydantic model), got {output!r}"
            )
        try:
            schema, convert = schema_of(output)
        except ValueError as exc:
            raise ConfigError(f"output {output.__qualname__}: {exc}") from None
        return cls(
            name or _safe_name(output.__name__),
            schema,
            description or str(schema.get("description", "")),
            strict,
            convert=convert,
        )

    def parse(self, reply: Message | str) -> T:
        """The reply (a message or its text) built into ``T``.

        The text must be one JSON value (a Markdown code fence around it is
        taken off). Raises :class:`~agentcore.errors.OutputError` saying
        what did not match: text that is not JSON (or nests deeper than
        :data:`~agentcore._bounded_json.MAX_JSON_DEPTH`), a value the schema
        refuses (naming the field), or a value the class refuses.
        """
        text = reply.text if isinstance(reply, Message) else reply
        if not isinstance(text, str):
            raise OutputError(f"output {self.name!r}: expected a Message or a str, got {reply!r}")
        stripped = _FENCE.sub(r"\1", text.strip())
        try:
            value = loads_bounded(stripped)
        except NestedTooDeeplyError as exc:
            raise OutputError(
                f"the model's reply for the output schema {self.name!r} is JSON {exc}"
            ) from None
        except ValueError as exc:
            raise OutputError(
                f"the model's reply is not JSON of the output schema {self.name!r} ({exc}): "
                f"{_clip(text)!r}"
            ) from None
        problem = argument_problem(value, self.schema, "")
        if problem is not None:
            raise OutputError(
                f"the model's reply does not match the output schema {self.name!r}: "
                f"{_as_fields(problem)}"
            )
        try:
            return self._convert(value)
        except ArgumentValueError as exc:
            raise OutputError(
                f"the model's reply does not match the output schema {self.name!r}: {exc}"
            ) from None


@overload
def parse_output(reply: Message | str, output: type[T]) -> T: ...


@overload
def parse_output(reply: Message | str, output: OutputSpec[T]) -> T: ...


@overload
def parse_output(reply: Message | str, output: Mapping[str, Any]) -> Any: ...


def parse_output(reply: Message | str, output: Any) -> Any:
    """``OutputSpec.of(output).parse(reply)``: the reply built into ``output``."""
    return OutputSpec.of(output).parse(reply)


_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*)\n```$", re.DOTALL)
_WORDS = (
    ("missing required argument", "missing required field"),
    ("unexpected argument", "unexpected field"),
    ("argument ", "field "),
    ("the arguments", "the reply"),
)


def _as_fields(problem: str) -> str:
    for old, new in _WORDS:
        if problem.startswith(old):
            return new + problem[len(old) :]
    return problem


def _safe_name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", text)[:64]
    return name or "output"


def _clip(text: str) -> str:
    return text if len(text) <= 200 else text[:197] + "..."


def output_spec(value: Any) -> OutputSpec[Any] | None:
    """The attrs converter of an ``output`` setting: None, or :meth:`OutputSpec.of` of it."""
    return None if value is None else OutputSpec.of(value)
