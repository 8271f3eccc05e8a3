from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentcore.cli.paths import default_db_path, user_data_dir


def test_agentcore_home_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg")
    env = {"AGENTCORE_HOME": "/data/agents"}
    assert default_db_path(env) == Path("/data/agents/agentcore.db")
    monkeypatch.setenv("AGENTCORE_HOME", "~/agents")
    assert default_db_path() == Path.home() / "agents" / "agentcore.db"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG folders are Linux's")
def test_linux_uses_xdg_data_home_and_ignores_a_relative_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AGENTCORE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg")
    assert user_data_dir() == Path("/xdg/agentcore")
    assert default_db_path() == Path("/xdg/agentcore/agentcore.db")
    expected = tmp_path / ".local" / "share" / "agentcore"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")
    assert user_data_dir() == expected
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_db_path() == expected / "agentcore.db"
