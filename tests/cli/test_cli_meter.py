from __future__ import annotations

import pytest

from agentcore.cli.meter import bar, format_tokens, meter


def test_meter_line() -> None:
    assert meter(1134, 1500) == "context  1,134 / 1,500 tokens  [#########---]"
    assert meter(42, 1500) == "context     42 / 1,500 tokens  [#-----------]"


def test_bar_bounds() -> None:
    assert bar(0, 100) == "[------------]"
    assert bar(100, 100) == "[############]"
    assert bar(250, 100) == "[############]!"
    with pytest.raises(ValueError):
        bar(1, 0)


def test_format_tokens() -> None:
    assert format_tokens(32000) == "32,000"
