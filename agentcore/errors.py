"""The exceptions agentcore raises, one small hierarchy per area."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from agentcore.stores.stored_turn import StoredTurn


class AgentCoreError(Exception):
    """Base class of every error agentcore raises on purpose."""


class ConfigError(AgentCoreError, ValueError):
    """A setting, argument or plugin configuration is invalid."""


class SessionError(AgentCoreError):
    """A session was used in a way it does not allow."""


class ReadonlySessionError(SessionError):
    """A turn was submitted to a read-only session."""


class UnknownSlotError(SessionError, KeyError):
    """A context slot id names no slot of the session."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown slot"


class TurnTimeoutError(SessionError, TimeoutError):
    """A turn did not finish within the bundle's ``turn_timeout``.

    The deadline covers every hook, model call and tool of the turn. Nothing
    of the turn was stored, and the session can take the next turn. It is a
    :class:`TimeoutError`, so ``except TimeoutError`` catches it too.
    """


class StoreError(AgentCoreError):
    """A store could not read or write, or found stored data it cannot use."""


class ConflictError(StoreError):
    """Another writer changed the session since this one last read it.

    The write was refused and nothing of it was stored; the message says
    what to do (usually: resume the session and submit again).
    """


class DuplicateTurnError(ConflictError):
    """A write named a ``turn_id`` that is already stored for its session.

    The write was refused whole and nothing of it was stored. ``turn`` is
    where the stored turn is (its slot, message range and turn index), so a
    caller that resubmitted a turn can return the stored one instead.
    """

    def __init__(self, message: str, turn: StoredTurn) -> None:
        super().__init__(message)
        self.turn = turn


class WriteOutcomeUnknownError(StoreError):
    """A write with a ``turn_id`` lost its connection and the store could not find out after.

    The only :class:`StoreError` after which a write with a ``turn_id`` may
    have been stored: the connection broke during the write, the store's
    retries broke too, and reading back whether the turn id is stored failed
    as well (the server stayed unreachable). Ask
    :meth:`~agentcore.stores.MemoryStore.find_turn` once the server is back.
    """


class StoreTimeoutError(StoreError, TimeoutError):
    """A store call did not finish within its deadline, and stored nothing.

    Raised by a write whose :attr:`~agentcore.stores.StoreWrite.timeout` ran out
    (waiting for a locked session, a busy database or a pooled connection
    included) or that hit a store-level ``lock_timeout`` / ``statement_timeout``.
    The transaction was rolled back and its connection given back. It is a
    :class:`TimeoutError`, so ``except TimeoutError`` catches it too.
    """


class CorruptDataError(StoreError):
    """Stored data does not parse; the message names the key or record."""


class ToolError(AgentCoreError):
    """A tool definition is invalid."""


class ToolArgumentError(ToolError):
    """A tool call's argument fits the schema but not the parameter's type (a bad date, say).

    :meth:`agentcore.tools.ToolRegistry.call` answers it with an error result
    naming the parameter; :meth:`agentcore.tools.Tool.convert_arguments`
    raises it.
    """


class OutputError(AgentCoreError, ValueError):
    """A model's reply does not match the output schema it was asked to follow.

    Raised by :meth:`agentcore.output.OutputSpec.parse`; the message says what
    did not match (text that is not JSON, a field the schema or the class
    refuses).
    """


class LlmErrorFields(TypedDict, total=False):
    """The details an :class:`LlmError` takes as keywords (each None when unknown).

    ``status_code``, ``code``, ``body`` and ``request_id`` go with every
    kind; the others only with the kind that declares them in its
    ``details`` (``retry_after``: :class:`RateLimitError`; ``prompt_tokens``,
    ``limit_tokens``, ``requested_tokens``:
    :class:`ContextWindowExceededError`; ``limit_bytes``:
    :class:`ResponseTooLargeError`; ``stop_reason``: :class:`EmptyReplyError`).
    """

    status_code: int | None
    code: str | None
    body: str | None
    request_id: str | None
    retry_after: float | None
    prompt_tokens: int | None
    limit_tokens: int | None
    requested_tokens: int | None
    limit_bytes: int | None
    stop_reason: str | None


_COMMON_DETAILS = ("status_code", "code", "body", "request_id")


class LlmError(AgentCoreError):
    """An LLM provider call failed.

    ``status_code`` is the HTTP status, ``code`` the provider's error code
    (``"context_length_exceeded"``, ``"model_not_found"``...), ``body`` the
    error body as the server sent it (never holding the API key) and
    ``request_id`` the server's id of the request, each when known. Every
    detail is a keyword (:class:`LlmErrorFields`); a subclass with details of
    its own names them in ``details`` and annotates them, and this one
    constructor sets them (None when not given). A detail the kind does not
    declare is a :class:`TypeError`.
    """

    details: ClassVar[tuple[str, ...]] = _COMMON_DETAILS
    """The keywords this kind takes: the common four, then its own."""

    status_code: int | None
    code: str | None
    body: str | None
    request_id: str | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("details", ())
        inherited = tuple(name for base in cls.__mro__[1:] for name in getattr(base, "details", ()))
        cls.details = tuple(dict.fromkeys((*inherited, *own)))

    def __init__(self, message: str, **fields: Unpack[LlmErrorFields]) -> None:
        super().__init__(message)
        unknown = sorted(set(fields) - set(self.details))
        if unknown:
            raise TypeError(
                f"{type(self).__name__} takes no {', '.join(unknown)}; "
                f"its details are {', '.join(self.details)}"
            )
        for name in self.details:
            setattr(self, name, fields.get(name))


class AuthenticationError(LlmError):
    """The provider refused the credentials (HTTP 401 or 403)."""


class RateLimitError(LlmError):
    """The provider is rate limiting (HTTP 429).

    ``retry_after`` is the delay in seconds the server asked for, if any.
    """

    details = ("retry_after",)
    retry_after: float | None


class BadRequestError(LlmError):
    """The provider rejected the request (HTTP 400); the message is the server's."""


class ContextWindowExceededError(BadRequestError):
    """A request does not fit the model's context window.

    Raised by a server that says so (OpenAI's ``context_length_exceeded``,
    Anthropic's "prompt is too long", vLLM, llama.cpp, Ollama), or before
    any call when a request can never fit (a single user message larger
    than the window). ``prompt_tokens`` is what the request held and
    ``limit_tokens`` the window, in the server's tokens, when known;
    ``requested_tokens`` adds the output the request reserved.
    """

    details = ("prompt_tokens", "limit_tokens", "requested_tokens")
    prompt_tokens: int | None
    limit_tokens: int | None
    requested_tokens: int | None


class ServiceUnavailableError(LlmError):
    """The provider could not be reached or failed (HTTP 5xx, connection errors)."""


class LlmTimeoutError(LlmError):
    """The provider did not answer in time."""


class MalformedResponseError(LlmError):
    """The provider answered with something that is not a valid response."""


class ModelNotFoundError(BadRequestError):
    """The provider does not know the model the request named (HTTP 404).

    Check the model name; for a local server, use a name it lists (Ollama:
    ``ollama pull MODEL`` first).
    """


class ResponseTooLargeError(MalformedResponseError):
    """A reply was larger than the provider's ``max_reply_bytes``; the rest was not read.

    ``limit_bytes`` is the cap that was passed.
    """

    details = ("limit_bytes",)
    limit_bytes: int | None


class EmptyReplyError(LlmError):
    """The model's final reply to a turn holds no text and no tool call.

    Raised by :meth:`~agentcore.AgentSession.submit_turn` and
    :meth:`~agentcore.AgentSession.submit_turn_stream` when the reply that
    would end the turn holds nothing but whitespace or reasoning: a model
    that ended its turn at once (some do right after a tool result), a
    thinking model that spent ``max_tokens`` on its reasoning, a reply a
    content filter emptied. Such a turn is not a success: nothing of it is
    stored (the tool calls and results of its earlier rounds included),
    ``on_turn_error`` fires, and the session can take the next turn.

    It is not retried: the same request tends to get the same reply (always
    at temperature 0), and only the caller knows whether another call is
    worth paying for; submit the turn again, or change it. A reply with tool
    calls only, or a structured output (its JSON is the reply's text), is
    not empty. ``stop_reason`` is the reply's
    ``LlmResponse.stop_reason``.
    """

    details = ("stop_reason",)
    stop_reason: str | None
