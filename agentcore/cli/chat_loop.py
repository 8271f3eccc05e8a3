"""The conversation loop of ``agentcore chat``: read a line, stream the reply, show the meter."""

from __future__ import annotations

from agentcore.cli.console import note, read_line, stdin_is_interactive, write
from agentcore.cli.meter import meter, summary_line
from agentcore.demo.measure import SummaryState, context_tokens, new_summary, summary_state
from agentcore.session import AgentSession

QUIT_COMMAND = "/quit"
"""The line that ends the chat (end of input does too)."""

PROMPT = "> "
"""The prompt shown on a terminal."""


class ChatLoop:
    """Runs turns from stdin until ``/quit`` or end of input.

    The reply streams to stdout; the meter and summary lines go to stderr.

    :param session: The session the turns go to.
    :param max_context_tokens: The window the meter measures against.
    :param model: The model name whose tokenizer counts (None: ``cl100k_base``).
    """

    def __init__(
        self, session: AgentSession, *, max_context_tokens: int, model: str | None = None
    ) -> None:
        self._session = session
        self._limit = max_context_tokens
        self._model = model
        self._known: SummaryState = (None, 0)

    async def run(self) -> None:
        """Chat until the user quits; errors of the provider propagate."""
        slot = await self._session.get_slot()
        self._known = summary_state(slot)
        if stdin_is_interactive() and slot.message_count():
            note(f"resuming a session of {slot.message_count()} messages")
            note(meter(await context_tokens(self._session, model=self._model), self._limit))
        try:
            while True:
                line = await read_line(PROMPT)
                if line is None or line.strip() == QUIT_COMMAND:
                    break
                if line.strip():
                    await self.turn(line)
        finally:
            await self._session.aclose()
        await self._show_new_summary()

    async def turn(self, text: str) -> None:
        """Send ``text``, stream the reply, then print the meter and any new summary."""
        config_before = (await self._session.get_slot()).config
        started = False
        try:
            async for event in self._session.submit_turn_stream(text):
                started = started or bool(event.text)
                write(event.text)
        finally:
            if started:  # End the reply's line, even when the stream broke off.
                write("\n")
        grown = await context_tokens(self._session, as_config=config_before, model=self._model)
        note(meter(grown, self._limit))
        await self._show_new_summary()

    async def _show_new_summary(self) -> None:
        summary = await new_summary(self._session, self._known, model=self._model)
        if summary is None:
            return
        self._known = summary_state(await self._session.get_slot())
        note("  -> " + summary_line(summary.covers, summary.tokens, summary.context_tokens))
