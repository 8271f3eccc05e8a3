from __future__ import annotations

from pathlib import Path

from agentcore.cli.paths import default_db_path, user_data_dir

HOME = Path("/home/ada")


def test_agentcore_home_wins() -> None:
    env = {"AGENTCORE_HOME": "/data/agents", "XDG_DATA_HOME": "/xdg"}
    assert default_db_path(env, "linux", HOME) == Path("/data/agents/agentcore.db")


def test_linux_uses_xdg_data_home() -> None:
    assert user_data_dir({"XDG_DATA_HOME": "/xdg"}, "linux", HOME) == Path("/xdg/agentcore")


def test_linux_default_and_relative_xdg_ignored() -> None:
    expected = HOME / ".local" / "share" / "agentcore"
    assert user_data_dir({}, "linux", HOME) == expected
    assert user_data_dir({"XDG_DATA_HOME": "relative/dir"}, "linux", HOME) == expected
    assert default_db_path({}, "linux", HOME) == expected / "agentcore.db"


def test_macos() -> None:
    assert user_data_dir({}, "darwin", HOME) == HOME / "Library/Application Support/agentcore"


def test_windows_appdata() -> None:
    env = {"APPDATA": "C:/Users/ada/AppData/Roaming"}
    assert user_data_dir(env, "win32", HOME) == Path("C:/Users/ada/AppData/Roaming/agentcore")
    assert user_data_dir({}, "win32", HOME) == HOME / "AppData" / "Roaming" / "agentcore"
