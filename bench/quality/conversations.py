"""The scripted conversations of the quality bench and their planted facts.

Four kinds, each about 28 turns: a project whose decisions are updated later,
a tool-heavy coding session (file paths, command output), a support chat with
amounts and dates, and a project in Chinese. Every turn is scripted, the
assistant's replies and tool outputs included, so every system replays the
same text and only the summaries differ. A fact is stated in a user message
(and acknowledged in the reply); an updated fact is restated later with its
new value. The turns between are ordinary work talk built from a fixed pool
of sentences (seeded), which names no fact's subject.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from bench.conversations import Step, ToolCall, Turn
from bench.quality.facts import Fact

NUMBER = r"\d[\d.,]*"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
DATE_EN = rf"(?:{_MONTHS}) \d{{1,2}}"
PERCENT = r"\d+(?:\.\d+)?%"
TOOL_NAMES = ("read_file", "run_command")
FILLER_SENTENCES = 7
"""Sentences in the reply of a turn that plants nothing."""


@dataclass(frozen=True)
class Script:
    """One conversation: its turns, the facts planted in it, the last question."""

    key: str
    title: str
    language: str
    turns: tuple[Turn, ...]
    facts: tuple[Fact, ...]

    def texts(self) -> list[str]:
        """Every message text of the conversation, tool outputs included, in order."""
        out = []
        for turn in self.turns:
            out.append(turn.user)
            for step in turn.steps:
                out.append(step.text)
                out.extend(call.output for call in step.calls)
        return out


def _filler(rng: random.Random, questions: Sequence[str], answers: Sequence[str]) -> Turn:
    question = rng.choice(questions)
    reply = " ".join(rng.sample(list(answers), FILLER_SENTENCES))
    return Turn(question, (Step(reply),))


def _weave(
    planted: dict[int, Turn],
    total: int,
    seed: int,
    questions: Sequence[str],
    answers: Sequence[str],
    last: Turn,
) -> tuple[Turn, ...]:
    rng = random.Random(seed)
    turns = [planted.get(index) or _filler(rng, questions, answers) for index in range(total - 1)]
    return (*turns, last)


def _say(user: str, reply: str) -> Turn:
    return Turn(user, (Step(reply),))


# -- a project with decisions updated later ----------------------------------------

_PROJECT_FACTS = (
    Fact(
        "launch date",
        ("launch date", "launch"),
        ("May 5", "5 May", "May 5th"),
        ("April 14", "14 April", "April 14th"),
        DATE_EN,
    ),
    Fact("rate limit", ("rate limit",), ("2,500",), ("5,000",), NUMBER),
    Fact("database", ("database",), ("PostgreSQL 16", "Postgres 16"), ("MySQL 8",)),
    Fact("budget", ("budget",), ("48,000",), ("40,000",), NUMBER),
    Fact("project lead", ("project lead", "lead"), ("Dana Whitfield",)),
    Fact(
        "staging cluster", ("staging cluster", "staging"), ("stg-harbor-03",), (), r"stg-[a-z]+-\d+"
    ),
    Fact(
        "cache ttl",
        ("cache ttl", "ttl"),
        ("900 seconds", "900 s", "900s", "15 minutes"),
        (),
        NUMBER,
    ),
    Fact(
        "auth provider",
        ("auth provider", "authentication provider", "identity provider"),
        ("Keycloak",),
    ),
    Fact("upload limit", ("upload limit", "upload size"), ("25 MB", "25mb"), (), NUMBER),
    Fact(
        "code freeze",
        ("code freeze", "freeze"),
        ("April 28", "28 April", "April 28th"),
        (),
        DATE_EN,
    ),
)

_PROJECT_PLANTED = {
    1: _say(
        "Kick-off notes for Harbor, the new customer portal. The project lead is Dana "
        "Whitfield; she signs off on scope changes. The launch date is April 14, so "
        "please plan backwards from that.",
        "Noted: the project lead is Dana Whitfield and the launch date is April 14. I will "
        "plan the milestones backwards from the launch and keep a running list of open "
        "decisions for Dana to sign off.",
    ),
    3: _say(
        "Infrastructure decisions: the database will be MySQL 8, because the ops team "
        "knows it well. The staging cluster is stg-harbor-03.",
        "Understood: the database is MySQL 8 and the staging cluster is stg-harbor-03. I "
        "will write the provisioning checklist for staging with those two in mind.",
    ),
    5: _say(
        "For the public API, the rate limit is 5,000 requests per minute per key. The "
        "budget approved by finance is 40,000 dollars for the quarter.",
        "Recorded: the rate limit is 5,000 requests per minute per key, and the budget is "
        "40,000 dollars for the quarter. I will flag anything that could push spending "
        "past it.",
    ),
    8: _say(
        "Security review outcome: the auth provider will be Keycloak, self-hosted. Also "
        "the upload limit for attachments is 25 MB per file.",
        "Got it: the auth provider is Keycloak, self-hosted, and the upload limit is 25 MB "
        "per file. I will add both to the security section of the design document.",
    ),
    11: _say(
        "Performance notes: set the cache TTL to 900 seconds for catalogue pages. The code "
        "freeze is April 28.",
        "Done: the cache TTL is 900 seconds for catalogue pages, and the code freeze is "
        "April 28. I will remind the team a week before the freeze.",
    ),
    17: _say(
        "Change of plan from the ops review: the database is now PostgreSQL 16 instead, "
        "since we need row-level security. Please update the plan.",
        "Updated: the database is now PostgreSQL 16, chosen for row-level security. I will "
        "redo the provisioning checklist and the migration scripts for it.",
    ),
    21: _say(
        "The partner's gateway cannot keep up, so the rate limit drops: the rate limit is "
        "now 2,500 requests per minute per key.",
        "Updated: the rate limit is now 2,500 requests per minute per key. I will change "
        "the gateway configuration and the API documentation to match.",
    ),
    25: _say(
        "Finance approved the extra load tests: the budget is now 48,000 dollars for the quarter.",
        "Updated: the budget is now 48,000 dollars for the quarter, load tests included. I "
        "will add the load-test line to the cost sheet.",
    ),
    28: _say(
        "Marketing needs more time, so the launch moves: the launch date is now May 5.",
        "Updated: the launch date is now May 5. I will shift the milestones that depend "
        "on it and tell the support team.",
    ),
}

_PROJECT_QUESTIONS = (
    "How should we split the onboarding screens between the two front-end developers?",
    "What is the best order for writing the end-to-end tests?",
    "Can you draft the agenda for Thursday's planning meeting?",
    "Which risks should go into the weekly status report?",
    "How do we keep the design document from going stale?",
    "What should the error pages say when the portal is down?",
    "How should we name the feature branches for the portal work?",
    "What goes into the accessibility checklist for the forms?",
)
_PROJECT_ANSWERS = (
    "I would start with the screens that block other work, so the team is never idle.",
    "Each item should have one owner and a date, or it will drift.",
    "Keep the list short: five points that people actually read beat twenty they skip.",
    "We can reuse the form components from the old site, after an accessibility pass.",
    "A short written summary after every meeting avoids repeating the same discussion.",
    "The end-to-end tests should cover sign-in, search, checkout and the account page first.",
    "Screenshots in the pull requests make the design review much faster.",
    "I suggest a fifteen minute check-in on Mondays instead of a long weekly meeting.",
    "Naming branches after the ticket keeps the history easy to follow.",
    "Error messages should say what happened and what the user can do next.",
    "Anything that changes scope should be written down and confirmed by email.",
    "Keyboard navigation and visible focus are the two items testers miss most often.",
)


def project() -> Script:
    """A product project; four decisions change after the first summaries."""
    last = _say(
        "Before the status meeting: give me the current state of every decision we made.",
        "Here is the current state of the decisions, as agreed so far.",
    )
    return Script(
        key="project",
        title="Project with decisions updated later",
        language="en",
        turns=_weave(_PROJECT_PLANTED, 34, 11, _PROJECT_QUESTIONS, _PROJECT_ANSWERS, last),
        facts=_PROJECT_FACTS,
    )


# -- a tool-heavy coding session ---------------------------------------------------


def _tool_turn(user: str, calls: Sequence[tuple[str, str, str]], reply: str, turn: int) -> Turn:
    tool_calls = tuple(
        ToolCall(id=f"call_{turn}_{index}", name=name, query=query, output=output)
        for index, (name, query, output) in enumerate(calls)
    )
    return Turn(user, (Step("", tool_calls), Step(reply)))


_CODING_FACTS = (
    Fact("failing test", ("failing test",), ("tests/test_lexer.py::test_unicode_escape",)),
    Fact(
        "bug location",
        ("bug is in", "the bug", "bug"),
        ("src/tokenizer/lexer.py",),
        (),
        r"[\w/]+\.py",
    ),
    Fact("error", ("error", "exception"), ("UnicodeDecodeError",)),
    Fact("python version", ("python version", "python"), ("3.12",), ("3.11",), r"3\.\d+"),
    Fact("branch", ("branch",), ("fix/unicode-escape-214",), (), r"fix/[\w-]+"),
    Fact("coverage", ("coverage",), ("84%",), ("81%",), PERCENT),
    Fact(
        "ci timeout", ("ci timeout", "timeout"), ("45 minutes", "45 min"), ("30 minutes",), NUMBER
    ),
    Fact(
        "last good commit",
        ("last good commit", "good commit"),
        ("a3f9c2e",),
        (),
        r"\b[0-9a-f]{7}\b",
    ),
    Fact("test command", ("test command", "run the tests with"), ("pytest -x -k unicode",)),
)

_PYTEST_FAIL = (
    "$ pytest -x -k unicode\n"
    "============================= test session starts ==============================\n"
    "collected 412 items / 404 deselected / 8 selected\n\n"
    "tests/test_lexer.py ...F\n\n"
    "=================================== FAILURES ===================================\n"
    "__________________________ test_unicode_escape ___________________________\n"
    "    def test_unicode_escape():\n"
    ">       tokens = lex(r'\"\\u00e9\"')\n"
    "src/tokenizer/lexer.py:214: in lex\n"
    "    text = raw.decode('ascii')\n"
    "E   UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 1\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_lexer.py::test_unicode_escape - UnicodeDecodeError\n"
    "========================= 1 failed, 3 passed in 0.41s ========================="
)
_LEXER_SOURCE = (
    "# src/tokenizer/lexer.py, lines 205-222\n"
    "def lex(source: str) -> list[Token]:\n"
    "    tokens: list[Token] = []\n"
    "    for raw in _chunks(source.encode('utf-8')):\n"
    "        text = raw.decode('ascii')  # line 214\n"
    "        if text.startswith('\"'):\n"
    "            tokens.append(Token('STRING', _unescape(text)))\n"
    "        else:\n"
    "            tokens.extend(_words(text))\n"
    "    return tokens"
)
_GIT_LOG = (
    "$ git log --oneline -5\n"
    "9b1d0f4 lexer: read chunks as bytes\n"
    "77e2a51 docs: tokenizer overview\n"
    "a3f9c2e lexer: handle escaped quotes\n"
    "5c0e8d9 ci: cache the wheels\n"
    "e41b7aa tests: split lexer tests"
)
_PYTEST_PASS = (
    "$ pytest -x -k unicode\n"
    "collected 412 items / 404 deselected / 8 selected\n"
    "tests/test_lexer.py ....\n"
    "tests/test_parser.py ....\n"
    "============================== 8 passed in 0.38s ==============================="
)
_COVERAGE_81 = (
    "$ pytest --cov=src -q\n"
    "412 passed in 9.82s\n"
    "Name                      Stmts   Miss  Cover\n"
    "src/tokenizer/lexer.py      188     31    84%\n"
    "src/tokenizer/parser.py     241     52    78%\n"
    "TOTAL                      1320    251    81%"
)
_COVERAGE_84 = (
    "$ pytest --cov=src -q\n"
    "415 passed in 10.04s\n"
    "Name                      Stmts   Miss  Cover\n"
    "src/tokenizer/lexer.py      190     12    94%\n"
    "src/tokenizer/parser.py     241     52    78%\n"
    "TOTAL                      1322    211    84%"
)

_CODING_PLANTED = {
    1: _tool_turn(
        "CI is red on main. Run the tests with pytest -x -k unicode and tell me what fails.",
        [("run_command", "pytest -x -k unicode", _PYTEST_FAIL)],
        "The failing test is tests/test_lexer.py::test_unicode_escape. The error is a "
        "UnicodeDecodeError raised while lexing an escaped string. The test command is "
        "pytest -x -k unicode.",
        1,
    ),
    3: _tool_turn(
        "Show me where that happens.",
        [("read_file", "src/tokenizer/lexer.py", _LEXER_SOURCE)],
        "The bug is in src/tokenizer/lexer.py at line 214: each chunk is decoded as ascii, "
        "which fails on any non-ASCII byte. Decoding as utf-8 should fix it.",
        3,
    ),
    5: _tool_turn(
        "When did it last work?",
        [("run_command", "git log --oneline -5", _GIT_LOG)],
        "The last good commit is a3f9c2e (lexer: handle escaped quotes); 9b1d0f4 started "
        "reading chunks as bytes, which introduced the decode.",
        5,
    ),
    7: _say(
        "Our Python version in CI is 3.11. I created the branch fix/unicode-escape-214 for "
        "the fix. The CI timeout is 30 minutes.",
        "Noted: the Python version in CI is 3.11, the branch is fix/unicode-escape-214, and "
        "the CI timeout is 30 minutes. I will keep the fix small enough to review quickly.",
    ),
    10: _tool_turn(
        "What is the coverage right now?",
        [("run_command", "pytest --cov=src -q", _COVERAGE_81)],
        "The total coverage is 81%; the lexer is at 84% on its own and the parser at 78%.",
        10,
    ),
    15: _tool_turn(
        "I applied the utf-8 decode on the branch. Run the failing test again.",
        [("run_command", "pytest -x -k unicode", _PYTEST_PASS)],
        "All 8 selected tests pass now, including test_unicode_escape. The fix works.",
        15,
    ),
    19: _say(
        "We are moving CI to a newer interpreter: the Python version is now 3.12 in every job.",
        "Updated: the Python version is now 3.12 in every CI job. I will check the "
        "deprecation warnings that 3.12 adds.",
    ),
    23: _tool_turn(
        "I added three tests for escapes. Coverage again, please.",
        [("run_command", "pytest --cov=src -q", _COVERAGE_84)],
        "The total coverage is now 84%, up with the three new escape tests; the lexer is at 94%.",
        23,
    ),
    27: _say(
        "The integration suite got slower, so the CI timeout is now 45 minutes.",
        "Updated: the CI timeout is now 45 minutes. I will add a note to the CI config so "
        "nobody lowers it again by accident.",
    ),
}

_CODING_QUESTIONS = (
    "Should the helper functions live in their own module?",
    "How would you write the commit message for this change?",
    "Is it worth adding a hypothesis test here?",
    "Can you review the naming in the tokenizer package?",
    "What should the changelog entry say?",
    "Do we need a deprecation warning for the old behaviour?",
    "How do I make the pre-commit hooks run faster?",
    "Should we pin the linter's version in the project file?",
)
_CODING_ANSWERS = (
    "A small module with one job is easier to test and to find later.",
    "I would keep the public function's signature unchanged and add a keyword argument.",
    "A property-based test would catch the cases nobody thought to write by hand.",
    "The commit message should say what changed and why, in the first line.",
    "Pinning the tools keeps reruns comparable across machines.",
    "The changelog should describe the effect for users, not the implementation.",
    "Running the hooks only on changed files makes them much faster.",
    "A deprecation warning for one release gives users time to adapt.",
    "Type hints on the internal helpers make the reviews quicker.",
    "Splitting the test file by feature keeps each file readable.",
    "The docstring should give one example that a reader can run.",
    "I would avoid a global cache here; pass the table in explicitly.",
)


def coding() -> Script:
    """A debugging session driven by tool calls: test runs, file reads, git log."""
    last = _say(
        "Write the pull request description: what failed, where, and the current CI settings.",
        "Here is the pull request description with the current state of the fix.",
    )
    return Script(
        key="coding",
        title="Tool-heavy coding session",
        language="en",
        turns=_weave(_CODING_PLANTED, 34, 12, _CODING_QUESTIONS, _CODING_ANSWERS, last),
        facts=_CODING_FACTS,
    )


# -- a support chat with numbers and dates -----------------------------------------

_SUPPORT_FACTS = (
    Fact("order number", ("order number", "order"), ("ORD-58213",), (), r"ORD-\d+"),
    Fact("customer", ("customer", "customer name"), ("Priya Raman",)),
    Fact("refund", ("refund",), ("89.50",), ("129.99",), NUMBER),
    Fact(
        "delivery date",
        ("delivery date", "delivery"),
        ("March 10", "10 March", "March 10th"),
        ("March 3", "3 March", "March 3rd"),
        DATE_EN,
    ),
    Fact("ticket", ("ticket",), ("SUP-44817",), (), r"SUP-\d+"),
    Fact(
        "warranty",
        ("warranty",),
        ("2027-01-31", "January 31, 2027", "31 January 2027"),
        (),
        r"\d{4}-\d{2}-\d{2}",
    ),
    Fact("plan", ("plan", "subscription"), ("Pro annual",)),
    Fact("discount code", ("discount code", "code"), ("SPRING15",), (), r"\b[A-Z]{4,}\d{2}\b"),
    Fact("phone", ("phone",), ("4471",), (), r"\d{4}"),
)

_SUPPORT_PLANTED = {
    1: _say(
        "Hi, my name is Priya Raman. The customer account is in my name. My order number is "
        "ORD-58213 and the blender arrived with a cracked jug.",
        "I am sorry to hear that, Priya. I have the order number ORD-58213 open, customer "
        "Priya Raman. I have opened ticket SUP-44817 for the cracked jug.",
    ),
    3: _say(
        "I paid 129.99 for it. I would like a refund for the jug, since the motor base works fine.",
        "I have requested a refund of 129.99 for now; the warehouse will confirm the amount "
        "once they see the photos.",
    ),
    5: _say(
        "When will the replacement jug come? The delivery date on the site says March 3.",
        "The delivery date for the replacement jug is March 3, by standard courier. You "
        "will get a tracking link by email.",
    ),
    8: _say(
        "Also, my warranty ends on 2027-01-31, right? And I am on the Pro annual plan.",
        "Yes: your warranty ends on 2027-01-31, and your plan is Pro annual, which includes "
        "free replacement parts.",
    ),
    11: _say(
        "If you call me, the phone number ends in 4471. Can I use the discount code SPRING15 "
        "on a second jug?",
        "I have noted that your phone ends in 4471. The discount code SPRING15 is valid on "
        "spare parts, so you can use it for a second jug.",
    ),
    17: _say(
        "The warehouse wrote to me: they say the jug is only part of the order value.",
        "They are right. Since only the jug is returned, the refund is now 89.50, the jug's "
        "share of the price.",
    ),
    23: _say(
        "The courier just emailed that the replacement is delayed.",
        "I checked with the courier: the delivery date is now March 10. I am sorry for the "
        "wait; the tracking link stays the same.",
    ),
}

_SUPPORT_QUESTIONS = (
    "How do I clean the motor base safely?",
    "Can I put the lid in the dishwasher?",
    "Is there a recipe book for this model?",
    "What is the difference between the pulse and the smoothie setting?",
    "Do you ship to my holiday address as well?",
    "How do I update my email preferences?",
    "Can I leave a review before the issue is resolved?",
    "Is the blade assembly covered too?",
)
_SUPPORT_ANSWERS = (
    "Unplug the base first and wipe it with a damp cloth, never under running water.",
    "The lid and the seal are dishwasher safe on the top rack.",
    "The recipe booklet is available as a download from your account page.",
    "Pulse gives short bursts for chopping; the smoothie setting runs a fixed cycle.",
    "You can add a second address in the account settings under shipping.",
    "Email preferences are under notifications in your profile.",
    "Reviews can be posted at any time; we read every one of them.",
    "Let me know if there is anything else I can check for you while we wait.",
    "Please keep the original box until the case is closed.",
    "I will add a note to the case so any colleague can pick it up.",
    "Our support line is open every day from eight to eight.",
    "Thank you for your patience while we sort this out.",
)


def support() -> Script:
    """A customer support chat: an order, a refund and a delivery date that change."""
    last = _say(
        "Can you confirm everything about my case in one message, please?",
        "Of course, here is everything about your case as it stands.",
    )
    return Script(
        key="support",
        title="Support chat with numbers and dates",
        language="en",
        turns=_weave(_SUPPORT_PLANTED, 32, 13, _SUPPORT_QUESTIONS, _SUPPORT_ANSWERS, last),
        facts=_SUPPORT_FACTS,
    )


# -- a project in Chinese ----------------------------------------------------------

_DATE_ZH = r"\d{1,2}月\d{1,2}日"
_CHINESE_FACTS = (
    Fact("上线日期", ("上线日期", "上线"), ("6月17日",), ("6月3日",), _DATE_ZH),
    Fact("负责人", ("负责人",), ("王磊",)),
    Fact("预算", ("预算",), ("15万元", "15万"), ("12万元", "12万"), r"\d+万"),
    Fact("服务器", ("服务器",), ("8台",), (), r"\d+台"),
    Fact("数据库", ("数据库",), ("PostgreSQL",), ("MongoDB",)),
    Fact("测试环境", ("测试环境",), ("test-cn-02",), (), r"test-cn-\d+"),
    Fact("接口超时", ("接口超时", "超时"), ("30秒",), (), r"\d+秒"),
    Fact("客户", ("客户",), ("华信物流",)),
)

_CHINESE_PLANTED = {
    1: _say(
        "我们开始物流看板项目。客户是华信物流，项目负责人是王磊，范围变更都要他确认。",
        "好的，已记录：客户是华信物流，负责人是王磊。我会把需要他确认的事项整理成清单。",
    ),
    3: _say(
        "技术方案：数据库先用MongoDB，测试环境是test-cn-02。",
        "明白：数据库用MongoDB，测试环境是test-cn-02。我会按这个准备部署清单。",
    ),
    5: _say(
        "上线日期定在6月3日。预算是12万元，包括三个月的运维。",
        "已记录：上线日期是6月3日，预算是12万元（含三个月运维）。我会按上线日期倒排计划。",
    ),
    8: _say(
        "生产环境需要8台服务器。接口超时统一设为30秒。",
        "好的：生产环境服务器是8台，接口超时统一为30秒。我会写进运维文档。",
    ),
    14: _say(
        "评审后改了方案：数据库改为PostgreSQL，因为报表需要复杂查询。",
        "已更新：数据库改为PostgreSQL，以支持复杂的报表查询。我会修改数据迁移脚本。",
    ),
    19: _say(
        "客户追加了两个报表，预算调整为15万元。",
        "已更新：预算现在是15万元，包含新增的两个报表。我会更新成本表。",
    ),
    24: _say(
        "客户那边需要更多时间验收，上线日期推迟到6月17日。",
        "已更新：上线日期现在是6月17日。我会调整依赖它的里程碑，并通知运维团队。",
    ),
}

_CHINESE_QUESTIONS = (
    "前端页面怎么分工比较合理？",
    "周会的议程可以怎么安排？",
    "自动化测试先写哪些部分？",
    "设计文档怎样才能保持更新？",
    "出错页面应该怎么写提示？",
    "代码评审有什么要注意的？",
    "每周的进度报告要写哪些风险？",
    "分支命名有什么建议？",
)
_CHINESE_ANSWERS = (
    "建议先做会阻塞其他工作的页面，这样团队不会空等。",
    "每个事项都要有一个负责人和一个日期，否则容易拖延。",
    "清单要短，五条大家真正会读的要点胜过二十条没人看的。",
    "每次会议后写一段简短的纪要，可以避免重复讨论。",
    "端到端测试先覆盖登录、搜索、下单和账户页面。",
    "提交合并请求时附上截图，设计评审会快很多。",
    "分支按工单号命名，历史记录更容易追踪。",
    "错误提示要说明发生了什么，以及用户下一步可以做什么。",
    "范围变更要写下来，并用邮件确认。",
    "键盘操作和焦点可见是测试最容易漏掉的两项。",
    "评审时先看接口和数据结构，再看实现细节。",
    "风险要写清楚影响和应对办法，而不只是列出名字。",
)


def chinese() -> Script:
    """A project conversation in Chinese; three decisions change."""
    last = _say(
        "开周会之前，请把我们目前所有的决定整理一下。",
        "好的，以下是目前所有决定的最新状态。",
    )
    return Script(
        key="chinese",
        title="Project in Chinese",
        language="zh",
        turns=_weave(_CHINESE_PLANTED, 30, 14, _CHINESE_QUESTIONS, _CHINESE_ANSWERS, last),
        facts=_CHINESE_FACTS,
    )


SCRIPTS = {"project": project, "coding": coding, "support": support, "chinese": chinese}
"""Every conversation by key, in the order the bench runs them."""
