"""Token counts for messages, exact where possible and never blocking a turn.

Counting uses tiktoken. Which encoding is used:

* An OpenAI model name (``gpt-4o``, ``gpt-4``, ``o1``…) uses the encoding
  tiktoken names for it (:func:`tiktoken.encoding_name_for_model`).
* Any other name (``None``, Claude, Llama, Qwen, unknown names) uses
  ``cl100k_base``. Those models have their own tokenizers, so their counts are
  an approximation (:attr:`TokenCounter.exact` is False); a plugin may
  correct them from the usage the server reports (:mod:`agentcore.budget`).

``cl100k_base`` and ``o200k_base`` come with agentcore (:mod:`agentcore.encodings`):
they load from local files, never from the network. Any other encoding (the
older ``p50k_base``, ``r50k_base``) is loaded by tiktoken in a worker thread,
and the caller waits at most ``AGENTCORE_TIKTOKEN_TIMEOUT`` seconds (default
5; ``0`` skips it; tiktoken reads its file cache first). If that fails, the
bundled ``cl100k_base`` counts instead (not exact), and if even that cannot
load, counts are estimates (see :func:`estimate_text_tokens`) and one warning
is logged per process by the ``agentcore.tokens`` logger. A failed load is not
retried in the same process. Counting never raises.

Users with an exact tokenizer for their model pass it as a function:
``TokenCounter("my-model", count_text=my_tokenizer_len)``; the agent's
``token_counter`` setting makes plugins that count use it.

Messages are counted the way OpenAI's cookbook counts chat messages
("How to count tokens with tiktoken"): each message costs
:data:`TOKENS_PER_MESSAGE` plus the tokens of its role and content, and a
request adds :data:`REPLY_PRIMING_TOKENS` for the start of the reply. Content
is counted block by block:

* text: the tokens of the text;
* a tool call: the tokens of its id, its name and its arguments as the
  OpenAI-compatible provider sends them (``json.dumps`` with
  ``ensure_ascii=False``);
* a tool result: the tokens of its ``tool_call_id`` and of its text;
* an image: :data:`IMAGE_TOKENS`, OpenAI's price of a low-detail image;
* audio: :data:`AUDIO_TOKENS_PER_SECOND` for each second, the length being
  guessed from the data size as 16 kHz 16-bit mono PCM;
* a file: the tokens of its name, plus, for inline data, one token per
  :data:`ESTIMATE_BYTES_PER_TOKEN` bytes, or :data:`FILE_URL_TOKENS` for a file
  given by URL;
* an opaque item (:class:`~agentcore.messages.OpaqueBlock`): its ``tokens``
  when the server gave them, else one token per :data:`ESTIMATE_BYTES_PER_TOKEN`
  bytes of its JSON.

Tool definitions are counted by :meth:`TokenCounter.count_tools`: each costs
:data:`TOKENS_PER_TOOL` plus the tokens of its definition as the
OpenAI-compatible provider sends it (JSON). A counter counts each definition
once: counts are kept per counter, by spec object and by the definition's
JSON, at most :data:`TOOL_CACHE_SIZE` of each (tool specs are immutable, and
:meth:`ToolRegistry.specs() <agentcore.ToolRegistry.specs>` hands out the
same objects on every call).

Large texts are counted off the event loop: :meth:`TokenCounter.count_messages_async`
counts any text longer than :data:`INLINE_COUNT_CHARS` characters in a worker
thread, so a turn with a 10 MB message does not stall other sessions.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from agentcore import _tiktoken_loading, _token_text, _tool_tokens
from agentcore._cut_tokens import cut_middle
from agentcore._tiktoken_loading import (
    encoding_for_model as encoding_for_model,
)
from agentcore._tiktoken_loading import forget_encodings, model_encoding, resolve_encoding
from agentcore._token_text import SLICE_CHARS, arguments_json, base64_size, slices, text_size
from agentcore._token_text import (
    estimate_text_tokens as estimate_text_tokens,
)
from agentcore._tool_tokens import ToolTokenCounts
from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    TextBlock,
    ToolUseBlock,
    set_token_count,
    token_counts,
)
from agentcore.validators import is_int

if TYPE_CHECKING:
    from tiktoken import Encoding

    from agentcore.llm import ToolSpec

logger = logging.getLogger(__name__)

DEFAULT_ENCODING = _tiktoken_loading.DEFAULT_ENCODING
"""The encoding used for every model tiktoken does not know."""

ESTIMATE = "estimate"
"""The :attr:`TokenCounter.encoding_name` of a counter that estimates."""

CUSTOM = "custom"
"""The :attr:`TokenCounter.encoding_name` of a counter built on a user's function."""

TIMEOUT_ENV_VAR = _tiktoken_loading.TIMEOUT_ENV_VAR
"""Seconds to wait for tiktoken to load an encoding; ``0`` skips loading it."""

DEFAULT_TIMEOUT = _tiktoken_loading.DEFAULT_TIMEOUT
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

TOKENS_PER_TOOL = _tool_tokens.TOKENS_PER_TOOL
"""Tokens each tool definition costs besides its JSON (the wrapper a server renders)."""

COUNT_RULES_VERSION = 1
"""Version of how a message is counted (overheads, blocks): part of :attr:`TokenCounter.key`."""

ESTIMATE_BYTES_PER_TOKEN = _token_text.ESTIMATE_BYTES_PER_TOKEN
"""UTF-8 bytes per token assumed by the estimate, outside CJK scripts."""

TOOL_CACHE_SIZE = _tool_tokens.TOOL_CACHE_SIZE
"""Tool-definition counts a counter keeps (by spec, and by JSON); the cache is emptied when full."""

INLINE_COUNT_CHARS = 16_384
"""Texts longer than this are counted in a worker thread by the async methods."""

_lock = threading.RLock()
_counters: dict[str | None, TokenCounter] = {}


class TokenCounter:
    """Counts the tokens of text, messages and tool definitions for one model.

    Get one with :func:`get_token_counter`, which shares one counter (and its
    cache) per model name. Creating a counter loads its encoding (bundled
    encodings load from disk in well under a second; others may take up to
    ``AGENTCORE_TIKTOKEN_TIMEOUT`` seconds the first time in a process).

    :param model: the model name, or None when the model is not known.
    :param count_text: a function returning the tokens of a text in the model's
        own tokenizer; when given, every count goes through it instead of tiktoken.
    :param exact: whether ``count_text`` is the model's own tokenizer (default
        True); ignored without ``count_text``.
    :param name: names ``count_text`` in :attr:`key` (default: the model and the
        function's module and qualified name). Change it when the function starts to count
        differently, so counts stored with messages are made again.

    Counts of messages are kept on the messages (see :attr:`key`).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        count_text: Callable[[str], int] | None = None,
        exact: bool = True,
        name: str | None = None,
    ) -> None:
        if count_text is not None and not callable(count_text):
            raise TypeError(f"count_text must be callable, got {count_text!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"name must be a non-empty string, got {name!r}")
        self._model = model
        self._custom = count_text
        self._wanted = encoding_for_model(model)
        self._encoding: Encoding | None = None
        self._tool_counts = ToolTokenCounts()
        self._role_counts: dict[str, int] = {}
        if count_text is not None:
            self._exact = bool(exact)
        else:
            self._encoding, same = resolve_encoding(self._wanted)
            # cl100k standing in for a model tiktoken does not know is an estimate.
            self._exact = same and model_encoding(model) is not None
        if count_text is not None:
            function = name or f"{model}:{_function_name(count_text)}"
            self._key = f"custom:{function}/{COUNT_RULES_VERSION}"
        else:
            self._key = f"{self.encoding_name}/{COUNT_RULES_VERSION}"

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
        """The encoding used: :data:`CUSTOM`, a tiktoken name, or :data:`ESTIMATE`."""
        if self._custom is not None:
            return CUSTOM
        return ESTIMATE if self._encoding is None else self._encoding.name

    @property
    def key(self) -> str:
        """What identifies this counter's counts: its encoding (or function) and counting rules.

        Two counters with the same key count every message alike. A message
        keeps its count under this key (``agentcore.messages.token_counts``)
        and stores save it with the message, so a history is counted once,
        when it is stored, not again on every resume; a counter with another
        key (a new model, tokenizer or counting rules) counts it afresh.
        """
        return self._key

    @property
    def exact(self) -> bool:
        """Whether counts are the model's own: False for an estimate or a stand-in encoding.

        A known OpenAI model counted with its own encoding, or a counter built on
        a ``count_text`` function said to be exact, is exact. A model tiktoken
        does not know (Claude, Llama, SmolLM, None...) counted with
        ``cl100k_base`` is not.
        """
        return self._exact

    def count_text(self, text: str) -> int:
        """Count the tokens in ``text``; special tokens count as plain text."""
        if not text:
            return 0
        if self._custom is not None:
            return _checked_count(self._custom(text))
        if self._encoding is not None:
            try:
                if len(text) <= SLICE_CHARS:
                    return len(self._encoding.encode_ordinary(text))
                # Slices cut where tiktoken's pre-tokenizer cuts too, so the sum is
                # the same count; each slice holds the GIL only briefly.
                return sum(len(self._encoding.encode_ordinary(part)) for part in slices(text))
            except Exception as error:
                logger.debug("tiktoken failed, estimating instead: %r", error)
        return estimate_text_tokens(text)

    async def count_text_async(self, text: str) -> int:
        """:meth:`count_text`, in a worker thread when ``text`` is long."""
        if len(text) <= INLINE_COUNT_CHARS:
            return self.count_text(text)
        return await asyncio.to_thread(self.count_text, text)

    def count_message(self, message: Message) -> int:
        """Count the tokens ``message`` costs in a request, overhead included.

        The count is kept on the message under :attr:`key`, so a message is
        counted once per counter key.
        """
        cached = self._cached(message)
        if cached is not None:
            return cached
        return self._remember(message, self._count_message(message))

    async def count_message_async(self, message: Message) -> int:
        """:meth:`count_message`, counting a long message in a worker thread."""
        cached = self._cached(message)
        if cached is not None:
            return cached
        if text_size(message) <= INLINE_COUNT_CHARS:
            return self._remember(message, self._count_message(message))
        count = await asyncio.to_thread(self._count_message, message)
        return self._remember(message, count)

    def count_messages(self, messages: Iterable[Message]) -> int:
        """Count the tokens ``messages`` cost as a request: messages plus reply priming."""
        return sum(self.count_message(message) for message in messages) + REPLY_PRIMING_TOKENS

    async def count_messages_async(self, messages: Iterable[Message]) -> int:
        """:meth:`count_messages` without blocking the event loop for long.

        Cached messages cost nothing; short ones are counted inline, yielding to
        the loop after every :data:`INLINE_COUNT_CHARS` * 4 characters; a long
        one is counted in a worker thread.
        """
        total = REPLY_PRIMING_TOKENS
        since_yield = 0
        for message in messages:
            cached = self._cached(message)
            if cached is not None:
                total += cached
                continue
            size = text_size(message)
            if size > INLINE_COUNT_CHARS:
                total += await self.count_message_async(message)
                continue
            if since_yield + size > SLICE_CHARS:
                await asyncio.sleep(0)
                since_yield = 0
            since_yield += size
            total += self.count_message(message)
        return total

    def count_tools(self, tools: Sequence[ToolSpec]) -> int:
        """Count the tokens the definitions of ``tools`` cost in a request.

        Each tool costs :data:`TOKENS_PER_TOOL` plus its definition as the
        OpenAI-compatible provider sends it, as JSON. Each definition is
        counted once per counter (see :data:`TOOL_CACHE_SIZE`): a later call
        with the same spec objects, or with specs whose JSON is the same,
        reads the kept counts.
        """
        return self._tool_counts.count(tools, self.count_text)

    def cut_middle(self, text: str, max_tokens: int) -> str:
        """``text`` cut to at most ``max_tokens`` tokens, keeping its head and tail.

        The middle is replaced by a marker saying how many tokens were left
        out: ``[… 12345 tokens left out …]``. A text that fits is returned as
        it is; with too small a ``max_tokens`` only the marker may remain.
        """
        encoding = self._encoding if self._custom is None else None
        return cut_middle(text, max_tokens, self.count_text, encoding)

    def counted(self, message: Message) -> bool:
        """Whether ``message`` carries this counter's count already (made or stored)."""
        return self._cached(message) is not None

    def _cached(self, message: Message) -> int | None:
        for key, count in token_counts(message):
            if key == self._key:
                return count
        return None

    def _remember(self, message: Message, count: int) -> int:
        set_token_count(message, self._key, count)
        return count

    def _count_message(self, message: Message) -> int:
        role = self._role_counts.get(message.role)
        if role is None:
            role = self._role_counts[message.role] = self.count_text(message.role)
        count = TOKENS_PER_MESSAGE + role
        if message.tool_call_id is not None:
            count += self.count_text(message.tool_call_id)
        for block in message.content:
            count += self._count_block(block)
        return count

    def _count_block(self, block: ContentBlock) -> int:
        if isinstance(block, TextBlock):
            return self.count_text(block.text)
        if isinstance(block, ToolUseBlock):
            return (
                self.count_text(block.id)
                + self.count_text(block.name)
                + self.count_text(arguments_json(block.arguments))
            )
        if isinstance(block, ImageBlock):
            return IMAGE_TOKENS
        if isinstance(block, AudioBlock):
            seconds = base64_size(block.data) / AUDIO_BYTES_PER_SECOND
            return math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)
        if isinstance(block, FileBlock):
            count = self.count_text(block.name)
            if block.data is not None:
                return count + math.ceil(base64_size(block.data) / ESTIMATE_BYTES_PER_TOKEN)
            return count + FILE_URL_TOKENS
        if isinstance(block, OpaqueBlock):
            if block.tokens is not None:
                return block.tokens
            return math.ceil(len(arguments_json(block.item)) / ESTIMATE_BYTES_PER_TOKEN)
        return 0


def _function_name(function: Callable[[str], int]) -> str:
    module = getattr(function, "__module__", None) or "?"
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}.{qualname}"


def _checked_count(value: object) -> int:
    if not is_int(value) or value < 0:
        raise TypeError(f"a count_text function must return an int >= 0, got {value!r}")
    return value


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
    with _lock:
        _counters.clear()
        forget_encodings()
