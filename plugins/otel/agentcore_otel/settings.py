"""The plugin's builder settings, and how each is checked."""

from __future__ import annotations

import functools
import logging
import os

from opentelemetry import trace

from agentcore import AgentConfig, PluginSetting

logger = logging.getLogger(__name__)

CAPTURE_CONTENT = "otel_capture_content"
"""Setting: True to put message and tool content on spans (default False)."""

TRACER_PROVIDER = "otel_tracer_provider"
"""Setting: the ``TracerProvider`` to trace with (default: the global one)."""

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""Environment variable (``true``/``false``) read when :data:`CAPTURE_CONTENT` is not given."""


def convert_capture_content(value: object) -> bool:
    """Check a capture-content value: a bool, or the text ``"true"``/``"false"``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise ValueError(
        f"{CAPTURE_CONTENT} must be True or False (or the text 'true' or 'false'), got {value!r}"
    )


def convert_tracer_provider(value: object) -> trace.TracerProvider:
    """Check a tracer-provider value: an ``opentelemetry.trace.TracerProvider``."""
    if isinstance(value, trace.TracerProvider):
        return value
    raise ValueError(
        f"{TRACER_PROVIDER} must be an opentelemetry.trace.TracerProvider "
        f"(such as opentelemetry.sdk.trace.TracerProvider()), got {value!r}"
    )


SETTINGS = (
    PluginSetting(
        CAPTURE_CONTENT,
        convert_capture_content,
        "put message and tool content on spans (default False: sizes and names only)",
    ),
    PluginSetting(
        TRACER_PROVIDER,
        convert_tracer_provider,
        "the TracerProvider to trace with (default: the global one)",
    ),
)
"""The settings :func:`~agentcore_otel.plugin.register_settings` declares."""


def capture_content(config: AgentConfig) -> bool:
    """Whether spans carry content: the setting, else the environment variable, else False."""
    if CAPTURE_CONTENT in config.settings:
        return bool(config.settings[CAPTURE_CONTENT])
    return _capture_from_env(os.environ.get(CAPTURE_CONTENT_ENV, ""))


@functools.lru_cache(maxsize=8)
def _capture_from_env(raw: str) -> bool:
    if not raw.strip():
        return False
    try:
        return convert_capture_content(raw)
    except ValueError as exc:
        logger.warning("%s ignored, content is not captured: %s", CAPTURE_CONTENT_ENV, exc)
        return False


def tracer_provider(config: AgentConfig) -> trace.TracerProvider:
    """The tracer provider of the setting, else OpenTelemetry's global one."""
    provider = config.settings.get(TRACER_PROVIDER)
    if isinstance(provider, trace.TracerProvider):
        return provider
    return trace.get_tracer_provider()
