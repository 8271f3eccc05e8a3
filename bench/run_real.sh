#!/usr/bin/env bash
# The real-model run: bash bench/run_real.sh [--only KEY ...] [--turns N] [--update-docs]
#
# Uses bench/.venv (made by bench/run.sh, which runs first if it is missing),
# adds the OpenAI-compatible clients of the peers (requirements-real.txt) and the
# llama-cpp-python server with SmolLM2-135M through tests/integration/install_server.py
# (the prebuilt wheel from $AGENTCORE_LLAMA_WHEEL_DIR, default ../shared/wheels),
# then runs `python -m bench.real`. About 10 minutes on 2 shared cores.
set -euo pipefail

started=$SECONDS
# shellcheck source=bench/_venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
bench_venv
bench_peer_clients "$here/requirements-real.txt"
bench_llama_server smollm2

cd "$root"
export AGENTCORE_TIKTOKEN_TIMEOUT=0 PYTHONDONTWRITEBYTECODE=1
"$venv/bin/python" -m bench.real "$@"
echo "bench/run_real.sh total, setup included: $((SECONDS - started)) s"
