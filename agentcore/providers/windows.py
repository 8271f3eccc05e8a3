"""Context windows: the known ones of hosted models, and what a local server reports.

:func:`known_context_window` looks a model name up in :data:`KNOWN_CONTEXT_WINDOWS`
by longest prefix. :func:`discover_context_window` tries that table, then,
for an OpenAI-compatible provider (Chat Completions or Responses), asks the
server, in this order:

- llama.cpp: ``GET {root}/props`` → ``default_generation_settings.n_ctx``;
- vLLM: ``GET {base_url}/models`` → ``max_model_len`` of the model's entry;
- Ollama: ``POST {root}/api/show`` with ``{"model": name}`` →
  ``model_info["<architecture>.context_length"]`` (or ``num_ctx`` in its
  ``parameters``, when set).

``root`` is ``base_url`` without a trailing ``/v1``. llama-cpp-python's own
server reports no window on any endpoint (``/props`` answers 404 and its
``/v1/models`` entries hold only ``id``, ``object``, ``owned_by`` and
``permissions``, as of llama-cpp-python 0.3.36): give its window with the
provider's ``context_windows=`` option.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from agentcore.llm import LlmProvider
from agentcore.providers._base import HttpProvider
from agentcore.validators import is_number

logger = logging.getLogger(__name__)

# Sources. Checked November 2026: OpenAI's model pages,
# https://platform.openai.com/docs/models (gpt-4o and gpt-4o-mini: 128,000;
# gpt-4.1, -mini, -nano: 1,047,576; o1, o3, o3-mini, o4-mini: 200,000;
# o1-mini and o1-preview: 128,000; gpt-4-turbo: 128,000; gpt-4: 8,192;
# gpt-3.5-turbo: 16,385), and Anthropic's models overview,
# https://docs.anthropic.com/en/docs/about-claude/models/overview (every
# Claude 3, 3.5, 3.7, Sonnet 4 and Opus 4 model: 200,000; Sonnet 4's 1M window
# needs a beta header, so 200,000 is what a plain request gets).
# Checked 1 December 2026:
# - OpenAI, https://developers.openai.com/api/docs/models/gpt-5-nano
#   (gpt-5-nano: 400,000). gpt-5, gpt-5-mini and gpt-5.1 (400,000) and the
#   chat variants gpt-5-chat and gpt-5.1-chat (128,000) are as listed by the
#   gateways that serve them (https://vercel.com/ai-gateway/models/gpt-5,
#   .../gpt-5-mini, https://openrouter.ai/openai/gpt-5-mini, and the model
#   table of labring/fastgpt-plugin PR 297 for gpt-5.1 and the chat variants);
#   the chat entries keep the longer gpt-5 prefixes from over-stating theirs.
# - Anthropic, https://platform.claude.com/docs/en/models/<model>/overview
#   (sonnet-4-5, haiku-4-5, opus-4-5: 200K, that is 200,000; opus-4-8 and
#   opus-5: 1M, that is 1,000,000). claude-opus-4-1 is covered by the
#   claude-opus-4 entry above (200,000).
# - Google, https://ai.google.dev/gemini-api/docs/models/<model> (Gemini API)
#   and https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/
#   gemini/<model> (Google Cloud): gemini-2.0-flash, gemini-2.0-flash-lite,
#   gemini-2.5-pro and gemini-2.5-flash-lite: 1,048,576 input tokens.
#   gemini-2.5-flash (1,048,576) as listed by Oracle's OCI page for the model,
#   https://docs.oracle.com/en-us/iaas/Content/generative-ai/google-gemini-2-5-flash.htm.
# Models whose figure no page confirmed are left out: discovery, the
# provider's ``context_windows=`` option, or a server's refusal gives theirs.
KNOWN_CONTEXT_WINDOWS: Mapping[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "gpt-5-chat": 128_000,
    "gpt-5.1": 400_000,
    "gpt-5.1-chat": 128_000,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "claude-3": 200_000,
    "claude-3-5": 200_000,
    "claude-3-7": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-opus-4": 200_000,
    "claude-opus-4-5": 200_000,
    "claude-opus-4-8": 1_000_000,
    "claude-opus-5": 1_000_000,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.0-flash-lite": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.5-flash-lite": 1_048_576,
}
"""Context windows of hosted models, in tokens, by model-name prefix."""


def known_context_window(
    model: str | None, windows: Mapping[str, int] = KNOWN_CONTEXT_WINDOWS
) -> int | None:
    """The window of ``model`` in ``windows`` (longest prefix), or None.

    ``windows`` is :data:`KNOWN_CONTEXT_WINDOWS` unless given. A prefix
    matches the whole name or a name continuing with ``-`` (dated versions
    such as ``gpt-4o-2024-08-06``), so ``gpt-4`` does not match ``gpt-4o``.
    Names are compared in lower case. An ``openai/`` or ``anthropic/``
    routing prefix is ignored (in the name looked up; an entry may keep one).
    """
    if not model:
        return None
    lowered = model.lower()
    if lowered in windows:
        return windows[lowered]
    name = lowered.rsplit("/", 1)[-1]
    best: tuple[int, int] | None = None
    for prefix, window in windows.items():
        prefix = prefix.lower()
        matches = name == prefix or name.startswith(prefix + "-")
        if matches and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best is not None else None


def _positive(value: Any) -> int | None:
    if not is_number(value) or value < 1:
        return None
    return int(value)


def _llama_cpp(props: Any) -> int | None:
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None


def _vllm(models: Any, model: str) -> int | None:
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return None
    entries = [entry for entry in data if isinstance(entry, dict)]
    for entry in entries:
        if entry.get("id") == model and "max_model_len" in entry:
            return _positive(entry["max_model_len"])
    if len(entries) == 1:
        return _positive(entries[0].get("max_model_len"))
    return None


def _ollama(show: Any) -> int | None:
    if not isinstance(show, dict):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
                return _positive(int(parts[1]))
    info = show.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length"):
                return _positive(value)
    return None


async def server_context_window(provider: HttpProvider, model: str) -> int | None:
    """The window an OpenAI-compatible server reports for ``model``, or None."""
    api = provider._api
    base = api.base_url
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    found = _llama_cpp(await api.probe_json("GET", root + "/props"))
    if found is None:
        found = _vllm(await api.probe_json("GET", base + "/models"), model)
    if found is None:
        found = _ollama(await api.probe_json("POST", root + "/api/show", {"model": model}))
    return found


def user_context_windows(provider: object) -> Mapping[str, int]:
    """The windows a provider was given (its ``context_windows``), through any wrapper."""
    for candidate in (provider, getattr(provider, "wrapped", None)):
        windows = getattr(candidate, "context_windows", None)
        if isinstance(windows, Mapping) and windows:
            return windows
    return {}


async def discover_context_window(provider: LlmProvider, model: str | None) -> int | None:
    """The context window of ``model`` on ``provider``, or None when nothing tells.

    First the provider's own ``context_windows`` (the option of the built-in
    providers; any provider with such a mapping is asked) together with the
    built-in :data:`KNOWN_CONTEXT_WINDOWS`: a given entry replaces the
    table's entry of the same name, and the longest matching name wins
    (``{"gpt-4o": 64000}`` changes ``gpt-4o``, not ``gpt-4o-mini``). Then,
    when neither names the model, what an OpenAI-compatible server reports
    (see the module docstring).
    """
    name = model or getattr(provider, "model", None)
    if not isinstance(name, str):
        name = None
    windows = {**KNOWN_CONTEXT_WINDOWS, **user_context_windows(provider)}
    known = known_context_window(name, windows)
    if known is not None:
        return known
    wrapped = getattr(provider, "wrapped", provider)
    if isinstance(wrapped, HttpProvider) and isinstance(name, str) and name:
        from agentcore.providers.openai import OpenAIProvider
        from agentcore.providers.openai_responses import OpenAIResponsesProvider

        if isinstance(wrapped, OpenAIProvider | OpenAIResponsesProvider):
            return await server_context_window(wrapped, name)
    return None
