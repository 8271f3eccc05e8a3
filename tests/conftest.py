from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import attrs
import pytest
from hypothesis import HealthCheck, settings

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore, MemoryStore, SqliteStore
from agentcore.testing import MockProvider

# No per-example deadline: on a machine at load 10 an example may take seconds; the property
# tests bound their work by max_examples instead.
settings.register_profile("agentcore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("agentcore")

# Tests must not depend on which plugins happen to be installed, nor reach the network.
os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")


@pytest.fixture
def agent() -> Agent:
    return Agent("helper", system_prompt="You are helpful.")


@pytest.fixture
def make_session(agent: Agent) -> Callable[..., AgentSession]:
    """Build a session on a MockProvider; plugins come only from ``plugins=``."""

    def make(
        provider: Any = None,
        *,
        session_id: str = "s1",
        store: MemoryStore | None = None,
        plugins: tuple[object, ...] = (),
        mode: Any = "full",
        readonly: bool = False,
        **settings: Any,
    ) -> AgentSession:
        builder = AgentBuilder().provider(provider or MockProvider(responder=lambda r: "ok"))
        builder.store(store or InMemoryStore()).load_plugins(False)
        for plugin in plugins:
            builder.plugin(plugin)
        for name, value in settings.items():
            builder.setting(name, value)
        return AgentSession(agent, session_id, builder.build(), mode, readonly=readonly)

    return make


# -- store engines: one contract, every engine -----------------------------------------------
# PostgreSQL tests run against the server named by AGENTCORE_TEST_POSTGRES_DSN, each test in a
# throw-away schema. Without the variable they skip; with AGENTCORE_REQUIRE_POSTGRES=1 (set by
# .ci/run) a missing variable, a missing psycopg or an unreachable server fails them instead.

POSTGRES_DSN_ENV = "AGENTCORE_TEST_POSTGRES_DSN"
REQUIRE_POSTGRES_ENV = "AGENTCORE_REQUIRE_POSTGRES"


def _postgres_unavailable(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_POSTGRES_ENV, "") not in ("", "0"):
        pytest.fail(f"{REQUIRE_POSTGRES_ENV} is set but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server_dsn() -> str:
    """The DSN of the test PostgreSQL server, checked once per run."""
    dsn = os.environ.get(POSTGRES_DSN_ENV, "")
    if not dsn:
        _postgres_unavailable(f"{POSTGRES_DSN_ENV} is not set")
    try:
        import psycopg
    except ImportError as exc:
        _postgres_unavailable(f'psycopg is not installed ({exc}): pip install ".[postgres]"')
    try:
        psycopg.connect(dsn, connect_timeout=10).close()
    except psycopg.Error as exc:
        _postgres_unavailable(f"the PostgreSQL server of {POSTGRES_DSN_ENV} is unreachable: {exc}")
    return dsn


POOLER_ENV = "AGENTCORE_TEST_POSTGRES_POOLER"
"""Set to 1 when the DSN is a pooler's in transaction mode (PgBouncer, as .ci/run starts it)."""


def behind_pooler() -> bool:
    """Whether the PostgreSQL tests run behind a pooler in transaction mode."""
    return os.environ.get(POOLER_ENV, "") not in ("", "0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "direct_postgres(why): needs the PostgreSQL server itself, not a pooler in front of it "
        "(skipped behind one)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if not behind_pooler():
        return
    for item in items:
        marker = item.get_closest_marker("direct_postgres")
        if marker is not None:
            why = marker.args[0] if marker.args else "it needs the server itself"
            item.add_marker(pytest.mark.skip(reason=f"behind a pooler: {why}"))


@pytest.fixture(scope="session", autouse=True)
def _no_prepared_statements_behind_a_pooler() -> Iterator[None]:
    """Behind a pooler every PostgresStore the tests open runs with ``prepare_threshold=None``.

    That is what a deployment behind PgBouncer in transaction mode sets (before 1.21 a
    prepared statement does not outlive its transaction there); the tests' own calls stay
    as they are, so the whole store suite runs unchanged behind the pooler.
    """
    if not behind_pooler():
        yield
        return
    from agentcore.stores._pg_pool import PostgresConnections

    defaults = PostgresConnections.__init__.__kwdefaults__
    assert defaults is not None
    saved = defaults["prepare_threshold"]
    defaults["prepare_threshold"] = None
    try:
        yield
    finally:
        defaults["prepare_threshold"] = saved


@pytest.fixture
def postgres_dsn(postgres_server_dsn: str) -> Iterator[str]:
    """A DSN whose search_path is a new, empty schema, dropped after the test.

    Behind a pooler (which passes no ``options`` to the server, so no search_path) it is a
    new, empty database instead, dropped after the test.
    """
    import psycopg
    from psycopg.conninfo import make_conninfo

    name = f"agentcore_test_{uuid.uuid4().hex[:16]}"
    if behind_pooler():
        with psycopg.connect(postgres_server_dsn, autocommit=True, prepare_threshold=None) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield make_conninfo(postgres_server_dsn, dbname=name)
        finally:
            with psycopg.connect(
                postgres_server_dsn, autocommit=True, prepare_threshold=None
            ) as admin:
                admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        return
    with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield make_conninfo(postgres_server_dsn, options=f"-c search_path={name}")
    finally:
        with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{name}" CASCADE')


@attrs.define
class StoreEngine:
    """One store engine under test: how to open (and reopen) a store on one database."""

    name: str
    location: str = ""
    """The SQLite file or the PostgreSQL DSN; empty for the in-memory engine."""

    @property
    def persistent(self) -> bool:
        """Whether a second store opened on the location sees what the first one wrote."""
        return self.name != "memory"

    def open(self) -> MemoryStore:
        """A new store on the engine's database (for ``memory``, a new empty store)."""
        if self.name == "memory":
            return InMemoryStore()
        if self.name == "sqlite":
            return SqliteStore(self.location)
        from agentcore.stores import PostgresStore

        return PostgresStore(self.location)


STORE_ENGINES = ("memory", "sqlite", "postgres")


def make_store_engine(request: pytest.FixtureRequest, name: str, tmp_path: Path) -> StoreEngine:
    """The engine ``name`` on a fresh database for the requesting test."""
    if name == "memory":
        return StoreEngine("memory")
    if name == "sqlite":
        return StoreEngine("sqlite", str(tmp_path / "store.db"))
    return StoreEngine("postgres", request.getfixturevalue("postgres_dsn"))


@pytest.fixture(params=STORE_ENGINES)
def store_engine(request: pytest.FixtureRequest, tmp_path: Path) -> StoreEngine:
    """Each store engine in turn, on a fresh database."""
    return make_store_engine(request, request.param, tmp_path)


@pytest.fixture(params=STORE_ENGINES[1:])
def shared_store_engine(request: pytest.FixtureRequest, tmp_path: Path) -> StoreEngine:
    """Each engine that several processes can share (SQLite, PostgreSQL), on a fresh database."""
    return make_store_engine(request, request.param, tmp_path)


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """Makes a file or folder read-only for this process, root included; undone after."""
    made: list[tuple[Path, int]] = []

    def make(path: Path) -> None:
        mode = path.stat().st_mode
        if os.geteuid() != 0:
            path.chmod(0o555 if path.is_dir() else 0o444)
        else:
            if shutil.which("chattr") is None:
                pytest.skip("running as root without chattr: no way to make a path read-only")
            done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
            if done.returncode != 0:
                pytest.skip(f"chattr +i is not supported here: {done.stderr!r}")
        made.append((path, mode))

    yield make
    for path, mode in reversed(made):
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=False)
        path.chmod(mode)
