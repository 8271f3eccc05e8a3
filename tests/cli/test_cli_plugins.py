from __future__ import annotations

import json

from cli_runner import RunCli

from agentcore.plugins import create_plugin_manager, list_plugins


def test_plugins_lists_what_a_plugin_manager_loads(run_cli: RunCli) -> None:
    result = run_cli("plugins")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert listed == [info.as_dict() for info in list_plugins(create_plugin_manager())]
    for plugin in listed:
        assert set(plugin) <= {"name", "hooks", "distribution", "version"}
        assert isinstance(plugin["hooks"], list)


def test_disabled_plugins_are_not_listed(run_cli: RunCli) -> None:
    result = run_cli("plugins", env={"AGENTCORE_DISABLED_PLUGINS": "autosummary"})
    assert result.returncode == 0
    assert "autosummary" not in [plugin["name"] for plugin in json.loads(result.stdout)]
