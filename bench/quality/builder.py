"""Assemble a generated conversation: planted turns, filler between, the fact table.

A kind of conversation (:mod:`bench.quality.kinds_en`, :mod:`bench.quality.kinds_zh`)
declares its facts on a :class:`Builder`, then schedules *events*: each event
writes one turn (a user message and the scripted reply, maybe tool calls) and
records the values it says with :meth:`Builder.said` (or withdraws one with
:meth:`Builder.retract`). The builder places the early events in the first
part of the conversation and the late ones (updates, retractions) after it, in
order, fills the other turns from the kind's pool of work talk, and derives
each :class:`~bench.quality.facts.Fact` from what the events said: its final
value and turn, its superseded values and their turns, its retracted values.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bench.conversations import Step, ToolCall, Turn
from bench.quality.conversations import FILLER_SENTENCES, Script
from bench.quality.facts import Fact

Event = Callable[[int], None]
"""Writes the turn at the index it is given."""
EARLY_SHARE = 0.45
"""The early events fall in this first share of the turns, the late ones after it."""


@dataclass
class _Plant:
    key: str
    subject: tuple[str, ...]
    question: str
    pattern: str | None
    spellings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    history: list[tuple[int, str]] = field(default_factory=list)
    retracted: list[tuple[int, str]] = field(default_factory=list)
    in_tool_output: bool = False


class Builder:
    """One generated conversation under construction.

    ``seed`` seeds its random choices; each kind passes ``"{kind}:{seed}"``, so
    two kinds of one seed do not draw the same numbers.
    """

    def __init__(
        self,
        seed: str,
        total: int,
        questions: Sequence[str],
        answers: Sequence[str],
    ) -> None:
        self.rng = random.Random(seed)
        self.total = total
        self._questions = questions
        self._answers = answers
        self._turns: dict[int, Turn] = {}
        self._plants: dict[str, _Plant] = {}

    def fact(
        self, key: str, subject: Sequence[str], question: str, pattern: str | None = None
    ) -> None:
        """Declare a fact: its key, the words that name its subject, the question asking it."""
        if key in self._plants:
            raise ValueError(f"fact {key!r} declared twice")
        self._plants[key] = _Plant(key, tuple(subject), question, pattern)

    def said(
        self, key: str, turn: int, value: str, spellings: Sequence[str] = (), *, tool: bool = False
    ) -> str:
        """Record that ``turn`` states ``value`` for fact ``key``; return ``value``.

        ``spellings`` are the other ways of writing it that count; ``tool`` says
        the value is stated only inside a tool's output.
        """
        plant = self._plants[key]
        plant.spellings[value] = (value, *[s for s in spellings if s != value])
        plant.history.append((turn, value))
        plant.in_tool_output = tool
        return value

    def retract(self, key: str) -> str:
        """Withdraw the value fact ``key`` holds now; return it.

        The turn that withdraws it should then say the fact's new value.
        """
        plant = self._plants[key]
        turn, value = plant.history.pop()
        plant.retracted.append((turn, value))
        return value

    def put(self, turn: int, user: str, reply: str) -> None:
        """Write a turn of one user message and one reply."""
        self._set(turn, Turn(user, (Step(reply),)))

    def put_tools(
        self, turn: int, user: str, calls: Sequence[tuple[str, str, str]], reply: str
    ) -> None:
        """Write a turn whose first step calls tools: ``(name, query, output)`` each."""
        tool_calls = tuple(
            ToolCall(id=f"call_{turn}_{index}", name=name, query=query, output=output)
            for index, (name, query, output) in enumerate(calls)
        )
        self._set(turn, Turn(user, (Step("", tool_calls), Step(reply))))

    def _set(self, turn: int, value: Turn) -> None:
        if turn in self._turns:
            raise ValueError(f"turn {turn} written twice")
        self._turns[turn] = value

    def schedule(self, early: Sequence[Event], late: Sequence[Event]) -> None:
        """Run the events at turns spread over the conversation, early ones first, in order."""
        split = int(self.total * EARLY_SHARE)
        if len(early) > split - 1 or len(late) > self.total - split - 1:
            raise ValueError(f"{len(early)} + {len(late)} events do not fit {self.total} turns")
        early_turns = sorted(self.rng.sample(range(1, split), len(early)))
        late_turns = sorted(self.rng.sample(range(split, self.total - 1), len(late)))
        for event, turn in zip([*early, *late], [*early_turns, *late_turns], strict=True):
            event(turn)

    def _filler(self) -> Turn:
        reply = " ".join(self.rng.sample(list(self._answers), FILLER_SENTENCES))
        return Turn(self.rng.choice(self._questions), (Step(reply),))

    def _facts(self) -> tuple[Fact, ...]:
        out = []
        for plant in self._plants.values():
            if not plant.history:
                raise ValueError(f"fact {plant.key!r} is never stated")
            said_at, final = plant.history[-1]
            older = [value for _, value in plant.history[:-1] if value != final]
            out.append(
                Fact(
                    key=plant.key,
                    subject=plant.subject,
                    value=plant.spellings[final],
                    old=tuple(s for value in older for s in plant.spellings[value]),
                    pattern=plant.pattern,
                    retracted=tuple(s for _, v in plant.retracted for s in plant.spellings[v]),
                    said_at=said_at,
                    old_at=tuple(turn for turn, value in plant.history[:-1] if value != final),
                    retracted_at=tuple(turn for turn, _ in plant.retracted),
                    question=plant.question,
                    in_tool_output=plant.in_tool_output,
                )
            )
        return tuple(out)

    def script(self, key: str, title: str, language: str, last: Turn) -> Script:
        """The finished conversation: every unwritten turn filled, ``last`` at the end."""
        turns = [self._turns.get(i) or self._filler() for i in range(self.total - 1)]
        return Script(key, title, language, (*turns, last), self._facts())
