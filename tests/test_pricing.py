"""Dollars from tokens: list prices, cache reads and writes at their own rates, overrides."""

from __future__ import annotations

import pytest

from agentcore import Agent, AgentBuilder, AgentSession, ConfigError, LlmResponse, Message, Usage
from agentcore.pricing import LIST_PRICES, PRICE_SOURCES, Price, PriceTable
from agentcore.testing import MockProvider


def test_cache_reads_and_writes_are_priced_at_their_own_rates() -> None:
    sonnet = PriceTable(maintained=False).price_for("claude-sonnet-4-5")
    assert sonnet is not None
    # 1M input of which 600k read from the cache and 100k written to it, 10k output.
    usage = Usage(1_000_000, 10_000, cached_input_tokens=600_000, cache_write_tokens=100_000)
    uncached, read, write, output = 300_000 * 3.0, 600_000 * 0.3, 100_000 * 3.75, 10_000 * 15.0
    assert sonnet.dollars(usage) == pytest.approx((uncached + read + write + output) / 1e6)
    one_hour = sonnet.dollars(usage, cache_ttl="1h")
    assert one_hour == pytest.approx((uncached + read + 100_000 * 6.0 + output) / 1e6)
    # The same tokens with no cache at all cost more.
    assert sonnet.dollars(Usage(1_000_000, 10_000)) > sonnet.dollars(usage)


def test_openai_cached_input_is_discounted_and_writing_costs_nothing_extra() -> None:
    price = PriceTable(maintained=False).price_for("gpt-4.1-mini")
    assert price is not None
    cached = price.dollars(Usage(2048, 0, cached_input_tokens=1024))
    assert cached == pytest.approx((1024 * 0.4 + 1024 * 0.1) / 1e6)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("openai:gpt-5", "gpt-5"),
        ("anthropic:claude-haiku-4-5", "claude-haiku-4-5"),
    ],
)
def test_dated_and_prefixed_ids_find_their_family(model: str, family: str) -> None:
    assert PriceTable(maintained=False).price_for(model) == LIST_PRICES[family]


def test_unknown_models_have_no_price_and_overrides_win() -> None:
    assert PriceTable(maintained=False).price_for("smollm2") is None
    assert PriceTable(maintained=False).price_for("gpt-4.10") is None  # no "-" after the known name
    mine = PriceTable({"smollm2": Price(input=0, output=0), "gpt-4o": Price(input=1, output=2)})
    assert mine.dollars(Usage(10, 10), "smollm2") == 0
    assert mine.dollars(Usage(1_000_000, 1_000_000), "gpt-4o") == pytest.approx(3.0)
    only = PriceTable({"x": Price(input=1, output=1)}, include_list_prices=False)
    assert only.price_for("gpt-4o") is None


def test_every_provider_of_the_table_names_its_source() -> None:
    assert set(PRICE_SOURCES) == {"anthropic", "openai", "google"}
    families = {name.split("-")[0] for name in LIST_PRICES}
    assert {"claude", "gpt", "gemini"} <= families


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "3", True])
def test_bad_prices_are_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match="input must be a finite number of dollars >= 0"):
        Price(input=bad, output=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="must be a Price"):
        PriceTable({"m": 3.0})  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="cache_ttl must be '5m' or '1h'"):
        Price(input=1, output=1).dollars(Usage(), cache_ttl="1d")
    with pytest.raises(ConfigError, match="a price applies to a Usage, got 12"):
        Price(input=1, output=1).dollars(12)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="a model name must be a non-empty str"):
        PriceTable(maintained=False).price_for(None)  # type: ignore[arg-type]


async def test_a_session_reports_its_dollars_next_to_its_tokens() -> None:
    replies = [
        LlmResponse(Message.assistant("one"), Usage(2000, 100, cached_input_tokens=0)),
        LlmResponse(Message.assistant("two"), Usage(2100, 100, cached_input_tokens=1900)),
    ]
    bundle = AgentBuilder().provider(MockProvider(replies)).load_plugins(False).build()
    session = AgentSession(Agent("a", model="gpt-4o-mini"), "s", bundle)
    await session.submit_turn("first")
    await session.submit_turn("second")
    total = session.cost.total()
    assert (total.input_tokens, total.cached_input_tokens) == (4100, 1900)
    expected = (2200 * 0.15 + 1900 * 0.075 + 200 * 0.6) / 1e6
    assert session.dollars() == pytest.approx(expected)
    unknown = AgentSession(Agent("b", model="smollm2"), "t", bundle)
    assert unknown.dollars() is None
    assert unknown.dollars(PriceTable({"smollm2": Price(input=0, output=0)})) == 0
    with pytest.raises(ConfigError, match="prices must be a PriceTable or None"):
        unknown.dollars({"smollm2": 0})  # type: ignore[arg-type]


GENAI_MODELS = ["gpt-4o-mini", "openai:gpt-5", "claude-sonnet-4-5-20250929", "gemini-2.5-flash"]


@pytest.mark.parametrize("model", GENAI_MODELS)
def test_prices_come_from_genai_prices_when_it_is_installed(model: str) -> None:
    genai = pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    table = PriceTable()
    assert table.maintained and table.price_source(model) == "genai-prices"
    usage = Usage(1_200_000, 30_000, cached_input_tokens=500_000)
    name = model.split(":", 1)[-1]
    expected = genai.calc_price(
        genai.Usage(input_tokens=1_200_000, cache_read_tokens=500_000, output_tokens=30_000),
        model_ref=name,
    ).total_price
    assert table.dollars(usage, model) == pytest.approx(float(expected))
    price = table.price_for(model)
    assert price is not None and price.input > 0 and price.output > price.input


def test_a_local_servers_model_is_never_priced_from_genai_prices() -> None:
    pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    table = PriceTable()
    assert table.price_source("deepseek-chat") == "genai-prices"  # DeepSeek's own API
    assert table.price_source("ollama:deepseek-chat") is None
    assert table.dollars(Usage(1000, 1000), "ollama:deepseek-chat") is None


def test_overrides_win_and_one_hour_cache_writes_use_the_hand_table() -> None:
    pytest.importorskip("genai_prices", reason="the prices extra is not installed")
    mine = PriceTable({"gpt-4o-mini": Price(input=1, output=1)})
    assert mine.price_source("gpt-4o-mini") == "override"
    assert mine.dollars(Usage(1_000_000, 0), "gpt-4o-mini") == pytest.approx(1.0)
    usage = Usage(1_000_000, 0, cache_write_tokens=1_000_000)
    hour = PriceTable().dollars(usage, "claude-sonnet-4-5", cache_ttl="1h")
    assert hour == pytest.approx(LIST_PRICES["claude-sonnet-4-5"].dollars(usage, cache_ttl="1h"))


def test_without_genai_prices_the_hand_table_prices_and_asking_for_it_says_how(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agentcore.pricing as pricing

    monkeypatch.setattr(pricing, "maintained_prices", lambda: None)
    table = PriceTable()
    assert not table.maintained and table.price_source("gpt-4o") == "list"
    assert table.dollars(Usage(2000, 100), "gpt-4o") == LIST_PRICES["gpt-4o"].dollars(
        Usage(2000, 100)
    )
    with pytest.raises(ConfigError, match="maintained=True needs genai-prices"):
        PriceTable(maintained=True)
    assert PriceTable(maintained=False).price_source("gpt-4o") == "list"
