"""Which change notices a PostgreSQL store's head cache trusts (no server needed)."""

from __future__ import annotations

from agentcore.stores._pg_heads import HeadCache
from agentcore.stores.base import SlotHead

HEADS = {"default": SlotHead(1, 4)}


def _written(cache: HeadCache, pid: int) -> None:
    """One committed write of session "s" on backend ``pid``."""
    entry = cache.begin("s", pid)
    assert entry is not None
    cache.end(entry, HEADS)


def _listening() -> HeadCache:
    cache = HeadCache()
    cache.start_listening("app")
    return cache


def test_a_write_is_trusted_once_its_own_notice_is_back() -> None:
    cache = _listening()
    _written(cache, 11)
    assert cache.lookup("s") is None
    cache.notice(11, "app.s")
    assert cache.lookup("s") == HEADS


def test_the_last_writes_late_notice_from_another_backend_is_passed_over() -> None:
    # A pool hands out its connections in turn: the next write runs on another backend
    # before the notice of the one before has come back.
    cache = _listening()
    _written(cache, 11)
    _written(cache, 12)
    cache.notice(11, "app.s")  # the first write's: neither drops nor confirms the second
    assert cache.lookup("s") is None
    cache.notice(12, "app.s")
    assert cache.lookup("s") == HEADS


def test_the_last_writes_late_notice_on_the_same_backend_does_not_confirm() -> None:
    cache = _listening()
    _written(cache, 11)
    _written(cache, 11)
    cache.notice(11, "app.s")  # the first write's
    assert cache.lookup("s") is None
    cache.notice(11, "app.s")
    assert cache.lookup("s") == HEADS


def test_several_late_notices_on_several_backends_are_all_passed_over() -> None:
    cache = _listening()
    for pid in (11, 12, 11, 13):
        _written(cache, pid)
    for pid in (11, 12, 11):
        cache.notice(pid, "app.s")
        assert cache.lookup("s") is None
    cache.notice(13, "app.s")
    assert cache.lookup("s") == HEADS


def test_another_writers_notice_drops_the_heads() -> None:
    cache = _listening()
    _written(cache, 11)
    _written(cache, 12)
    cache.notice(99, "app.s")  # a backend none of this store's writes used
    cache.notice(11, "app.s")
    cache.notice(12, "app.s")
    assert cache.lookup("s") is None
    trusted = _listening()
    _written(trusted, 11)
    trusted.notice(11, "app.s")
    trusted.notice(11, "app.s")  # after its own: another write, whoever made it
    assert trusted.lookup("s") is None


def test_a_write_that_failed_leaves_no_notice_to_wait_for() -> None:
    cache = _listening()
    failed = cache.begin("s", 11)
    assert failed is not None
    cache.end(failed, None)
    _written(cache, 12)
    cache.notice(12, "app.s")
    assert cache.lookup("s") == HEADS


def test_a_write_under_way_when_the_next_began_is_not_waited_for() -> None:
    # Another session object's write of the same session, still under way: if it fails,
    # no notice of it ever comes, and no later write may wait for one.
    cache = _listening()
    under_way = cache.begin("s", 11)
    assert under_way is not None
    _written(cache, 12)
    cache.end(under_way, None)
    _written(cache, 11)  # the failed write's backend, used again
    cache.notice(12, "app.s")
    cache.notice(11, "app.s")
    assert cache.lookup("s") == HEADS
