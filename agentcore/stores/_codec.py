"""How stores turn a :class:`StoreWrite` into JSON text and stored text back into values.

Both stores go through these functions, so they accept and return exactly the same things.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any, TypeVar

import attrs
import cattrs
from attrs import frozen

from agentcore._plain_messages import plain_message_dict, plain_message_json
from agentcore.errors import ConflictError, CorruptDataError, DuplicateTurnError, StoreError
from agentcore.messages import Message, set_token_count, token_counts
from agentcore.serialization import converter, message_to_dict, plain_message
from agentcore.stores._deadline import check_timeout
from agentcore.stores._search_text import search_document
from agentcore.stores.base import (
    MAX_ID_BYTES,
    JsonValue,
    MessageAppend,
    SessionState,
    StoredTurn,
    StoreWrite,
)
from agentcore.usage import Usage
from agentcore.validators import is_int

T = TypeVar("T")

_ConfigDict = dict[str, Any]


@frozen
class EncodedAppend:
    """One slot's appended messages: the JSON text stored for each, and what it is found by.

    ``documents`` are the messages' search texts (see :mod:`agentcore.stores.search`),
    or empty when :func:`encode_batch` was asked for none.
    """

    start: int
    bodies: tuple[str, ...]
    documents: tuple[str, ...]


@frozen
class EncodedWrite:
    """A :class:`StoreWrite` checked and turned into the JSON text a store keeps.

    Both stores build one before they change anything, so a batch that cannot
    be stored is refused whole.
    """

    session_id: str
    state: str | None
    slot_configs: dict[str, str]
    appends: dict[str, EncodedAppend]
    data: dict[str, str]
    deleted_data: tuple[str, ...]
    expected_versions: dict[str, int]
    timeout: float | None = None
    """Seconds the write may take (:attr:`StoreWrite.timeout`)."""
    turn_id: str | None = None
    turn: StoredTurn | None = None
    """Where the write puts its turn, when it has a ``turn_id``."""


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dumps(value: Any) -> str:
    """``value`` as JSON without spaces, as ``json.dumps(..., ensure_ascii=False)`` makes it."""
    return _ENCODER.encode(value)


def _shown(value: str) -> str:
    """``value`` for a message: its repr, cut short."""
    return repr(value) if len(value) <= 40 else f"{value[:40]!r}... ({len(value)} characters)"


def _check_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        shown = _shown(value) if isinstance(value, str) else repr(value)
        raise StoreError(f"{what} must be a non-empty string, got {shown}")
    if len(value) > MAX_ID_BYTES or len(value.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        raise StoreError(
            f"{what} is {len(value.encode('utf-8', 'surrogatepass'))} bytes in UTF-8, over the "
            f"{MAX_ID_BYTES} bytes a store keeps (PostgreSQL's btree index rows hold at most "
            f"2704 bytes); use a shorter id, or a hash of it: {_shown(value)}"
        )
    if "\x00" in value:
        # PostgreSQL text cannot hold NUL; refuse it in every store alike.
        raise StoreError(f"{what} must not contain NUL characters, got {_shown(value)}")
    _check_utf8(value, what)
    return value


def _id_fits(value: object) -> bool:
    """Whether ``value`` passes :func:`_check_id`, checked without building its error."""
    if type(value) is not str or not value or len(value) * 4 > MAX_ID_BYTES or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_session_id(session_id: object) -> str:
    """``session_id`` if every store can keep it; :class:`StoreError` saying why not otherwise."""
    return _check_id(session_id, "session id")


def _check_utf8(text: str, what: str) -> None:
    # Lone surrogates survive json.dumps(ensure_ascii=False) but cannot be
    # stored as UTF-8; refuse them here so every store behaves the same.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(f"{what} holds text that is not valid Unicode: {exc}") from exc


_INFINITY = float("inf")


def _utf8(text: str) -> bool:
    """Whether ``text`` is valid Unicode (encodes as UTF-8): :func:`_check_utf8` without a label."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _encode_json(value: Any, what: str) -> str:
    try:
        text = _dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise StoreError(f"{what} is not JSON-serializable: {exc}") from exc
    _check_utf8(text, what)
    return text


_STATE_FIELDS_KNOWN = tuple(f.name for f in attrs.fields(SessionState)) == (
    "turn_index",
    "current_slot",
    "cost",
)
_USAGE_FIELDS = tuple(f.name for f in attrs.fields(Usage))
"""A usage's counts, in the order the converter writes them."""


def state_json(state: SessionState) -> str | None:
    """``state`` as stored JSON, written directly; None when the converter must make it.

    The text is the one the converter's dict gives (defaults left out) through
    :func:`_dumps`: every turn stores the state. A field of another type than
    the class declares (an int that is a bool, say) goes through the converter.
    """
    if not _STATE_FIELDS_KNOWN:
        return None
    parts: list[str] = []
    turn_index, current_slot, cost = state.turn_index, state.current_slot, state.cost
    if type(turn_index) is not int or type(current_slot) is not str or type(cost) is not dict:
        return None
    if turn_index != 0:
        parts.append(f'"turn_index":{turn_index}')
    if current_slot != "default":
        parts.append(f'"current_slot":{encode_basestring(current_slot)}')
    if cost:
        usages: list[str] = []
        for purpose, usage in cost.items():
            if type(purpose) is not str or type(usage) is not Usage:
                return None
            counts = [(name, getattr(usage, name)) for name in _USAGE_FIELDS]
            if any(type(count) is not int for _, count in counts):
                return None
            fields = ",".join(f'"{name}":{count}' for name, count in counts if count != 0)
            usages.append(f"{encode_basestring(purpose)}:{{{fields}}}")
        parts.append(f'"cost":{{{",".join(usages)}}}')
    return f"{{{','.join(parts)}}}"


def encode_batch(batch: StoreWrite, *, searchable: bool = True) -> EncodedWrite:
    """Check ``batch`` and serialize every part of it; raise :class:`StoreError` if any fails.

    ``searchable=False`` leaves the messages' search texts out (``documents`` empty): a
    store whose index reads the stored messages later (SQLite's) does not pay for them
    in the write.
    """
    if not isinstance(batch, StoreWrite):
        raise StoreError(f"a store writes a StoreWrite, not {type(batch).__name__}")
    session_id = batch.session_id
    if not _id_fits(session_id):
        session_id = _check_id(session_id, "session id")
    where = f"session {session_id!r}"

    state: str | None = None
    if batch.state is not None:
        if not isinstance(batch.state, SessionState):
            raise StoreError(
                f"state of {where} must be a SessionState, not {type(batch.state).__name__}"
            )
        state = state_json(batch.state)
        if state is not None:
            if not _utf8(state):
                _check_utf8(state, f"state of {where}")  # raises, saying where
        else:
            try:
                unstructured = converter.unstructure(batch.state, SessionState)
            except Exception as exc:
                raise StoreError(f"state of {where} cannot be serialized: {exc}") from exc
            state = _encode_json(unstructured, f"state of {where}")

    slot_configs: dict[str, str] = {}
    for slot_id, config in batch.slot_configs.items():
        if not _id_fits(slot_id):
            _check_id(slot_id, f"slot id in {where}")
        if not isinstance(config, Mapping):
            raise StoreError(
                f"config of slot {slot_id!r} in {where} must be a mapping, "
                f"not {type(config).__name__}"
            )
        slot_configs[slot_id] = _encode_json(dict(config), f"config of slot {slot_id!r} in {where}")

    appends: dict[str, EncodedAppend] = {}
    for slot_id, append in batch.appends.items():
        if not _id_fits(slot_id):
            _check_id(slot_id, f"slot id in {where}")
        if not isinstance(append, MessageAppend):
            raise StoreError(
                f"append to slot {slot_id!r} in {where} must be a MessageAppend, "
                f"not {type(append).__name__}"
            )
        start = append.start
        if not is_int(start) or start < 0:
            raise StoreError(
                f"append to slot {slot_id!r} in {where} needs a start index >= 0, got {start!r}"
            )
        bodies: list[str] = []
        for offset, message in enumerate(append.messages):
            if not isinstance(message, Message):
                what = f"message {start + offset} of slot {slot_id!r} in {where}"
                raise StoreError(f"{what} must be a Message, not {type(message).__name__}")
            try:
                body = encode_message(message)
                body.encode("utf-8")
            except (TypeError, ValueError, RecursionError) as exc:
                what = f"message {start + offset} of slot {slot_id!r} in {where}"
                if isinstance(exc, UnicodeEncodeError):
                    raise StoreError(f"{what} holds text that is not valid Unicode: {exc}") from exc
                raise StoreError(f"{what} is not JSON-serializable: {exc}") from exc
            bodies.append(body)
        documents = (
            tuple(search_document(message) for message in append.messages) if searchable else ()
        )
        appends[slot_id] = EncodedAppend(start, tuple(bodies), documents)

    data: dict[str, str] = {}
    for key, value in batch.data.items():
        if not _id_fits(key):
            _check_id(key, f"data key in {where}")
        data[key] = _encode_json(value, f"data {key!r} of {where}")
    for key in batch.deleted_data:
        _check_id(key, f"deleted data key in {where}")
        if key in data:
            raise StoreError(f"data {key!r} of {where} is both set and deleted in one write")
    deleted = tuple(sorted(batch.deleted_data))

    expected: dict[str, int] = {}
    for slot_id, version in batch.expected_versions.items():
        if not _id_fits(slot_id):
            _check_id(slot_id, f"slot id in {where}")
        if not is_int(version) or version < 0:
            raise StoreError(
                f"expected version of slot {slot_id!r} in {where} must be an int >= 0, "
                f"got {version!r}"
            )
        expected[slot_id] = version

    timeout: float | None = None
    if type(batch.timeout) is float and 0 < batch.timeout < _INFINITY:
        timeout = batch.timeout  # what check_timeout gives back: checked without its label
    elif batch.timeout is not None:
        timeout = check_timeout(batch.timeout, f"timeout of the write to {where}")
    turn_id: str | None = None
    turn: StoredTurn | None = None
    if batch.turn_id is not None:
        turn_id = batch.turn_id
        if not _id_fits(turn_id):
            turn_id = _check_id(turn_id, f"turn id of a write to {where}")
        turn = _turn_of(batch, appends, turn_id, where)
    return EncodedWrite(
        session_id,
        state,
        slot_configs,
        appends,
        data,
        deleted,
        expected,
        timeout=timeout,
        turn_id=turn_id,
        turn=turn,
    )


def _turn_of(
    batch: StoreWrite, appends: Mapping[str, EncodedAppend], turn_id: str, where: str
) -> StoredTurn:
    """Where the write of turn ``turn_id`` puts it: the one slot it appends messages to."""
    filled = sorted(slot_id for slot_id, append in appends.items() if append.bodies)
    if len(filled) > 1:
        raise StoreError(
            f"the write of turn {turn_id!r} to {where} appends messages to {len(filled)} slots "
            f"({', '.join(map(repr, filled))}); a turn's messages go to one slot"
        )
    turn_index = batch.state.turn_index if batch.state is not None else None
    if not filled:
        return StoredTurn(None, 0, 0, turn_index)
    append = appends[filled[0]]
    return StoredTurn(filled[0], append.start, append.start + len(append.bodies), turn_index)


def duplicate_turn(session_id: str, turn_id: str, turn: StoredTurn) -> DuplicateTurnError:
    """The error for a write whose ``turn_id`` is already stored."""
    where = (
        f"messages {turn.start} to {turn.stop - 1} of slot {turn.slot_id!r}"
        if turn.slot_id is not None and turn.stop > turn.start
        else "no messages"
    )
    return DuplicateTurnError(
        f"turn {turn_id!r} of session {session_id!r} is stored already ({where}); "
        "nothing of this write was stored",
        turn,
    )


TOKENS_FIELD = "tokens"
"""The key of a stored message's token counts: counter key → count."""


def encode_message(message: Message) -> str:
    """``message`` as stored JSON, with the token counts it carries (:data:`TOKENS_FIELD`)."""
    counts = token_counts(message)
    text = plain_message_json(message, counts, TOKENS_FIELD)
    if text is not None:
        return text
    data = plain_message_dict(message)
    if data is None:
        data = message_to_dict(message)
    if counts:
        data[TOKENS_FIELD] = dict(counts)
    return _dumps(data)


def append_conflict(session_id: str, slot_id: str, start: int, count: int) -> ConflictError:
    """The error for an append that does not start at the slot's message count."""
    return ConflictError(
        f"append to slot {slot_id!r} in session {session_id!r} starts at {start} but the "
        f"slot holds {count} messages: another writer changed the session; "
        "reload the session (or resume it in a new AgentSession) before writing again"
    )


def version_conflict(session_id: str, slot_id: str, expected: int, stored: int) -> ConflictError:
    """The error for a write that expected another config version of a slot."""
    return ConflictError(
        f"slot {slot_id!r} in session {session_id!r} is at config version {stored}, not the "
        f"expected {expected}: another write replaced its config (a plugin's or a mode change); "
        "reload the session and recompute the change from what is stored now"
    )


def _decode(text: Any, cls: type[T], where: str) -> T:
    """Parse stored JSON ``text`` as ``cls``; anything wrong raises :class:`CorruptDataError`."""
    return _structure(_parse(text, where), cls, where)


# A stored record that cannot be read is named (session, slot, index or key), never shown:
# its content may be a user's message, and the error goes into logs. So these errors carry
# the position or JSON path of the damage and the kind of problem, and no exception that
# holds the text (json's and cattrs' do) is chained to them.


def _parse(text: Any, where: str) -> Any:
    """The JSON value stored as ``text``; invalid JSON raises :class:`CorruptDataError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except (TypeError, ValueError, RecursionError) as exc:
        detail = type(exc).__name__
    raise CorruptDataError(f"stored {where} is not valid JSON ({detail}; content not shown)")


def _structure(data: Any, cls: type[T], where: str) -> T:
    """Parsed JSON ``data`` as ``cls``; anything wrong raises :class:`CorruptDataError`."""
    try:
        return converter.structure(data, cls)
    except Exception as exc:  # cattrs and attrs validators raise many kinds
        detail = "; ".join(
            cattrs.transform_error(exc, format_exception=_kind_of_error)
            if isinstance(exc, cattrs.BaseValidationError)
            else [type(exc).__name__]
        )
    raise CorruptDataError(
        f"stored {where} does not match its format ({detail}; content not shown)"
    )


def _kind_of_error(exc: BaseException, type_: type | None) -> str:
    """What went wrong at one JSON path, without the value (cattrs' own text may show it)."""
    if isinstance(exc, KeyError):
        return "required field missing"
    expected = getattr(type_, "__name__", None) if type_ is not None else None
    return f"invalid value ({type(exc).__name__}{f', expected {expected}' if expected else ''})"


def decode_config(text: Any, slot_id: str, session_id: str) -> _ConfigDict:
    return _decode(text, _ConfigDict, f"config of slot {slot_id!r} in session {session_id!r}")


def decode_message(text: Any, slot_id: str, index: int, session_id: str) -> Message:
    """The stored message ``text``, carrying the token counts stored with it.

    Counts are a cache: a malformed count is dropped (the message is counted
    again when needed), never an error. A plain message (text, tool calls) is
    built without cattrs (:func:`~agentcore.serialization.plain_message`);
    the rest, and every error, goes the converter's way.
    """
    try:
        data = json.loads(text)
    except Exception:  # _parse below says what is wrong, the same way as for any record
        data = _UNPARSED
    stored = data.pop(TOKENS_FIELD, None) if type(data) is dict else None
    # Counts are kept newest first, as stored; a malformed one is left out.
    counts = (
        tuple(
            (key, count)
            for key, count in stored.items()
            if isinstance(key, str) and type(count) is int and count >= 0
        )
        if type(stored) is dict
        else ()
    )
    message = plain_message(data, counts)
    if message is None:
        where = f"message {index} of slot {slot_id!r} in session {session_id!r}"
        if data is _UNPARSED:
            data = _parse(text, where)  # raises
        message = _structure(data, Message, where)
        for key, count in reversed(counts):
            set_token_count(message, key, count)
    return message


_UNPARSED: Any = object()


def decode_state(text: Any, session_id: str) -> SessionState:
    return _decode(text, SessionState, f"state of session {session_id!r}")


def decode_data(text: Any, key: str, session_id: str) -> JsonValue:
    return _decode(text, Any, f"data {key!r} of session {session_id!r}")


def check_start(start: object) -> int:
    if not is_int(start) or start < 0:
        raise StoreError(f"load_messages needs a start index >= 0, got {start!r}")
    return start


def check_stop(start: int, stop: object) -> int | None:
    """``stop`` of a range read: None (to the end) or an int >= ``start``."""
    if stop is None:
        return None
    if not is_int(stop) or stop < start:
        raise StoreError(
            f"load_messages needs a stop index >= start ({start}) or None, got {stop!r}"
        )
    return stop


def check_lease(session_id: object, owner: object, seconds: object = 1.0) -> float:
    """Check the arguments of a lease call; return ``seconds`` as a float."""
    _check_id(session_id, "session id of a lease")
    _check_id(owner, "lease owner")
    checked = check_timeout(seconds, "lease seconds")
    if checked is None:
        raise StoreError("lease seconds must be a finite number of seconds > 0, got None")
    return checked
