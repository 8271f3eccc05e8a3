"""Hypothesis strategies for histories every converter can carry exactly."""

from __future__ import annotations

import base64
import itertools
from typing import Any

from hypothesis import strategies as st

from agentcore import AudioBlock, FileBlock, ImageBlock, Message, TextBlock, ToolUseBlock

# Valid Unicode (no surrogates), with at least one character that is not blank.
_chars = st.characters(exclude_categories=["Cs"])
text = st.text(_chars, min_size=1, max_size=40).filter(lambda t: t.strip() != "")
json_value = st.one_of(st.integers(-(10**6), 10**6), st.booleans(), st.none(), text)
arguments = st.dictionaries(text, json_value, max_size=3)
b64 = st.binary(min_size=1, max_size=24).map(lambda raw: base64.b64encode(raw).decode())


def images() -> st.SearchStrategy[ImageBlock]:
    inline = st.builds(
        ImageBlock, media_type=st.sampled_from(["image/png", "image/jpeg"]), data=b64
    )
    by_url = st.builds(ImageBlock, url=st.just("https://example.test/a.png"))
    return st.one_of(inline, by_url)


def user_blocks(kinds: tuple[str, ...]) -> st.SearchStrategy[list[Any]]:
    """User content: one text alone, or a list of blocks of ``kinds``."""
    options: list[st.SearchStrategy[Any]] = [text.map(TextBlock)]
    if "image" in kinds:
        options.append(images())
    if "audio" in kinds:
        options.append(
            st.builds(AudioBlock, data=b64, media_type=st.sampled_from(["audio/wav", "audio/mpeg"]))
        )
    if "file" in kinds:
        options.append(
            st.builds(FileBlock, name=text, media_type=st.just("application/pdf"), data=b64)
        )
    if "text-file" in kinds:
        options.append(
            st.builds(
                FileBlock,
                name=text,
                media_type=st.just("text/plain"),
                data=text.map(lambda t: base64.b64encode(t.encode()).decode()),
            )
        )
    return st.lists(st.one_of(options), min_size=1, max_size=3)


@st.composite
def histories(
    draw: st.DrawFn,
    *,
    kinds: tuple[str, ...] = ("image",),
    systems: int = 1,
    error_prefix_free: bool = False,
) -> list[Message]:
    """A conversation: leading system messages, then user / assistant / results rounds."""
    ids = itertools.count()
    messages = [Message.system(t) for t in draw(st.lists(text, max_size=systems))]
    for _ in range(draw(st.integers(1, 4))):
        messages.append(Message.user(draw(user_blocks(kinds))))
        calls = [
            ToolUseBlock(f"call_{next(ids)}", draw(st.sampled_from(["add", "look_up"])), args)
            for args in draw(st.lists(arguments, max_size=2))
        ]
        reply = draw(text) if not calls or draw(st.booleans()) else ""
        messages.append(Message.assistant(reply, calls))
        for call in calls:
            result = draw(text)
            if error_prefix_free and result.startswith("Error: "):
                result = "ok " + result
            messages.append(Message.tool_result(call.id, result, is_error=draw(st.booleans())))
    return messages
