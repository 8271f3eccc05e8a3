"""Integration tests against a real llama-cpp-python server: collected only when asked.

``AGENTCORE_INTEGRATION=1`` (set by ``tox -e integration``) turns them on;
without it, ``pytest tests`` leaves this directory alone. When they are on,
a missing package, a missing model or a server that does not start fails
the run: nothing here is ever skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENABLED = os.environ.get("AGENTCORE_INTEGRATION") == "1"

if not ENABLED:
    collect_ignore_glob = ["test_*.py"]

_FIGURES = pytest.StashKey[list[dict[str, Any]]]()
_LOG_DIR = pytest.StashKey[Path]()


def _log_dir(config: pytest.Config, factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("AGENTCORE_INTEGRATION_LOG_DIR")
    path = Path(given) if given else factory.mktemp("llama-server")
    path.mkdir(parents=True, exist_ok=True)
    config.stash[_LOG_DIR] = path
    return path


def _serve(
    config: pytest.Config, factory: pytest.TempPathFactory, log_name: str, **options: Any
) -> Iterator[Any]:
    from llama_server import ServerSetupError, start_server, stop_server

    log_path = config.stash.get(_LOG_DIR, None) or _log_dir(config, factory)
    try:
        server = start_server(log_path / log_name, **options)
    except ServerSetupError as exc:
        pytest.fail(f"the integration server could not start: {exc}", pytrace=False)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="session")
def llama_server(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """The llama-cpp-python server for the whole run, stopped at its end.

    Listens on a free port of 127.0.0.1 with ``--n_ctx 2048`` and the model's
    own chat template; its output is in ``server.log`` of
    ``AGENTCORE_INTEGRATION_LOG_DIR`` (default: a pytest temporary directory).
    """
    yield from _serve(pytestconfig, tmp_path_factory, "server.log")


@pytest.fixture(scope="session")
def llama_tool_server(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """A second server whose chat format lets the model call tools (``tool-server.log``).

    llama-cpp-python's ``chatml-function-calling`` format describes the tools
    to the model and parses its calls when a request says
    ``tool_choice: "auto"``; it does not stream such requests.
    """
    yield from _serve(
        pytestconfig,
        tmp_path_factory,
        "tool-server.log",
        chat_format="chatml-function-calling",
    )


@pytest.fixture(scope="session")
def figures(pytestconfig: pytest.Config) -> list[dict[str, Any]]:
    """Where each conversation leaves its figures, printed at the end of the run."""
    return pytestconfig.stash.setdefault(_FIGURES, [])


_COLUMNS = (
    ("test", 34),
    ("turns", 5),
    ("failed_turns", 6),
    ("requests", 5),
    ("summary_requests", 5),
    ("rejected_for_length", 7),
    ("server_non_200", 7),
    ("summary_replies", 7),
    ("summary_covers", 7),
    ("reply_room_short", 7),
    ("max_prompt_tokens", 7),
    ("ratio_min", 6),
    ("ratio_median", 6),
    ("ratio_max", 6),
    ("seconds", 7),
)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print the figures of every conversation, and write them as JSON beside the server log."""
    rows = config.stash.get(_FIGURES, [])
    if not rows:
        return
    write = terminalreporter.write_line
    terminalreporter.section("llama-cpp-python server: figures per conversation")
    write(" ".join(name[:width].rjust(width) for name, width in _COLUMNS))
    for row in rows:
        cells = []
        for name, width in _COLUMNS:
            value = row.get(name)
            text = "-" if value is None else str(value)
            cells.append(text[-width:].rjust(width))
        write(" ".join(cells))
    for row in rows:
        for error in row.get("errors", ())[:3]:
            write(f"{row['test']}: {error.splitlines()[0][:240]}")
    log_dir = config.stash.get(_LOG_DIR, None)
    if log_dir is not None:
        out = log_dir / "figures.json"
        out.write_text(json.dumps(rows, indent=2), encoding="utf-8")
        write(f"server log and figures: {log_dir}")
