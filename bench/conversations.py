"""The conversations every system replays: one generated from a seed, one from a public corpus.

A conversation is a list of :class:`Turn`: the user's message, then the
assistant's scripted steps. A step with tool calls is answered by the tool
results scripted with it; the last step of a turn is the final reply.
"""

from __future__ import annotations

import importlib.resources
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

TOOL_NAMES = ("search_docs", "read_file", "run_query", "fetch_url")


class ConversationUnavailable(Exception):
    """The conversation cannot be built here; the message says why."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    query: str
    output: str

    @property
    def arguments(self) -> dict[str, str]:
        return {"key": self.id, "query": self.query}


@dataclass(frozen=True)
class Step:
    text: str
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Turn:
    user: str
    steps: tuple[Step, ...]

    @property
    def message_count(self) -> int:
        """Messages the turn adds to a history: user, assistant steps and tool results."""
        return 1 + sum(1 + len(step.calls) for step in self.steps)

    def outputs(self) -> dict[str, str]:
        return {call.id: call.output for step in self.steps for call in step.calls}


@dataclass(frozen=True)
class Conversation:
    name: str
    title: str
    source: str
    turns: tuple[Turn, ...]

    @property
    def message_count(self) -> int:
        return sum(turn.message_count for turn in self.turns)


def _copy(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


def fresh(turn: Turn) -> Turn:
    """``turn`` with new string objects, as if its text had just arrived.

    Memory is traced per system: text a system keeps must be its own
    allocation, not a reference into the script built before tracing.
    """
    steps = tuple(
        Step(
            _copy(step.text),
            tuple(
                ToolCall(_copy(call.id), call.name, _copy(call.query), _copy(call.output))
                for call in step.calls
            ),
        )
        for step in turn.steps
    )
    return Turn(_copy(turn.user), steps)


def split_at_messages(turns: Sequence[Turn], count: int) -> tuple[list[Turn], list[Turn]]:
    """The first turns holding at least ``count`` messages, and the turns after them."""
    held = 0
    for index, turn in enumerate(turns):
        if held >= count:
            return list(turns[:index]), list(turns[index:])
        held += turn.message_count
    raise ValueError(f"the conversation holds {held} messages, fewer than {count}")


# -- the generated conversation ------------------------------------------------

_VOCABULARY = (
    "the a to of and in is it that for on with as this be are we you can if not "
    "but or by from at have will should would could when then so what which how "
    "service database query index cache latency request response error timeout "
    "deploy release branch config schema migration table column user session token "
    "budget memory thread worker queue retry backoff metric alert dashboard report "
    "customer invoice order payment refund account owner team review deadline plan "
    "test failure log trace span endpoint handler parser client server region cluster "
    "node pod container image build pipeline step job artifact version rollback "
    "feature flag experiment cohort result value field record batch stream window "
    "summary decision question answer option tradeoff risk estimate cost week day"
)
_NAMES = (
    "load_config parse_row fetch_orders retry_call build_index flush_cache "
    "compute_total check_quota render_page send_alert merge_batches open_session"
)
_WORDS = _VOCABULARY.split()
_IDENTIFIERS = _NAMES.split()


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(_WORDS, k=count))


def _prose(rng: random.Random, words: int) -> str:
    sentences: list[str] = []
    left = words
    while left > 0:
        size = min(left, rng.randint(6, 22))
        sentences.append(_words(rng, size).capitalize() + ".")
        left -= size
    return " ".join(sentences)


def _code(rng: random.Random, lines: int) -> str:
    out = ["```python"]
    for index in range(lines):
        name = rng.choice(_IDENTIFIERS)
        kind = index % 4
        if kind == 0:
            out.append(f"def {name}_{index}(rows, limit={rng.randint(1, 500)}):")
        elif kind == 1:
            out.append(f"    total = sum(row['{rng.choice(_WORDS)}'] for row in rows)")
        elif kind == 2:
            out.append(f"    if total > limit:  # {_words(rng, 4)}")
        else:
            out.append(f"        return {name}(total, limit) / {rng.randint(2, 99)}")
    out.append("```")
    return "\n".join(out)


def _log(rng: random.Random, lines: int) -> str:
    out = []
    for _ in range(lines):
        minute, second = rng.randint(0, 59), rng.randint(0, 59)
        level = rng.choice(("INFO", "INFO", "INFO", "WARN", "ERROR"))
        out.append(
            f"2024-06-11T10:{minute:02d}:{second:02d}Z {level} "
            f"service={rng.choice(_WORDS)} latency_ms={rng.randint(1, 3000)} "
            f"msg={_words(rng, rng.randint(3, 9))}"
        )
    return "\n".join(out)


def _records(rng: random.Random, count: int) -> str:
    rows = [
        {
            "id": rng.randint(1000, 99999),
            "name": _words(rng, 2),
            "status": rng.choice(("ok", "failed", "pending")),
            "value": round(rng.random() * 1000, 2),
            "note": _words(rng, rng.randint(3, 12)),
        }
        for _ in range(count)
    ]
    return json.dumps({"rows": rows, "count": count})


def _user_message(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.65:
        return _words(rng, rng.randint(4, 30)).capitalize() + "?"
    if roll < 0.88:
        return _prose(rng, rng.randint(40, 150))
    paste = (
        _code(rng, rng.randint(40, 150)) if rng.random() < 0.5 else _log(rng, rng.randint(30, 110))
    )
    return _prose(rng, rng.randint(10, 30)) + "\n\n" + paste


def _tool_output(rng: random.Random, large: bool) -> str:
    if not large:
        return _records(rng, rng.randint(2, 8))
    kind = rng.randrange(3)
    if kind == 0:
        return _code(rng, rng.randint(80, 220))
    if kind == 1:
        return _log(rng, rng.randint(60, 180))
    return _records(rng, rng.randint(15, 40))


def _final_reply(rng: random.Random) -> str:
    text = _prose(rng, rng.randint(20, 250))
    if rng.random() < 0.15:
        text += "\n\n" + _code(rng, rng.randint(10, 40))
    return text


def _tool_steps(rng: random.Random, turn: str) -> list[Step]:
    rounds = 1 if rng.random() < 0.85 else 2
    steps = []
    for round_index in range(rounds):
        calls_in_round = rng.choices((1, 2, 3), weights=(60, 25, 15))[0]
        calls = []
        for k in range(calls_in_round):
            large = rounds == 1 and k == 0 and rng.random() < 0.4
            calls.append(
                ToolCall(
                    id=f"call_{turn}_{round_index}_{k}",
                    name=rng.choice(TOOL_NAMES),
                    query=_words(rng, rng.randint(2, 8)),
                    output=_tool_output(rng, large),
                )
            )
        text = "" if rng.random() < 0.5 else _prose(rng, rng.randint(4, 15))
        steps.append(Step(text, tuple(calls)))
    return steps


def generated(seed: int, turns: int, id_prefix: str = "") -> Conversation:
    """A deterministic conversation: short and long user messages, tools, large outputs.

    Tool call ids are ``call_{id_prefix}{turn}_{round}_{index}``.
    """
    rng = random.Random(seed)
    built = []
    for index in range(turns):
        user = _user_message(rng)
        steps = _tool_steps(rng, f"{id_prefix}{index}") if rng.random() < 0.3 else []
        steps.append(Step(_final_reply(rng)))
        built.append(Turn(user, tuple(steps)))
    return Conversation(
        name="generated",
        title=f"Generated ({turns} turns, seed {seed})",
        source=(
            "generated by bench/conversations.py: 65% short questions, 23% paragraphs, "
            "12% pasted code or logs; 30% of turns call tools (1-3 in parallel, "
            "sometimes two rounds), 40% of single-round tool turns return a large output"
        ),
        turns=tuple(built),
    )


# -- the corpus conversation ------------------------------------------------------


def corpus(limit: int | None) -> Conversation:
    """The English dialogs of ``chatterbot-corpus``, in file order, as one long chat.

    Each dialog is a list of utterances by two speakers taking turns; every
    pair becomes one user message and one assistant reply.
    """
    try:
        import yaml

        root = importlib.resources.files("chatterbot_corpus") / "data" / "english"
        files = sorted(
            (entry for entry in root.iterdir() if entry.name.endswith(".yml")),
            key=lambda entry: entry.name,
        )
    except (ImportError, FileNotFoundError, NotADirectoryError) as exc:
        raise ConversationUnavailable(f"chatterbot-corpus is not installed: {exc}") from exc
    built: list[Turn] = []
    for entry in files:
        data = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
        for dialog in data.get("conversations") or []:
            utterances = [str(item) for item in dialog if str(item).strip()]
            for index in range(0, len(utterances) - 1, 2):
                built.append(Turn(utterances[index], (Step(utterances[index + 1]),)))
    if limit is not None:
        built = built[:limit]
    if not built:
        raise ConversationUnavailable("chatterbot-corpus holds no English dialogs")
    return Conversation(
        name="corpus",
        title=f"chatterbot-corpus English dialogs ({len(built)} turns)",
        source=(
            "chatterbot-corpus 1.3.3 (PyPI, BSD-3-Clause): its English dialogs "
            f"({len(files)} topic files) joined in file order, one turn per utterance pair"
        ),
        turns=tuple(built),
    )
