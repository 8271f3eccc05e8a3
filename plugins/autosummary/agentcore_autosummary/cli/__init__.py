"""The command line autosummary adds to ``agentcore``.

``agentcore demo`` (:mod:`.demo_command`), ``agentcore sessions compact``
(:mod:`.sessions_compact`), and in ``agentcore chat`` the summary options
(:mod:`.options`), the ``/compact`` and ``/summary`` commands and the notice
of each applied summary (:mod:`.chat`). The plugin's hook implementations of
the core's CLI hooks call the functions here.
"""
