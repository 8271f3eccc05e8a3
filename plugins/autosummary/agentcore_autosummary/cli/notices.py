"""The line each applied summary prints, and the plugin that collects them for the chat."""

from __future__ import annotations

from attrs import define, field

from agentcore import TurnContext, hookimpl
from agentcore.cli.meter import format_tokens
from agentcore.tokens import count_text_tokens
from agentcore_autosummary.summary_info import SummaryInfo


def summary_line(covers: int, tokens: int, context_after: int | None = None) -> str:
    """``summary written: covers messages 0..23 (412 tokens)``.

    :param covers: The index of the first raw message the summary does not cover.
    :param tokens: The summary's size.
    :param context_after: The context's size with the summary in place, if known.
    """
    size = f"({format_tokens(tokens)} tokens)"
    line = f"summary written: covers messages 0..{covers - 1} {size}"
    if covers <= 0:  # The full strategy leaves summary_covers where it was.
        line = f"summary written {size}"
    if context_after is not None:
        line += f"; context now {format_tokens(context_after)} tokens"
    return line


@define
class SummaryNotices:
    """A plugin that collects each applied summary (``after_summary``) for the chat to show.

    :param model: The model whose tokenizer sizes the summary (None: ``cl100k_base``).
    """

    model: str | None = None
    pending: list[SummaryInfo] = field(factory=list)

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        """Remember ``summary`` until the chat shows it."""
        self.pending.append(summary)

    def take(self) -> list[SummaryInfo]:
        """The summaries not shown yet, oldest first; they count as shown."""
        taken, self.pending = self.pending, []
        return taken

    def lines(self) -> list[str]:
        """One :func:`summary_line` per summary not shown yet; they count as shown."""
        return [
            summary_line(
                info.covers, count_text_tokens(info.summary, self.model), info.tokens_after
            )
            for info in self.take()
        ]
