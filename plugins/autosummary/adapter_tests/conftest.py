"""The adapters' tests run against the real libraries: a missing one fails, never skips."""

from __future__ import annotations

import importlib

import pytest

REQUIRED = ("agents", "langgraph.prebuilt", "langchain.agents", "langchain_core")


def pytest_configure(config: pytest.Config) -> None:
    missing = []
    for name in REQUIRED:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise pytest.UsageError(
            f"the adapters' tests need {', '.join(missing)}: "
            "pip install -e 'plugins/autosummary[test-adapters]' (tox -e adapters does it)"
        )
