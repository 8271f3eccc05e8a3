"""Two summary parts made one by their sentences: facts first, newest first, each once."""

from __future__ import annotations

from agentcore.plugin_api import get_token_counter
from agentcore_autosummary.judging.condensing import condensed
from agentcore_autosummary.judging.pruning import without_superseded
from agentcore_autosummary.judging.quoting import QUOTED

COUNTER = get_token_counter(None)


def test_every_fact_is_kept_once_in_the_order_it_was_written() -> None:
    parts = (
        "The team met to plan the portal. The budget is 76,000 dollars.\n"
        f"{QUOTED}\n- The budget is 76,000 dollars.\n- The launch date is September 2.\n"
        "Key facts:\n- The database is MariaDB 11."
    )
    kept = condensed(parts, COUNTER, 200)
    assert kept.splitlines() == [
        "- The team met to plan the portal.",
        "- The budget is 76,000 dollars.",
        "- The launch date is September 2.",
        "- The database is MariaDB 11.",
    ]


def test_a_short_room_keeps_the_newest_facts_before_any_other_sentence() -> None:
    parts = (
        "The auth service listens on port 8001. We talked about naming for a while. "
        "The mail service listens on port 8002. The queue service listens on port 8003."
    )
    room = COUNTER.count_text("- The queue service listens on port 8003.") * 2 + 2
    kept = condensed(parts, COUNTER, room)
    assert kept.splitlines() == [
        "- The mail service listens on port 8002.",
        "- The queue service listens on port 8003.",
    ]
    assert condensed(parts, COUNTER, 1) == ""


def test_a_value_a_later_sentence_replaced_is_not_kept_beside_it() -> None:
    parts = (
        "The help center module is owned by Chloe Holm, and the dashboards module is "
        "owned by Aiko Keller.\nThe database is PostgreSQL 15.\n"
        "Updated: the help center module is now owned by Maren Kim.\n"
        "We are not using PostgreSQL 15 after all."
    )
    kept = condensed(parts, COUNTER, 200)
    assert "Chloe Holm" not in kept and "PostgreSQL 15." not in kept
    assert "Aiko Keller" in kept and "now owned by Maren Kim" in kept


def test_a_list_of_labelled_values_of_one_pattern_keeps_every_value() -> None:
    parts = "- Auth: port 8001\n- Billing: port 8002\n- Search: port 8003\n- Auth: port 9000"
    kept = condensed(parts, COUNTER, 200)
    assert kept.splitlines() == ["- Billing: port 8002", "- Search: port 8003", "- Auth: port 9000"]


def test_owners_of_one_pattern_in_chinese_are_five_facts_and_a_withdrawal_leaves_no_gap() -> None:
    # "用户模块" is the user module, not "the user" opening a sentence: it names a subject.
    parts = (
        "模块分工：发票模块的负责人是韩强；物流模块的负责人是唐杰；搜索模块的负责人是何勇；"
        "用户模块的负责人是胡子涵；支付模块的负责人是周超。\n"
        "好的：接口超时是10秒；缓存用KeyDB。\n"
        "我们最后不用KeyDB了，缓存还是放在本地内存。"
    )
    kept = condensed(parts, COUNTER, 400)
    for owner in ("韩强", "唐杰", "何勇", "胡子涵", "周超"):
        assert owner in kept, kept
    assert "KeyDB。" not in kept.replace("不用KeyDB", "")
    assert all(line.strip() not in ("", "-") for line in kept.splitlines()), kept


def test_a_line_whose_every_sentence_was_replaced_goes_whole() -> None:
    later = "我们最后不用KeyDB了，缓存还是放在本地内存。"
    pruned = without_superseded("- 接口超时是10秒。缓存用KeyDB。\n- 缓存用KeyDB。", later)
    assert pruned == "- 接口超时是10秒。"  # no empty item, no Latin full stop added
