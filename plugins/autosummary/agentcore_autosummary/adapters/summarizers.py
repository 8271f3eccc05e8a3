"""The app's own model as the summarizer.

:func:`summary_provider` turns what an app already calls its model into the
:class:`~agentcore.LlmProvider` the plugin's summary calls go to, so a
:class:`~agentcore_autosummary.Compactor` (and with it every adapter) needs
no agentcore provider of its own:

- an agentcore provider is used as it is;
- an OpenAI client (``openai.AsyncOpenAI``, or the blocking ``openai.OpenAI``,
  whose calls run in a worker thread): ``chat.completions.create`` with the
  request's messages as Chat Completions dicts, for ``model`` (required);
- a model of the OpenAI Agents SDK (an ``agents.Model``, such as
  ``OpenAIResponsesModel`` or ``OpenAIChatCompletionsModel``; ``agent.model``
  when it is one): ``get_response`` with the messages as input items;
- a LangChain chat model (anything with ``ainvoke``): ``ainvoke`` with the
  messages as LangChain messages;
- any other callable, taking the request's messages as a list of Chat
  Completions dicts and returning the summary's text (or an awaitable of it;
  a plain function runs in a worker thread).

The reply's usage is the one the library reports (None for a callable), and
a reply cut at its length limit says so (``stop_reason="max_tokens"``), as
the plugin's retries expect. A failure of the library's call reaches the
plugin as an :class:`~agentcore.LlmError` of the kind its HTTP status names
(429: :class:`~agentcore.plugin_api.RateLimitError`, 5xx:
:class:`~agentcore.plugin_api.ServiceUnavailableError`...), so the plugin degrades as
with any provider; the libraries are imported only by the calls that need
them.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Literal

from agentcore import (
    ConfigError,
    LlmError,
    LlmProvider,
    LlmRequest,
    LlmResponse,
    Message,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    Usage,
)
from agentcore.plugin_api import (
    AuthenticationError,
    BadRequestError,
    LlmTimeoutError,
    RateLimitError,
    ServiceUnavailableError,
    from_langchain,
    to_langchain,
    to_openai,
)

Stop = Literal["end_turn", "max_tokens", "other"]
"""Why a reply stopped, as an agentcore :class:`~agentcore.LlmResponse` says it."""

__all__ = ["summary_provider"]

_CUT = frozenset({"length", "max_tokens", "max_output_tokens"})
"""Finish reasons the libraries give for a reply cut at its length limit."""


def summary_provider(summarizer: object, *, model: str | None = None) -> LlmProvider:
    """An agentcore provider that makes summaries with ``summarizer`` (see the module).

    :param summarizer: An agentcore provider, an OpenAI client, an OpenAI Agents
        SDK model, a LangChain chat model, or a callable from messages to text.
    :param model: The model an OpenAI client asks for (a summary request's own
        ``model`` wins); the other kinds answer with their own model.
    :raises ConfigError: ``summarizer`` is none of these (a model's name, for
        example), or an OpenAI client comes without ``model``.
    """
    if model is not None and (not isinstance(model, str) or not model):
        raise ConfigError(f"model must be a non-empty str or None, got {model!r:.100}")
    if isinstance(summarizer, LlmProvider):
        return summarizer
    if isinstance(summarizer, str):
        raise ConfigError(
            f"the summarizer {summarizer!r:.100} is a model's name, not a model: pass the "
            "client or model object the app calls (an AsyncOpenAI client with model=..., "
            "a LangChain chat model, an OpenAI Agents SDK model) or an agentcore provider"
        )
    completions = getattr(getattr(summarizer, "chat", None), "completions", None)
    if callable(getattr(completions, "create", None)):
        if model is None:
            raise ConfigError(
                "an OpenAI client as the summarizer needs the model to ask for: "
                "Compactor(client, config, model='...')"
            )
        return OpenAIClientSummarizer(summarizer, model)
    if callable(getattr(summarizer, "get_response", None)) and callable(
        getattr(summarizer, "stream_response", None)
    ):
        return AgentsModelSummarizer(summarizer)
    if callable(getattr(summarizer, "ainvoke", None)):
        return LangChainSummarizer(summarizer)
    if callable(summarizer):
        return CallableSummarizer(summarizer)
    raise ConfigError(
        f"the summarizer must be an agentcore provider, an OpenAI client, an OpenAI Agents "
        f"SDK model, a LangChain chat model or a callable, got {summarizer!r:.100}"
    )


class ForeignSummarizer:
    """A provider whose replies come from another library's call (see :func:`summary_provider`).

    Subclasses implement :meth:`reply`; a summary request is never streamed
    by the plugin, so :meth:`stream` hands the whole reply over at once.
    """

    label = "summarizer"
    """What the errors call it."""

    model: str | None = None
    """The model it asks for, when it names one."""

    async def reply(self, request: LlmRequest) -> tuple[str, Usage | None, Stop]:
        """The reply's text, its usage (None when unreported) and why it stopped."""
        raise NotImplementedError

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Send ``request`` through the library; its failures as :class:`LlmError`."""
        try:
            text, usage, stop = await self.reply(request)
        except (LlmError, ConfigError):
            raise
        except Exception as exc:
            raise llm_error(exc, self.label) from exc
        if not isinstance(text, str):
            raise llm_error(TypeError(f"it returned {type(text).__name__}, not str"), self.label)
        return LlmResponse(Message.assistant(text), usage, stop, request.model or self.model)

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """The reply of :meth:`complete`, as one text event and the closing event."""
        response = await self.complete(request)
        if response.text:
            yield TextDelta(response.text)
        yield ResponseComplete(response)


class OpenAIClientSummarizer(ForeignSummarizer):
    """Summaries from an OpenAI client's ``chat.completions.create``."""

    label = "OpenAI client"

    def __init__(self, client: Any, model: str) -> None:
        self.client = client
        self.model = model

    async def reply(self, request: LlmRequest) -> tuple[str, Usage | None, Stop]:
        arguments: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": to_openai(request.messages),
        }
        if request.max_tokens is not None:
            arguments["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            arguments["temperature"] = request.temperature
        response = await awaited(self.client.chat.completions.create, **arguments)
        choice = response.choices[0]
        usage = response.usage
        reported = None
        if usage is not None:
            details = getattr(usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            reported = Usage(usage.prompt_tokens, usage.completion_tokens, cached)
        return choice.message.content or "", reported, stop_reason(choice.finish_reason)


class AgentsModelSummarizer(ForeignSummarizer):
    """Summaries from an OpenAI Agents SDK model's ``get_response``."""

    label = "OpenAI Agents SDK model"

    def __init__(self, model: Any) -> None:
        self.agents_model = model
        name = getattr(model, "model", None)
        self.model = name if isinstance(name, str) else None

    async def reply(self, request: LlmRequest) -> tuple[str, Usage | None, Stop]:
        from agents import ModelSettings
        from agents.models.interface import ModelTracing

        systems = [m.text for m in request.messages if m.role == "system"]
        items = [item for m in request.messages if m.role != "system" for item in input_items(m)]
        settings = ModelSettings(max_tokens=request.max_tokens, temperature=request.temperature)
        response = await self.agents_model.get_response(
            "\n\n".join(systems) or None,
            items,
            settings,
            [],
            None,
            [],
            ModelTracing.DISABLED,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )
        texts = []
        stop: Stop = "end_turn"
        for item in response.output:
            if getattr(item, "type", None) != "message":
                continue
            for part in getattr(item, "content", ()):
                if getattr(part, "type", None) == "output_text":
                    texts.append(part.text)
            if getattr(item, "status", None) == "incomplete":
                stop = "max_tokens"
        usage = response.usage
        reported = None
        if usage is not None and (usage.input_tokens or usage.output_tokens):
            details = getattr(usage, "input_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            reported = Usage(usage.input_tokens, usage.output_tokens, cached)
        return "".join(texts), reported, stop


class LangChainSummarizer(ForeignSummarizer):
    """Summaries from a LangChain chat model's ``ainvoke``."""

    label = "LangChain chat model"

    def __init__(self, chat_model: Any) -> None:
        self.chat_model = chat_model
        name = getattr(chat_model, "model_name", None) or getattr(chat_model, "model", None)
        self.model = name if isinstance(name, str) else None

    async def reply(self, request: LlmRequest) -> tuple[str, Usage | None, Stop]:
        message = await self.chat_model.ainvoke(to_langchain(request.messages))
        usage = getattr(message, "usage_metadata", None)
        reported = None
        if isinstance(usage, Mapping) and ("input_tokens" in usage or "output_tokens" in usage):
            details = usage.get("input_token_details") or {}
            cached = details.get("cache_read", 0) if isinstance(details, Mapping) else 0
            reported = Usage(usage.get("input_tokens", 0), usage.get("output_tokens", 0), cached)
        metadata = getattr(message, "response_metadata", None) or {}
        finish = metadata.get("finish_reason") or metadata.get("stop_reason")
        return from_langchain([message])[0].text, reported, stop_reason(finish)


class CallableSummarizer(ForeignSummarizer):
    """Summaries from a callable: Chat Completions dicts in, the summary's text out."""

    label = "summarizer callable"

    def __init__(self, function: Callable[[list[dict[str, Any]]], Any]) -> None:
        self.function = function
        self.label = f"summarizer {getattr(function, '__qualname__', type(function).__name__)}"

    async def reply(self, request: LlmRequest) -> tuple[str, Usage | None, Stop]:
        text = await awaited(self.function, to_openai(request.messages))
        return text, None, "end_turn"


async def awaited(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function``'s result: awaited when it is a coroutine function's or an awaitable.

    A plain function runs in a worker thread, so a blocking client never
    holds the event loop.
    """
    call = getattr(type(function), "__call__", None)  # noqa: B004 - its own __call__
    if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call):
        result = function(*args, **kwargs)
    else:
        result = await asyncio.to_thread(function, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


def input_items(message: Message) -> list[dict[str, Any]]:
    """``message`` as Responses input items: its text, then its tool calls, or its result."""
    if message.role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id,
                "output": message.text,
            }
        ]
    items: list[dict[str, Any]] = []
    if message.text or not message.tool_calls:
        items.append({"role": message.role, "content": message.text})
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": json.dumps(dict(call.arguments), ensure_ascii=False),
            }
        )
    return items


def stop_reason(finish: object) -> Stop:
    """A library's finish reason as agentcore's: a cut at the length limit is ``max_tokens``."""
    if finish in _CUT:
        return "max_tokens"
    if finish in (None, "stop", "end_turn", "completed"):
        return "end_turn"
    return "other"


def llm_error(exc: BaseException, label: str) -> LlmError:
    """``exc`` from the library's call as the :class:`LlmError` its HTTP status names."""
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    message = f"the {label} failed: {type(exc).__name__}: {exc}"
    code = status if isinstance(status, int) else None
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return LlmTimeoutError(message, status_code=code)
    if code == 429:
        return RateLimitError(message, status_code=code)
    if code in (401, 403):
        return AuthenticationError(message, status_code=code)
    if code is not None and 400 <= code < 500:
        return BadRequestError(message, status_code=code)
    if (code is not None and code >= 500) or "Connection" in type(exc).__name__:
        return ServiceUnavailableError(message, status_code=code)
    return LlmError(message, status_code=code)
