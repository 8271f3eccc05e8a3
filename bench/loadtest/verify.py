"""Reads every session back from the store and counts what went wrong."""

from __future__ import annotations

from attrs import define, field

from agentcore import MemoryStore, Message
from agentcore._slot_config_json import config_from_json
from agentcore_autosummary.keeping.state import state_from_json, state_key
from bench.loadtest.workload import SLOT, markers, session_id


@define
class Findings:
    """Counts over all sessions; a correct run has zeros everywhere but ``stored_turns``."""

    stored_turns: int = 0
    lost: int = 0
    """Turns a worker reported stored that the store does not hold."""
    duplicated: int = 0
    """Messages stored more than once."""
    misordered: int = 0
    """Stored messages that do not follow the one before them (user k, reply k, user k+1...)."""
    foreign: int = 0
    """Messages of another session, or without a marker."""
    bad_summaries: int = 0
    """Summaries whose content is not made of exactly the turns they claim to cover."""
    summaries: int = 0
    examples: list[str] = field(factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.lost or self.duplicated or self.misordered or self.foreign or self.bad_summaries
        )

    def note(self, text: str) -> None:
        if len(self.examples) < 10:
            self.examples.append(text)


def _turn_of(message: Message, session: int) -> int | None:
    found = [turn for s, turn in markers(message.text) if s == session]
    return found[0] if len(found) == 1 else None


async def verify(store: MemoryStore, sessions: int, acknowledged: set[tuple[int, int]]) -> Findings:
    """Check every session of the run against the turns the workers reported."""
    findings = Findings()
    for session in range(sessions):
        sid = session_id(session)
        history = await store.load_messages(sid, SLOT)
        users: list[int] = []
        expected_role, expected_turn = "user", 0
        seen: set[tuple[str, int]] = set()
        for index, message in enumerate(history):
            turn = _turn_of(message, session)
            if turn is None or message.role not in ("user", "assistant"):
                findings.foreign += 1
                findings.note(f"{sid} message {index}: {message.text[:60]!r}")
                continue
            if (message.role, turn) in seen:
                findings.duplicated += 1
                findings.note(f"{sid} message {index}: {message.role} of turn {turn} again")
            seen.add((message.role, turn))
            if (message.role, turn) != (expected_role, expected_turn):
                findings.misordered += 1
                findings.note(
                    f"{sid} message {index}: {message.role} of turn {turn} where "
                    f"{expected_role} of turn {expected_turn} belongs"
                )
            if message.role == "user":
                users.append(turn)
                expected_role, expected_turn = "assistant", turn
            else:
                expected_role, expected_turn = "user", turn + 1
        stored = set(users)
        findings.stored_turns += len(stored)
        for s, turn in acknowledged:
            if s == session and turn not in stored:
                findings.lost += 1
                findings.note(f"{sid}: turn {turn} was reported stored but is missing")
        state = state_from_json(await store.get_data(sid, state_key(SLOT)), slot_id=SLOT)
        if state.summary is not None:
            _check_summary(findings, history, session, state.summary, state.covered, "data")
        configs = await store.load_slot_configs(sid)
        if SLOT in configs:
            focused = config_from_json(configs[SLOT], where=sid).focused
            if focused is not None and focused.summary_override is not None:
                _check_summary(
                    findings,
                    history,
                    session,
                    focused.summary_override,
                    focused.summary_covers,
                    "slot",
                )
    return findings


def _check_summary(
    findings: Findings,
    history: list[Message],
    session: int,
    summary: str,
    covers: int,
    where: str,
) -> None:
    """A summary must be made of exactly the turns of the messages it claims to cover."""
    findings.summaries += 1
    covered_turns: list[int] = []
    for message in history[:covers]:
        turn = _turn_of(message, session)
        if turn is not None and turn not in covered_turns:
            covered_turns.append(turn)
    in_summary = [turn for s, turn in markers(summary) if s == session]
    if covers > len(history) or in_summary != covered_turns:
        findings.bad_summaries += 1
        findings.note(
            f"{session_id(session)} ({where}): summary of turns {in_summary} claims to cover "
            f"messages 0..{covers - 1} (turns {covered_turns})"
        )
