#!/usr/bin/env bash
# Run the benchmark suite from scratch: bash bench/run.sh [--quick] [--only KEY ...] [--update-docs]
#
# Creates or updates bench/.venv (the peers live there only, never in the dev or
# test environments), installs bench/requirements.txt plus agentcore and the
# autosummary plugin from this checkout, then runs `python -m bench`.
set -euo pipefail

started=$SECONDS
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv="$here/.venv"
python="${BENCH_PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "creating $venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv"
fi

# Reinstall only when the requirements or the packages' metadata changed.
stamp="$venv/.bench-installed"
wanted="$("$venv/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(b"".join(open(p, "rb").read() for p in sys.argv[1:])).hexdigest())' \
    "$here/requirements.txt" "$root/pyproject.toml" "$root/plugins/autosummary/pyproject.toml")"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; then
    echo "installing the bench environment (requirements.txt, agentcore, agentcore-autosummary)"
    log="$venv/pip-install.log"
    if ! "$venv/bin/python" -m pip install --disable-pip-version-check \
        -r "$here/requirements.txt" -e "$root" -e "$root/plugins/autosummary" >"$log" 2>&1; then
        tail -n 30 "$log"
        echo "pip install failed; full log: $log" >&2
        exit 1
    fi
    "$venv/bin/python" -c "import agentcore, agentcore_autosummary, matplotlib"
    echo "$wanted" > "$stamp"
fi

cd "$root"
export AGENTCORE_TIKTOKEN_TIMEOUT=0 PYTHONDONTWRITEBYTECODE=1
"$venv/bin/python" -m bench "$@"
echo "bench/run.sh total, setup included: $((SECONDS - started)) s"
