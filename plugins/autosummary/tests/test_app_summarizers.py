"""The app's own model as the summarizer: a callable or a client instead of an agentcore provider.

The libraries' own objects (LangChain chat models, the OpenAI client, the OpenAI Agents SDK's
models) are tested in adapter_tests against the real libraries; here a callable and a client
of the OpenAI client's shape show the contract: what the summarizer is given, what comes back,
and that its failures degrade a compaction as a provider's do.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from summary_helpers import summary_parts

from agentcore import ConfigError, LlmRequest, Message, Usage
from agentcore.errors import RateLimitError, ServiceUnavailableError
from agentcore_autosummary import Compactor, SummaryConfig, unfence_summary
from agentcore_autosummary.adapters.summarizers import summary_provider

WINDOW = 2048
WORDS = ["apple", "river", "stone", "cloud", "green", "table", "music", "light"]


def text(words: int, seed: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(words))


async def conversation(compactor: Compactor, turns: int = 60) -> Any:
    """``turns`` turns of an OpenAI-dicts conversation through ``compactor``; the last result."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    state = None
    result = None
    for turn in range(turns):
        history.append({"role": "user", "content": f"q{turn} {text(40, turn)}"})
        result = await compactor.compact(history, state)
        state = result.state
        history.append({"role": "assistant", "content": f"a{turn} {text(30, turn)}"})
    return result


async def test_an_async_callable_gets_chat_completions_dicts_and_writes_the_summary() -> None:
    seen: list[list[dict[str, Any]]] = []

    async def summarize(messages: list[dict[str, Any]]) -> str:
        seen.append(messages)
        return f"Summary {len(seen)}: the user asked about {text(4 + len(seen) % 4, len(seen))}."

    result = await conversation(Compactor(summarize, SummaryConfig(max_context_tokens=WINDOW)))
    assert seen, "the callable was never asked for a summary"
    assert all(isinstance(m, dict) and {"role", "content"} <= set(m) for r in seen for m in r)
    assert result.state.summary is not None
    parts = summary_parts(unfence_summary(result.state.summary))
    assert all(part.startswith("Summary ") for part in parts)  # as it wrote them
    assert result.left_out == 0


async def test_a_plain_function_runs_off_the_event_loop() -> None:
    threads: list[int] = []

    def summarize(messages: list[dict[str, Any]]) -> str:
        threads.append(threading.get_ident())
        return f"Summary {len(threads)}: {text(5 + len(threads) % 3, len(threads))}."

    result = await conversation(Compactor(summarize, SummaryConfig(max_context_tokens=WINDOW)))
    assert threads and threading.get_ident() not in threads
    assert result.state.summary is not None


class FakeOpenAIClient:
    """The shape of ``openai.AsyncOpenAI``: ``chat.completions.create`` and its reply objects."""

    def __init__(self, *, finish_reason: str = "stop") -> None:
        self.calls: list[dict[str, Any]] = []
        self.finish_reason = finish_reason
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    async def create(self, **arguments: Any) -> Any:
        self.calls.append(arguments)
        number = len(self.calls)
        message = SimpleNamespace(content=f"Summary {number}: {text(5 + number % 3, number)}.")
        usage = SimpleNamespace(
            prompt_tokens=1000 + number,
            completion_tokens=20,
            prompt_tokens_details=SimpleNamespace(cached_tokens=600),
        )
        choice = SimpleNamespace(message=message, finish_reason=self.finish_reason)
        return SimpleNamespace(choices=[choice], usage=usage)


async def test_an_openai_client_is_asked_for_the_model_given_and_its_usage_is_kept() -> None:
    client = FakeOpenAIClient()
    compactor = Compactor(client, SummaryConfig(max_context_tokens=WINDOW), model="gpt-4o-mini")
    result = await conversation(compactor)
    assert client.calls and {call["model"] for call in client.calls} == {"gpt-4o-mini"}
    assert all(call["messages"][-1]["role"] == "user" for call in client.calls)
    assert result.state.summary is not None
    provider = summary_provider(client, model="gpt-4o-mini")
    response = await provider.complete(LlmRequest([Message.user("summarize")]))
    assert response.usage == Usage(1000 + len(client.calls), 20, 600)
    assert response.stop_reason == "end_turn" and response.model == "gpt-4o-mini"


async def test_a_reply_cut_at_its_length_limit_says_so() -> None:
    provider = summary_provider(FakeOpenAIClient(finish_reason="length"), model="m")
    response = await provider.complete(LlmRequest([Message.user("summarize")]))
    assert response.stop_reason == "max_tokens"


def test_what_is_not_a_summarizer_is_refused_naming_what_to_pass() -> None:
    with pytest.raises(ConfigError, match="is a model's name, not a model"):
        Compactor("gpt-4o-mini", SummaryConfig(max_context_tokens=WINDOW))
    with pytest.raises(ConfigError, match="needs the model to ask for"):
        Compactor(FakeOpenAIClient(), SummaryConfig(max_context_tokens=WINDOW))
    with pytest.raises(ConfigError, match="must be an agentcore provider"):
        Compactor(42, SummaryConfig(max_context_tokens=WINDOW))


class StatusError(Exception):
    """An error of an HTTP client library: it carries the response's status."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


@pytest.mark.parametrize(
    ("status", "kind"), [(429, RateLimitError), (503, ServiceUnavailableError)]
)
async def test_a_library_failure_is_the_llm_error_its_status_names(
    status: int, kind: type[Exception]
) -> None:
    async def failing(messages: list[dict[str, Any]]) -> str:
        raise StatusError(status)

    with pytest.raises(kind, match=f"the summarizer .*failing failed: StatusError: HTTP {status}"):
        await summary_provider(failing).complete(LlmRequest([Message.user("summarize")]))


async def test_a_failing_callable_degrades_the_compaction_and_never_refuses_it() -> None:
    async def failing(messages: list[dict[str, Any]]) -> str:
        raise StatusError(503)

    result = await conversation(Compactor(failing, SummaryConfig(max_context_tokens=WINDOW)))
    assert result.state.summary is None
    assert result.left_out > 0  # the oldest messages left out, the request inside the window
    assert result.tokens <= WINDOW
