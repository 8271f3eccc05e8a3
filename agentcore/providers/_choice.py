"""A request's tool choice and output schema on each provider's wire (pure encoding).

OpenAI-compatible: ``tool_choice`` as ``"auto"``, ``"none"``, ``"required"``
or ``{"type": "function", "function": {"name": ...}}``, sent only with
tools; an output schema as ``response_format: {"type": "json_schema",
"json_schema": {"name", "schema", "description"?, "strict"?}}``.

OpenAI Responses: ``tool_choice`` as ``"auto"``, ``"none"``, ``"required"`` or
``{"type": "function", "name": ...}``, sent only with tools; an output schema
as ``text: {"format": {"type": "json_schema", "name", "schema",
"description"?, "strict"?}}``.

Anthropic: ``tool_choice`` as ``{"type": "auto" | "none" | "any"}`` or
``{"type": "tool", "name": ...}``; an output schema as one more tool (named
after the schema, its ``input_schema`` the schema) that the model is made to
call: alone (``{"type": "tool"}``) when the request offers no other tool or
its tool choice is ``"none"``, else with ``{"type": "any"}`` (or the named
tool the choice gives), so the model may call tools first and ends by
calling the output tool. The decoders turn that call into the reply's text.
"""

from __future__ import annotations

from typing import Any

from agentcore.errors import BadRequestError
from agentcore.llm import LlmRequest
from agentcore.output import DEFAULT_OUTPUT_DESCRIPTION, TOOL_CHOICES


def _check_named(request: LlmRequest, extra: str | None = None) -> None:
    choice = request.tool_choice
    if choice is None or choice in TOOL_CHOICES:
        return
    names = [tool.name for tool in request.tools]
    if extra is not None:
        names.append(extra)
    if choice not in names:
        offered = ", ".join(repr(name) for name in names) or "none"
        raise BadRequestError(
            f"tool_choice names the tool {choice!r}, which the request does not offer "
            f"(tools: {offered})"
        )


def openai_fields(request: LlmRequest) -> dict[str, Any]:
    """The ``tool_choice`` and ``response_format`` fields of a Chat Completions body."""
    fields: dict[str, Any] = {}
    choice = request.tool_choice
    if request.tools and choice is not None:
        _check_named(request)
        if choice in TOOL_CHOICES:
            fields["tool_choice"] = choice
        else:
            fields["tool_choice"] = {"type": "function", "function": {"name": choice}}
    output = request.output
    if output is not None:
        json_schema: dict[str, Any] = {"name": output.name, "schema": dict(output.schema)}
        if output.description:
            json_schema["description"] = output.description
        if output.strict:
            json_schema["strict"] = True
        fields["response_format"] = {"type": "json_schema", "json_schema": json_schema}
    return fields


def responses_fields(request: LlmRequest) -> dict[str, Any]:
    """The ``tool_choice`` and ``text`` fields of a Responses API body."""
    fields: dict[str, Any] = {}
    choice = request.tool_choice
    if request.tools and choice is not None:
        _check_named(request)
        fields["tool_choice"] = (
            choice if choice in TOOL_CHOICES else {"type": "function", "name": choice}
        )
    output = request.output
    if output is not None:
        schema: dict[str, Any] = {
            "type": "json_schema",
            "name": output.name,
            "schema": dict(output.schema),
        }
        if output.description:
            schema["description"] = output.description
        if output.strict:
            schema["strict"] = True
        fields["text"] = {"format": schema}
    return fields


_ANTHROPIC_CHOICES = {"auto": "auto", "none": "none", "required": "any"}


def anthropic_fields(request: LlmRequest, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``tool_choice`` of a Messages body; ``tools`` (the encoded tools) gains the output tool.

    Returns ``{}`` or ``{"tool_choice": ...}``; ``tools`` is changed in place.
    """
    choice, output = request.tool_choice, request.output
    if output is None:
        if not request.tools or choice is None:
            return {}
        _check_named(request)
        if choice in _ANTHROPIC_CHOICES:
            return {"tool_choice": {"type": _ANTHROPIC_CHOICES[choice]}}
        return {"tool_choice": {"type": "tool", "name": choice}}
    if any(tool.name == output.name for tool in request.tools):
        raise BadRequestError(
            f"the output schema {output.name!r} has the name of one of the request's tools; "
            "give the output another name (OutputSpec.of(..., name=...))"
        )
    _check_named(request, output.name)
    tool = {
        "name": output.name,
        "description": output.description or DEFAULT_OUTPUT_DESCRIPTION,
        "input_schema": dict(output.schema),
    }
    if not request.tools or choice == "none":
        tools[:] = [tool]
        return {"tool_choice": {"type": "tool", "name": output.name}}
    tools.append(tool)
    if choice is not None and choice not in TOOL_CHOICES:
        return {"tool_choice": {"type": "tool", "name": choice}}
    return {"tool_choice": {"type": "any"}}
