"""Failed attempts: what each one is, whether to retry it, and raising it chain-free."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import httpx
from attrs import frozen

from agentcore.errors import (
    LlmError,
    LlmTimeoutError,
    MalformedResponseError,
    RateLimitError,
    ServiceUnavailableError,
)


@frozen
class Failure:
    """A failed attempt: the error to raise and whether a retry may help."""

    error: LlmError
    retryable: bool
    reason: str
    retry_after: float | None = None


def detach(error: LlmError) -> LlmError:
    """``error`` with its exception chain cut, so no httpx object (or key) hangs from it."""
    error.__cause__ = None
    error.__context__ = None
    error.__suppress_context__ = True
    return error


class FailedAttempt(Exception):
    """Carries the failure of one attempt to the retry loop."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


def retryable(error: LlmError, status: int | None) -> bool:
    """Whether a retry may help: rate limits, unavailable servers, HTTP 408."""
    return isinstance(error, (RateLimitError, ServiceUnavailableError)) or status == 408


def failure_of(error: LlmError) -> Failure:
    """The failure an LlmError raised during an attempt stands for."""
    return Failure(
        error,
        retryable=retryable(error, None),
        reason=type(error).__name__,
        retry_after=getattr(error, "retry_after", None),
    )


def transport_failure(label: str, redact: Callable[[str], str], exc: httpx.HTTPError) -> Failure:
    """The failure of an attempt that httpx could not complete (connect, read, decode...)."""
    detail = redact(str(exc) or type(exc).__name__)
    reason = type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        error: LlmError = LlmTimeoutError(
            f"could not connect to the {label} in time (httpx.{reason}): {detail}"
        )
        return Failure(error, retryable=True, reason=reason)
    if isinstance(exc, httpx.TimeoutException):
        error = LlmTimeoutError(
            f"the {label} did not answer in time (httpx.{reason}: no byte for the read timeout)"
        )
        return Failure(error, retryable=False, reason=reason)
    if isinstance(exc, httpx.DecodingError):
        error = MalformedResponseError(
            f"the {label} sent a body that cannot be decoded (httpx.{reason}): {detail}"
        )
        return Failure(error, retryable=False, reason=reason)
    if isinstance(exc, httpx.TransportError):
        error = ServiceUnavailableError(
            f"the connection to the {label} failed (httpx.{reason}): {detail}"
        )
        return Failure(error, retryable=True, reason=reason)
    error = ServiceUnavailableError(f"the call to the {label} failed (httpx.{reason}): {detail}")
    return Failure(error, retryable=False, reason=reason)


def raise_failure(failure: Failure) -> NoReturn:
    """Raise the failure's error with no exception chain behind it."""
    raise detach(failure.error)
