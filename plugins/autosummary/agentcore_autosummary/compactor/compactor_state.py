"""The running state of a :class:`~agentcore_autosummary.Compactor`, and its stored form."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import cattrs
from attrs import field, frozen

from agentcore import ConfigError, Message
from agentcore.plugin_api import NON_EMPTY_STR, NON_NEGATIVE_INT, STR, message_to_dict


def _data(instance: object, attribute: Any, value: Any) -> None:
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise ConfigError(f"CompactorState.data must be a dict with str keys, got {value!r}")


@frozen
class CompactorState:
    """What a compactor remembers about one conversation between two calls.

    Keep the state a call returns and pass it to the next call on the same
    conversation; store it with :meth:`to_json` and read it back with
    :meth:`from_json`. A fresh conversation starts from ``CompactorState()``.

    :param summary: The summary of the first ``covered`` messages, None before the first,
        as the context sends it: fenced as data (:func:`~agentcore_autosummary.unfence_summary`
        gives the summarizer's text back); a state stored before the fence existed holds
        it unfenced, and it is sent as it is.
    :param covered: How many messages of the conversation (system messages at its
        start not counted) the summary covers.
    :param covered_digest: A digest of those messages: a later call whose messages
        do not start with them is refused rather than summarized wrongly.
    :param calls: How many calls the state has been through (the plugin's turn index:
        the debounce and the backoff after failed summaries count these).
    :param sent_tokens: The local count of the request the last call returned (its
        messages and tool definitions): with the usage the provider reported for it
        (``compact(..., usage=...)``), the next call learns how the server counts.
    :param data: The plugin's own bookkeeping, as it keeps it in a session's data
        (its summary state, the token correction learned from the provider's usage,
        the served window it learned).
    """

    summary: str | None = field(default=None, validator=NON_EMPTY_STR.or_none())
    covered: int = field(default=0, validator=NON_NEGATIVE_INT)
    covered_digest: str | None = field(default=None, validator=STR.or_none())
    calls: int = field(default=0, validator=NON_NEGATIVE_INT)
    sent_tokens: int | None = field(default=None, validator=NON_NEGATIVE_INT.or_none())
    data: dict[str, Any] = field(factory=dict, validator=_data)

    def to_json(self) -> dict[str, Any]:
        """The state as JSON-ready data (``json.dumps`` takes it as is)."""
        data: dict[str, Any] = _converter.unstructure(self)
        return data

    @classmethod
    def from_json(cls, data: Any) -> CompactorState:
        """The state stored as ``data`` by :meth:`to_json`.

        :raises ConfigError: ``data`` is not a stored compactor state; the message says why.
        """
        if not isinstance(data, dict):
            raise ConfigError(
                f"not a stored CompactorState (expected the dict of to_json(), got "
                f"{type(data).__name__}): {data!r:.200}"
            )
        try:
            return _converter.structure(data, cls)
        except ConfigError:
            raise
        except cattrs.BaseValidationError as exc:
            refused = _config_error(exc)
            detail = str(refused) if refused else "; ".join(cattrs.transform_error(exc))
            raise ConfigError(f"not a stored CompactorState ({detail}): {data!r:.200}") from exc
        except (TypeError, ValueError, KeyError) as exc:
            raise ConfigError(f"not a stored CompactorState ({exc}): {data!r:.200}") from exc


_converter = cattrs.Converter(forbid_extra_keys=True)


def _config_error(group: BaseException) -> ConfigError | None:
    """The first :class:`ConfigError` a field's validator raised inside cattrs' error group."""
    for inner in getattr(group, "exceptions", ()):
        found = inner if isinstance(inner, ConfigError) else _config_error(inner)
        if found is not None:
            return found
    return None


def digest(messages: Sequence[Message]) -> str:
    """A digest of ``messages``: equal for equal histories, whatever their token counts."""
    hashed = hashlib.sha256()
    for message in messages:
        hashed.update(json.dumps(message_to_dict(message), sort_keys=True).encode("utf-8"))
        hashed.update(b"\n")
    return hashed.hexdigest()
