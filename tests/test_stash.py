"""Plugins keep per-session and per-bundle state in a typed stash."""

from __future__ import annotations

import gc
import weakref

import pytest

from agentcore import Agent, AgentBuilder, AgentSession
from agentcore.stash import Stash, StashKey
from agentcore.testing import MockProvider

COUNT = StashKey[int]("count")
NAMES = StashKey[list[str]]("names")


def test_keys_are_their_own_and_typed() -> None:
    stash = Stash()
    other = StashKey[int]("count")  # same label, another key
    stash[COUNT] = 1
    assert stash[COUNT] == 1 and other not in stash
    assert stash.get(other, None) is None
    assert stash.setdefault(NAMES, []) == [] and stash.setdefault(NAMES, ["x"]) == []
    assert len(stash) == 2
    del stash[COUNT]
    with pytest.raises(KeyError, match="nothing stored under StashKey\\('count'\\)"):
        stash[COUNT]


def test_each_session_and_bundle_has_its_own_stash_that_lives_as_long_as_it() -> None:
    bundle = AgentBuilder().provider(MockProvider()).load_plugins(False).build()
    first, second = AgentSession(Agent("a"), "s1", bundle), AgentSession(Agent("a"), "s2", bundle)
    first.stash[COUNT] = 1
    assert COUNT not in second.stash
    bundle.stash[COUNT] = 7
    assert bundle.stash[COUNT] == 7 and first.stash[COUNT] == 1

    class Held:
        pass

    held = Held()
    probe = weakref.ref(held)
    key = StashKey[Held]()
    first.stash[key] = held
    del held, first
    gc.collect()
    assert probe() is None  # the state went with its session
