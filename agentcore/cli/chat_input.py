"""Messages in ``agentcore chat``: lines that continue, blocks, and a prompt with piped text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

CONTINUATION_PROMPT = "... "
"""The prompt of the lines that continue a message."""

BLOCK_MARKER = '"""'
"""A line holding only this opens a block of lines; the next such line closes it."""

ReadLine = Callable[[str], Awaitable["str | None"]]
"""Reads one line with a prompt; None at end of input."""


async def read_message(read: ReadLine, prompt: str) -> str | None:
    r"""The next message, which may span lines; None at end of input.

    A line ending in ``\`` continues on the next line (the backslash becomes a
    newline). A line holding only ``\"\"\"`` starts a block that ends at the next
    such line; the lines between are the message, as typed. End of input inside
    a message ends the message.
    """
    line = await read(prompt)
    if line is None:
        return None
    if line.strip() == BLOCK_MARKER:
        lines: list[str] = []
        while (more := await read(CONTINUATION_PROMPT)) is not None:
            if more.strip() == BLOCK_MARKER:
                break
            lines.append(more)
        return "\n".join(lines)
    parts: list[str] = []
    while line.endswith("\\"):
        parts.append(line[:-1])
        more = await read(CONTINUATION_PROMPT)
        if more is None:
            line = ""
            break
        line = more
    parts.append(line)
    return "\n".join(parts)


def join_piped_text(prompt: str, piped: str) -> str:
    """A one-shot prompt with the text piped on stdin: the prompt, a blank line, the text.

    ``cat notes.txt | agentcore chat -p "review this"`` sends both, as ``llm``
    does. Piped text that is empty or only whitespace leaves the prompt alone;
    trailing newlines of the text are dropped.
    """
    text = piped.rstrip("\r\n")
    if not text.strip():
        return prompt
    return f"{prompt}\n\n{text}"
