"""``python -m bench.worker JOB OUT``: run one job in a fresh process, write its JSON result.

A job is ``{"phase": "replay"|"overhead"|"latency", "system": KEY, ...}``
(``conversation`` for replay, ``length`` for overhead, ``quick`` for the
smoke settings, ``settings`` for the :class:`Settings` fields an experiment
changes: ``summary_overrides``, ``trigger_ratio``, ``keep_ratio``). The result
is ``{"status": "ok", ...figures}`` or
``{"status": "unavailable"|"error", "reason": ...}``: a system that cannot
run is reported, never dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import traceback
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
os.environ.setdefault("LANGSMITH_TRACING", "false")

from bench import conversations, experiments
from bench.settings import Settings
from bench.systems import SystemUnavailable, load


def _conversation(name: str, settings: Settings) -> conversations.Conversation:
    if name == "generated":
        return conversations.generated(settings.generated_seed, settings.generated_turns)
    if name == "corpus":
        return conversations.corpus(settings.corpus_turns)
    raise ValueError(f"unknown conversation {name!r}")


async def run(job: dict[str, Any]) -> dict[str, Any]:
    settings = Settings().quick() if job.get("quick") else Settings()
    if job.get("settings"):
        settings = replace(settings, **job["settings"])
    phase = job["phase"]
    conversation = None
    if phase == "replay":
        try:
            conversation = _conversation(job["conversation"], settings)
        except conversations.ConversationUnavailable as exc:
            return {"status": "unavailable", "reason": str(exc)}
    try:
        system = load(job["system"])
    except SystemUnavailable as exc:
        return {"status": "unavailable", "reason": str(exc)}
    if phase == "replay":
        assert conversation is not None
        figures = await experiments.replay(system, conversation, settings)
    elif phase == "overhead":
        figures = await experiments.overhead(system, settings, int(job["length"]))
    elif phase == "latency":
        figures = await experiments.latency(system, settings)
    else:
        raise ValueError(f"unknown phase {phase!r}")
    return {"status": "ok", **figures}


def main() -> int:
    job = json.loads(sys.argv[1])
    out = Path(sys.argv[2])
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        result = asyncio.run(run(job))
    except Exception as exc:
        traceback.print_exc()
        result = {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    out.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
