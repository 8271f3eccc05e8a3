"""Figures of one quality run, and the Markdown that shows them."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.measure import Pair, TokenMeter
from bench.quality import generator
from bench.quality.billed import billed, summary_calls
from bench.quality.cache_breaks import uncached_by_cause
from bench.quality.conversations import Script
from bench.quality.facts import known_values, score
from bench.quality.server import Call
from bench.quality.systems import SYSTEMS, Requests
from bench.quality.waits import wait_table

QUALITY_START = "<!-- bench:quality:start -->"
QUALITY_END = "<!-- bench:quality:end -->"
COPY_RATIO = 0.9
"""A summary this similar to the previous one (difflib ratio) counts as a copy."""
_ROLE_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?\**(user|assistant|human|ai|tool|system|用户|助手)\**\s*[:：]",
    re.IGNORECASE | re.MULTILINE,
)
ECHO_LINES = 2
"""A summary with this many lines starting with a role name counts as an echoed transcript."""


def _pairs(call: Call) -> list[Pair]:
    out: list[Pair] = []
    for message in call.messages:
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        out.append((str(message.get("role", "")), content))
    return out


def capped(result_calls: Sequence[Call], cap: int) -> bool:
    """Every call asked for ``max_tokens`` ``cap`` and got at most ``cap`` tokens.

    llama-cpp-python's server reports ``cap + 1`` completion tokens for a reply
    stopped at its cap (``finish_reason`` ``length``), so one more is allowed there.
    """
    return all(
        call.max_tokens == cap
        and (call.completion_tokens or 0) <= cap + (call.finish_reason == "length")
        for call in result_calls
    )


def figures(
    script: Script,
    requests: Requests,
    calls: Sequence[Call],
    cap: int,
    meter: TokenMeter,
    system: str = "agentcore",
) -> dict[str, Any]:
    """Everything the tables show for one system (its key) on one conversation."""
    known = known_values(script.texts(), script.facts)
    final = requests.final()
    final_score = score([text for _, text in final], script.facts, known)
    texts = [call.text for call in calls]
    copies = [
        index
        for index in range(1, len(texts))
        if difflib.SequenceMatcher(None, texts[index - 1], texts[index]).ratio() >= COPY_RATIO
    ]
    last_summary = score(texts[-1:], script.facts, known)
    turn_tokens = sum(meter.request(pairs) for _, pairs in requests.calls)
    summary_tokens = sum(meter.request(_pairs(call)) for call in calls)
    return {
        "facts": len(script.facts),
        "retained": list(final_score.retained),
        "stale": list(final_score.stale),
        "contradicted": list(final_score.contradicted),
        "retracted_as_true": list(final_score.retracted_as_true),
        "invented": [list(pair) for pair in final_score.invented],
        "in_last_summary": list(last_summary.retained),
        "summary_calls": len(calls),
        "failed_calls": sum(call.error is not None for call in calls),
        "copied": copies,
        "identical": [i for i in range(1, len(texts)) if texts[i] == texts[i - 1]],
        "truncated": [i for i, call in enumerate(calls) if call.finish_reason == "length"],
        "echoed": [
            i for i, text in enumerate(texts) if len(_ROLE_LINE.findall(text)) >= ECHO_LINES
        ],
        "caps_sent": sorted({str(call.max_tokens) for call in calls}),
        "max_completion_tokens_sent": sorted({str(call.max_completion_tokens) for call in calls}),
        "largest_output": max((call.completion_tokens or 0 for call in calls), default=0),
        "capped": capped(result_calls=calls, cap=cap),
        "summary_seconds": [round(call.seconds, 1) for call in calls],
        "summary_prompt_tokens": sum(call.prompt_tokens or 0 for call in calls),
        "summary_output_tokens": sum(call.completion_tokens or 0 for call in calls),
        "turn_calls": len(requests.calls),
        "turn_tokens": turn_tokens,
        "summary_tokens": summary_tokens,
        "total_tokens": turn_tokens + summary_tokens,
        "dollars": billed(
            system,
            requests.calls,
            requests.times,
            summary_calls(calls, _pairs),
            meter,
        ),
        "openai_uncached_by_cause": uncached_by_cause(
            requests.calls, requests.times, [call.started for call in calls], meter
        ),
        "final_tokens": meter.request(final),
        "final_context": final,
        "summaries": [call.as_dict() for call in calls],
    }


def _listed(result: dict[str, Any], key: str) -> str:
    """How many facts a figure lists; "–" where the run did not measure it."""
    return f"{len(result[key])}" if key in result else "–"


def _answered(result: dict[str, Any], verdict: str) -> str:
    verdicts = result.get("answer_verdicts")
    return "–" if verdicts is None else f"{len(verdicts[verdict])}"


def _cell(result: dict[str, Any]) -> list[str]:
    seconds = result["summary_seconds"]
    right = _answered(result, "right")
    return [
        f"**{len(result['retained'])}** / {result['facts']}",
        right if right == "–" else f"**{right}** / {result['facts']}",
        _listed(result, "stale"),
        _listed(result, "contradicted"),
        _listed(result, "retracted_as_true"),
        f"{_answered(result, 'stale')} / {_answered(result, 'retracted')}",
        _listed(result, "invented"),
        f"{len(result['in_last_summary'])}",
        f"{len(result['copied'])} ({len(result['identical'])} identical)",
        _listed(result, "truncated"),
        _listed(result, "echoed"),
        f"{result['summary_calls']}",
        f"{sum(seconds):.0f} / {max(seconds, default=0):.0f}",
        f"{result['final_tokens']:,}",
        f"{result['total_tokens']:,} ({result['turn_tokens']:,} + {result['summary_tokens']:,})",
        _dollars([result]),
        "yes" if result["capped"] else "**no**",
    ]


def _dollars(results: Sequence[dict[str, Any]]) -> str:
    """Billed dollars at OpenAI's and Anthropic's list prices, caching included; "–" if
    a run predates the figure."""
    if not all("dollars" in result for result in results):
        return "–"
    openai = sum(result["dollars"]["openai"] for result in results)
    anthropic = sum(result["dollars"]["anthropic"] for result in results)
    return f"{openai:.3f} / {anthropic:.3f}"


HEADER = [
    "System",
    "Facts retained (strict)",
    "Answers right",
    "Stale",
    "Old and new both",
    "Retracted as true",
    "Answers stale / retracted",
    "Invented",
    "In its last summary",
    "Copied summaries",
    "Stopped at the cap",
    "Echoed transcript",
    "Summary calls",
    "Summary s: total / max",
    "Final context tokens",
    "Tokens sent: total (turns + summaries)",
    "Billed $, cached: OpenAI / Anthropic",
    "Capped",
]


def table(results: dict[str, dict[str, Any]]) -> list[str]:
    """One conversation's table, one row per system that ran."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for key, result in results.items():
        title = SYSTEMS[key][0]
        if result.get("status") != "ok":
            cells = [f"could not run: {result.get('reason', '')}"] + [""] * (len(HEADER) - 2)
        else:
            cells = _cell(result)
        lines.append("| " + " | ".join([title, *cells]) + " |")
    return lines


def body(data: dict[str, Any], titles: dict[str, str]) -> str:
    """The Markdown of every conversation that ran, with the run's settings."""
    meta = data["meta"]
    commands = ", then ".join(f"`{command}`" for command in meta.get("commands", [meta["command"]]))
    lines = [
        f"Run on {meta['date']} ({meta['cpu_count']} CPUs, shared), commands: "
        f"{commands}. Model: {meta['model_title']} (`{meta['model_file']}`, "
        f"sha256 `{meta['model_sha256']}`) behind llama-cpp-python {meta['llama_cpp']}'s "
        f"server, `--n_ctx {meta['n_ctx']} --n_threads 1 --n_threads_batch 1`, temperature 0. "
        f"Budget {meta['budget']:,} tokens for every system, summaries capped at "
        f"{meta['cap']} tokens (`max_tokens` in every summary request).",
        "",
    ]
    lines += kind_tables(data["results"])
    waits = wait_table(data["results"], {key: SYSTEMS[key][0] for key in SYSTEMS})
    if waits:
        think = meta.get("think", 0.0)
        lines += [
            f"**What the caller waited per turn** (a pause of {think:g} s after each turn)",
            "",
        ]
        lines += waits
    for conversation, results in data["results"].items():
        facts = next(iter(results.values())).get("facts", "?")
        lines += [f"**{titles.get(conversation, conversation)}** ({facts} facts)", ""]
        lines += table(results)
        lines.append("")
    missing = [
        f"{conversation}: {', '.join(k for k in SYSTEMS if k not in results)}"
        for conversation, results in data["results"].items()
        if any(k not in results for k in SYSTEMS)
    ]
    if missing:
        lines += ["Not run in this pass: " + "; ".join(missing) + ".", ""]
    return "\n".join(lines)


KIND_HEADER = [
    "System",
    "Conversations",
    "Facts retained (strict)",
    "Answers right",
    "Stale",
    "Old and new both",
    "Retracted as true",
    "Tokens sent",
    "Billed $, cached: OpenAI / Anthropic",
]


def _kind_row(title: str, results: Sequence[dict[str, Any]]) -> list[str]:
    facts = sum(result["facts"] for result in results)

    def count(key: str) -> int:
        return sum(len(result.get(key, ())) for result in results)

    if all("answer_verdicts" in result for result in results):
        right = sum(len(result["answer_verdicts"]["right"]) for result in results)
        answers = f"**{right}** / {facts}"
    else:
        answers = "–"
    return [
        title,
        f"{len(results)}",
        f"**{count('retained')}** / {facts}",
        answers,
        f"{count('stale')}",
        f"{count('contradicted')}",
        f"{count('retracted_as_true')}",
        f"{sum(result['total_tokens'] for result in results):,}",
        _dollars(results),
    ]


def kind_tables(results: dict[str, dict[str, Any]]) -> list[str]:
    """The generated conversations' figures summed per kind: one table per kind."""
    by_kind: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for conversation, systems in results.items():
        if not conversation.startswith(generator.PREFIX):
            continue
        kind, _ = generator.parse(conversation)
        for key, result in systems.items():
            if result.get("status") == "ok":
                by_kind.setdefault(kind, {}).setdefault(key, []).append(result)
    lines = []
    for kind, systems in by_kind.items():
        lines += [f"**Generated {kind} conversations, summed**", ""]
        lines += ["| " + " | ".join(KIND_HEADER) + " |", "|" + "---|" * len(KIND_HEADER)]
        for key, runs in systems.items():
            lines.append("| " + " | ".join(_kind_row(SYSTEMS[key][0], runs)) + " |")
        lines.append("")
    return lines


def summaries_appendix(data: dict[str, Any], keys: Sequence[str], width: int = 700) -> str:
    """Every summary the given systems received from the model, cut to ``width`` characters."""
    lines = ["## Summaries as written by the model", ""]
    for conversation, results in data["results"].items():
        for key in keys:
            result = results.get(key)
            if not result or result.get("status") != "ok":
                continue
            lines.append(f"### {conversation} / {key}")
            lines.append("")
            for index, call in enumerate(result["summaries"]):
                text = call["text"].strip().replace("\n", " ⏎ ")
                cut = text if len(text) <= width else text[:width] + " …"
                lines.append(
                    f"{index + 1}. ({call['completion_tokens']} tokens, "
                    f"{call['finish_reason']}, {call['seconds']:.0f} s) {cut}"
                )
            lines.append("")
    return "\n".join(lines)


EVALUATION_HEADER = [
    "kind (facts)",
    "system",
    "facts kept (strict)",
    "answers right",
    "stale",
    "old and new both",
    "retracted as true",
    "answered stale / withdrawn",
    "summary calls",
    "tokens sent",
    "billed $, OpenAI / Anthropic",
]

EVALUATION_TITLES = {
    "agentcore": "agentcore defaults (segments, 0.8)",
    "agentcore-model-merges": "agentcore, parts merged by the model (the defaults until 6fed0c8)",
    "agentcore-incremental": "agentcore, incremental at 0.4 (the former defaults)",
    "agentcore-structured": 'agentcore, summary_style="structured"',
    "langmem": "langmem",
    "langchain": "LangChain",
    "llamaindex": "LlamaIndex",
}
"""The evaluation table's short name of each system, in the order of the rows."""


def _in_order(systems: dict[str, Any]) -> list[tuple[str, Any]]:
    """``systems``' items in the order of :data:`EVALUATION_TITLES`, the others last."""
    order = list(EVALUATION_TITLES)
    return sorted(
        systems.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)
    )


def evaluation_table(results: dict[str, dict[str, Any]], seed: int) -> list[str]:
    """The evaluation set's table of one seed: a row per kind and system, in bold the best.

    The most facts kept and answers right of each kind are in bold, and the lowest
    dollars at each provider. Only the conversations ``gen-KIND-<seed>`` are read.
    """
    lines = ["| " + " | ".join(EVALUATION_HEADER) + " |", "|" + "---|" * len(EVALUATION_HEADER)]
    for conversation, systems in results.items():
        if not conversation.startswith(generator.PREFIX):
            continue
        kind, number = generator.parse(conversation)
        if number != seed:
            continue
        done = {key: result for key, result in systems.items() if result.get("status") == "ok"}
        if not done:
            continue
        counts = {key: _counts(result) for key, result in done.items()}
        most, least = _best(counts)
        for key, result in _in_order(done):
            runs = (str(result["summary_calls"]), f"{result['total_tokens']:,}")
            lines.append(_row(kind, key, counts[key], most, least, runs))
    return lines


TOTALS_HEADER = [name for name in EVALUATION_HEADER if name not in ("summary calls", "tokens sent")]
"""The columns of :func:`evaluation_totals`: a seed's, less its per-run counts."""


def _counts(result: dict[str, Any]) -> dict[str, float]:
    verdicts = result.get("answer_verdicts", {})
    return {
        "facts": result["facts"],
        "kept": len(result["retained"]),
        "right": len(verdicts.get("right", ())),
        "stale": len(result["stale"]),
        "both": len(result["contradicted"]),
        "retracted": len(result["retracted_as_true"]),
        "answered stale": len(verdicts.get("stale", ())),
        "withdrawn": len(verdicts.get("retracted", ())),
        "openai": result["dollars"]["openai"],
        "anthropic": result["dollars"]["anthropic"],
    }


def _bold_if(value: float, best: float, text: str) -> str:
    return f"**{text}**" if value == best else text


def _best(counts: dict[str, dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """The most facts kept and answers right, and the lowest dollars, among ``counts``."""
    most = {name: max(each[name] for each in counts.values()) for name in ("kept", "right")}
    least = {name: min(each[name] for each in counts.values()) for name in ("openai", "anthropic")}
    return most, least


def _row(
    kind: str,
    key: str,
    count: dict[str, float],
    most: dict[str, float],
    least: dict[str, float],
    runs: Sequence[str] = (),
) -> str:
    """One system's row of a kind (``runs``: the per-run cells, before the dollars)."""
    cells = [
        f"{kind} ({count['facts']:.0f})",
        EVALUATION_TITLES.get(key, SYSTEMS[key][0]),
        _bold_if(count["kept"], most["kept"], f"{count['kept']:.0f}"),
        _bold_if(count["right"], most["right"], f"{count['right']:.0f}"),
        f"{count['stale']:.0f}",
        f"{count['both']:.0f}",
        f"{count['retracted']:.0f}",
        f"{count['answered stale']:.0f} / {count['withdrawn']:.0f}",
        *runs,
        " / ".join(
            _bold_if(count[provider], least[provider], f"{count[provider]:.3f}")
            for provider in ("openai", "anthropic")
        ),
    ]
    return "| " + " | ".join(cells) + " |"


def evaluation_totals(results: dict[str, dict[str, Any]], seeds: Sequence[int]) -> list[str]:
    """The evaluation set's figures summed over ``seeds``: a row per kind and system.

    Only the systems measured on every one of ``seeds`` for a kind count there; a
    row ``all`` per system sums the kinds. The most facts kept and answers right of
    each kind are in bold, and the lowest dollars at each provider.
    """
    sums: dict[str, dict[str, dict[str, float]]] = {}
    seen: dict[tuple[str, str], set[int]] = {}
    for conversation, systems in results.items():
        if not conversation.startswith(generator.PREFIX):
            continue
        kind, number = generator.parse(conversation)
        if number not in seeds:
            continue
        for key, result in systems.items():
            if result.get("status") != "ok":
                continue
            seen.setdefault((kind, key), set()).add(number)
            total = sums.setdefault(kind, {}).setdefault(key, {})
            for name, value in _counts(result).items():
                total[name] = total.get(name, 0) + value
    overall: dict[str, dict[str, float]] = {}
    lines = ["| " + " | ".join(TOTALS_HEADER) + " |", "|" + "---|" * len(TOTALS_HEADER)]
    rows: list[tuple[str, dict[str, dict[str, float]]]] = []
    for kind, systems in sums.items():
        complete = {key: t for key, t in systems.items() if seen[kind, key] == set(seeds)}
        rows.append((kind, complete))
        for key, total in complete.items():
            whole = overall.setdefault(key, {})
            for name, value in total.items():
                whole[name] = whole.get(name, 0) + value
    if len(rows) > 1:
        rows.append(("all", {key: t for key, t in overall.items() if len(t)}))
    for kind, systems in rows:
        if not systems:
            continue
        most, least = _best(systems)
        for key, total in _in_order(systems):
            lines.append(_row(kind, key, total, most, least))
    return lines


if __name__ == "__main__":  # python -m bench.quality.report RESULTS.json SEED [SEED ...]
    import json
    import sys

    loaded = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    chosen = [int(seed) for seed in sys.argv[2:]]
    if len(chosen) == 1:
        print("\n".join(evaluation_table(loaded["results"], chosen[0])))
    else:
        print("\n".join(evaluation_totals(loaded["results"], chosen)))
