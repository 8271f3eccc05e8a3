"""The conversation loop of ``agentcore chat``: read a message, show the reply and the meter."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from attrs import frozen

from agentcore.cli.chat_commands import QUIT_COMMAND, parse_command, run_command
from agentcore.cli.chat_input import read_message
from agentcore.cli.console import (
    WaitingIndicator,
    note,
    read_line,
    stdin_is_interactive,
    write,
)
from agentcore.cli.extensions import ChatCommand, NotesSource
from agentcore.cli.message_log import now_text, record_messages
from agentcore.cli.meter import context_tokens, meter
from agentcore.cli.money import MODEL_KEY, cost_line
from agentcore.cli.session_report import usage_dict
from agentcore.cli.text import dumps, plural, printable
from agentcore.cli.turn_usage import TurnUsage, usage_fields
from agentcore.cli.window import ChatWindow
from agentcore.session import AgentSession

__all__ = ["PROMPT", "QUIT_COMMAND", "ChatLoop", "ChatOutput"]

PROMPT = "> "
"""The prompt shown on a terminal."""


@frozen
class ChatOutput:
    """How a chat shows its turns.

    :param stream: Ask the model for a streamed reply and print it as it comes.
    :param json: Print one JSON object per turn on stdout instead of the text.
    :param meter: Print the context meter, the cost line and the plugins' notes on stderr.
    :param indicator: Show a waiting indicator on stderr until the first token.
    """

    stream: bool = True
    json: bool = False
    meter: bool = True
    indicator: bool = False


class ChatLoop:
    """Runs turns from stdin until ``/quit`` or end of input, or a single turn.

    Replies go to stdout; the meter, the session's cost (tokens, and dollars
    when the model has a list price, see :mod:`agentcore.pricing`) and the
    plugins' notes go to stderr. Text that came from the model is printed with
    its control characters escaped. The model is recorded in the session data
    (:data:`~agentcore.cli.money.MODEL_KEY`) after the first turn.

    :param session: The session the turns go to.
    :param max_context_tokens: The window the meter measures against (None: not
        known), when no ``window`` is given.
    :param model: The model name whose tokenizer counts (None: ``cl100k_base``) and
        whose price the cost line shows.
    :param output: How turns are shown.
    :param commands: The slash commands plugins add (``register_chat_commands``).
    :param notes: Where plugins' notes come from, shown after each turn and command.
    :param turn_usage: The bundle's :class:`TurnUsage`, whose figures ``--json``
        prints (``null`` where the server reported none); None: the session's cost.
    :param window: The bundle's :class:`ChatWindow`, which refusals for length teach;
        the meter measures against it.
    :param model_name: The ``PROVIDER:MODEL`` kept with each new message, with its
        time, in the session data (:mod:`agentcore.cli.message_log`); None: not kept.
    """

    def __init__(
        self,
        session: AgentSession,
        *,
        max_context_tokens: int | None = None,
        model: str | None = None,
        output: ChatOutput | None = None,
        commands: Sequence[ChatCommand] = (),
        notes: Sequence[NotesSource] = (),
        turn_usage: TurnUsage | None = None,
        window: ChatWindow | None = None,
        model_name: str | None = None,
    ) -> None:
        self._session = session
        self._window = window if window is not None else ChatWindow(max_context_tokens)
        self._model = model
        self._output = output if output is not None else ChatOutput()
        self._commands = tuple(commands)
        self._notes = tuple(notes)
        self._model_recorded = False
        self._turn_usage = turn_usage
        self._model_name = model_name

    async def run(self) -> None:
        """Chat until the user quits; errors of the provider propagate."""
        slot = await self._session.get_slot()
        interactive = stdin_is_interactive()
        if interactive and slot.message_count():
            note(f"resuming a session of {plural(slot.message_count(), 'message')}")
            note(meter(await context_tokens(self._session, model=self._model), self._window.tokens))
        try:
            while True:
                text = await read_message(read_line, PROMPT)
                if text is None:
                    if interactive:  # Ctrl-D: leave the shell's prompt on a line of its own.
                        write("\n")
                    break
                if text.strip() == QUIT_COMMAND:
                    break
                command = parse_command(text, self._commands)
                if command is not None:
                    shown = await run_command(self._session, command, self._commands)
                    if shown:
                        note(shown)
                    self._show_notes()
                    continue
                if text.strip():
                    await self.turn(text)
        finally:
            await self._session.aclose()
        self._show_notes()

    async def one_shot(self, text: str) -> None:
        """Run the single turn ``text`` and show its reply."""
        try:
            await self.turn(text)
        finally:
            await self._session.aclose()
        self._show_notes()

    async def turn(self, text: str) -> None:
        """Send ``text``, show the reply, then the meter and the plugins' notes."""
        slot_before = await self._session.get_slot()
        config_before = slot_before.config
        count_before = slot_before.message_count()
        sent_at = now_text()
        cost_before = self._session.cost.total("turn")
        if self._turn_usage is not None:
            self._turn_usage.take()
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
            await self._learn_window()
        if self._model_name is not None:
            await record_messages(
                self._session,
                before=count_before,
                sent_at=sent_at,
                model=self._model_name,
            )
        if self._output.json:
            if self._turn_usage is not None:
                usage: dict[str, int | None] = usage_fields(self._turn_usage.take())
            else:
                after = usage_dict(self._session.cost.total("turn"))
                before = usage_dict(cost_before)
                usage = {name: value - before[name] for name, value in after.items()}
            record = {
                "session": self._session.session_id,
                "turn": self._session.turn_index,
                "reply": reply,
                "usage": usage,
            }
            write(dumps(record) + "\n")
        await self._remember_model()
        if not self._output.meter:
            return
        grown = await context_tokens(self._session, as_config=config_before, model=self._model)
        note(meter(grown, self._window.tokens))
        note(cost_line(self._session.cost.total(), self._model))
        self._show_notes()

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

    async def _learn_window(self) -> None:
        """Take the window a refusal for length taught, and say so with the meter."""
        if await self._window.settle(self._session) and self._output.meter:
            note(
                f"the server's context window is {self._window.tokens:,} tokens "
                "(learned from its refusal; kept with the session)"
            )

    def _show_notes(self) -> None:
        for source in self._notes:
            lines = source()
            if self._output.meter:
                for line in lines:
                    note("  -> " + line)
