"""Builder settings that plugins own, and the install hints for known plugins."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attrs import frozen

if TYPE_CHECKING:
    import pluggy


def _identity(value: Any) -> Any:
    return value


@frozen
class PluginSetting:
    """A builder setting a plugin owns.

    ``convert`` validates the value given to the builder and returns the value
    the plugin will read from :attr:`agentcore.AgentConfig.settings`; it
    raises ``ValueError`` or ``TypeError`` for a bad value.

    ``check``, when given, is called by :meth:`~agentcore.AgentBuilder.build`
    after ``convert``, with the converted value and the bundle's plugin
    manager, once every plugin of the bundle is registered: for checks that
    depend on what other plugins offer, such as a provider name that only a
    plugin registers (:func:`agentcore.providers.check_provider_name`). It
    returns nothing and raises :class:`~agentcore.errors.ConfigError` (or
    ``ValueError``/``TypeError``) to fail the build.
    """

    name: str
    convert: Callable[[Any], Any] = _identity
    description: str = ""
    check: Callable[[Any, pluggy.PluginManager], None] | None = None


KNOWN_PLUGIN_SETTINGS: dict[str, str] = {
    "otel_capture_content": "otel",
    "otel_tracer_provider": "otel",
}
"""First-party settings by name, with the extra that installs their plugin."""


DISTRIBUTION = "agentcore"
"""This project's distribution name. An unrelated project holds the same name on
PyPI, so every requirement printed for users pins this installation's version."""


def installed_version() -> str:
    """The version of the installed ``agentcore`` distribution (``agentcore.__version__``)."""
    return importlib.metadata.version(DISTRIBUTION)


def pinned_requirement(extra: str | None = None) -> str:
    """``agentcore[extra]==<installed version>``: a requirement no other project satisfies."""
    name = DISTRIBUTION if extra is None else f"{DISTRIBUTION}[{extra}]"
    return f"{name}=={installed_version()}"


def plugin_install_hint(extra: str) -> str:
    """The commands that install the first-party plugin ``extra`` next to this agentcore.

    Pinned to the installed version, from a wheelhouse or from a clone of the
    repository: never a bare ``agentcore[...]``, which pip could resolve to the
    unrelated project of that name on PyPI.
    """
    return (
        f'pip install --find-links WHEELHOUSE "{pinned_requirement(extra)}", '
        f"or in a clone of the agentcore repository: pip install -e . -e plugins/{extra}"
    )


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
        f"or is disabled; install it with: {plugin_install_hint(extra)}"
    )
