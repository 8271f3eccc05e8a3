"""Which tiktoken encoding counts a model's tokens, loaded once per process without a long wait.

:func:`encoding_for_model` names the encoding a model uses;
:func:`resolve_encoding` loads it (bundled encodings from disk, others through
tiktoken in a worker thread, waited for at most
``AGENTCORE_TIKTOKEN_TIMEOUT`` seconds), falls back to ``cl100k_base`` and then
to nothing (the counts become estimates, and one warning is logged per process).
:mod:`agentcore.tokens` describes the whole policy; its logger logs here too.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from typing import TYPE_CHECKING

import tiktoken

from agentcore.encodings import BUNDLED, load_bundled_encoding

if TYPE_CHECKING:
    from tiktoken import Encoding

logger = logging.getLogger("agentcore.tokens")

DEFAULT_ENCODING = "cl100k_base"
"""The encoding used for every model tiktoken does not know (``tokens.DEFAULT_ENCODING``)."""

TIMEOUT_ENV_VAR = "AGENTCORE_TIKTOKEN_TIMEOUT"
"""Seconds to wait for tiktoken to load an encoding; ``0`` skips loading it."""

DEFAULT_TIMEOUT = 5.0
"""The wait used when :data:`TIMEOUT_ENV_VAR` is unset or invalid."""

_WARNING = (
    "agentcore.tokens: no tiktoken encoding could be loaded (wanted %r); token counts "
    "are estimates. Reinstall agentcore (its bundled encodings are missing or damaged), "
    "or make the encoding file reachable: allow network access once, or copy it into the "
    "directory named by TIKTOKEN_CACHE_DIR. Set %s to change how long loading may take."
)

_lock = threading.RLock()
_encodings: dict[str, Encoding | None] = {}
_warned = False


def encoding_for_model(model: str | None) -> str:
    """Return the name of the encoding to count ``model``'s tokens with.

    OpenAI model names get the encoding tiktoken names for them (a prefix such as
    ``openai/`` is ignored); every other name, and ``None``, gets
    :data:`DEFAULT_ENCODING`.
    """
    return model_encoding(model) or DEFAULT_ENCODING


def model_encoding(model: str | None) -> str | None:
    """The encoding tiktoken names for ``model``, or None for a model it does not know."""
    if not model:
        return None
    for name in dict.fromkeys((model, model.rsplit("/", 1)[-1])):
        try:
            return tiktoken.encoding_name_for_model(name)
        except (KeyError, ValueError):
            continue
    return None


def _timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        logger.debug("ignoring %s=%r: not a number", TIMEOUT_ENV_VAR, raw)
        return DEFAULT_TIMEOUT
    return max(value, 0.0) if math.isfinite(value) else DEFAULT_TIMEOUT


def _load_encoding(name: str) -> Encoding:
    """Load the encoding ``name``: bundled ones from disk, others through tiktoken."""
    if name in BUNDLED:
        return load_bundled_encoding(name)
    return tiktoken.get_encoding(name)


def _load_bounded(name: str, timeout: float) -> Encoding | None:
    """Load ``name`` in a daemon thread, waiting at most ``timeout`` seconds."""
    if timeout <= 0:
        return None
    result: list[Encoding] = []

    def work() -> None:
        try:
            result.append(_load_encoding(name))
        except Exception as error:
            logger.debug("could not load tiktoken encoding %r: %r", name, error)

    thread = threading.Thread(target=work, name=f"agentcore-tiktoken-{name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if not result:
        if thread.is_alive():
            logger.debug("loading tiktoken encoding %r took over %ss", name, timeout)
        return None
    return result[0]


def _load(name: str) -> Encoding | None:
    """The encoding ``name``, loaded once per process; None when it cannot load.

    Must be called with ``_lock`` held.
    """
    if name not in _encodings:
        if name in BUNDLED:
            try:
                _encodings[name] = _load_encoding(name)
            except Exception as error:
                logger.debug("could not load bundled encoding %r: %r", name, error)
                _encodings[name] = None
        else:
            _encodings[name] = _load_bounded(name, _timeout())
    return _encodings[name]


def resolve_encoding(wanted: str) -> tuple[Encoding | None, bool]:
    """Return the encoding to count ``wanted`` with, and whether it is ``wanted`` itself.

    ``wanted`` when it loads, else :data:`DEFAULT_ENCODING`, else None (the
    counts are estimates; the first time in the process, a warning says so).
    """
    global _warned
    with _lock:
        encoding = _load(wanted)
        if encoding is not None:
            return encoding, True
        fallback = _load(DEFAULT_ENCODING)
        if fallback is not None:
            logger.debug("counting %r tokens with %r instead", wanted, DEFAULT_ENCODING)
            return fallback, False
        if not _warned:
            _warned = True
            logger.warning(_WARNING, wanted, TIMEOUT_ENV_VAR)
        return None, False


def forget_encodings() -> None:
    """Forget the loaded encodings and the warning (for tests)."""
    global _warned
    with _lock:
        _encodings.clear()
        _warned = False
