"""The conversation loop of ``agentcore chat``: read a message, show the reply and the meter."""

from __future__ import annotations

import contextlib

from attrs import frozen

from agentcore.cli.chat_commands import SummaryNotices, parse_command, run_command
from agentcore.cli.chat_input import read_message
from agentcore.cli.console import (
    WaitingIndicator,
    note,
    read_line,
    stdin_is_interactive,
    write,
)
from agentcore.cli.meter import meter, summary_line
from agentcore.cli.money import MODEL_KEY, cost_line
from agentcore.cli.session_report import usage_dict
from agentcore.cli.text import dumps, plural, printable
from agentcore.demo.measure import SummaryState, context_tokens, new_summary, summary_state
from agentcore.session import AgentSession
from agentcore.tokens import count_text_tokens

QUIT_COMMAND = "/quit"
"""The line that ends the chat (end of input does too)."""

PROMPT = "> "
"""The prompt shown on a terminal."""


@frozen
class ChatOutput:
    """How a chat shows its turns.

    :param stream: Ask the model for a streamed reply and print it as it comes.
    :param json: Print one JSON object per turn on stdout instead of the text.
    :param meter: Print the context meter, the cost line and summary notices on stderr.
    :param indicator: Show a waiting indicator on stderr until the first token.
    """

    stream: bool = True
    json: bool = False
    meter: bool = True
    indicator: bool = False


class ChatLoop:
    """Runs turns from stdin until ``/quit`` or end of input, or a single turn.

    Replies go to stdout; the meter, the session's cost (tokens, and dollars
    when the model has a list price, see :mod:`agentcore.pricing`) and summary
    lines go to stderr. Text that came from the model is printed with its
    control characters escaped. The model is recorded in the session data
    (:data:`~agentcore.cli.money.MODEL_KEY`) after the first turn.

    :param session: The session the turns go to.
    :param max_context_tokens: The window the meter measures against.
    :param model: The model name whose tokenizer counts (None: ``cl100k_base``) and
        whose price the cost line shows.
    :param output: How turns are shown.
    :param notices: The plugin registered on the session's bundle that collects
        applied summaries (``after_summary``); without it, the loop compares the
        slot's summary before and after each turn.
    """

    def __init__(
        self,
        session: AgentSession,
        *,
        max_context_tokens: int,
        model: str | None = None,
        output: ChatOutput | None = None,
        notices: SummaryNotices | None = None,
    ) -> None:
        self._session = session
        self._limit = max_context_tokens
        self._model = model
        self._output = output if output is not None else ChatOutput()
        self._known: SummaryState = (None, 0)
        self._notices = notices
        self._model_recorded = False

    async def run(self) -> None:
        """Chat until the user quits; errors of the provider propagate."""
        slot = await self._session.get_slot()
        self._known = summary_state(slot)
        interactive = stdin_is_interactive()
        if interactive and slot.message_count():
            note(f"resuming a session of {plural(slot.message_count(), 'message')}")
            note(meter(await context_tokens(self._session, model=self._model), self._limit))
        try:
            while True:
                text = await read_message(read_line, PROMPT)
                if text is None:
                    if interactive:  # Ctrl-D: leave the shell's prompt on a line of its own.
                        write("\n")
                    break
                if text.strip() == QUIT_COMMAND:
                    break
                command = parse_command(text)
                if command is not None:
                    shown = await run_command(self._session, command)
                    if shown:
                        note(shown)
                    await self._show_new_summary()
                    continue
                if text.strip():
                    await self.turn(text)
        finally:
            await self._session.aclose()
        await self._show_new_summary()

    async def one_shot(self, text: str) -> None:
        """Run the single turn ``text`` and show its reply."""
        self._known = summary_state(await self._session.get_slot())
        try:
            await self.turn(text)
        finally:
            await self._session.aclose()
        await self._show_new_summary()

    async def turn(self, text: str) -> None:
        """Send ``text``, show the reply, then the meter and any new summary."""
        config_before = (await self._session.get_slot()).config
        cost_before = self._session.cost.total("turn")
        indicator = WaitingIndicator(self._output.indicator)
        indicator.show()
        try:
            if self._output.stream:
                reply = await self._streamed(text, indicator)
            else:
                reply = (await self._session.submit_turn(text)).text
                indicator.clear()
                if not self._output.json:
                    write(printable(reply) + "\n")
        finally:
            indicator.clear()
        if self._output.json:
            usage = self._session.cost.total("turn")
            record = {
                "session": self._session.session_id,
                "turn": self._session.turn_index,
                "reply": reply,
                "usage": {
                    name: value - usage_dict(cost_before)[name]
                    for name, value in usage_dict(usage).items()
                },
            }
            write(dumps(record) + "\n")
        await self._remember_model()
        if not self._output.meter:
            return
        grown = await context_tokens(self._session, as_config=config_before, model=self._model)
        note(meter(grown, self._limit))
        note(cost_line(self._session.cost.total(), self._model))
        await self._show_new_summary()

    async def _remember_model(self) -> None:
        """Record the model in the session data once, so ``sessions show`` can price it."""
        if self._model and not self._model_recorded:
            if await self._session.memory.get(MODEL_KEY) != self._model:
                await self._session.memory.set(MODEL_KEY, self._model)
            self._model_recorded = True

    async def _streamed(self, text: str, indicator: WaitingIndicator) -> str:
        """Stream the reply of ``text`` to stdout (unless JSON is asked for); return it.

        If the reader of stdout goes away (``| head``), the rest of the reply is
        still read, so that the turn, already paid for, is stored; then the
        :class:`BrokenPipeError` ends the command.
        """
        pieces: list[str] = []
        started = False
        closed: BrokenPipeError | None = None
        # aclosing: a stream left by an exception is closed here, at once, rather
        # than later by the garbage collector or at the event loop's shutdown.
        stream = self._session.submit_turn_stream(text)
        try:
            async with contextlib.aclosing(stream):
                async for event in stream:
                    if not event.text:
                        continue
                    indicator.clear()
                    pieces.append(event.text)
                    if self._output.json or closed is not None:
                        continue
                    try:
                        write(printable(event.text))
                        started = True
                    except BrokenPipeError as exc:
                        closed = exc
        except BaseException:
            if started and closed is None:  # End the reply's line before the error.
                with contextlib.suppress(OSError):
                    write("\n")
            raise
        if closed is not None:
            raise closed
        if started:
            write("\n")
        return "".join(pieces)

    async def _show_new_summary(self) -> None:
        if self._notices is not None:
            for info in self._notices.take():
                if self._output.meter:
                    tokens = count_text_tokens(info.summary, self._model)
                    note("  -> " + summary_line(info.covers, tokens, info.tokens_after))
            return
        if not self._output.meter:
            return
        summary = await new_summary(self._session, self._known, model=self._model)
        if summary is None:
            return
        self._known = summary_state(await self._session.get_slot())
        note("  -> " + summary_line(summary.covers, summary.tokens, summary.context_tokens))
