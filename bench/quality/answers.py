"""Answers, not only matches: ask the model about each fact from a system's final context.

After a system has replayed a conversation, the bench sends the real model one
request per planted fact: the final context that system would send at the
last turn (its summary, quotes and verbatim tail, as recorded for the regex
score) with the last user message replaced by the fact's question
(:func:`question_request`). :func:`judge` then reads the answer the way a user
would notice a lost fact:

* ``"retracted"``: a sentence of the answer gives a withdrawn value without
  denying it (:func:`bench.quality.facts.denies`), whatever else it says;
* ``"right"``: otherwise, the answer holds the fact's final value;
* ``"stale"``: it holds only a superseded value;
* ``"missing"``: none of the fact's values (an "I don't know" or a wrong value);
* ``"failed"``: the request itself failed (the reason is kept with the answer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from bench.measure import Pair
from bench.quality.facts import Fact, denies, mentions, segments

ANSWER_TOKENS = 64
"""The cap on each answer, in tokens: one short sentence."""
INSTRUCTIONS = {
    "en": "Answer from our conversation above, in one short sentence.",
    "zh": "请根据上面的对话，用一句话回答。",
    "mixed": "请根据上面的对话，用一句话回答。",
}
"""What follows each question, by the conversation's language."""
_TIMEOUT = 1800.0
VERDICTS = ("right", "stale", "retracted", "missing", "failed")


def question_request(
    final: Sequence[Pair], question: str, language: str = "en"
) -> list[dict[str, str]]:
    """The chat messages that ask ``question`` from a final context.

    The context's last message, the final turn's user message, gives way to the
    question, unless it is the question's own turn request: a message that ends
    with the question (what automatic recall put before it included) stays, and
    the instruction follows it. A tool result (which needs a tool call id the pairs
    no longer carry) is sent as a user message that says it is one.
    """
    pairs = list(final)
    asked = question
    if pairs and pairs[-1][0] == "user":
        last = pairs.pop()[1]
        if last.endswith(question):
            asked = last
    messages = []
    for role, text in pairs:
        if role in ("system", "user", "assistant"):
            messages.append({"role": role, "content": text})
        else:
            messages.append({"role": "user", "content": f"[{role} result]\n{text}"})
    instruction = INSTRUCTIONS.get(language, INSTRUCTIONS["en"])
    messages.append({"role": "user", "content": f"{asked} {instruction}"})
    return messages


def question_of(fact: Fact, language: str) -> str:
    """The fact's own question, else one made from its key (the handwritten conversations)."""
    if fact.question:
        return fact.question
    return f"{fact.key}是什么？" if language == "zh" else f"What is the {fact.key}?"


def judge(answer: str, fact: Fact) -> str:
    """``"right"``, ``"stale"``, ``"retracted"`` or ``"missing"``: what ``answer`` says."""
    if fact.retracted and any(
        mentions(part, fact.retracted) and not denies(part) for part in segments(answer)
    ):
        return "retracted"
    if mentions(answer, fact.value):
        return "right"
    if fact.old and mentions(answer, fact.old):
        return "stale"
    return "missing"


def ask(client: httpx.Client, base_url: str, model: str, messages: list[dict[str, str]]) -> str:
    """The model's reply to ``messages`` (``max_tokens`` :data:`ANSWER_TOKENS`)."""
    reply = client.post(
        base_url.rstrip("/") + "/chat/completions",
        json={"model": model, "messages": messages, "max_tokens": ANSWER_TOKENS},
    )
    reply.raise_for_status()
    content = reply.json()["choices"][0]["message"].get("content")
    return content if isinstance(content, str) else ""


def ask_all(
    facts: Sequence[Fact],
    language: str,
    final: Sequence[Pair],
    base_url: str,
    model: str,
    contexts: Mapping[str, Sequence[Pair]] | None = None,
) -> list[dict[str, Any]]:
    """One question per fact from ``final``: each answer with its verdict, in fact order.

    ``contexts`` gives, by fact, the request of that fact's question turn, when
    the system adds to it (automatic recall): the question is asked from it
    instead of ``final``. A failed request is recorded as ``"failed"`` with its
    reason; the others still run.
    """
    out: list[dict[str, Any]] = []
    with httpx.Client(timeout=_TIMEOUT) as client:
        for fact in facts:
            question = question_of(fact, language)
            record: dict[str, Any] = {"fact": fact.key, "question": question}
            try:
                context = (contexts or {}).get(fact.key, final)
                answer = ask(client, base_url, model, question_request(context, question, language))
            except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
                record.update(answer="", verdict="failed", error=f"{type(exc).__name__}: {exc}")
            else:
                record.update(answer=answer, verdict=judge(answer, fact))
            out.append(record)
    return out


def tally(answers: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """The fact keys of each verdict, for the tables: ``{"right": [...], ...}``."""
    return {
        verdict: [a["fact"] for a in answers if a["verdict"] == verdict] for verdict in VERDICTS
    }
