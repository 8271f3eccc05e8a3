"""Facts of one pattern stay apart, and a withdrawn value is not quoted back as true.

Ten services each listen on their own port: a later port is the value of
another service, not an update of the earlier ones, so a summary that keeps
none of them is followed by all ten. "We are not using Redis after all"
withdraws the Redis decision: the quotes do not state it as true. A value
changed for the same subject is still never quoted (``test_quoting.py``).
"""

from __future__ import annotations

import pytest

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, InMemoryStore, LlmRequest
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig, get_conversation_summary
from agentcore_autosummary.judging.pruning import without_superseded
from agentcore_autosummary.judging.superseding import is_superseded
from agentcore_autosummary.judging.withdrawals import withdraws, withdraws_statement

SERVICES = ["auth", "billing", "search", "mailer", "ledger", "gateway", "catalog", "orders"]
SERVICES += ["metrics", "notifier"]


def forgetful(request: LlmRequest) -> str:
    """A summarizer that keeps no fact; turns answer "Noted."."""
    if request.purpose != "summary":
        return "Noted."
    return "The user set up the services of the platform and discussed the stack."


async def run(statements: list[str], fillers: int) -> AgentSession:
    config = SummaryConfig(
        max_context_tokens=3000,
        max_summary_tokens=250,
        trigger_token_ratio=0.25,
        keep_recent_tokens=60,
        debounce_turns=1,
    )
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=forgetful))
        .store(InMemoryStore())
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(Agent("assistant"), "apart", bundle, FocusedConfig())
    for text in statements:
        await session.submit_turn(text)
    for number in range(fillers):
        await session.submit_turn(f"Checklist item {number}: " + "review the plan again " * 8)
    return session


async def context_text(session: AgentSession) -> str:
    return "\n".join(message.text for message in await session.load_messages())


@pytest.mark.parametrize(
    "pattern",
    [
        "The {service} service listens on port {port}.",
        "Note that the {service} service listens on port {port}.",
        "The {service} service: port {port}.",
    ],
)
async def test_ten_ports_of_ten_services_all_survive_a_summary(pattern: str) -> None:
    statements = [
        pattern.format(service=service, port=8440 + number)
        for number, service in enumerate(SERVICES)
    ]
    session = await run(statements, 12)
    assert await get_conversation_summary(session) is not None
    context = await context_text(session)
    assert "Checklist item 0" not in context, "the statements were never summarized"
    for statement in statements:
        assert statement in context


async def test_a_withdrawn_value_is_not_quoted_as_true() -> None:
    statements = [
        "We will use Redis 7.2 for the session cache.",
        "The message queue is RabbitMQ 3.12.",
        "Actually, we are not using Redis after all; the session cache stays in PostgreSQL 16.",
    ]
    session = await run(statements, 20)
    summary = await get_conversation_summary(session)
    assert summary is not None
    context = await context_text(session)
    assert "Checklist item 0" not in context, "the statements were never summarized"
    assert "We will use Redis 7.2" not in context
    assert "RabbitMQ 3.12" in context and "PostgreSQL 16" in context


@pytest.mark.parametrize(
    ("identifier", "sentence", "later", "superseded"),
    [
        (
            "8440",
            "The auth service listens on port 8440.",
            "The billing one uses port 8441.",
            False,
        ),
        ("8440", "The auth service listens on port 8440.", "auth moved to port 9000.", True),
        (
            "8440",
            "Note that the auth service listens on port 8440.",
            "Note that the billing service listens on port 8441. "
            "Note that the search service listens on port 8442.",
            False,
        ),
        (
            "8440",
            "Note that the auth service listens on port 8440.",
            "Note that the billing service listens on port 8441. "
            "Note that auth moved to port 9000.",
            True,
        ),
        ("April 14", "The launch date is April 14.", "The launch date is now May 5.", True),
        (
            "6,750",
            "The public API's rate limit is 6,750 requests per minute per key.",
            "Updated: the rate limit is now 2,800 requests per minute per key.",
            True,
        ),
        ("30 s", "We set the timeout to 30 s.", "Raise the timeout to 60 s.", True),
        (
            "53,000 dollars",
            "The budget for the quarter is 53,000 dollars.",
            "Finance added the load tests: the budget is now 76,000 dollars.",
            True,
        ),
        (
            "102.75 euros",
            "I have requested a refund of 102.75 euros for the broken parts.",
            "Updated: the refund is now 62.50 euros.",
            True,
        ),
        (
            "May 3",
            "The refund of 102.75 euros was approved on May 3.",
            "Updated: the refund is now 62.50 euros.",
            False,
        ),
        (
            "Chloe Holm",
            "Ownership for the sprint is Chloe Holm for the help center module.",
            "Chloe Holm moves to another team, the help center module is now owned by Maren Kim.",
            True,
        ),
        (
            "Step 9",
            "Step 9 of the rollout: check the gateway.",
            "Step 10 of the rollout: check the queue.",
            False,
        ),
        (
            "Photo 1",
            "Photo 1 of the garden.",
            "Photo 2 of the garden.\nNoted.\nPhoto 3 of the garden.",
            False,
        ),
        ("6月5日", "用户需要调整 release date 到6月5日", "release date 改到7月18日", True),
        ("ap-northeast-1", "部署的 region 是 ap-northeast-1。", "region 换成 eu-west-1。", True),
        ("6月5日", "上线日期定在6月5日。", "上线日期推迟到6月20日。", True),
        ("8001", "- Auth: port 8001", "- Billing: port 8002", False),
        ("8001", "- Auth service: 8001", "- Billing service: 8002", False),
        ("8001", "- Auth: port 8001", "- Auth: port 9000", True),
        ("8440", "- 认证模块：8440", "- 计费模块：8441", False),
        ("8440", "认证模块的端口是8440。", "计费模块的端口是8441。", False),
        ("8440", "认证模块的端口是8440。", "认证模块的端口改为9000。", True),
        ("12万元", "我们的预算是12万元。", "预算现在是15万元。", True),
    ],
)
def test_a_later_value_updates_only_the_subject_its_clause_names(
    identifier: str, sentence: str, later: str, superseded: bool
) -> None:
    assert is_superseded(identifier, sentence, later) is superseded


@pytest.mark.parametrize(
    ("identifier", "later", "withdrawn"),
    [
        ("Redis 7.2", "Actually, we are not using Redis after all.", True),
        ("Redis 7.2", "We dropped Redis for the cache.", True),
        ("Redis 7.2", "我们不用Redis了。", True),
        ("Redis 7.2", "No, Redis stays: it is fast enough.", False),
        ("Redis 7.2", "Redis is the cache.", False),
        ("8440", "Port 8440 is not open yet.", False),
    ],
)
def test_a_negated_name_withdraws_its_value(identifier: str, later: str, withdrawn: bool) -> None:
    assert withdraws(identifier, later) is withdrawn


@pytest.mark.parametrize(
    ("text", "later", "left"),
    [
        ("The message queue is Redpanda.", "We are not using Redpanda after all.", ""),
        ("消息队列用 Redpanda。", "最后不用 Redpanda 了，消息队列改用 ActiveMQ。", ""),
        ("缓存放在 Memcached。", "我们最后不用 Memcached 了，缓存还是放在本地内存。", ""),
        (
            "缓存放在本地内存，不用Redis。",
            "数据库用 PostgreSQL 16。",
            "缓存放在本地内存，不用Redis。",
        ),
    ],
)
def test_a_withdrawal_that_names_the_value_again_removes_it(
    text: str, later: str, left: str
) -> None:
    assert without_superseded(text, later) == left


@pytest.mark.parametrize(
    ("text", "later", "left"),
    [
        (
            "团队决定使用YugabyteDB 2作为数据库,并调整上线日期为10月11日",
            "客户需要更多时间验收,上线日期推迟到11月23日",
            "团队决定使用YugabyteDB 2作为数据库",
        ),
        (
            "The user pays 181.90 euros, and receives a refund of 102.75 euros.",
            "Updated: the refund is now 62.50 euros.",
            "The user pays 181.90 euros",
        ),
    ],
    ids=["chinese-with-ascii-commas", "english"],
)
def test_a_replaced_value_leaves_its_clause_and_the_live_clauses_stay(
    text: str, later: str, left: str
) -> None:
    assert without_superseded(text, later) == left


_WITHDRAWAL = (
    "The graphs rule it out: it is not a slow upstream cache after all. "
    "The root cause is a noisy neighbour on the node."
)


@pytest.mark.parametrize(
    ("sentence", "later", "withdrawn"),
    [
        ("My guess: the root cause is a slow upstream cache.", _WITHDRAWAL, True),
        ("Working theory: a slow upstream cache.", _WITHDRAWAL, True),
        # It reports the change itself, and carries the new cause.
        (
            "The graphs rule out a slow upstream cache after all, and the root cause is a "
            "noisy neighbour on the node.",
            _WITHDRAWAL,
            False,
        ),
        # Advice in the negative withdraws nothing: no phrase right after the negation.
        (
            "The upstream cache holds 5 GB.",
            "Do not restart the upstream cache; use the replica instead.",
            False,
        ),
        # Without a word that a decision changed, a negation is not a withdrawal.
        ("My guess: a slow upstream cache.", "It is not a slow upstream cache, I think.", False),
        ("原因可能是上游缓存太慢。", "最后发现不是上游缓存的问题，是节点上的邻居。", True),
    ],
)
def test_a_statement_is_withdrawn_in_its_own_words(
    sentence: str, later: str, withdrawn: bool
) -> None:
    assert withdraws_statement(sentence, later) is withdrawn
