"""Sphinx configuration of the agentcore documentation (Markdown pages through MyST)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

from sphinx.util.nodes import make_refnode  # noqa: E402

from agentcore import __version__  # noqa: E402

project = "agentcore"
author = "agentcore contributors"
copyright = "agentcore contributors"
release = __version__
version = ".".join(__version__.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "cli_help",
]

root_doc = "index"
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"

# A reference that does not resolve is a warning, and the docs build (-W) fails on
# warnings: a new public name without its entry in api.md breaks the build.
nitpicky = True

# Names outside agentcore: the standard library and the dependencies. Their
# inventories (intersphinx) need the network, which the docs build must not.
nitpick_ignore = [
    # A module constant named in the docstrings of OpenAIProvider and AnthropicProvider,
    # whose modules (agentcore.providers.openai, .anthropic) are not public.
    ("py:data", "DEFAULT_BASE_URL"),
    # The parts of a segments summary, named in the annotations of SummaryState.
    ("py:class", "agentcore_autosummary.keeping.state.Segment"),
]
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(collections\.abc|typing|os|asyncio|_asyncio|json|pathlib|types|time|argparse)\..+",
    ),
    # Private helpers that appear in signatures (``agentcore._turns.FinalEvent``).
    (r"py:.*", r"agentcore(_\w+)?(\.\w+)*\._\w+(\.\w+)*"),
    (r"py:.*", r"(httpx|pluggy|tiktoken|attrs|attr|cattrs)(\..+)?"),
    (r"py:.*", r"(psycopg|psycopg_pool|opentelemetry)(\..+)?"),
    # Type variables in signatures (``T``, ``F``) are not documented objects.
    (r"py:class", r"agentcore(_autosummary)?(\.\w+)*\.[A-Z]"),
]

html_theme = "furo"
html_title = f"agentcore {release}"


def _resolve_elsewhere(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a Python reference that names a documented object by another path.

    - ``:class:`StoreError``` in a docstring of ``agentcore.stores.memory``: a
      short name is searched in every module, as a leading ``.`` would, and
      resolves when exactly one documented object has it.
    - ``agentcore.stores.MemoryStore``, documented as ``agentcore.MemoryStore``:
      a dotted name resolves to the one documented object of the same short
      name when both paths import the very same object.

    Anything else (an undocumented name, a typo, an ambiguous short name) stays
    unresolved, and the build fails on it.
    """
    if node.get("refdomain") != "py":
        return None
    target: str = node["reftarget"]
    domain = env.get_domain("py")

    def find(name: str) -> list[Any]:
        found = domain.find_obj(
            env, node.get("py:module"), node.get("py:class"), name, node["reftype"], 1
        )
        # An object documented as agentcore.Message is also registered under its
        # canonical name agentcore.messages.Message: one object, one entry.
        unique = {(entry.docname, entry.node_id): (name, entry) for name, entry in found}
        return list(unique.values())

    matches = find(target)
    if len(matches) != 1 and "." in target:
        short = target.rsplit(".", 1)[-1]
        matches = [
            (name, entry)
            for name, entry in find(short)
            if _import(name) is not _MISSING and _import(name) is _import(target)
        ]
    if len(matches) != 1:
        return None
    found, entry = matches[0]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, found)


_MISSING = object()


def _import(dotted: str) -> Any:
    """The object at the dotted path ``dotted``, or ``_MISSING``."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            obj = getattr(obj, name, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def setup(app: Any) -> None:
    """Register the resolver of references by another path."""
    app.connect("missing-reference", _resolve_elsewhere)
