"""Adapters for other agent libraries: each imports its library only when used.

- :mod:`agentcore_autosummary.adapters.openai_agents`: a ``Session`` of the
  OpenAI Agents SDK that compacts the history it returns
  (``pip install openai-agents``).
- :mod:`agentcore_autosummary.adapters.langgraph`: a ``pre_model_hook`` for
  LangGraph's prebuilt agent that compacts the messages before each model call
  (``pip install langgraph``).
- :mod:`agentcore_autosummary.adapters.langchain`: a LangChain v1 agent
  middleware for ``create_agent`` that does the same (``pip install langchain``).
- :mod:`agentcore_autosummary.adapters.summarizers`: the app's own model (an
  OpenAI client, an Agents SDK model, a LangChain chat model, a callable) as
  the compactor's summarizer.
"""
