"""What each system's requests cost as the providers bill them: a prefix-cache model.

Every request a fake model receives is fed, as sent, to two models of a
provider's prompt cache, which split its input into cache reads, cache writes
and uncached tokens; :func:`dollars` prices them with
``agentcore.pricing.LIST_PRICES``. The rules are the providers' published ones:

Anthropic (``AnthropicCache``)
    Only prefixes ending at a ``cache_control`` breakpoint are cached, and only
    when they hold at least :data:`ANTHROPIC_MIN_TOKENS` tokens (Sonnet and
    Opus). A request reads the longest cached prefix that ends at a block
    boundary at most :data:`ANTHROPIC_LOOKBACK` blocks before one of its
    breakpoints, and writes what lies between that and its last cacheable
    breakpoint. An entry lives :data:`TTL_SECONDS` (5 minutes), refreshed by
    every read. Reads bill 0.1x the input price, writes 1.25x. Where each
    system puts its breakpoints: :data:`ANTHROPIC_MARKS`.
OpenAI (``OpenAICache``)
    Automatic: every request of :data:`OPENAI_MIN_TOKENS` tokens or more is
    cached whole; a later request reads the longest prefix it shares with one,
    counted from 1,024 tokens in steps of :data:`OPENAI_STEP` tokens, at the
    cached-input price. No write premium. Entries live :data:`TTL_SECONDS`
    (OpenAI says 5 to 10 minutes of inactivity), refreshed by every hit.

A request is a sequence of blocks, each a message as the bench counts it
(``(role, text)`` and its tokens) or the tool definitions (first, as both
providers place them): a prefix is shared when whole blocks are equal. The
simulated clock (:func:`turn_start`) puts a user turn every
:data:`TURN_GAP_SECONDS` seconds, with a break of :data:`BREAK_SECONDS` after
every :data:`BREAK_EVERY`-th turn, and the calls of one turn
:data:`CALL_SECONDS` apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcore import Usage
from agentcore.pricing import LIST_PRICES

TTL_SECONDS = 300.0
"""How long an unused cache entry lives: Anthropic's 5-minute entries; OpenAI's least."""

ANTHROPIC_MIN_TOKENS = 1024
"""The shortest prefix Anthropic caches for Sonnet and Opus models."""

ANTHROPIC_LOOKBACK = 20
"""Block boundaries before a breakpoint at which Anthropic looks for a cached prefix."""

OPENAI_MIN_TOKENS = 1024
"""The shortest prompt OpenAI caches, and the first cached length."""

OPENAI_STEP = 128
"""OpenAI counts cached tokens beyond the first 1,024 in steps of this many."""

TURN_GAP_SECONDS = 45.0
"""Simulated seconds from one user turn to the next."""

BREAK_EVERY = 25
"""After every this many turns the user takes a break."""

BREAK_SECONDS = 600.0
"""The break: longer than the 5-minute TTL, so every cache entry has expired after it."""

CALL_SECONDS = 2.0
"""Simulated seconds between two model calls of one turn."""

PRICED_MODELS: dict[str, str] = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5"}
"""The list price each provider's figures use (``agentcore.pricing.LIST_PRICES``)."""

ONE_HOUR_SECONDS = 3600.0
"""Anthropic's longer entries (``cache_ttl="1h"``): written at 2x the input price."""

ONE_HOUR = "anthropic_1h"
"""The figures of Anthropic's 1-hour entries, billed beside the 5-minute ones: the same
breakpoints and requests, entries that outlive the breaks, writes at the 1-hour price."""


def turn_start(turn: int) -> float:
    """Simulated seconds at which user turn ``turn`` (0-based) starts."""
    breaks = turn // BREAK_EVERY
    return turn * TURN_GAP_SECONDS + breaks * BREAK_SECONDS


@dataclass(frozen=True)
class Block:
    """One part of a request: a message, or the tool definitions."""

    key: int
    """Equal for equal content (a hash of the role and text)."""
    tokens: int


@dataclass(frozen=True)
class Billed:
    """One request's input, split as the provider bills it."""

    input_tokens: int
    cache_read: int = 0
    cache_write: int = 0

    @property
    def uncached(self) -> int:
        """Input tokens neither read from nor written to the cache."""
        return self.input_tokens - self.cache_read - self.cache_write


def prefixes(blocks: Sequence[Block]) -> tuple[list[int], list[int]]:
    """The cumulative key and token count of each prefix ``blocks[: i + 1]``."""
    keys: list[int] = []
    totals: list[int] = []
    extend_prefixes(keys, totals, [b.key for b in blocks], [b.tokens for b in blocks])
    return keys, totals


def extend_prefixes(
    keys: list[int], totals: list[int], block_keys: Sequence[int], counts: Sequence[int]
) -> None:
    """Append to ``keys`` and ``totals`` the prefixes of blocks that follow them."""
    key = keys[-1] if keys else 0
    total = totals[-1] if totals else 0
    for block, count in zip(block_keys, counts, strict=True):
        key = hash((key, block))
        total += count
        keys.append(key)
        totals.append(total)


PRUNE_AT = 4096
"""Entries a cache model keeps before it drops those that expired (the simulated clock
only moves forward, so an expired entry can never be read again)."""


class _Entries(dict[int, float]):
    """Cache entries by prefix key, with their expiry; expired ones dropped now and then."""

    limit = PRUNE_AT

    def pruned(self, now: float) -> _Entries:
        """Self, or a copy without expired entries once it holds more than ``limit``."""
        if len(self) <= self.limit:
            return self
        live = _Entries((key, until) for key, until in self.items() if until >= now)
        live.limit = max(PRUNE_AT, 2 * len(live))
        return live


def _pruned(expires: dict[int, float], now: float) -> dict[int, float]:
    """``expires`` without its expired entries, once it holds more than its limit."""
    return expires.pruned(now) if isinstance(expires, _Entries) else expires


class OpenAICache:
    """OpenAI's automatic prefix cache, for one conversation."""

    def __init__(self, ttl: float = TTL_SECONDS) -> None:
        self.ttl = ttl
        self._expires: dict[int, float] = _Entries()

    def bill(self, blocks: Sequence[Block], now: float) -> Billed:
        """Bill one request sent at ``now`` (simulated seconds), and cache it."""
        return self.bill_prefixes(*prefixes(blocks), now)

    def bill_prefixes(self, keys: Sequence[int], totals: Sequence[int], now: float) -> Billed:
        """:meth:`bill` for a request given as its :func:`prefixes`."""
        total = totals[-1] if totals else 0
        if total < OPENAI_MIN_TOKENS:
            return Billed(total)
        shared = 0
        expires = self._expires
        for index in range(len(keys) - 1, -1, -1):
            until = expires.get(keys[index])
            if until is not None and until >= now:
                shared = totals[index]
                break
        cached = 0
        if shared >= OPENAI_MIN_TOKENS:
            cached = OPENAI_MIN_TOKENS + (shared - OPENAI_MIN_TOKENS) // OPENAI_STEP * OPENAI_STEP
        expires.update(dict.fromkeys(keys, now + self.ttl))
        self._prune(now)
        return Billed(total, cache_read=cached)

    def _prune(self, now: float) -> None:
        self._expires = _pruned(self._expires, now)


class AnthropicCache:
    """Anthropic's prompt cache at explicit breakpoints, for one conversation."""

    def __init__(self, ttl: float = TTL_SECONDS, min_tokens: int = ANTHROPIC_MIN_TOKENS) -> None:
        self.ttl = ttl
        self.min_tokens = min_tokens
        self._expires: dict[int, float] = _Entries()

    def bill(self, blocks: Sequence[Block], breakpoints: Iterable[int], now: float) -> Billed:
        """Bill one request sent at ``now`` whose ``breakpoints`` are block indices."""
        return self.bill_prefixes(*prefixes(blocks), breakpoints, now)

    def bill_prefixes(
        self, keys: Sequence[int], totals: Sequence[int], breakpoints: Iterable[int], now: float
    ) -> Billed:
        """:meth:`bill` for a request given as its :func:`prefixes`."""
        total = totals[-1] if totals else 0
        marks = sorted({b for b in breakpoints if 0 <= b < len(keys)})
        read_at = -1
        for mark in marks:
            for index in range(mark, max(-1, mark - ANTHROPIC_LOOKBACK - 1), -1):
                expires = self._expires.get(keys[index])
                if expires is not None and expires >= now:
                    read_at = max(read_at, index)
                    break
        read = totals[read_at] if read_at >= 0 else 0
        if read_at >= 0:
            self._expires[keys[read_at]] = now + self.ttl
        cacheable = [mark for mark in marks if totals[mark] >= self.min_tokens]
        write = 0
        if cacheable and totals[cacheable[-1]] > read:
            write = totals[cacheable[-1]] - read
        for mark in cacheable:
            self._expires[keys[mark]] = now + self.ttl
        self._expires = _pruned(self._expires, now)
        return Billed(total, cache_read=read, cache_write=write)


Marks = Callable[[Sequence[tuple[str, str]], str], list[int]]
"""Where a system puts Anthropic breakpoints: from the request's ``(role, text)`` messages
and its purpose (``"turn"`` or ``"summary"``), the message indices."""


RECALLED_OPENING = "Recalled from earlier in this conversation"
"""How a user's message opened by autosummary's automatic recall begins (the start of its
``RECALL_LABEL``): the turn's request asks for no entry at its end."""


def _agentcore_marks(pairs: Sequence[tuple[str, str]], purpose: str) -> list[int]:
    # agentcore's Anthropic provider (``mark_breakpoints``): the tools and system prompt,
    # the end of the turn before the newest user turn (tool results are user turns
    # there), and the newest message, unless the request says no later one starts with
    # it (``cache_newest=False``): a summary request, and a turn whose newest message
    # is the user's opened by automatic recall's part.
    newest = purpose != "summary" and not (
        pairs and pairs[-1][0] == "user" and pairs[-1][1].startswith(RECALLED_OPENING)
    )
    marks = [len(pairs) - 1] if newest else []
    turn = len(pairs) - 1
    while turn >= 0 and pairs[turn][0] in ("user", "tool"):
        turn -= 1
    if 0 <= turn < len(pairs) - 1 and pairs[turn][0] != "system":
        marks.append(turn)
    system = 0
    while system < len(pairs) and pairs[system][0] == "system":
        system += 1
    if system:
        marks.append(system - 1)
    return marks


def _last_message(pairs: Sequence[tuple[str, str]], purpose: str) -> list[int]:
    # LangChain's AnthropicPromptCachingMiddleware marks the last message of the agent's
    # model calls; the summarization middleware calls its model directly, unmarked.
    return [len(pairs) - 1] if purpose == "turn" else []


def _none(pairs: Sequence[tuple[str, str]], purpose: str) -> list[int]:
    return []


ANTHROPIC_MARKS: dict[str, Marks] = {
    "agentcore": _agentcore_marks,
    "langchain": _last_message,
    "langmem": _none,
    "llamaindex": _none,
}
"""Breakpoints by system family (the key's part before ``-``): langmem and LlamaIndex set
no ``cache_control``, so nothing of theirs is cached at Anthropic."""


@dataclass
class Bill:
    """What one system's requests in one conversation come to, per provider."""

    system: str
    openai: OpenAICache = field(default_factory=OpenAICache)
    anthropic: AnthropicCache = field(default_factory=AnthropicCache)
    anthropic_1h: AnthropicCache = field(
        default_factory=lambda: AnthropicCache(ttl=ONE_HOUR_SECONDS)
    )
    totals: dict[str, dict[str, int]] = field(default_factory=dict)
    """``{provider: {"input", "cache_read", "cache_write", "output",
    "summary_input", "summary_cache_read"}}``."""
    _turn: int = -1
    _calls: int = 0
    _blocks: list[int] = field(default_factory=list)
    _sizes: list[int] = field(default_factory=list)
    _keys: list[int] = field(default_factory=list)
    _totals: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for provider in (*PRICED_MODELS, ONE_HOUR):
            self.totals[provider] = dict.fromkeys(
                (
                    "input",
                    "cache_read",
                    "cache_write",
                    "output",
                    "summary_input",
                    "summary_cache_read",
                ),
                0,
            )

    def _now(self, turn: int) -> float:
        if turn != self._turn:
            self._turn, self._calls = turn, 0
        else:
            self._calls += 1
        return turn_start(turn) + self._calls * CALL_SECONDS

    def add(
        self,
        turn: int,
        pairs: Sequence[tuple[str, str]],
        counts: Sequence[int],
        *,
        tool_tokens: int = 0,
        purpose: str = "turn",
        output_tokens: int = 0,
    ) -> None:
        """Bill one request of ``turn``: its messages, their token counts, its tools."""
        now = self._now(turn)
        blocks = [hash(pair) for pair in pairs]
        sizes = list(counts)
        offset = 0
        if tool_tokens:
            blocks.insert(0, hash(("tools", tool_tokens)))
            sizes.insert(0, tool_tokens)
            offset = 1
        keys, totals = self._prefixes(blocks, sizes)
        family = self.system.split("-", 1)[0]
        marks = [offset + mark for mark in ANTHROPIC_MARKS.get(family, _none)(pairs, purpose)]
        if offset and marks:
            marks.append(0)
        billed = {
            "openai": self.openai.bill_prefixes(keys, totals, now),
            "anthropic": self.anthropic.bill_prefixes(keys, totals, marks, now),
            ONE_HOUR: self.anthropic_1h.bill_prefixes(keys, totals, marks, now),
        }
        for provider, bill in billed.items():
            totals = self.totals[provider]
            totals["input"] += bill.input_tokens
            totals["cache_read"] += bill.cache_read
            totals["cache_write"] += bill.cache_write
            totals["output"] += output_tokens
            if purpose == "summary":
                totals["summary_input"] += bill.input_tokens
                totals["summary_cache_read"] += bill.cache_read

    def _prefixes(self, blocks: list[int], sizes: list[int]) -> tuple[list[int], list[int]]:
        """The request's :func:`prefixes`, reusing what it shares with the previous one.

        A system's requests mostly extend the one before, so only the new
        blocks are hashed: the replay stays about as fast with billing as without.
        """
        last = self._blocks
        shared = len(last)
        if blocks[:shared] != last or len(blocks) < shared or sizes[:shared] != self._sizes:
            shared = 0
            for old, new, old_size, new_size in zip(last, blocks, self._sizes, sizes, strict=False):
                if old != new or old_size != new_size:
                    break
                shared += 1
        keys, totals = self._keys, self._totals
        del keys[shared:], totals[shared:]
        extend_prefixes(keys, totals, blocks[shared:], sizes[shared:])
        self._blocks, self._sizes = blocks, sizes
        return keys, totals

    def figures(self) -> dict[str, Any]:
        """Token splits and dollars per provider, as JSON-ready data."""
        result: dict[str, Any] = {}
        for provider, totals in self.totals.items():
            ttl = "1h" if provider == ONE_HOUR else "5m"
            model = PRICED_MODELS["anthropic" if provider == ONE_HOUR else provider]
            usage = Usage(
                totals["input"],
                totals["output"],
                cached_input_tokens=totals["cache_read"],
                cache_write_tokens=totals["cache_write"],
            )
            result[provider] = {
                **totals,
                "model": model,
                "dollars": dollars(usage, model, cache_ttl=ttl),
            }
        return result


def dollars(usage: Usage, model: str, *, cache_ttl: str = "5m") -> float:
    """What ``usage`` costs at the list price of ``model`` (cache writes of ``cache_ttl``)."""
    return LIST_PRICES[model].dollars(usage, cache_ttl=cache_ttl)
