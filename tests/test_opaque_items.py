"""Items only one API reads (``OpaqueBlock``), and body fields a hook adds to one request."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    LlmResponse,
    Message,
    OpaqueBlock,
    TextBlock,
    ToolRegistry,
    ToolUseBlock,
    TurnContext,
    hookimpl,
)
from agentcore.errors import ConfigError
from agentcore.llm import LlmRequest
from agentcore.providers import _anthropic_codec, _openai_codec
from agentcore.serialization import message_from_json, message_to_json
from agentcore.testing import MockProvider
from agentcore.tokens import ESTIMATE_BYTES_PER_TOKEN, TokenCounter

if TYPE_CHECKING:
    from conftest import StoreEngine

ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA" + "x" * 395}


def _reply_with_item(text: str = "Done.") -> Message:
    return Message("assistant", [OpaqueBlock("openai-responses", ITEM), TextBlock(text)])


def test_an_opaque_item_survives_stored_json_unchanged() -> None:
    message = _reply_with_item()
    again = message_from_json(message_to_json(message))
    assert again == message
    [block, _] = again.content
    assert isinstance(block, OpaqueBlock)
    assert block.item == ITEM and block.item_type == "compaction"
    assert again.text == "Done."


def test_bad_opaque_items_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="api must not be empty"):
        OpaqueBlock("", ITEM)
    with pytest.raises(ValueError, match="item must be a JSON object"):
        OpaqueBlock("openai-responses", ["not", "an", "object"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tokens"):
        OpaqueBlock("openai-responses", ITEM, tokens=-1)


def test_an_opaque_item_costs_its_given_tokens_or_its_json_length() -> None:
    counter = TokenCounter("estimate")
    plain = counter.count_message(Message.assistant("Done."))
    estimated = counter.count_message(_reply_with_item())
    given = Message(
        "assistant", [OpaqueBlock("openai-responses", ITEM, tokens=7), TextBlock("Done.")]
    )
    assert counter.count_message(given) == plain + 7
    assert estimated - plain >= len(ITEM["encrypted_content"]) // ESTIMATE_BYTES_PER_TOKEN


def test_other_apis_leave_the_item_out_of_their_requests() -> None:
    history = [Message.user("Hi"), _reply_with_item("Hello."), Message.user("And now?")]
    chat = _openai_codec.encode_request(
        LlmRequest(history), model="m", stream=False, max_tokens_field="max_tokens"
    )
    assert chat["messages"][1] == {"role": "assistant", "content": "Hello."}
    assert "compaction" not in str(chat)
    anthropic = _anthropic_codec.encode_request(
        LlmRequest(history), model="m", stream=False, default_max_tokens=100
    )
    assert anthropic["messages"][1]["content"] == [{"type": "text", "text": "Hello."}]
    assert "compaction" not in str(anthropic)


async def test_a_stored_item_is_loaded_back_by_a_resumed_session(
    store_engine: StoreEngine,
) -> None:
    store = store_engine.open()
    provider = MockProvider([LlmResponse(_reply_with_item())])
    bundle = AgentBuilder().provider(provider).store(store).load_plugins(False).build()
    await AgentSession(Agent("a"), "s", bundle).submit_turn("Hi")
    if store_engine.persistent:
        await store.close()
        store = store_engine.open()
        bundle = AgentBuilder().provider(provider).store(store).load_plugins(False).build()
    resumed = AgentSession(Agent("a"), "s", bundle)
    [_, reply] = await resumed.load_messages()
    assert reply == _reply_with_item()
    await store.close()


async def test_a_hook_adds_body_fields_to_one_call_only() -> None:
    class Fields:
        @hookimpl
        def before_model_call(self, ctx: TurnContext) -> None:
            if len(ctx.messages) == 1:  # the turn's first call only
                ctx.request_body["context_management"] = [{"type": "x", "threshold": 9}]

    registry = ToolRegistry()

    @registry.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    provider = MockProvider(
        [
            LlmResponse(
                Message.assistant("", [ToolUseBlock("c1", "ping")]), stop_reason="tool_use"
            ),
            "pong received",
        ]
    )
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(registry)
        .plugin(Fields())
        .load_plugins(False)
        .build()
    )
    await AgentSession(Agent("a"), "s", bundle).submit_turn("hi")
    first, second = provider.calls
    assert first.extra_body == {"context_management": [{"type": "x", "threshold": 9}]}
    assert second.extra_body == {}


def test_a_request_refuses_body_fields_that_are_not_a_mapping() -> None:
    with pytest.raises(ConfigError, match="extra_body must be a mapping"):
        LlmRequest([Message.user("Hi")], extra_body=[("a", 1)])  # type: ignore[arg-type]
