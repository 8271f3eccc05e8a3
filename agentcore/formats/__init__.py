"""Histories in and out: agentcore messages to and from other libraries' formats.

Each converter checks what it reads or writes with :func:`check_history`
and raises :class:`~agentcore.errors.ConfigError` naming the index of the
first message at fault:

- :func:`from_openai` / :func:`to_openai`: OpenAI Chat Completions message dicts.
- :func:`from_anthropic` / :func:`to_anthropic`: Anthropic Messages dicts, the
  system prompt apart.
- :func:`from_langchain` / :func:`to_langchain`: LangChain messages (needs
  ``langchain-core``, imported only when called).
"""

from agentcore.formats._check import check_history
from agentcore.formats.anthropic import from_anthropic, to_anthropic
from agentcore.formats.langchain import from_langchain, to_langchain
from agentcore.formats.openai import from_openai, to_openai

__all__ = [
    "check_history",
    "from_anthropic",
    "from_langchain",
    "from_openai",
    "to_anthropic",
    "to_langchain",
    "to_openai",
]
