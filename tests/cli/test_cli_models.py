"""``agentcore models default``: a default model set once, used by ``chat`` without ``-m``."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from cli_runner import RunCli
from fake_openai import FakeOpenAIServer


def test_default_model_is_set_once_and_used_by_chat(
    run_cli: RunCli,
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
    cli_env: dict[str, str],
    tmp_path: Path,
) -> None:
    assert run_cli("models", "default").stdout.strip() == "openai:gpt-4o-mini"
    result = run_cli("models", "default", "openai:local-llama")
    assert result.returncode == 0, result.stderr
    assert "default model: openai:local-llama" in result.stderr
    config = Path(cli_env["AGENTCORE_HOME"]) / "config.json"
    assert json.loads(config.read_text("utf-8")) == {"default_model": "openai:local-llama"}
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert run_cli("models", "default").stdout.strip() == "openai:local-llama"

    chat = ["chat", "--base-url", openai_server.base_url, "-p", "hi"]
    assert run_cli(*chat).returncode == 0
    assert openai_server.requests[-1]["model"] == "local-llama"
    assert run_cli(*chat, "-m", "openai:gpt-4o").returncode == 0
    assert openai_server.requests[-1]["model"] == "gpt-4o"  # -m still wins

    assert run_cli("models", "default", "--unset").returncode == 0
    assert run_cli("models", "default").stdout.strip() == "openai:gpt-4o-mini"


def test_a_bad_default_model_is_refused(run_cli: RunCli, require_openai_provider: None) -> None:
    result = run_cli("models", "default", "gpt-4o")
    assert result.returncode == 2
    assert "expected PROVIDER:MODEL" in result.stderr
    unknown = run_cli("models", "default", "nosuch:model")
    assert unknown.returncode == 2
    assert "no provider is registered for 'nosuch'" in unknown.stderr
