"""A long tool result reaches the summarizer by what it holds, not by its first characters."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    Message,
    ToolRegistry,
    ToolUseBlock,
)
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig
from agentcore_autosummary.recalling.history import fair_shares
from agentcore_autosummary.requesting.tool_excerpts import GAP, tool_result_excerpt


def _describe() -> str:
    """A ``kubectl describe`` whose memory limit sits past its first 500 characters."""
    lines = [
        "Name:         api-7f9c",
        "Namespace:    payments",
        "Labels:       app=api",
        *[f"Annotations:  note-{n} is a long annotation without much in it" for n in range(8)],
        "Containers:",
        "  api:",
        "    Image:      registry.local/api:2.14.3",
        "    Limits:",
        "      memory:  1536Mi",
        "      cpu:     750m",
        *["    Mounts:       /var/run/secrets from the default token (ro)" for _ in range(6)],
        "Events:       <none>",
    ]
    return "\n".join(lines)


def test_a_short_result_is_kept_whole() -> None:
    assert tool_result_excerpt("memory: 1536Mi", 500) == "memory: 1536Mi"


def test_a_value_past_the_first_characters_is_in_the_excerpt() -> None:
    text = _describe()
    assert text.index("1536Mi") > 545 and len(text) > 1000
    excerpt = tool_result_excerpt(text, 500)
    assert "memory:  1536Mi" in excerpt
    assert "Image:      registry.local/api:2.14.3" in excerpt
    assert excerpt.startswith("Name:         api-7f9c")
    assert excerpt.rstrip().endswith("Events:       <none>")
    assert GAP in excerpt
    assert "1536Mi" not in text[:500]  # the first 500 characters alone would lose it


@given(st.text(min_size=0, max_size=3000), st.integers(min_value=0, max_value=1200))
def test_an_excerpt_never_exceeds_its_limit(text: str, limit: int) -> None:
    excerpt = tool_result_excerpt(text, limit)
    assert len(excerpt) <= max(limit, 0) or excerpt == text
    if len(text) <= limit:
        assert excerpt == text


class _Describing:
    """A model that describes the api pod when asked to, and its summarizer.

    The first ``describe`` gives :func:`_describe`; a later one, after a patch, gives
    the limit ``2048Mi``.
    """

    def __init__(self) -> None:
        self.summary_requests: list[str] = []
        self.turns: list[LlmRequest] = []
        self.described = 0

    def describe(self, pod: str) -> str:
        """Describe a pod.

        Args:
            pod: The pod's name.
        """
        self.described += 1
        text = _describe()
        return text if self.described == 1 else text.replace("1536Mi", "2048Mi")

    def __call__(self, request: LlmRequest) -> str | LlmResponse:
        if request.purpose == "summary":
            self.summary_requests.append("\n".join(m.text or "" for m in request.messages))
            return "The api pod was described."
        self.turns.append(request)
        last = request.messages[-1]
        if last.role == "user" and "describe" in (last.text or ""):
            call = ToolUseBlock(f"c{len(request.messages)}", "describe", {"pod": "api"})
            return LlmResponse(Message.assistant("", [call]), stop_reason="tool_use")
        return "Done."

    def session(self, **overrides: object) -> AgentSession:
        """A session of this model with the tool, summarized often, ``overrides`` applied."""
        registry = ToolRegistry()
        registry.tool(self.describe)
        fields: dict[str, object] = {
            "max_context_tokens": 1500,
            "max_summary_tokens": 120,
            "trigger_token_ratio": 0.5,
            "keep_recent_messages": 2,
            **overrides,
        }
        bundle = (
            AgentBuilder()
            .provider(MockProvider(responder=self))
            .store(InMemoryStore())
            .tool_registry(registry)
            .setting("summary_config", SummaryConfig(**fields))  # type: ignore[arg-type]
            .build()
        )
        return AgentSession(Agent("assistant"), "s", bundle, FocusedConfig())


async def _talk_on(session: AgentSession) -> None:
    for turn in range(8):
        filler = " ".join(f"word{turn}x{n}" for n in range(30))
        await session.submit_turn(f"Another question, number {turn}, about {filler}.")


async def test_the_summary_request_holds_a_value_deep_in_a_tool_result() -> None:
    model = _Describing()
    session = model.session(request_shape="transcript")
    await session.submit_turn("Please describe the api pod.")
    await _talk_on(session)
    assert model.summary_requests, "no summary was made"
    assert any("memory:  1536Mi" in text for text in model.summary_requests)


async def test_recall_brings_back_the_line_of_a_tool_result_under_its_keys() -> None:
    model = _Describing()
    session = model.session(retention_check="off", recall="auto")
    await session.submit_turn("Please describe the api pod.")
    await session.submit_turn("Apply the patch, then describe the api pod again.")
    await _talk_on(session)
    await session.submit_turn("What is the memory limit of the api container?")
    asked = model.turns[-1].messages[-1].text
    # "memory:  1536Mi" alone names no limit: the line comes with the keys it sits under.
    assert "Containers > api > Limits > memory: 2048Mi" in asked, asked
    assert "Annotations" not in asked and "Mounts" not in asked, asked
    assert "1536Mi" not in asked, "the newer output replaced the older limit"


@given(st.lists(st.integers(min_value=0, max_value=500), max_size=6), st.integers(0, 1000))
def test_recalled_messages_share_the_room_fairly(sizes: list[int], room: int) -> None:
    shares = fair_shares(sizes, room)
    assert sum(shares) <= room
    assert all(0 <= share <= size for share, size in zip(shares, sizes, strict=True))
    if sum(sizes) <= room:
        assert shares == sizes  # everything fits: nothing is cut
    cut = [share for share, size in zip(shares, sizes, strict=True) if share < size]
    if cut:  # what is cut gets an even share, at least what any whole one took
        assert max(cut) - min(cut) <= 1
        assert room - sum(shares) < len(sizes)
