"""The span attribute names the plugin sets.

The ``gen_ai.*`` names are those of the OpenTelemetry semantic conventions for
generative AI (checked against ``opentelemetry-semantic-conventions`` in the
tests); they are spelled out here so the plugin needs ``opentelemetry-api``
alone at run time. The ``agentcore.*`` names are the plugin's own.
"""

from __future__ import annotations

OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"
SESSION_ID = "session.id"

OPERATION_CHAT = "chat"
OPERATION_INVOKE_AGENT = "invoke_agent"
OPERATION_EXECUTE_TOOL = "execute_tool"

PURPOSE = "agentcore.request.purpose"
"""Why agentcore made a model call: ``"turn"``, or ``"summary"`` for a summary."""
TURN_INDEX = "agentcore.turn.index"
"""The index of the turn in its session (0 for the first)."""
TURN_STREAMED = "agentcore.turn.streamed"
"""True for a turn run with ``submit_turn_stream``."""
SLOT_ID = "agentcore.slot.id"
"""The context slot the turn ran in."""
TOOL_IS_ERROR = "agentcore.tool.is_error"
"""True when the tool result told the model the call failed."""
