"""What the shared provider tests need to know about each provider.

A :class:`ProviderCase` says, for one provider, how to build it against the
loopback server, the wire bodies its API answers with (a reply, a stream, an
error) and what a user should get back. ``test_provider_contract.py`` writes
each behaviour the providers share once and runs it over :data:`CASES`; the
wire details only one provider has stay in ``test_openai.py``,
``test_openai_responses.py`` and ``test_anthropic.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcore.llm import LlmRequest, StreamEvent, ToolSpec
from agentcore.messages import AudioBlock, FileBlock, ImageBlock, Message, ToolUseBlock
from agentcore.providers import AnthropicProvider, OpenAIProvider, OpenAIResponsesProvider
from agentcore.usage import Usage

from .conftest import ANTHROPIC_KEY, OPENAI_KEY
from .loopback import LlmServer, SseItem
from .payloads import (
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    anthropic_usage,
    openai_completion,
    openai_error,
    openai_stream,
    openai_tool_call,
    openai_usage,
)
from .responses_payloads import (
    call_item,
    message_item,
    responses_reply,
    responses_response,
    responses_stream,
    responses_usage,
)

Provider = OpenAIProvider | AnthropicProvider | OpenAIResponsesProvider
"""A provider the shared tests run against."""

ToolCallWire = tuple[str, str, Sequence[str]]
"""A streamed tool call: its id, its name and the fragments of its JSON arguments."""

WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
"""The tool the tool-calling tests offer."""


def hello(
    model: str | None = None, max_tokens: int | None = None, purpose: str = "turn"
) -> LlmRequest:
    """A system prompt and one user message, with the given request options."""
    messages = [Message.system("Be brief."), Message.user("Hi")]
    return LlmRequest(messages, model=model, max_tokens=max_tokens, purpose=purpose)


async def collect(provider: Provider, request: LlmRequest) -> list[StreamEvent]:
    """Every event of ``provider.stream(request)``, in order."""
    return [event async for event in provider.stream(request)]


@dataclass(frozen=True)
class ProviderCase:
    """One provider, as the shared tests see it."""

    name: str
    cls: type[Provider]
    model: str
    """The model the test provider defaults to."""
    api_key: str
    options: Mapping[str, Any]
    """Keyword arguments every test provider gets besides the URL and key."""
    url: Callable[[LlmServer], str]
    """The ``base_url`` that points the provider at the loopback server."""
    default_base_url: str
    key_env: str
    base_url_env: str
    path: str
    auth_headers: Callable[[str], Mapping[str, str]]
    """The headers a request carries for an API key."""
    absent_headers: Sequence[str]
    hello_body: Mapping[str, Any]
    """The JSON body :func:`hello` is sent as."""
    reply_wire: Callable[[str, str | None, str, dict[str, Any] | None], dict[str, Any]]
    """A reply body for (text, stop reason, model, usage); see :meth:`reply`."""
    tool_reply_wire: Callable[[str | None, Sequence[ToolUseBlock]], dict[str, Any]]
    """A reply body with (text or nothing, tool calls)."""
    tool_reply_text: str | None
    """The text the tool-calling reply carries (``None``: the API's null)."""
    tools_wire: Sequence[Mapping[str, Any]]
    """How the request carries the ``WEATHER`` tool."""
    reply_model: str
    """The model name in replies the test did not pick a model for."""
    stream_wire: Callable[
        [Sequence[str], Sequence[ToolCallWire], dict[str, Any] | None, str, bool], list[SseItem]
    ]
    """A stream for (texts, tool calls, usage, model, end marker or not); see :meth:`stream`."""
    stream_extra_body: Mapping[str, Any]
    """Fields a streaming request adds besides ``"stream": true``."""
    stream_chunk_size: int
    """The bytes per chunk the loopback server sends the small-chunks stream in."""
    stream_end_match: str
    """What the error for a stream cut short of its end marker names."""
    error: Callable[[str, str], dict[str, Any]]
    """An error body: ``error(kind, message)``; kind: auth, bad_request, server, rate_limit."""
    retried_status: int
    """A server-side status the provider retries."""
    usage_wire: dict[str, Any]
    usage: Usage
    """What ``usage_wire`` is read as."""
    uncached_input_tokens: int
    stop_reasons: Sequence[tuple[str, str]]
    """Each wire stop reason with the ``stop_reason`` it is read as."""
    bad_kwargs: Sequence[Mapping[str, Any]]
    """Constructor arguments only this provider refuses."""
    malformed_bodies: Sequence[object] = field(default_factory=list)
    unsupported: Sequence[tuple[Sequence[Message], str]] = field(default_factory=list)
    """Requests refused before sending that only this provider refuses, with the reason."""
    max_tokens_key: str = "max_tokens"
    """The body field that carries ``max_tokens``."""

    def reply(
        self,
        text: str = "Hello!",
        *,
        stop_reason: str | None = None,
        model: str | None = None,
        usage: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A reply body with ``text``; the API's defaults for what is not given."""
        return self.reply_wire(text, stop_reason, model or self.reply_model, usage)

    def stream(
        self,
        texts: Sequence[str],
        *,
        tool_calls: Sequence[ToolCallWire] = (),
        usage: dict[str, Any] | None = None,
        model: str | None = None,
        end: bool = True,
    ) -> list[SseItem]:
        """The events streaming ``texts`` then ``tool_calls``, with the end marker if ``end``."""
        return self.stream_wire(texts, tool_calls, usage, model or self.reply_model, end)

    def make(self, server: LlmServer, **options: Any) -> Provider:
        """The provider on ``server`` with the test key, ``options`` on top of the case's."""
        kwargs = {**self.options, "base_url": self.url(server), "api_key": self.api_key}
        return self.cls(self.model, **{**kwargs, **options})


def _anthropic_stream(
    texts: Sequence[str],
    tool_calls: Sequence[ToolCallWire],
    usage: dict[str, Any] | None,
    model: str,
    end: bool,
) -> list[SseItem]:
    blocks: list[tuple[str, Any]] = [("text", list(texts))] if texts else []
    blocks += [("tool_use", call) for call in tool_calls]
    return anthropic_stream(blocks, usage=usage, model=model, stop=end)


def _anthropic_tool_reply(text: str | None, calls: Sequence[ToolUseBlock]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text is not None else []
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in calls
    ]
    return anthropic_message(blocks)


def weather_history(first: str, second: str) -> list[Message]:
    """A user question, a reply calling ``get_weather`` twice (ids ``first``, ``second``),
    one result and one error result, and the user's next question."""
    return [
        Message.user("Weather in Oslo and Rome?"),
        Message.assistant(
            "Checking.",
            tool_calls=[
                ToolUseBlock(first, "get_weather", {"city": "Oslo"}),
                ToolUseBlock(second, "get_weather", {"city": "Rome"}),
            ],
        ),
        Message.tool_result(first, "3°C, snow"),
        Message.tool_result(second, "city not found", is_error=True),
        Message.user("And Paris, Zürich?"),
    ]


_OPENAI_ERRORS = {
    "auth": ("invalid_request_error", "invalid_api_key"),
    "bad_request": ("invalid_request_error", None),
    "server": ("server_error", None),
    "rate_limit": ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERRORS = {
    "auth": "authentication_error",
    "bad_request": "invalid_request_error",
    "server": "overloaded_error",
    "rate_limit": "rate_limit_error",
}


def _openai_error(kind: str, message: str) -> dict[str, Any]:
    error_type, code = _OPENAI_ERRORS[kind]
    return openai_error(message, error_type, code)


def _anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return anthropic_error(_ANTHROPIC_ERRORS[kind], message)


OPENAI = ProviderCase(
    name="openai",
    cls=OpenAIProvider,
    model="gpt-4o-mini",
    api_key=OPENAI_KEY,
    options={"backoff_base": 0.01, "backoff_max": 0.05},
    url=lambda server: server.openai_url,
    default_base_url="https://api.openai.com/v1",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    path="/v1/chat/completions",
    auth_headers=lambda key: {"authorization": f"Bearer {key}"},
    absent_headers=(),
    hello_body={
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
    },
    reply_wire=lambda text, stop, model, usage: openai_completion(
        text, finish_reason=stop, model=model, usage=usage
    ),
    tool_reply_wire=lambda text, calls: openai_completion(
        text, tool_calls=[openai_tool_call(c.id, c.name, dict(c.arguments)) for c in calls]
    ),
    tool_reply_text=None,
    tools_wire=[
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": dict(WEATHER.parameters),
            },
        }
    ],
    reply_model="gpt-4o-mini-2024-07-18",
    stream_wire=lambda texts, calls, usage, model, end: openai_stream(
        texts, tool_calls=calls, usage=usage, model=model, done=end
    ),
    stream_extra_body={"stream_options": {"include_usage": True}},
    stream_chunk_size=3,
    stream_end_match=r"\[DONE\]",
    error=_openai_error,
    retried_status=500,
    usage_wire=openai_usage(1200, 30, cached=1024),
    usage=Usage(input_tokens=1200, output_tokens=30, cached_input_tokens=1024),
    uncached_input_tokens=176,
    stop_reasons=[("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "other")],
    bad_kwargs=[{"max_tokens_field": "tokens"}],
    malformed_bodies=[
        {"id": "x"},
        {"choices": []},
        {"choices": [{"index": 0}]},
        {"choices": [{"message": {"content": 5}}]},
        {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}}]},
        {
            "choices": [
                {
                    "message": {
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]
                    }
                }
            ]
        },
        {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1}},
        [1, 2],
    ],
    unsupported=[
        ([Message.user([FileBlock(name="a.pdf", url="https://x/a.pdf")])], "inline"),
        (
            [
                Message.assistant(tool_calls=[ToolUseBlock("c", "t")]),
                Message("tool", [ImageBlock(url="https://x/a.png")], tool_call_id="c"),
            ],
            "tool result",
        ),
    ],
)
"""The OpenAI-compatible Chat Completions provider."""

ANTHROPIC = ProviderCase(
    name="anthropic",
    cls=AnthropicProvider,
    model="claude-sonnet-4-5",
    api_key=ANTHROPIC_KEY,
    # No cache breakpoints: the wire tests compare whole bodies (test_prompt_cache.py has them).
    options={"backoff_base": 0.01, "backoff_max": 0.05, "cache": "off"},
    url=lambda server: server.url,
    default_base_url="https://api.anthropic.com",
    key_env="ANTHROPIC_API_KEY",
    base_url_env="ANTHROPIC_BASE_URL",
    path="/v1/messages",
    auth_headers=lambda key: {"x-api-key": key, "anthropic-version": "2023-06-01"},
    absent_headers=("authorization",),
    hello_body={
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
    },
    reply_wire=lambda text, stop, model, usage: anthropic_message(
        text, stop_reason=stop, model=model, usage=usage
    ),
    tool_reply_wire=_anthropic_tool_reply,
    tool_reply_text="I'll check both.",
    tools_wire=[
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "input_schema": dict(WEATHER.parameters),
        }
    ],
    reply_model="claude-sonnet-4-5-20250929",
    stream_wire=_anthropic_stream,
    stream_extra_body={},
    stream_chunk_size=4,
    stream_end_match="message_stop",
    error=_anthropic_error,
    retried_status=529,
    usage_wire=anthropic_usage(50, 20, cache_read=1000, cache_creation=200),
    usage=Usage(
        input_tokens=1250, output_tokens=20, cached_input_tokens=1000, cache_write_tokens=200
    ),
    uncached_input_tokens=50,
    stop_reasons=[
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("tool_use", "tool_use"),
        ("refusal", "other"),
        ("pause_turn", "other"),
    ],
    bad_kwargs=[{"default_max_tokens": 0}, {"api_version": ""}],
    malformed_bodies=[
        {"type": "message"},
        {"content": "text"},
        {"content": [{"type": "text"}]},
        {"content": [{"type": "tool_use", "name": "f", "input": {}}]},
        {"content": [{"type": "tool_use", "id": "", "name": "f", "input": {}}]},
        {"content": [{"type": "tool_use", "id": "t", "name": "f", "input": [1]}]},
        {"content": [], "usage": {"input_tokens": "many"}},
    ],
    unsupported=[
        ([Message.user([AudioBlock(data="UklGRg==")])], "no audio"),
        ([Message.user([FileBlock(name="a.txt", media_type="text/plain", data="!!")])], "base64"),
    ],
)
"""The Anthropic Messages provider."""


def _responses_stream(
    texts: Sequence[str],
    tool_calls: Sequence[ToolCallWire],
    usage: dict[str, Any] | None,
    model: str,
    end: bool,
) -> list[SseItem]:
    return responses_stream(texts, tool_calls=tool_calls, usage=usage, model=model, end=end)


def _responses_tool_reply(text: str | None, calls: Sequence[ToolUseBlock]) -> dict[str, Any]:
    items = [message_item(text)] if text is not None else []
    items += [call_item(c.id, c.name, dict(c.arguments)) for c in calls]
    return responses_response(items)


def _input_text(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


RESPONSES = ProviderCase(
    name="openai-responses",
    cls=OpenAIResponsesProvider,
    model="gpt-5-mini",
    api_key=OPENAI_KEY,
    options={"backoff_base": 0.01, "backoff_max": 0.05},
    url=lambda server: server.openai_url,
    default_base_url="https://api.openai.com/v1",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    path="/v1/responses",
    auth_headers=lambda key: {"authorization": f"Bearer {key}"},
    absent_headers=("x-api-key",),
    hello_body={
        "model": "gpt-5-mini",
        "input": [_input_text("system", "Be brief."), _input_text("user", "Hi")],
        "store": False,
        "include": ["reasoning.encrypted_content"],
    },
    reply_wire=responses_reply,
    tool_reply_wire=_responses_tool_reply,
    tool_reply_text="I'll check both.",
    tools_wire=[
        {
            "type": "function",
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": dict(WEATHER.parameters),
        }
    ],
    reply_model="gpt-5-mini-2025-08-07",
    stream_wire=_responses_stream,
    stream_extra_body={"store": False},
    stream_chunk_size=5,
    stream_end_match="response.completed",
    error=_openai_error,
    retried_status=500,
    usage_wire=responses_usage(1200, 30, cached=1024, reasoning=12),
    usage=Usage(1200, 30, cached_input_tokens=1024, reasoning_tokens=12),
    uncached_input_tokens=176,
    stop_reasons=[
        ("completed", "end_turn"),
        ("max_output_tokens", "max_tokens"),
        ("content_filter", "other"),
    ],
    bad_kwargs=[
        {"store": "no"},
        {"encrypted_reasoning": "always"},
        {"cache": "always"},
        {"prompt_cache_key": ""},
    ],
    malformed_bodies=[
        {"id": "resp_1"},
        {"output": "Hello"},
        {"output": [{"type": "message", "content": [{"type": "output_text"}]}]},
        {"output": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
        {"output": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
        {"output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"}]},
        {"output": [{"type": "reasoning", "id": "rs_1", "summary": "thinking"}]},
        {"output": [], "usage": {"input_tokens": -1}},
        {"output": [], "status": "incomplete", "incomplete_details": "max_output_tokens"},
        [1, 2],
    ],
    unsupported=[
        ([Message("assistant", [ImageBlock(url="https://x/a.png")])], "assistant message"),
        ([Message.user([FileBlock(name="a.pdf")])], "neither data= nor url="),
    ],
    max_tokens_key="max_output_tokens",
)
"""The OpenAI Responses provider."""

CASES = (OPENAI, ANTHROPIC, RESPONSES)
"""Every provider the shared tests run over."""

SHARED_BAD_KWARGS: Sequence[Mapping[str, Any]] = (
    {"model": ""},
    {"base_url": "localhost:11434"},
    {"timeout": 0},
    {"timeout": "10"},
    {"max_retries": -1},
    {"max_retries": 1.5},
    {"backoff_base": -1},
    {"backoff_base": 2, "backoff_max": 1},
    {"http_client": object()},
    {"extra_body": [1]},
)
"""Constructor arguments every provider refuses."""

SHARED_UNSUPPORTED: Sequence[tuple[Sequence[Message], str]] = (
    ([Message("system", [ImageBlock(url="https://x/a.png")])], "system message"),
    ([Message.user([ToolUseBlock("c", "t")])], "assistant message"),
)
"""Requests every provider refuses before sending, with the reason the error names."""
