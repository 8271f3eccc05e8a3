"""Generated conversations in Chinese, and in Chinese mixed with English.

The same hard cases as the English kinds: module owners (or service ports)
of one pattern with different subjects, a date updated twice, a retraction
("最后不用 Redis 了"), near-duplicate environments and distractor numbers.
"""

from __future__ import annotations

import random

from bench.quality import conversations as handwritten
from bench.quality import vocab
from bench.quality.builder import Builder, Event
from bench.quality.conversations import Script
from bench.quality.kinds_en import PORT, ports

DATE_ZH = r"\d{1,2}月\d{1,2}日"
_MIXED_QUESTIONS = (
    "这个 PR 的 review 要注意什么？",
    "sprint planning 的 agenda 怎么安排？",
    "unit test 先覆盖哪些 case？",
    "design doc 怎样保持 up to date？",
    "CI pipeline 太慢了，有什么办法？",
    "on-call 的 handover 要写什么？",
    "release notes 应该怎么写？",
    "feature flag 什么时候可以删掉？",
)
_MIXED_ANSWERS = (
    "建议先 review 接口和 data model，再看 implementation。",
    "每个 action item 都要有 owner 和 deadline。",
    "CI 可以按 changed files 只跑相关的 test，会快很多。",
    "release notes 写用户能感受到的变化，不写内部细节。",
    "feature flag 全量之后两周内删掉，避免 tech debt。",
    "handover 写清楚试过什么、改了什么、还有什么 open。",
    "design doc 每次 decision 变了就更新，并在 changelog 里记一笔。",
    "flaky test 先 quarantine，再单独修。",
    "code review 尽量当天完成，不要让 PR 堆积。",
    "monitoring dashboard 要先看 error rate 和 latency。",
    "commit message 第一行说清楚改了什么。",
    "pairing 半小时往往比来回留言更快。",
)


def dates_zh(rng: random.Random, count: int) -> list[str]:
    """``count`` later and later dates of one year, written 6月17日."""
    month = rng.randrange(1, 13 - count)
    return [f"{month + step}月{rng.randint(2, 28)}日" for step in range(count)]


def chinese(seed: int) -> Script:
    """A project in Chinese: a date changed twice, a budget, a retracted cache, owners."""
    b = Builder(f"chinese:{seed}", 40, handwritten._CHINESE_QUESTIONS, handwritten._CHINESE_ANSWERS)
    rng = b.rng
    client = rng.choice(vocab.ZH_CLIENTS)
    people: set[str] = set()
    lead = vocab.zh_person(rng, people)
    launch = dates_zh(rng, 3)
    budget_old, budget_new = sorted(rng.sample(range(8, 60), 2))
    db_old, db_new = vocab.distinct(rng, vocab.DATABASES, 2)
    servers = rng.randint(3, 24)
    timeout = rng.choice((10, 15, 20, 30, 45, 60))
    tech = rng.choice(vocab.CACHE_TECH)
    place, place_spellings = rng.choice(vocab.ZH_PLACES)
    modules = vocab.distinct(rng, vocab.ZH_MODULES, 5)
    owners = [vocab.zh_person(rng, people) for _ in modules]
    test_env, pre_env = (f"test-cn-{n:02d}" for n in rng.sample(range(1, 30), 2))

    b.fact("客户", ("客户",), "客户是哪家公司？")
    b.fact("负责人", ("项目负责人",), "项目负责人是谁？")
    b.fact("上线日期", ("上线日期", "上线"), "上线日期是哪天？", DATE_ZH)
    b.fact("预算", ("预算",), "项目预算是多少？", r"\d+万")
    b.fact("数据库", ("数据库",), "数据库用什么？")
    b.fact("服务器", ("服务器",), "生产环境需要几台服务器？", r"\d+台")
    b.fact("接口超时", ("接口超时", "超时"), "接口超时是多少秒？", r"\d+秒")
    b.fact("缓存", ("缓存",), "缓存放在哪里？")
    b.fact("测试环境", ("测试环境",), "测试环境是哪个？", r"test-cn-\d+")
    b.fact("预发环境", ("预发环境",), "预发环境是哪个？", r"test-cn-\d+")
    for module in modules:
        b.fact(f"{module}模块", (f"{module}模块",), f"{module}模块由谁负责？")

    def kickoff(t: int) -> None:
        b.said("客户", t, client)
        b.said("负责人", t, lead)
        b.said("上线日期", t, launch[0])
        b.put(
            t,
            f"项目启动：客户是{client}，项目负责人是{lead}。上线日期定在{launch[0]}。",
            f"好的，已记录：客户是{client}，项目负责人是{lead}，上线日期是{launch[0]}。",
        )

    def infra(t: int) -> None:
        b.said("数据库", t, db_old)
        b.said("测试环境", t, test_env)
        b.said("预发环境", t, pre_env)
        b.put(
            t,
            f"技术方案：数据库先用{db_old}。测试环境是{test_env}，预发环境是{pre_env}。",
            f"明白：数据库用{db_old}；测试环境是{test_env}；预发环境是{pre_env}。",
        )

    def money(t: int) -> None:
        b.said("预算", t, f"{budget_old}万元", (f"{budget_old}万",))
        b.said("服务器", t, f"{servers}台")
        b.put(
            t,
            f"预算是{budget_old}万元，其中{rng.randint(2, 7)}万元是运维费用。生产环境需要"
            f"{servers}台服务器。",
            f"已记录：预算是{budget_old}万元；生产环境服务器是{servers}台。",
        )

    def settings(t: int) -> None:
        b.said("接口超时", t, f"{timeout}秒")
        b.said("缓存", t, tech)
        b.put(
            t,
            f"接口超时统一设为{timeout}秒。缓存用{tech}。",
            f"好的：接口超时是{timeout}秒；缓存用{tech}。",
        )

    def owned(t: int) -> None:
        lines = [f"{m}模块的负责人是{o}" for m, o in zip(modules, owners, strict=True)]
        for module, owner in zip(modules, owners, strict=True):
            b.said(f"{module}模块", t, owner)
        b.put(t, "模块分工：" + "；".join(lines) + "。", "已记录分工：" + "；".join(lines) + "。")

    def launch_moves(index: int) -> Event:
        def event(t: int) -> None:
            b.said("上线日期", t, launch[index])
            b.put(
                t,
                f"客户需要更多时间验收，上线日期推迟到{launch[index]}。",
                f"已更新：上线日期现在是{launch[index]}。",
            )

        return event

    def db_change(t: int) -> None:
        b.said("数据库", t, db_new)
        b.put(t, f"评审后改了方案：数据库改为{db_new}。", f"已更新：数据库现在是{db_new}。")

    def budget_change(t: int) -> None:
        b.said("预算", t, f"{budget_new}万元", (f"{budget_new}万",))
        b.put(
            t, f"客户追加了报表，预算调整为{budget_new}万元。", f"已更新：预算是{budget_new}万元。"
        )

    def cache_retracted(t: int) -> None:
        b.retract("缓存")
        b.said("缓存", t, place, place_spellings)
        b.put(t, f"我们最后不用{tech}了，缓存还是放在{place}。", f"已更新：缓存放在{place}。")

    b.schedule(
        [kickoff, infra, money, settings, owned],
        [db_change, launch_moves(1), budget_change, cache_retracted, launch_moves(2)],
    )
    last = handwritten._say(
        "开周会之前，请把我们目前所有的决定整理一下。", "好的，以下是目前所有决定的最新状态。"
    )
    return b.script(f"gen-chinese-{seed}", f"生成的项目（{client}）", "zh", last)


def mixed(seed: int) -> Script:
    """A dev team chat in Chinese with English terms: ports, a release date, a queue."""
    b = Builder(f"mixed:{seed}", 40, _MIXED_QUESTIONS, _MIXED_ANSWERS)
    rng = b.rng
    people: set[str] = set()
    owner = vocab.person(rng, people)
    release = dates_zh(rng, 3)
    services = vocab.distinct(rng, vocab.SERVICES, 6)
    service_ports = ports(rng, len(services))
    rate_old, rate_new = (str(n) for n in rng.sample(range(200, 5000, 50), 2))
    queue_old, queue_new = vocab.distinct(rng, vocab.QUEUES, 2)
    region_old, region_new = vocab.distinct(rng, vocab.REGIONS, 2)
    moved = rng.randrange(len(services))
    moved_to = str(rng.choice([p for p in range(9001, 9999) if str(p) not in service_ports]))

    b.fact("owner", ("owner",), "这个 project 的 owner 是谁？")
    b.fact("release date", ("release date", "release"), "release date 是哪天？", DATE_ZH)
    b.fact("rate limit", ("rate limit",), "API 的 rate limit 是多少？", r"\d+")
    b.fact("message queue", ("message queue",), "message queue 用什么？")
    b.fact("region", ("region",), "部署在哪个 region？", r"[a-z]{2}-[a-z]+-\d")
    for service in services:
        b.fact(
            f"{service} port",
            (f"{service} service", service),
            f"{service} service 的端口是多少？",
            PORT,
        )

    def kickoff(t: int) -> None:
        b.said("owner", t, owner)
        b.said("release date", t, release[0])
        b.put(
            t,
            f"新 project kickoff：owner 是 {owner}，release date 定在{release[0]}。",
            f"收到：owner 是 {owner}，release date 是{release[0]}。",
        )

    def ports_told(start: int, stop: int) -> Event:
        def event(t: int) -> None:
            lines = []
            for service, port in zip(services[start:stop], service_ports[start:stop], strict=True):
                b.said(f"{service} port", t, port)
                lines.append(f"{service} service 的端口是 {port}")
            b.put(t, "端口分配：" + "；".join(lines) + "。", "记下了：" + "；".join(lines) + "。")

        return event

    def infra(t: int) -> None:
        b.said("rate limit", t, rate_old)
        b.said("message queue", t, queue_old)
        b.said("region", t, region_old)
        b.put(
            t,
            f"API 的 rate limit 先设 {rate_old} 次每分钟。message queue 用 {queue_old}，"
            f"部署的 region 是 {region_old}。",
            f"好的：rate limit 是 {rate_old} 次每分钟；message queue 用 {queue_old}；"
            f"region 是 {region_old}。",
        )

    def release_moves(index: int) -> Event:
        def event(t: int) -> None:
            b.said("release date", t, release[index])
            b.put(
                t,
                f"QA 需要更多时间，release date 改到{release[index]}。",
                f"Updated：release date 现在是{release[index]}。",
            )

        return event

    def rate_change(t: int) -> None:
        b.said("rate limit", t, rate_new)
        b.put(
            t,
            f"load test 之后，rate limit 改成 {rate_new} 次每分钟。",
            f"Updated：rate limit 现在是 {rate_new} 次每分钟。",
        )

    def queue_retracted(t: int) -> None:
        b.retract("message queue")
        b.said("message queue", t, queue_new)
        b.put(
            t,
            f"最后不用 {queue_old} 了，message queue 改用 {queue_new}。",
            f"Updated：message queue 用 {queue_new}。",
        )

    def port_moved(t: int) -> None:
        service = services[moved]
        b.said(f"{service} port", t, moved_to)
        b.put(
            t,
            f"端口冲突了，{service} service 的端口改成 {moved_to}。",
            f"Updated：{service} service 的端口现在是 {moved_to}。",
        )

    def region_change(t: int) -> None:
        b.said("region", t, region_new)
        b.put(
            t,
            f"合规要求数据留在本地，region 换成 {region_new}。",
            f"Updated：region 现在是 {region_new}。",
        )

    b.schedule(
        [kickoff, ports_told(0, 3), infra, ports_told(3, 6)],
        [
            release_moves(1),
            rate_change,
            port_moved,
            queue_retracted,
            region_change,
            release_moves(2),
        ],
    )
    last = handwritten._say(
        "standup 之前，帮我把目前所有的 decision 整理一下。",
        "好的，以下是目前所有 decision 的最新状态。",
    )
    return b.script(f"gen-mixed-{seed}", "生成的 mixed-language project", "mixed", last)
