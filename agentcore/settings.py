"""Builder settings that plugins own, and the install hints for known plugins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import frozen


def _identity(value: Any) -> Any:
    return value


@frozen
class PluginSetting:
    """A builder setting a plugin owns.

    ``convert`` validates the value given to the builder and returns the value
    the plugin will read from :attr:`agentcore.AgentConfig.settings`; it
    raises ``ValueError`` or ``TypeError`` for a bad value.
    """

    name: str
    convert: Callable[[Any], Any] = _identity
    description: str = ""


KNOWN_PLUGIN_SETTINGS: dict[str, str] = {
    "summary_config": "autosummary",
    "otel_capture_content": "otel",
    "otel_tracer_provider": "otel",
}
"""First-party settings by name, with the extra that installs their plugin."""


def install_hint(setting: str) -> str:
    """What to tell a user who gave ``setting`` while its plugin is missing."""
    extra = KNOWN_PLUGIN_SETTINGS.get(setting)
    if extra is None:
        return (
            f"no installed plugin provides the setting {setting!r}; "
            "install the plugin that documents it, or check the spelling"
        )
    return (
        f"the setting {setting!r} belongs to the {extra} plugin, which is not installed "
        f'or is disabled; install it with: pip install "agentcore[{extra}]"'
    )
