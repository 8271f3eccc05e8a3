"""OpenAI Responses reasoning items to and from :class:`~agentcore.messages.ReasoningBlock`.

A reasoning item (``{"type": "reasoning", "id": "rs_...", ...}``) carries the
model's reasoning as readable text parts and, when the request asked for it
(``include: ["reasoning.encrypted_content"]``), the reasoning itself
encrypted. It becomes a block with ``id`` the item's id, ``text`` its text
parts joined by a blank line (or, from servers that send the raw reasoning
instead, its ``reasoning_text`` content) and ``data`` its
``encrypted_content``. The Responses codec sends such a block back as a
reasoning item in its place, so a reasoning model keeps its reasoning across
the calls of a tool loop without the server storing anything.

The API's field for the readable text parts is named after another sense of
the word than the core's vocabulary; this module alone spells it.
"""

from __future__ import annotations

from typing import Any

from agentcore.messages import ReasoningBlock
from agentcore.providers._wire import expect_dict, expect_list, expect_str, optional_str

ENCRYPTED_REASONING = "reasoning.encrypted_content"
"""The ``include`` value that asks for each reasoning item's ``encrypted_content``."""


def decode_reasoning(raw: Any, where: str) -> ReasoningBlock:
    """The reasoning block of the reasoning item ``raw`` (``where`` names it in errors)."""
    item = expect_dict(raw, where)
    texts = _part_texts(item.get("summary"), "summary_text", f"{where}.summary")
    if not texts:
        texts = _part_texts(item.get("content"), "reasoning_text", f"{where}.content")
    return ReasoningBlock(
        "\n\n".join(texts),
        data=optional_str(item.get("encrypted_content"), f"{where}.encrypted_content"),
        id=optional_str(item.get("id"), f"{where}.id") or None,
    )


def _part_texts(raw: Any, kind: str, where: str) -> list[str]:
    texts = []
    for position, part in enumerate(expect_list(raw or [], where)):
        part = expect_dict(part, f"{where}[{position}]")
        if part.get("type") == kind:
            texts.append(expect_str(part.get("text"), f"{where}[{position}].text"))
    return texts


def encode_reasoning(block: ReasoningBlock) -> dict[str, Any]:
    """The input item that sends ``block`` (one with an ``id``) back to the API."""
    item: dict[str, Any] = {"type": "reasoning", "id": block.id}
    item["summary"] = [{"type": "summary_text", "text": block.text}] if block.text else []
    if block.data is not None:
        item["encrypted_content"] = block.data
    return item
