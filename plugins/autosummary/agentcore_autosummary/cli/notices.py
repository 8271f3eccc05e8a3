"""The lines summaries print in the chat: one when a summary starts, one when it is applied."""

from __future__ import annotations

from attrs import define, field

from agentcore import TurnContext, hookimpl
from agentcore.cli.plugin_api import format_tokens, note, plural
from agentcore.plugin_api import count_text_tokens
from agentcore_autosummary.keeping.summary_info import SummaryInfo, SummaryRequestInfo


def progress_line(request: SummaryRequestInfo) -> str:
    """``summarizing 40 messages...``: what a summary about to be requested reads."""
    return f"summarizing {plural(len(request.messages), 'message')}..."


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
    """A plugin that shows summaries in the chat.

    When a summary starts (``before_summary``), a progress line goes to stderr
    at once, since a summary can take a minute; each applied summary
    (``after_summary``) is collected for the chat to show after the turn.

    :param model: The model whose tokenizer sizes the summary (None: ``cl100k_base``).
    :param progress: Print the progress line when a summary starts.
    :param prefix: What the progress line starts with (the chat's notes start ``"  -> "``).
    """

    model: str | None = None
    progress: bool = True
    prefix: str = "  -> "
    pending: list[SummaryInfo] = field(factory=list)

    @hookimpl
    def before_summary(self, ctx: TurnContext, request: SummaryRequestInfo) -> None:
        """Say on stderr that a summary starts, and how many messages it reads."""
        if self.progress and not request.vetoed:
            note(self.prefix + progress_line(request))

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
