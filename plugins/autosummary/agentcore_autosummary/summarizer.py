"""The summary call itself."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agentcore import LlmCycle, LlmProvider, Message, Usage
from agentcore.tokens import count_text_tokens
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.formatting import format_messages_as_text
from agentcore_autosummary.prompt import build_prompt


class SummaryFailedError(Exception):
    """The model gave no usable summary (an empty or blank reply)."""


async def request_summary(
    provider: LlmProvider,
    config: SummaryConfig,
    messages: Sequence[Message],
    *,
    model: str | None,
    max_chars: int | None,
) -> tuple[str, Usage]:
    """Ask the model to summarize ``messages``; return the summary and its usage.

    One tool-less request with ``purpose="summary"``, capped at
    ``config.max_summary_tokens`` and ``config.timeout`` seconds. An empty or
    blank reply raises :class:`SummaryFailedError`; provider errors and
    timeouts propagate.
    """
    conversation = format_messages_as_text(
        messages, config.max_tool_result_chars, max_chars=max_chars
    )
    prompt = build_prompt(config.summary_prompt, conversation)
    cycle = LlmCycle(provider, model=model, max_tokens=config.max_summary_tokens, purpose="summary")
    result = await asyncio.wait_for(cycle.submit_messages([Message.user(prompt)]), config.timeout)
    text = result.final_message.text.strip()
    if not text:
        raise SummaryFailedError("the model returned an empty summary")
    usage = result.response.usage
    if usage is None:
        usage = Usage(count_text_tokens(prompt, model), count_text_tokens(text, model))
    return text, usage
