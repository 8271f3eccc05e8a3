"""The interface every benchmarked system implements, and what it is given."""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

from bench.conversations import Step, Turn
from bench.measure import Recorder, TokenMeter
from bench.settings import Settings


class SystemUnavailable(Exception):
    """The system cannot run here; the message says why."""


@dataclass(frozen=True)
class Env:
    """What a system is prepared with.

    ``recorder`` receives every request its fake models get; ``summary_delay``
    is how long the fake summarizer takes; ``counting`` is the system's own
    token counter where the library accepts one (cl100k, like the recorder's,
    but with its own cache).
    """

    settings: Settings
    recorder: Recorder
    counting: TokenMeter
    summary_delay: float = 0.0


class System(abc.ABC):
    """One way of keeping a long conversation inside the budget.

    ``prepare`` builds the system with ``history`` already in its memory (put
    there through the library's public API); ``run_turn`` sends one user
    message and lets the fake model answer it with the turn's scripted steps,
    tool calls included; ``pause`` stands for the user's pause after a turn;
    ``finish`` waits for any background work.
    """

    key: ClassVar[str]
    background: ClassVar[bool] = False
    """True when summaries run after the turn returns."""

    @abc.abstractmethod
    async def prepare(self, env: Env, history: Sequence[Turn]) -> None: ...

    @abc.abstractmethod
    async def run_turn(self, turn: Turn) -> None: ...

    async def pause(self) -> None:
        """The user's pause between two turns: background work may finish here."""
        return None

    async def finish(self) -> None:
        return None


class TurnScript:
    """The scripted assistant steps of the current turn, served one per model call."""

    def __init__(self) -> None:
        self._steps: Iterator[Step] = iter(())
        self._outputs: dict[str, str] = {}

    def start(self, turn: Turn) -> None:
        self._steps = iter(turn.steps)
        self._outputs = turn.outputs()

    def next_step(self) -> Step:
        try:
            return next(self._steps)
        except StopIteration:
            raise RuntimeError("the system called the model more often than scripted") from None

    def output(self, key: str) -> str:
        return self._outputs[key]
