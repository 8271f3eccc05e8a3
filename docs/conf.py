"""Sphinx configuration of the agentcore documentation (Markdown pages through MyST)."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

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

html_theme = "furo"
html_title = f"agentcore {release}"
