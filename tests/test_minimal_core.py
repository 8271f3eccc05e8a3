"""The core names no summary feature: its vocabulary lives in the autosummary plugin (issue 27).

Every word of the core package (code, docstrings, comments, data files) and of
the core's reference pages (docs/api.md, docs/hookspecs.md) that contains
``summar`` or ``compact`` (any case) must be in the allowlists below.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import agentcore
from agentcore import hookspecs

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(agentcore.__file__).resolve().parent
REFERENCE_PAGES = ("docs/api.md", "docs/hookspecs.md")
WORD = re.compile(r"[A-Za-z0-9_]*(?:summar|compact)[A-Za-z0-9_]*", re.IGNORECASE)

# The seed's context-slot API, which stays in the core (issue 27's decision): the fields
# of FocusedConfig that hold the text a Focused slot sends in place of the messages it
# covers, their types and defaults, and the helpers of agentcore/slots.py that render it.
SLOT_VOCABULARY = frozenset(
    {
        "summary_override",  # FocusedConfig: the text sent in place of the covered messages
        "summary_covers",  # FocusedConfig: the raw messages that text covers
        "summary_label",  # FocusedConfig: the label before that text
        "summary_position",  # FocusedConfig: where that text goes
        "summary_role",  # FocusedConfig: as which role it is sent
        "SummaryPosition",  # the type of summary_position
        "SummaryRole",  # the type of summary_role
        "DEFAULT_SUMMARY_LABEL",  # the default of summary_label ("[上下文摘要]")
        "SUMMARY_ACKNOWLEDGEMENT",  # the reply paired with a user-role summary_override
    }
)

# Words allowed in one file only.
PER_FILE = {
    # agentcore/slots.py defines the slot vocabulary above and describes it in prose:
    # the text in summary_override is the seed's "summary" of the covered messages.
    "agentcore/slots.py": frozenset({"summary", "summarizer", "_summary_text", "summary_message"}),
    # A docstring's first line, which a tool's description defaults to: another sense
    # of the word, unrelated to the summary feature.
    "agentcore/tools.py": frozenset({"summary"}),
    "agentcore/_docstrings.py": frozenset({"summary"}),
    # The OpenAI Responses API's wire names for a reasoning item's readable text (a list
    # named "summary" of parts of type "summary_text"), which the Responses codec must read
    # and send back: another sense of the word. This one module spells them.
    "agentcore/providers/_responses_reasoning.py": frozenset({"summary", "summary_text"}),
    # docs/hookspecs.md says which plugin adds which further hooks (issue 27, item 4):
    # the plugin's name and its three hooks, in its table of hooks plugins add.
    "docs/hookspecs.md": frozenset(
        {"autosummary", "before_summary", "after_summary", "on_summary_error"}
    ),
}


def _core_files() -> list[Path]:
    files = [
        path
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    ]
    return sorted(files) + [ROOT / page for page in REFERENCE_PAGES]


def _where(path: Path) -> str:
    """``agentcore/...`` for the package's files, installed (tox's core envs) or in the clone."""
    if path.is_relative_to(PACKAGE):
        return f"agentcore/{path.relative_to(PACKAGE).as_posix()}"
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _hits(path: Path) -> list[str]:
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:  # a binary file (the bundled encodings): no words
        return []
    where = _where(path)
    allowed = SLOT_VOCABULARY | PER_FILE.get(where, frozenset())
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for word in WORD.findall(line):
            if word not in allowed:
                found.append(f"{where}:{number}: {word}")
    return found


def test_the_core_names_no_summary_outside_the_slot_vocabulary() -> None:
    hits = [hit for path in _core_files() for hit in _hits(path)]
    assert not hits, "summary or compaction names in the core:\n" + "\n".join(hits)


def test_the_check_sees_the_core_package_and_the_reference_pages() -> None:
    names = {_where(path) for path in _core_files()}
    assert {"agentcore/session.py", "agentcore/hookspecs.py", "agentcore/cli/app.py"} <= names
    assert set(REFERENCE_PAGES) <= names
    assert _hits(PACKAGE / "slots.py") == []  # the allowlist covers slots.py


def test_the_check_would_catch_a_summary_name(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text("def get_conversation_summary(): ...\n# compact it\n", "utf-8")
    assert _hits(stray) == [
        f"{stray}:1: get_conversation_summary",
        f"{stray}:2: compact",
    ]


@pytest.mark.parametrize(
    "name",
    [
        "SummaryInfo",
        "SummaryRequestInfo",
        "SummaryQuality",
        "CompactError",
        "summary_memory_key",
        "compact_session",
    ],
)
def test_pip_install_agentcore_alone_shows_no_summary_type_or_hook(name: str) -> None:
    assert not hasattr(agentcore, name) and not hasattr(hookspecs, name)
    assert name not in agentcore.__all__
    assert not hasattr(agentcore.AgentSession, "compact")
    assert not hasattr(agentcore.AgentSession, "get_conversation_summary")
    assert not hasattr(agentcore.AgentBuilder, "summary_config")
