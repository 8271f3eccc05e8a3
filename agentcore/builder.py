"""AgentBuilder: assembles a provider, tools, a store and plugins into a bundle.

:class:`AgentBundle`, :class:`AgentConfig` and :data:`DEFAULT_TURN_TIMEOUT` live in
:mod:`agentcore.bundle` and are importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from agentcore._cancel import check_timeout
from agentcore.bundle import DEFAULT_TURN_TIMEOUT, AgentBundle, AgentConfig
from agentcore.errors import ConfigError
from agentcore.hook_calls import CoreHooks
from agentcore.llm import LlmProvider, is_llm_provider
from agentcore.output import OutputSpec, check_tool_choice
from agentcore.plugins import create_plugin_manager
from agentcore.settings import PluginSetting, install_hint
from agentcore.stores.base import MemoryStore
from agentcore.stores.memory import InMemoryStore
from agentcore.tools import ToolRegistry
from agentcore.validators import BOOL, POSITIVE_INT

__all__ = ["DEFAULT_TURN_TIMEOUT", "AgentBuilder", "AgentBundle", "AgentConfig"]


class AgentBuilder:
    """Builds an :class:`AgentBundle` step by step.

    Example::

        bundle = AgentBuilder().provider(MockProvider(["hi"])).build()
    """

    def __init__(self) -> None:
        self._provider: LlmProvider | None = None
        self._tools: ToolRegistry | None = None
        self._store: MemoryStore | None = None
        self._plugins: list[object] = []
        self._settings: dict[str, Any] = {}
        self._load_plugins: bool | None = None
        self._max_tool_rounds = 8
        self._turn_timeout: float | None = DEFAULT_TURN_TIMEOUT
        self._session_lease = True
        self._output: OutputSpec[Any] | None = None
        self._tool_choice: str | None = None

    def provider(self, provider: LlmProvider) -> AgentBuilder:
        """Use ``provider`` for every model call."""
        if not is_llm_provider(provider):
            raise ConfigError(
                f"provider must implement LlmProvider (complete and stream), got {provider!r}"
            )
        self._provider = provider
        return self

    def tool_registry(self, registry: ToolRegistry) -> AgentBuilder:
        """Offer the tools of ``registry`` to the model."""
        if not isinstance(registry, ToolRegistry):
            raise ConfigError(f"tool_registry expects a ToolRegistry, got {registry!r}")
        self._tools = registry
        return self

    def store(self, store: MemoryStore) -> AgentBuilder:
        """Persist sessions in ``store`` (default: a new :class:`InMemoryStore`)."""
        if not isinstance(store, MemoryStore):
            raise ConfigError(f"store must implement MemoryStore, got {store!r}")
        self._store = store
        return self

    def plugin(self, plugin: object) -> AgentBuilder:
        """Register ``plugin`` (a module or object with hook implementations)."""
        self._plugins.append(plugin)
        return self

    def load_plugins(self, enabled: bool) -> AgentBuilder:
        """Turn discovery of entry-point plugins on or off (default: on)."""
        self._load_plugins = enabled
        return self

    def max_tool_rounds(self, rounds: int) -> AgentBuilder:
        """Stop a turn's tool loop after ``rounds`` rounds of tool calls."""
        self._max_tool_rounds = POSITIVE_INT.check("max_tool_rounds", rounds)
        return self

    def turn_timeout(self, seconds: float | None) -> AgentBuilder:
        """Give every turn a deadline of ``seconds`` (default 600 s, ``DEFAULT_TURN_TIMEOUT``).

        It covers every hook, model call and tool of a turn, streamed or not,
        up to its store write. A turn that misses it raises
        :class:`~agentcore.errors.TurnTimeoutError` and stores nothing; one
        that reaches it after its store write began is stored and returned,
        with the end hooks left skipped. ``seconds`` must be a positive
        finite number; None turns the deadline off.
        """
        self._turn_timeout = check_timeout("turn_timeout", seconds)
        return self

    def session_lease(self, enabled: bool = True) -> AgentBuilder:
        """Let one worker at a time run a turn of a session (default: on).

        A turn takes the session's lease in the store before its model
        call, waits while another worker (a process, or another session
        object of the same session) holds it, bounded by ``turn_timeout``,
        reads the history that worker stored, and gives the lease back once
        its turn is stored: no model call is paid on a stale history and no
        turn ends in :class:`~agentcore.errors.ConflictError` because
        another worker stored first. The lease is a stored row with an
        expiry, renewed while the turn runs, so a worker that dies blocks
        the session for at most ``agentcore._lease.LEASE_SECONDS`` (15 s).

        It is on by default because a deployment that scales out by running
        more workers shares sessions without saying so. It costs two small
        store writes a turn (see docs/scaling-out.md for the figures);
        ``session_lease(False)`` saves them where one session object is
        certain to be the session's only writer.
        """
        self._session_lease = BOOL.check("session_lease", enabled)
        return self

    def output(self, output: Any) -> AgentBuilder:
        """Ask every turn for a final reply that is JSON of ``output``'s schema.

        ``output`` is a class (dataclass, attrs class, TypedDict, pydantic
        model), a JSON schema dict or an :class:`~agentcore.output.OutputSpec`;
        None turns it off. An agent's own ``output`` wins. Build the class
        from a reply with :func:`agentcore.output.parse_output`.
        """
        self._output = None if output is None else OutputSpec.of(output)
        return self

    def tool_choice(self, choice: str | None) -> AgentBuilder:
        """Send ``choice`` (``"auto"``, ``"none"``, ``"required"`` or a tool's name) on turns.

        It goes on each turn's first model call (see
        :class:`~agentcore.cycle.LlmCycle`); an agent's own ``tool_choice``
        wins; None leaves the provider's default.
        """
        self._tool_choice = check_tool_choice(choice)
        return self

    def setting(self, name: str, value: Any) -> AgentBuilder:
        """Give the plugin setting ``name``; the owning plugin validates it at build."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"a setting name must be a non-empty str, got {name!r}")
        self._settings[name] = value
        return self

    def __getattr__(self, name: str) -> Callable[[Any], AgentBuilder]:
        """A plugin's setting as a builder method: ``.NAME(value)`` is ``.setting(NAME, value)``.

        So a plugin setting chains like the core's own methods without the
        core knowing its name (``.temperature(1)`` for a plugin that declares
        the setting ``temperature``). The owning plugin validates the value at
        :meth:`build`; a name that no installed plugin declares fails there,
        named, as :meth:`setting` does. Names starting with ``_`` are not
        settings.
        """
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

        def give(value: Any) -> AgentBuilder:
            return self.setting(name, value)

        give.__name__ = give.__qualname__ = name
        give.__doc__ = f"Give the plugin setting {name!r} (see AgentBuilder.setting)."
        return give

    def build(self) -> AgentBundle:
        """Check the parts, load plugins, validate plugin settings and return the bundle.

        Each setting goes through its plugin's ``convert``, then its ``check``
        (see :class:`~agentcore.PluginSetting`) with the bundle's plugin manager.
        """
        if self._provider is None:
            raise ConfigError("AgentBuilder needs a provider: call .provider(...) before .build()")
        choice = self._tool_choice
        if choice not in (None, "auto", "none", "required") and choice not in (self._tools or ()):
            known = ", ".join(tool.name for tool in self._tools.tools) if self._tools else "none"
            raise ConfigError(f"tool_choice names the tool {choice!r}; registered: {known}")
        pm = create_plugin_manager(load_entrypoints=self._load_plugins, plugins=self._plugins)
        declared = _declared_settings(pm)
        settings: dict[str, Any] = {}
        for name, value in self._settings.items():
            if name not in declared:
                raise ConfigError(install_hint(name))
            setting = declared[name]
            try:
                settings[name] = setting.convert(value)
                if setting.check is not None:
                    setting.check(settings[name], pm)
            except (TypeError, ValueError, KeyError) as exc:
                raise ConfigError(f"invalid value for the setting {name!r}: {exc}") from exc
        return AgentBundle(
            provider=self._provider,
            store=self._store if self._store is not None else InMemoryStore(),
            plugin_manager=pm,
            config=AgentConfig(
                settings=settings,
                max_tool_rounds=self._max_tool_rounds,
                turn_timeout=self._turn_timeout,
                session_lease=self._session_lease,
                output=self._output,
                tool_choice=self._tool_choice,
            ),
            tools=self._tools,
        )


def _declared_settings(pm: pluggy.PluginManager) -> dict[str, PluginSetting]:
    declared: dict[str, PluginSetting] = {}
    for group in CoreHooks(pm).register_settings():
        for setting in group:
            if setting.name in declared:
                raise ConfigError(f"two plugins declare the setting {setting.name!r}")
            declared[setting.name] = setting
    return declared
