"""tiktoken encodings shipped with agentcore, so counting never needs the network.

``cl100k_base`` and ``o200k_base`` are bundled as ``<name>.tiktoken`` rank
files next to this module, in tiktoken's own format. They were converted from
the rank tables of the npm package ``js-tiktoken`` (1.0.21, MIT) and are
checked, at every load, against the SHA-256 that tiktoken itself expects for
the files OpenAI publishes (``tiktoken_ext/openai_public.py``), so a counter
built from them gives exactly tiktoken's counts. The patterns and special
tokens below are tiktoken's.

:func:`load_bundled_encoding` builds a :class:`tiktoken.Encoding` from a
bundled file with :func:`tiktoken.load.load_tiktoken_bpe` on the local path.
"""

from __future__ import annotations

from importlib import resources

import tiktoken
from attrs import frozen
from tiktoken.load import load_tiktoken_bpe

_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"

_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@frozen
class BundledEncoding:
    """One bundled encoding: its rank file's SHA-256, its pattern and special tokens."""

    name: str
    sha256: str
    pattern: str
    special_tokens: dict[str, int]


BUNDLED: dict[str, BundledEncoding] = {
    "cl100k_base": BundledEncoding(
        "cl100k_base",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": BundledEncoding(
        "o200k_base",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}
"""The encodings that come with agentcore, by name."""


def bundled_path(name: str) -> str:
    """The local path of the bundled rank file of ``name``."""
    return str(resources.files(__name__).joinpath(f"{name}.tiktoken"))


def load_bundled_encoding(name: str) -> tiktoken.Encoding:
    """Build the bundled encoding ``name`` from its local rank file.

    Raises :class:`KeyError` for a name that is not bundled and
    :class:`ValueError` when the file's hash is not the one tiktoken expects.
    """
    spec = BUNDLED[name]
    ranks = load_tiktoken_bpe(bundled_path(name), expected_hash=spec.sha256)
    return tiktoken.Encoding(
        name=name,
        pat_str=spec.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
    )
