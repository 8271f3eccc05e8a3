"""Which language a conversation to summarize is in, as the default prompt reads it."""

from __future__ import annotations

import pytest

from agentcore_autosummary.text.words import is_mostly_cjk


@pytest.mark.parametrize(
    "text",
    [
        "User: 我们把端口改成 8443，服务名是 payments-api，负责人是 Dana Whitfield。",
        "User: 予算は四万ドルです。担当者は山田さんです。",
        "User: 部署用 Kubernetes 1.29 和 Helm，镜像是 registry.internal/payments:4.2.1。",
    ],
)
def test_chinese_or_japanese_with_latin_names_is_mostly_cjk(text: str) -> None:
    assert is_mostly_cjk(text)


@pytest.mark.parametrize(
    "text",
    [
        "User: the payments service listens on port 8443; the owner is Dana Whitfield.",
        "User: the label [上下文摘要] starts the summary message in every request we send.",
        "User: 8443 / 9090 / 2026-12-06",
        "",
    ],
)
def test_english_quoting_a_few_chinese_words_or_no_words_is_not(text: str) -> None:
    assert not is_mostly_cjk(text)
