"""Generated conversations in English: a project, an incident session, a support chat.

Each function takes a seed and returns a :class:`~bench.quality.conversations.Script`
whose words come from :mod:`bench.quality.vocab`. The hard cases are planted
on purpose: many facts of one pattern with different subjects (owners of
modules, ports of services, prices of parts), a value updated twice, a
retraction, near-duplicate subjects and values, distractor numbers beside the
facts, and (in the incident) facts stated only deep inside long tool output.
"""

from __future__ import annotations

import random

from bench.quality import conversations as handwritten
from bench.quality import vocab
from bench.quality.builder import Builder, Event
from bench.quality.conversations import DATE_EN, NUMBER, Script

PORT = r"\b\d{4,5}\b"
_ACKS = ("Noted", "Recorded", "Got it", "Understood", "Written down")
_CHANGES = ("Change of plan", "Update from the review", "New decision", "Heads up", "Correction")


def dates_en(rng: random.Random, count: int) -> list[tuple[str, tuple[str, ...]]]:
    """``count`` later and later dates of one year: each as written and its other spellings."""
    month = rng.randrange(0, 12 - count)
    out: list[tuple[str, tuple[str, ...]]] = []
    for step in range(count):
        name = vocab.MONTHS[month + step]
        day = rng.randint(2, 27)
        out.append((f"{name} {day}", (f"{day} {name}",)))
    return out


def amount(rng: random.Random, low: int, high: int, step: int) -> str:
    """A round amount with thousands separators."""
    return f"{rng.randrange(low, high, step):,}"


def ports(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct service ports."""
    return [str(port) for port in rng.sample(range(8001, 8999), count)]


def project(seed: int) -> Script:
    """A product project whose decisions change: one twice, one retracted."""
    b = Builder(f"project:{seed}", 42, handwritten._PROJECT_QUESTIONS, handwritten._PROJECT_ANSWERS)
    rng = b.rng
    name = rng.choice(vocab.PROJECTS)
    people: set[str] = set()
    lead = vocab.person(rng, people)
    launch = dates_en(rng, 3)
    db_old, db_new = vocab.distinct(rng, vocab.DATABASES, 2)
    budget_old, budget_new = amount(rng, 30_000, 60_000, 500), amount(rng, 61_000, 95_000, 500)
    quote = amount(rng, 20_000, 29_500, 500)
    rate_old, rate_new = amount(rng, 3_000, 9_000, 250), amount(rng, 1_000, 2_900, 100)
    tech = rng.choice(vocab.CACHE_TECH)
    place, place_spellings = rng.choice(vocab.CACHE_PLACES)
    component = rng.choice(("catalogue", "session", "pricing", "search results", "profile"))
    modules = vocab.distinct(rng, vocab.MODULES, 6)
    owners = [vocab.person(rng, people) for _ in modules]
    new_owner = vocab.person(rng, people)
    low = name.lower()
    cluster, registry = (f"{low}-stg-{n:02d}" for n in rng.sample(range(1, 20), 2))
    ack, change = rng.choice(_ACKS), rng.choice(_CHANGES)

    b.fact("project lead", ("project lead",), "Who is the project lead?")
    b.fact("launch date", ("launch date", "launch"), "What is the launch date?", DATE_EN)
    b.fact("database", ("database",), "Which database will the project use?")
    b.fact("budget", ("budget",), "What is the budget for the quarter?", NUMBER)
    b.fact("rate limit", ("rate limit",), "What is the API's rate limit per key?", NUMBER)
    b.fact(f"{component} cache", (f"{component} cache",), f"Where does the {component} cache live?")
    b.fact("staging cluster", ("staging cluster",), "What is the staging cluster?", r"\w+-stg-\d+")
    b.fact(
        "staging registry", ("staging registry",), "What is the staging registry?", r"\w+-stg-\d+"
    )
    for module in modules:
        b.fact(f"{module} owner", (f"{module} module",), f"Who owns the {module} module?")

    def kickoff(t: int) -> None:
        b.said("project lead", t, lead)
        b.said("launch date", t, *launch[0])
        b.put(
            t,
            f"Kick-off notes for {name}. The project lead is {lead}; scope changes need "
            f"their sign-off. The launch date is {launch[0][0]}, so plan backwards from it.",
            f"{ack}: the project lead is {lead} and the launch date is {launch[0][0]}. I will "
            "plan the milestones backwards from the launch.",
        )

    def infra(t: int) -> None:
        b.said("database", t, db_old)
        b.said("staging cluster", t, cluster)
        b.put(
            t,
            f"Infrastructure: the database will be {db_old}. The staging cluster is {cluster}.",
            f"{ack}: the database is {db_old} and the staging cluster is {cluster}.",
        )

    def money(t: int) -> None:
        b.said("budget", t, budget_old)
        b.put(
            t,
            f"Finance approved the budget: {budget_old} dollars for the quarter. The vendor's "
            f"first quote of {quote} dollars is not accepted yet.",
            f"{ack}: the budget is {budget_old} dollars for the quarter; the vendor quote of "
            f"{quote} dollars is still open.",
        )

    def cache(t: int) -> None:
        b.said(f"{component} cache", t, tech)
        b.put(
            t,
            f"For speed, the {component} cache will be {tech}, in front of the database.",
            f"{ack}: the {component} cache will be {tech}. I will add it to the deployment plan.",
        )

    def owned(start: int, stop: int) -> Event:
        def event(t: int) -> None:
            lines = []
            for module, owner in zip(modules[start:stop], owners[start:stop], strict=True):
                b.said(f"{module} owner", t, owner)
                lines.append(f"The {module} module is owned by {owner}.")
            b.put(t, "Ownership for the sprint. " + " ".join(lines), f"{ack}. " + " ".join(lines))

        return event

    def api(t: int) -> None:
        b.said("rate limit", t, rate_old)
        b.said("staging registry", t, registry)
        b.put(
            t,
            f"The public API's rate limit is {rate_old} requests per minute per key. Images "
            f"go to the staging registry {registry}.",
            f"{ack}: the rate limit is {rate_old} requests per minute per key, and the "
            f"staging registry is {registry}.",
        )

    def db_change(t: int) -> None:
        b.said("database", t, db_new)
        b.put(
            t,
            f"{change}: the database is now {db_new} instead, for row-level security.",
            f"Updated: the database is now {db_new}. I will redo the migration scripts.",
        )

    def launch_moves(index: int) -> Event:
        def event(t: int) -> None:
            b.said("launch date", t, *launch[index])
            b.put(
                t,
                f"{change}: the launch date is now {launch[index][0]}.",
                f"Updated: the launch date is now {launch[index][0]}; I will shift the milestones.",
            )

        return event

    def owner_moves(t: int) -> None:
        b.said(f"{modules[0]} owner", t, new_owner)
        b.put(
            t,
            f"{owners[0]} moves to another team: the {modules[0]} module is now owned by "
            f"{new_owner}.",
            f"Updated: the {modules[0]} module is now owned by {new_owner}.",
        )

    def cache_retracted(t: int) -> None:
        b.retract(f"{component} cache")
        b.said(f"{component} cache", t, place, place_spellings)
        b.put(
            t,
            f"We are not using {tech} after all: the {component} cache stays in {place}.",
            f"Updated: no {tech}; the {component} cache stays in {place}.",
        )

    def rate_change(t: int) -> None:
        b.said("rate limit", t, rate_new)
        b.put(
            t,
            f"The partner gateway cannot keep up: the rate limit is now {rate_new} requests "
            "per minute per key.",
            f"Updated: the rate limit is now {rate_new} requests per minute per key.",
        )

    def budget_change(t: int) -> None:
        b.said("budget", t, budget_new)
        b.put(
            t,
            f"Finance added the load tests: the budget is now {budget_new} dollars.",
            f"Updated: the budget is now {budget_new} dollars for the quarter.",
        )

    b.schedule(
        [kickoff, infra, money, cache, owned(0, 3), owned(3, 6), api],
        [
            db_change,
            launch_moves(1),
            owner_moves,
            cache_retracted,
            rate_change,
            budget_change,
            launch_moves(2),
        ],
    )
    last = handwritten._say(
        "Before the status meeting: give me the current state of every decision we made.",
        "Here is the current state of the decisions, as agreed so far.",
    )
    return b.script(f"gen-project-{seed}", f"Generated project {name}", "en", last)


def support(seed: int) -> Script:
    """A support chat: amounts, dates and units; a refund and a delivery date change."""
    b = Builder(f"support:{seed}", 40, handwritten._SUPPORT_QUESTIONS, handwritten._SUPPORT_ANSWERS)
    rng = b.rng
    product, parts = rng.choice(vocab.PRODUCTS)
    items = rng.sample(list(parts), 4)
    prices = [f"{euros}.{rng.choice(('00', '49', '90'))}" for euros in rng.sample(range(9, 89), 4)]
    customer = vocab.person(rng, set())
    order = f"ORD-{rng.randint(10000, 99999)}"
    previous = order[:-1] + str((int(order[-1]) + rng.randint(1, 8)) % 10)  # a near-duplicate
    ticket = f"SUP-{rng.randint(10000, 99999)}"
    paid = f"{rng.randint(120, 260)}.{rng.choice(('00', '90', '99'))}"
    refunds = [
        f"{euros}.{rng.choice(('00', '50', '75'))}" for euros in rng.sample(range(30, 119), 2)
    ]
    delivery = dates_en(rng, 3)
    weight = f"{rng.randint(1, 9)}.{rng.randint(1, 9)}"
    warranty = f"{rng.randint(2027, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    method_old, method_new = vocab.distinct(rng, vocab.PAYMENT_METHODS, 2)
    code = f"{rng.choice(vocab.CODE_WORDS)}{rng.randint(10, 40)}"
    shipping_fee = f"{rng.randint(3, 9)}.95"

    b.fact("customer", ("customer",), "What is the customer's name?")
    b.fact("order number", ("order number", "order"), "What is the order number?", r"ORD-\d+")
    b.fact("ticket", ("ticket",), "What is the support ticket number?", r"SUP-\d+")
    b.fact("refund", ("refund",), "How much is the refund?", NUMBER)
    b.fact("delivery date", ("delivery date", "delivery"), "When is the delivery?", DATE_EN)
    b.fact("parcel weight", ("parcel",), "How much does the parcel weigh?", r"\d+(?:\.\d+)? ?kg")
    b.fact("warranty", ("warranty",), "When does the warranty end?", r"\d{4}-\d{2}-\d{2}")
    b.fact("payment method", ("payment method", "pay"), "How will the customer pay?")
    b.fact("discount code", ("discount code", "code"), "Which discount code applies?")
    for item in items:
        b.fact(f"{item} price", (item,), f"How much does the {item} cost?", NUMBER)

    def opened(t: int) -> None:
        b.said("customer", t, customer)
        b.said("order number", t, order)
        b.said("ticket", t, ticket)
        b.put(
            t,
            f"Hello, this is {customer}. My order number is {order}: the {product} arrived "
            f"broken. My previous order {previous} was fine.",
            f"I am sorry, {customer.split()[0]}. I have the order number {order} open for "
            f"customer {customer} and opened ticket {ticket}.",
        )

    def paid_for(t: int) -> None:
        b.said("refund", t, refunds[0])
        b.put(
            t,
            f"I paid {paid} euros, plus a shipping fee of {shipping_fee}. What do I get back?",
            f"I have requested a refund of {refunds[0]} euros for the broken parts; the "
            "warehouse confirms the amount after the inspection.",
        )

    def shipped(t: int) -> None:
        b.said("delivery date", t, *delivery[0])
        b.said("parcel weight", t, f"{weight} kg", (f"{weight}kg",))
        b.put(
            t,
            "When do the replacement parts come?",
            f"The delivery date is {delivery[0][0]}. The parcel weighs {weight} kg, so it "
            "goes by standard courier.",
        )

    def price_list(t: int) -> None:
        lines = []
        for item, price in zip(items, prices, strict=True):
            b.said(f"{item} price", t, price)
            lines.append(f"the {item} costs {price} euros")
        b.put(
            t,
            "What do the spare parts cost, in case I need more?",
            "Here are the spare part prices: " + "; ".join(lines) + ".",
        )

    def account(t: int) -> None:
        b.said("warranty", t, warranty)
        b.said("payment method", t, method_old)
        b.put(
            t,
            f"My warranty ends on {warranty}, right? For any difference, my payment method "
            f"will be {method_old}.",
            f"Yes, the warranty ends on {warranty}. I noted {method_old} as your payment method.",
        )

    def discount(t: int) -> None:
        b.said("discount code", t, code)
        b.put(
            t,
            f"Can I use the discount code {code} on a second part?",
            f"Yes, the discount code {code} is valid on spare parts.",
        )

    def refund_changes(index: int, why: str) -> Event:
        def event(t: int) -> None:
            b.said("refund", t, refunds[index])
            b.put(t, why, f"Updated: the refund is now {refunds[index]} euros.")

        return event

    def delayed(index: int) -> Event:
        def event(t: int) -> None:
            b.said("delivery date", t, *delivery[index])
            b.put(
                t,
                "The courier says the replacement is delayed.",
                f"I checked with the courier: the delivery date is now {delivery[index][0]}.",
            )

        return event

    def payment_retracted(t: int) -> None:
        b.retract("payment method")
        b.said("payment method", t, method_new)
        b.put(
            t,
            f"Not {method_old} after all, it does not work for me: my payment method is "
            f"{method_new}.",
            f"Updated: no {method_old}; your payment method is {method_new}.",
        )

    b.schedule(
        [opened, paid_for, shipped, price_list, account, discount],
        [
            delayed(1),
            refund_changes(1, "The warehouse says only some parts are returned."),
            payment_retracted,
            delayed(2),
        ],
    )
    last = handwritten._say(
        "Can you confirm everything about my case in one message, please?",
        "Of course, here is everything about your case as it stands.",
    )
    return b.script(f"gen-support-{seed}", f"Generated support chat ({product})", "en", last)
