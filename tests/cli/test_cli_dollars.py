"""Dollars beside tokens: the chat's cost line and ``sessions show``, at list prices."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer

from agentcore import Usage
from agentcore.cli.money import cost_line, format_dollars
from agentcore.pricing import Price, PriceTable

COST = re.compile(
    r"^cost +([\d,]+) in \(([\d,]+) cache reads, ([\d,]+) cache writes\) \+ ([\d,]+) out tokens"
    r"(  \$[\d.,]+)?$"
)


def test_the_cost_line_shows_dollars_when_the_model_has_a_price() -> None:
    usage = Usage(120_000, 2_000, cached_input_tokens=100_000, cache_write_tokens=10_000)
    line = cost_line(usage, "claude-sonnet-4-5-20250929")
    expected = PriceTable().dollars(usage, "claude-sonnet-4-5")
    assert expected is not None
    assert line == (
        "cost     120,000 in (100,000 cache reads, 10,000 cache writes) + 2,000 out tokens  "
        + format_dollars(expected)
    )
    assert format_dollars(expected) == "$0.1275"  # 10k*3 + 100k*0.3 + 10k*3.75 + 2k*15 per M
    assert cost_line(usage, "llama3.2").endswith("2,000 out tokens")  # no price: tokens only
    assert cost_line(usage, None).endswith("out tokens")
    mine = PriceTable({"llama3.2": Price(input=1.0, output=1.0)})
    assert cost_line(Usage(1_000_000, 0), "llama3.2", mine).endswith("  $1.00")


def test_format_dollars() -> None:
    assert format_dollars(0.000042) == "$0.0000"
    assert format_dollars(0.5) == "$0.5000"
    assert format_dollars(1234.5) == "$1,234.50"


def test_chat_shows_the_cost_and_sessions_show_prices_it(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    db = tmp_path / "chat.db"
    args = ["chat", "--base-url", openai_server.base_url, "--db", str(db)]
    result = run_cli(*args, "--session", "d1", input="hello\nsecond\n")
    assert result.returncode == 0, result.stderr
    costs = [COST.match(line) for line in result.stderr.splitlines() if line.startswith("cost")]
    assert len(costs) == 2 and all(costs)
    # The default model (openai:gpt-4o-mini) has a list price: dollars beside the tokens.
    assert all(match is not None and match.group(5) for match in costs)
    first = costs[0]
    assert first is not None and int(first.group(1).replace(",", "")) > 0

    shown = run_cli("sessions", "show", "d1", "--db", str(db), "--json")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["model"] == "gpt-4o-mini"  # recorded by the chat
    total = report["cost"]["total"]
    usage = Usage(
        total["input_tokens"],
        total["output_tokens"],
        cached_input_tokens=total["cached_input_tokens"],
        cache_write_tokens=total["cache_write_tokens"],
    )
    assert total["dollars"] == pytest.approx(PriceTable().dollars(usage, "gpt-4o-mini"))

    text = run_cli("sessions", "show", "d1", "--db", str(db)).stdout
    assert re.search(r"total: [\d,]+ in \(0 cache reads, 0 cache writes\) .* tokens  \$", text)
    assert "model         gpt-4o-mini\n" in text
    # Another model's price on demand; a model without one shows tokens only.
    other = json.loads(
        run_cli("sessions", "show", "d1", "--db", str(db), "--json", "--model", "gpt-5").stdout
    )
    assert other["cost"]["total"]["dollars"] == pytest.approx(PriceTable().dollars(usage, "gpt-5"))
    local = run_cli("sessions", "show", "d1", "--db", str(db), "--model", "llama3.2").stdout
    assert "$" not in local and "model         llama3.2 (no list price)" in local
