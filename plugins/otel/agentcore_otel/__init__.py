"""agentcore-otel: OpenTelemetry spans for every agentcore turn, model call and tool call.

Installed, it is active: spans go to OpenTelemetry's global tracer provider,
or to the one given with ``AgentBuilder().setting("otel_tracer_provider", tp)``.
Message content is recorded only with ``.setting("otel_capture_content", True)``
(or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``).
"""

from importlib import metadata as _metadata

from agentcore_otel.settings import CAPTURE_CONTENT, CAPTURE_CONTENT_ENV, TRACER_PROVIDER

__version__ = _metadata.version("agentcore-otel")
"""The installed distribution's version (from its package metadata)."""

__all__ = ["CAPTURE_CONTENT", "CAPTURE_CONTENT_ENV", "TRACER_PROVIDER", "__version__"]
