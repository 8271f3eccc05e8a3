"""The word pools the conversation generator draws from.

Each pool is large enough that two seeds give conversations that differ in
their words (names, services, products, amounts), not only in their order.
No pool word is a word the generator's sentence templates use for a subject
("cache", "database", "budget", "port", "memory"), so a drawn name never
reads as another fact's subject.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

FIRST_NAMES = (
    "Dana",
    "Priya",
    "Marcus",
    "Elena",
    "Tomás",
    "Aiko",
    "Jonas",
    "Fatima",
    "Owen",
    "Lucia",
    "Ravi",
    "Ingrid",
    "Kwame",
    "Sofia",
    "Mateo",
    "Hana",
    "Victor",
    "Amara",
    "Felix",
    "Noor",
    "Leon",
    "Yara",
    "Caleb",
    "Mira",
    "Anton",
    "Zainab",
    "Hugo",
    "Keiko",
    "Bruno",
    "Leila",
    "Silas",
    "Nadia",
    "Oscar",
    "Talia",
    "Emil",
    "Chloe",
    "Rashid",
    "Greta",
    "Idris",
    "Maren",
)
LAST_NAMES = (
    "Whitfield",
    "Raman",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Brandt",
    "Haddad",
    "Castillo",
    "Novak",
    "Fischer",
    "Adeyemi",
    "Kowalski",
    "Ivanova",
    "Sorensen",
    "Mehta",
    "Duarte",
    "Nakamura",
    "Keller",
    "Osei",
    "Petrov",
    "Albright",
    "Quinlan",
    "Varga",
    "Halloran",
    "Bergstrom",
    "Achebe",
    "Romano",
    "Szabo",
    "Lefevre",
    "Mwangi",
    "Eriksen",
    "Delgado",
    "Yilmaz",
    "Farrow",
    "Kim",
    "Sato",
    "Abara",
    "Holm",
    "Ferreira",
)
SERVICES = (
    "auth",
    "billing",
    "catalog",
    "checkout",
    "search",
    "inventory",
    "shipping",
    "ledger",
    "gateway",
    "profile",
    "pricing",
    "reviews",
    "media",
    "scheduler",
    "reporting",
    "audit",
    "sessions",
    "geo",
    "tax",
    "invoicing",
    "loyalty",
    "feeds",
    "orders",
    "returns",
    "warehouse",
    "identity",
    "exporter",
    "payouts",
    "coupons",
    "wishlist",
    "ratings",
    "tracking",
    "quotes",
    "accounts",
    "webhooks",
    "mailer",
    "thumbnails",
    "ingest",
    "dispatch",
    "fraud",
)
MODULES = (
    "onboarding",
    "payments",
    "notifications",
    "admin console",
    "reporting",
    "search",
    "checkout",
    "account settings",
    "import wizard",
    "audit trail",
    "help center",
    "subscriptions",
    "invoices",
    "permissions",
    "dashboards",
    "mobile sync",
    "exports",
    "localization",
    "analytics",
    "scheduling",
)
PROJECTS = (
    "Harbor",
    "Lantern",
    "Juniper",
    "Falcon",
    "Meridian",
    "Atlas",
    "Beacon",
    "Cobalt",
    "Driftwood",
    "Ember",
    "Fjord",
    "Granite",
    "Halcyon",
    "Indigo",
    "Kestrel",
    "Larch",
    "Monsoon",
    "Nimbus",
    "Orchard",
    "Pinnacle",
    "Quarry",
    "Riverbend",
    "Saffron",
    "Tundra",
)
DATABASES = (
    "PostgreSQL 16",
    "MySQL 8",
    "MariaDB 11",
    "CockroachDB 23",
    "SQL Server 2022",
    "Oracle 19c",
    "MongoDB 7",
    "YugabyteDB 2",
    "TiDB 7",
    "Cassandra 4",
)
CACHE_TECH = ("Redis", "Memcached", "Hazelcast", "Varnish", "Dragonfly", "KeyDB", "Aerospike")
CACHE_PLACES = (
    ("process memory", ("process memory",)),
    ("the CDN edge", ("CDN edge",)),
    ("local disk", ("local disk",)),
    ("the database buffer pool", ("buffer pool",)),
)
QUEUES = ("Kafka", "RabbitMQ", "NATS", "Pulsar", "SQS", "ActiveMQ", "Redpanda")
REGIONS = (
    "eu-west-1",
    "eu-central-1",
    "us-east-2",
    "us-west-2",
    "ap-southeast-1",
    "ap-northeast-1",
    "sa-east-1",
    "ca-central-1",
    "eu-north-1",
    "ap-south-1",
)
NAMESPACES = ("prod", "prod-eu", "prod-us", "live", "core-prod", "edge-prod", "payments-prod")
ROOT_CAUSES = (
    ("a DNS timeout", ("DNS timeout", "DNS")),
    ("connection pool exhaustion", ("connection pool exhaustion", "pool exhaustion")),
    ("an expired TLS certificate", ("expired TLS certificate", "TLS certificate")),
    ("a leaked file handle", ("leaked file handle", "file handle")),
    ("a bad config push", ("bad config push", "config push")),
    ("disk pressure on the node", ("disk pressure",)),
    ("a slow upstream cache", ("slow upstream cache",)),
    ("a noisy neighbour on the node", ("noisy neighbour", "noisy neighbor")),
)
PRODUCTS = (
    ("blender", ("jug", "lid", "blade assembly", "tamper", "seal ring", "travel cup")),
    ("espresso machine", ("portafilter", "drip tray", "steam wand", "water tank", "filter basket")),
    ("air fryer", ("basket", "crisper plate", "door handle", "timer knob", "rack")),
    ("stand mixer", ("bowl", "dough hook", "whisk", "splash guard", "flat beater")),
    ("vacuum cleaner", ("brush roll", "dust bin", "hose", "crevice tool", "battery pack")),
    ("food processor", ("work bowl", "slicing disc", "pusher", "grating disc", "chopping blade")),
    ("rice cooker", ("inner pot", "steam tray", "measuring cup", "lid gasket", "power cord")),
)
PAYMENT_METHODS = (
    "PayPal",
    "bank transfer",
    "credit card",
    "Apple Pay",
    "gift card",
    "Klarna",
    "Google Pay",
)
CODE_WORDS = ("SPRING", "SUMMER", "AUTUMN", "WINTER", "WELCOME", "THANKS", "LOYAL", "FRESH")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

ZH_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾"
ZH_GIVEN = (
    "磊",
    "伟",
    "芳",
    "娜",
    "敏",
    "静",
    "丽",
    "强",
    "军",
    "洋",
    "勇",
    "艳",
    "杰",
    "娟",
    "涛",
    "明",
    "超",
    "霞",
    "平",
    "刚",
    "海燕",
    "建华",
    "晓东",
    "文博",
    "子涵",
    "思远",
    "雨桐",
)
ZH_MODULES = (
    "订单",
    "库存",
    "支付",
    "报表",
    "消息",
    "用户",
    "权限",
    "搜索",
    "物流",
    "结算",
    "审批",
    "客服",
    "营销",
    "会员",
    "日志",
    "配置",
    "对账",
    "发票",
)
ZH_CLIENTS = (
    "华信物流",
    "东方航运",
    "远景制造",
    "恒通科技",
    "蓝海零售",
    "金桥银行",
    "星辰教育",
    "宏达建设",
    "瑞丰食品",
    "启明医疗",
    "天和能源",
    "万象传媒",
)
ZH_PLACES = (("本地内存", ("本地内存",)), ("CDN", ("CDN",)), ("本地磁盘", ("本地磁盘",)))


def person(rng: random.Random, taken: set[str]) -> str:
    """A full name not in ``taken`` (which it joins)."""
    while True:
        name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        first = name.split()[0]
        if name not in taken and all(first != other.split()[0] for other in taken):
            taken.add(name)
            return name


def zh_person(rng: random.Random, taken: set[str]) -> str:
    """A Chinese full name not in ``taken`` (which it joins)."""
    while True:
        name = rng.choice(ZH_SURNAMES) + rng.choice(ZH_GIVEN)
        if name not in taken:
            taken.add(name)
            return name


def distinct(rng: random.Random, pool: Sequence[str], count: int) -> list[str]:
    """``count`` different words of ``pool``."""
    return rng.sample(list(pool), count)
