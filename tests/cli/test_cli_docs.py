"""The CLI reference (docs/cli.md) names every command and option, and doc examples run."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcore.cli import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(build_parser()))


@pytest.mark.parametrize(
    "path,parser", COMMANDS, ids=[" ".join(p) or "agentcore" for p, _ in COMMANDS]
)
def test_cli_reference_documents_every_command_and_option(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    text = (DOCS / "cli.md").read_text("utf-8")
    if path:
        assert f"`agentcore {' '.join(path)}" in text
        assert f"{{cli-help}} {' '.join(path)}\n" in text
    for action in parser._actions:
        for option in action.option_strings:
            assert f"`{option}" in text, f"docs/cli.md does not document {option} of {path}"
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            for choice in action.choices:
                assert choice in text


def _runnable_blocks(page: str) -> list[str]:
    text = (DOCS / page).read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return [block for block in blocks if "asyncio.run(main())" in block]


@pytest.mark.parametrize("page", ["getting-started.md", "testing.md"])
def test_doc_examples_run(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = _runnable_blocks(page)
    assert blocks
    for block in blocks:
        exec(compile(block, f"docs/{page}", "exec"), {"__name__": "__doc_example__"})
