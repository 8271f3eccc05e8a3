"""``strategy="segments"``: each summary reads the new messages only, kept as ordered parts."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from agentcore import (
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    Message,
    SqliteStore,
    StoreError,
)
from agentcore.stores import StoreWrite
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig, compact, get_conversation_summary, unfence_summary
from agentcore_autosummary.calling.segments import MERGE_INSTRUCTION, SEGMENTS_HEADER
from agentcore_autosummary.judging.quoting import QUOTED
from agentcore_autosummary.keeping.state import state_key

MakeSession = Callable[..., AgentSession]

FACT = re.compile(r"[Tt]he (\w+) service listens on port (\d+)")
SERVICES = [
    "auth",
    "billing",
    "search",
    "mail",
    "queue",
    "cache",
    "gateway",
    "media",
    "audit",
    "jobs",
]


class Extractor:
    """A faithful summarizer: the facts of its input, one line each (merges keep the later)."""

    def __init__(self) -> None:
        self.requests: list[LlmRequest] = []
        self.replies: list[str] = []
        self.fail_merges = False

    def __call__(self, request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        self.requests.append(request)
        text = "\n".join(message.text or "" for message in request.messages)
        if self.fail_merges and MERGE_INSTRUCTION in text:
            raise RuntimeError("the summarizer is down")
        facts = dict(FACT.findall(text))
        reply = " ".join(
            f"The {name} service listens on port {port}." for name, port in facts.items()
        )
        self.replies.append(reply)
        return reply


def _config(**overrides: object) -> SummaryConfig:
    base: dict[str, object] = {
        "strategy": "segments",
        "max_context_tokens": 1200,
        "max_summary_tokens": 200,
        "trigger_token_ratio": 0.5,
        "keep_recent_messages": 2,
        "debounce_turns": 0,
    }
    base.update(overrides)
    return SummaryConfig(**base)  # type: ignore[arg-type]


async def _talk(session: AgentSession, turns: int = 10) -> None:
    for turn in range(turns):
        name = SERVICES[turn % len(SERVICES)]
        filler = " ".join(f"detail{turn}x{n}" for n in range(40))
        await session.submit_turn(
            f"Note that the {name} service listens on port {8000 + turn}. {filler}"
        )


def _summary(session_slot_config: FocusedConfig | None) -> str:
    assert session_slot_config is not None and session_slot_config.summary_override
    return unfence_summary(session_slot_config.summary_override)  # as the summarizer wrote it


async def test_ten_facts_of_one_pattern_all_survive_and_no_request_reads_the_summary(
    make_session: MakeSession,
) -> None:
    summarizer = Extractor()
    session = make_session(
        MockProvider(responder=summarizer), summary=_config(), mode=FocusedConfig()
    )
    await _talk(session)
    slot = await session.get_slot()
    summary = _summary(slot.config.focused)
    sent = "\n".join(m.text or "" for m in slot.load_messages())
    assert summary in sent or SEGMENTS_HEADER in sent
    kept = dict(FACT.findall(sent))
    assert kept == {name: str(8000 + turn) for turn, name in enumerate(SERVICES)}
    assert len(summarizer.requests) >= 3
    for number, request in enumerate(summarizer.requests):
        text = "\n".join(message.text or "" for message in request.messages)
        if MERGE_INSTRUCTION not in text:
            earlier = [reply for reply in summarizer.replies[:number] if reply]
            assert not any(reply in text for reply in earlier), "a summary request read a summary"


async def test_segments_outgrowing_their_room_are_merged_oldest_first(
    make_session: MakeSession,
) -> None:
    summarizer = Extractor()
    config = _config(max_summary_tokens=40, retention_check="off", segments_merge="summarizer")
    session = make_session(MockProvider(responder=summarizer), summary=config, mode=FocusedConfig())
    await _talk(session)
    merges = [
        r
        for r in summarizer.requests
        if MERGE_INSTRUCTION in "\n".join(m.text or "" for m in r.messages)
    ]
    assert merges, "the segments were never merged"
    first = "\n".join(m.text or "" for m in merges[0].messages)
    assert first.index("Part 1 (the earlier)") < first.index("Part 2 (the later)")
    stored = await session.get_session_data(state_key("default"))
    assert stored is not None and stored["segments"][0]["start"] == 0


async def test_a_failing_merge_leaves_the_segments_and_every_turn_goes_out(
    make_session: MakeSession,
) -> None:
    summarizer = Extractor()
    summarizer.fail_merges = True
    config = _config(max_summary_tokens=40, retention_check="off", segments_merge="summarizer")
    session = make_session(MockProvider(responder=summarizer), summary=config, mode=FocusedConfig())
    await _talk(session)
    assert session.turn_index == 10
    summary = _summary((await session.get_slot()).config.focused)
    assert summary.startswith(SEGMENTS_HEADER)
    assert "Part 2" in summary


async def test_a_resumed_session_goes_on_from_its_stored_segments(
    make_session: MakeSession, tmp_path: object
) -> None:
    from pathlib import Path

    store = SqliteStore(Path(str(tmp_path)) / "s.db")
    summarizer = Extractor()
    first = make_session(
        MockProvider(responder=summarizer), summary=_config(), mode=FocusedConfig(), store=store
    )
    await _talk(first, 6)
    before = await first.get_session_data(state_key("default"))
    resumed = make_session(
        MockProvider(responder=summarizer), summary=_config(), mode=FocusedConfig(), store=store
    )
    for turn in range(6, 10):
        filler = " ".join(f"detail{turn}x{n}" for n in range(40))
        await resumed.submit_turn(
            f"Note that the {SERVICES[turn]} service listens on port {8000 + turn}. {filler}"
        )
    after = await resumed.get_session_data(state_key("default"))
    assert before is not None and after is not None
    assert after["segments"][0]["text"].startswith(before["segments"][0]["text"][:40])
    summary = _summary((await resumed.get_slot()).config.focused)
    assert "auth service listens on port 8000" in summary
    await store.close()


def test_the_state_of_other_strategies_is_stored_as_before() -> None:
    from agentcore_autosummary.keeping.state import SummaryState, state_to_json

    assert "segments" not in state_to_json(SummaryState(covered=3))


async def test_memory_store_sessions_without_segments_are_unchanged(
    make_session: MakeSession,
) -> None:
    session = make_session(
        MockProvider(responder=Extractor()),
        summary=_config(strategy="incremental"),
        mode=FocusedConfig(),
        store=InMemoryStore(),
    )
    await _talk(session, 6)
    stored = await session.get_session_data(state_key("default"))
    assert stored is not None and "segments" not in stored


def _echo(request: LlmRequest) -> str:
    """A stalled summarizer: it copies the transcript's entries back."""
    if request.purpose != "summary":
        return "Noted."
    text = "\n".join(message.text or "" for message in request.messages)
    return "\n".join(line for line in text.splitlines() if line.startswith("User: "))


async def test_an_echoed_segment_is_refused_by_the_gate_and_applied_without_it(
    make_session: MakeSession,
) -> None:
    gated = make_session(MockProvider(responder=_echo), summary=_config(), mode=FocusedConfig())
    await _talk(gated, turns=4)
    assert await get_conversation_summary(gated) is None  # every attempt refused as an echo
    config = _config(gate=False)
    ungated = make_session(MockProvider(responder=_echo), summary=config, mode=FocusedConfig())
    await _talk(ungated, turns=4)
    summary = await get_conversation_summary(ungated)
    assert summary is not None and "User: Note that the auth service" in summary


def test_the_segments_room_is_a_share_of_the_window_never_below_a_summary_s() -> None:
    config = _config(max_context_tokens=10_000, segments_ratio=0.3)
    assert config.segments_room == 3000
    assert _config(segments_ratio=0.01).segments_room == _config().summary_room
    assert _config().segments_room == _config().summary_room


async def test_each_part_names_the_turns_it_came_from(make_session: MakeSession) -> None:
    summarizer = Extractor()
    summarizer.fail_merges = True  # the parts stay apart
    config = _config(max_summary_tokens=40, retention_check="off", segments_merge="summarizer")
    session = make_session(MockProvider(responder=summarizer), summary=config, mode=FocusedConfig())
    await _talk(session)
    summary = _summary((await session.get_slot()).config.focused)
    stretches = re.findall(r"Part \d+ \(turns? (\d+)(?:-(\d+))?, messages (\d+)-(\d+)\)", summary)
    assert len(stretches) >= 2
    previous_last = -1
    for first, last, start, end in stretches:
        # Turn t writes messages 2t and 2t + 1 (a user message and its reply).
        assert int(first) == (int(start) - 1) // 2
        assert int(last or first) == (int(end) - 1) // 2
        # The parts follow one another (one may end inside a turn the next one ends).
        assert int(first) in (previous_last, previous_last + 1)
        previous_last = int(last or first)


class Vague:
    """A small model's summaries: the subjects without their values, merges alike."""

    def __init__(self) -> None:
        self.merges: list[str] = []

    def __call__(self, request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        text = "\n".join(message.text or "" for message in request.messages)
        if MERGE_INSTRUCTION in text:
            self.merges.append(text)
        return "The user listed the ports of several services."


async def test_a_merge_never_reads_the_quotes_and_the_merged_part_keeps_them(
    make_session: MakeSession,
) -> None:
    summarizer = Vague()
    config = _config(max_summary_tokens=120, trigger_token_ratio=0.4, segments_merge="summarizer")
    session = make_session(MockProvider(responder=summarizer), summary=config, mode=FocusedConfig())
    for turn, name in enumerate(SERVICES):
        filler = " ".join(f"detail{turn}x{n}" for n in range(40))
        await session.submit_turn(f"The {name} service listens on port {8000 + turn}. {filler}")
    assert summarizer.merges, "the segments were never merged"
    assert not any(QUOTED in merge for merge in summarizer.merges)
    slot = await session.get_slot()
    sent = "\n".join(m.text or "" for m in slot.load_messages())
    kept = dict(FACT.findall(sent))
    assert kept == {name: str(8000 + turn) for turn, name in enumerate(SERVICES)}


async def test_an_older_part_loses_a_value_a_later_one_replaced_and_keeps_the_others(
    make_session: MakeSession,
) -> None:
    summarizer = Extractor()
    summarizer.fail_merges = True  # the parts stay apart: the older one is pruned, not merged
    config = _config(max_summary_tokens=120, retention_check="off", segments_merge="summarizer")
    session = make_session(MockProvider(responder=summarizer), summary=config, mode=FocusedConfig())
    await _talk(session, 6)
    filler = " ".join(f"later{n}" for n in range(40))
    await session.submit_turn(f"The auth service listens on port 9000 now. {filler}")
    for turn in range(6, 10):
        filler = " ".join(f"detail{turn}x{n}" for n in range(40))
        await session.submit_turn(
            f"The {SERVICES[turn]} service listens on port {8000 + turn}. {filler}"
        )
    summary = _summary((await session.get_slot()).config.focused)
    assert "Part 2" in summary, "the parts were not kept apart"
    assert "port 9000" in summary
    assert "auth service listens on port 8000" not in summary
    for turn, name in enumerate(SERVICES[1:6], 1):
        assert f"The {name} service listens on port {8000 + turn}" in summary


def _cut_echo(request: LlmRequest) -> LlmResponse | str:
    """A summarizer that copies the transcript back until its cap cuts it."""
    if request.purpose != "summary":
        return "Noted."
    echoed = _echo(request)
    return LlmResponse(Message.assistant(echoed + "\nUser: and then"), stop_reason="max_tokens")


def _cut_short(request: LlmRequest) -> LlmResponse | str:
    """A summarizer cut at its cap before the end of its first sentence."""
    if request.purpose != "summary":
        return "Noted."
    return LlmResponse(Message.assistant("The user wrote"), stop_reason="max_tokens")


async def test_a_cut_reply_is_applied_only_when_its_whole_sentences_pass_the_gate(
    make_session: MakeSession,
) -> None:
    """Trimming never lets through what the gate refuses, nor a reply with no whole sentence."""
    for responder in (_cut_echo, _cut_short):
        gated = make_session(
            MockProvider(responder=responder), summary=_config(), mode=FocusedConfig()
        )
        await _talk(gated, turns=4)
        assert await get_conversation_summary(gated) is None  # every attempt refused


async def test_a_part_its_quotes_would_not_let_shrink_is_applied_without_them(
    make_session: MakeSession,
) -> None:
    """Degrade, never refuse: quotes are dropped before a summary is."""
    provider = MockProvider(
        responder=lambda r: "They talked about servers." if r.purpose == "summary" else "Noted."
    )
    config = _config(max_context_tokens=4000, keep_recent_tokens=0, keep_recent_messages=None)
    session = make_session(provider, summary=config, mode=FocusedConfig())
    await session.submit_turn("The server srv-001 listens on port 8001 in rack R7 of hall B2.")
    await session.submit_turn("Thanks.")
    result = await compact(session)  # the quote of the first message would outgrow it
    assert result.summary == "They talked about servers."
    assert await get_conversation_summary(session) == "They talked about servers."
    stored = await session.get_session_data(state_key("default"))
    assert [part["text"] for part in stored["segments"]] == ["They talked about servers."]


def _by_hand(**overrides: object) -> SummaryConfig:
    """Summaries made by ``compact()`` only (the watermark out of reach), four messages kept."""
    return _config(
        max_context_tokens=6000, trigger_token_ratio=0.95, keep_recent_messages=4, **overrides
    )


async def test_a_value_the_verbatim_tail_changed_is_not_stated_beside_it(
    make_session: MakeSession,
) -> None:
    summarizer = Extractor()
    config = _by_hand()
    session = make_session(MockProvider(responder=summarizer), summary=config, mode=FocusedConfig())
    await _talk(session, 6)
    await compact(session)
    assert "auth service listens on port 8000" in _summary(
        (await session.get_slot()).config.focused
    )
    await session.submit_turn("The auth service listens on port 9000 now.")
    await session.submit_turn("Thanks, that is all for the ports.")
    await compact(session)  # the change stays in the verbatim tail, after the summary
    slot = await session.get_slot()
    sent = "\n".join(m.text or "" for m in slot.load_messages())
    assert "port 9000" in sent
    assert "auth service listens on port 8000" not in sent
    for turn, name in enumerate(SERVICES[1:6], 1):
        assert f"The {name} service listens on port {8000 + turn}" in sent


def _filler() -> str:
    return " ".join(f"aside{n}" for n in range(30))


def _run_on_writer(request: LlmRequest) -> str:
    """A summarizer that leaves out the full stop between the facts it lists."""
    if request.purpose != "summary":
        return "Noted."
    text = "\n".join(message.text or "" for message in request.messages)
    facts = []
    if "Victor Keller" in text:
        facts.append("The project lead is Victor Keller")
    for budget in re.findall(r"budget is (?:now )?([\d,]+) dollars", text):
        facts.append(f"The budget is {budget} dollars for the quarter")
    return " ".join(facts) + "."


async def test_a_run_on_sentence_loses_the_replaced_value_and_keeps_the_other(
    make_session: MakeSession,
) -> None:
    config = _by_hand(retention_check="off")
    session = make_session(
        MockProvider(responder=_run_on_writer), summary=config, mode=FocusedConfig()
    )
    for text in (
        "The project lead is Victor Keller.",
        "Finance approved the budget: the budget is 53,000 dollars.",
        "Let us plan the milestones backwards from the launch.",
        "Screenshots in pull requests speed up the review.",
    ):
        await session.submit_turn(f"{text} {_filler()}")
    await compact(session)
    first = _summary((await session.get_slot()).config.focused)
    assert "Victor Keller The budget is 53,000" in first  # the run-on, as written
    for text in (
        "Finance added load tests: the budget is now 76,000 dollars.",
        "The end-to-end tests cover sign-in first.",
        "Error pages say what the user can do next.",
    ):
        await session.submit_turn(f"{text} {_filler()}")
    await compact(session)
    summary = _summary((await session.get_slot()).config.focused)
    assert "Part 2" in summary, "the parts were not kept apart"
    assert "Victor Keller" in summary
    assert "76,000" in summary
    assert "53,000" not in summary


async def test_a_value_a_later_turn_changes_leaves_the_summary_before_the_next_one(
    make_session: MakeSession,
) -> None:
    summarizer = Extractor()
    config = _by_hand()
    provider = MockProvider(responder=summarizer)
    session = make_session(provider, summary=config, mode=FocusedConfig())
    await _talk(session, 6)
    await compact(session)
    calls = len(summarizer.requests)
    await session.submit_turn("We moved it: the auth service listens on port 9000 now.")
    await session.submit_turn("Thanks, that is all for the ports.")
    assert len(summarizer.requests) == calls, "no summary was made meanwhile"
    summary = _summary((await session.get_slot()).config.focused)
    assert "auth service listens on port 8000" not in summary
    for turn, name in enumerate(SERVICES[1:4], 1):
        assert f"The {name} service listens on port {8000 + turn}" in summary
    last_turn = [call for call in provider.calls if call.purpose != "summary"][-1]
    sent = "\n".join(m.text or "" for m in last_turn.messages)
    assert "port 9000" in sent and "port 8000" not in sent


def _copying_writer(statement: str) -> Callable[[LlmRequest], str]:
    """A faithful summarizer of the ports and of ``statement`` when its messages give it."""

    def write(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        text = "\n".join(message.text or "" for message in request.messages)
        facts = [f"The {name} service listens on port {port}." for name, port in FACT.findall(text)]
        facts += [statement] if statement in text else []
        return " ".join(facts)

    return write


@pytest.mark.parametrize(
    ("statement", "later", "value"),
    [
        (
            "If nothing helps, the rollback plan deploys v4.21.0.",
            "We are not rolling back to v4.21.0 after all: the rollback plan now deploys "
            "the hotfix v4.22.8 instead.",
            "v4.21.0",
        ),
        ("消息队列用 Redpanda。", "最后不用 Redpanda 了，消息队列改用 SQS。", "Redpanda"),
        (
            "I have requested a refund of 102.75 euros for the broken parts.",
            "Updated: the refund is now 62.50 euros.",
            "102.75 euros",
        ),
        (
            "Ownership for the sprint is Chloe Holm for the help center module.",
            "Chloe Holm moves to another team, the help center module is now owned by Maren Kim.",
            "Chloe Holm",
        ),
        ("部署的 region 是 ap-northeast-1。", "region 换成 eu-west-1。", "ap-northeast-1"),
    ],
    ids=[
        "english-withdrawal",
        "chinese-withdrawal",
        "subject-word-after-the-verb",
        "value-mentioned-again",
        "chinese-topic",
    ],
)
async def test_a_value_a_later_turn_withdraws_or_replaces_leaves_the_summary(
    make_session: MakeSession, statement: str, later: str, value: str
) -> None:
    writer = _copying_writer(statement)
    config = _by_hand(retention_check="off")
    session = make_session(MockProvider(responder=writer), summary=config, mode=FocusedConfig())
    await _talk(session, 3)
    await session.submit_turn(f"{statement} {_filler()}")
    await _talk(session, 2)
    await compact(session)
    assert value in _summary((await session.get_slot()).config.focused)
    await session.submit_turn(later)
    summary = _summary((await session.get_slot()).config.focused)
    assert value not in summary
    for turn, name in enumerate(SERVICES[:3]):
        assert f"The {name} service listens on port {8000 + turn}" in summary


class _SummaryWritesFail(InMemoryStore):
    """A store whose writes of a summary fail while ``failing`` is set."""

    failing = False

    async def write(self, batch: StoreWrite) -> None:
        summary = any(
            isinstance(config.get("focused"), dict) and "summary_override" in config["focused"]
            for config in batch.slot_configs.values()
        )
        if self.failing and summary:
            raise StoreError("the database is read-only for a moment")
        await super().write(batch)


async def test_a_pruning_the_store_refuses_leaves_the_turn_and_the_summary_as_they_were(
    make_session: MakeSession,
) -> None:
    store = _SummaryWritesFail()
    session = make_session(
        MockProvider(responder=Extractor()), summary=_by_hand(), mode=FocusedConfig(), store=store
    )
    await _talk(session, 6)
    await compact(session)
    store.failing = True
    reply = await session.submit_turn("We moved it: the auth service listens on port 9000 now.")
    assert reply.text == "Noted."
    assert "auth service listens on port 8000" in _summary(
        (await session.get_slot()).config.focused
    )
    store.failing = False
    await session.submit_turn("Thanks, that is all for the ports.")
    assert "port 8000" not in _summary((await session.get_slot()).config.focused)


async def test_merging_by_sentences_asks_no_model_and_keeps_the_newest_facts_that_fit(
    make_session: MakeSession,
) -> None:
    summarizer = Extractor()
    config = _config(max_summary_tokens=160, retention_check="off", segments_merge="sentences")
    session = make_session(MockProvider(responder=summarizer), summary=config, mode=FocusedConfig())
    await _talk(session)
    texts = ["\n".join(m.text or "" for m in r.messages) for r in summarizer.requests]
    assert texts and not any(MERGE_INSTRUCTION in text for text in texts)
    stored = await session.get_session_data(state_key("default"))
    assert stored is not None and stored["segments"][0]["start"] == 0
    assert len(stored["segments"]) < len(summarizer.requests), "the parts were never merged"
    assert "\n- The " in stored["segments"][0]["text"]  # a fact a line, as merged
    sent = "\n".join(m.text or "" for m in (await session.get_slot()).load_messages())
    kept = FACT.findall(sent)
    assert len(kept) == len(set(kept)) >= 7  # each fact once
    expected = {name: str(8000 + turn) for turn, name in enumerate(SERVICES)}
    assert dict(kept) == dict(list(expected.items())[-len(kept) :])  # the oldest give way


SMALL_TALK = (
    "The user and the assistant talked about how they like to write meeting notes. "
    "They discussed which tools feel pleasant to use."
)


async def test_a_long_newest_part_of_small_talk_does_not_crowd_out_older_facts(
    make_session: MakeSession,
) -> None:
    """A summarizer that extracts the facts, and writes small talk for a stretch of none."""
    summarizer = Extractor()

    def respond(request: LlmRequest) -> str:
        reply = summarizer(request)
        return reply if reply or request.purpose != "summary" else SMALL_TALK

    config = _config(max_summary_tokens=120, retention_check="off")
    session = make_session(MockProvider(responder=respond), summary=config, mode=FocusedConfig())
    await _talk(session, turns=8)
    for turn in range(8, 14):
        chat = " ".join(f"chat{turn}x{n}" for n in range(40))
        await session.submit_turn(f"How do you like to write meeting notes? {chat}")
    summary = _summary((await session.get_slot()).config.focused)
    # The room is shared by the facts: the eight ports outrank the newest part's small talk.
    assert dict(FACT.findall(summary)) == {
        name: str(8000 + n) for n, name in enumerate(SERVICES[:8])
    }
