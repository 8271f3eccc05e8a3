"""The demo conversation shipped with the package, loaded with importlib.resources."""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from attrs import field, frozen

from agentcore import ConfigError
from agentcore.plugin_api import NON_EMPTY_STR

SCRIPT_RESOURCE = "conversation.json"
"""The file of :mod:`agentcore_autosummary.demo` that holds the conversation."""


@frozen
class DemoTurn:
    """One scripted exchange: what the user says and the canned reply."""

    user: str = field(validator=NON_EMPTY_STR)
    assistant: str = field(validator=NON_EMPTY_STR)


def _turns(turns: Iterable[DemoTurn]) -> tuple[DemoTurn, ...]:
    return tuple(turns)


@frozen
class DemoScript:
    """A scripted conversation: its title, the agent's system prompt and the turns."""

    title: str = field(validator=NON_EMPTY_STR)
    system_prompt: str = field(validator=NON_EMPTY_STR)
    turns: tuple[DemoTurn, ...] = field(converter=_turns)

    def reply_for(self, user_text: str) -> str | None:
        """The canned reply to ``user_text``, or None when the script has none."""
        wanted = user_text.strip()
        for turn in self.turns:
            if turn.user == wanted:
                return turn.assistant
        return None


def parse_script(data: Any) -> DemoScript:
    """The :class:`DemoScript` held by ``data``, decoded JSON of the shipped format.

    :raises ConfigError: ``data`` does not have the format.
    """
    try:
        turns = [DemoTurn(turn["user"], turn["assistant"]) for turn in data["turns"]]
        return DemoScript(data["title"], data["system_prompt"], turns)
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"the demo conversation is malformed: {exc!r}") from exc


def load_script() -> DemoScript:
    """The conversation shipped in :data:`SCRIPT_RESOURCE`."""
    text = (
        resources.files("agentcore_autosummary.demo").joinpath(SCRIPT_RESOURCE).read_text("utf-8")
    )
    return parse_script(json.loads(text))
