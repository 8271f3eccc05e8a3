"""The exceptions agentcore raises, one small hierarchy per area."""

from __future__ import annotations


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


class StoreError(AgentCoreError):
    """A store could not read or write, or found stored data it cannot use."""


class CorruptDataError(StoreError):
    """Stored data does not parse; the message names the key or record."""


class ToolError(AgentCoreError):
    """A tool definition is invalid."""


class LlmError(AgentCoreError):
    """An LLM provider call failed."""


class AuthenticationError(LlmError):
    """The provider refused the credentials (HTTP 401 or 403)."""


class RateLimitError(LlmError):
    """The provider is rate limiting (HTTP 429).

    ``retry_after`` is the delay in seconds the server asked for, if any.
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BadRequestError(LlmError):
    """The provider rejected the request (HTTP 400); the message is the server's."""


class ServiceUnavailableError(LlmError):
    """The provider could not be reached or failed (HTTP 5xx, connection errors)."""


class LlmTimeoutError(LlmError):
    """The provider did not answer in time."""


class MalformedResponseError(LlmError):
    """The provider answered with something that is not a valid response."""
