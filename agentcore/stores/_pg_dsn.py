"""Connection strings of :class:`~agentcore.stores.PostgresStore`, shown without passwords."""

from __future__ import annotations

import re

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agentcore.errors import ConfigError
from agentcore.stores._pg_schema import one_line


def describe_dsn(dsn: str) -> str:
    """``dsn`` without its password, for messages and logs."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        return "an unparsable DSN"
    params.pop("password", None)
    return make_conninfo("", **params) or "the default PostgreSQL server"


_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@")
_PARAM_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S+)")


def hide_password(text: str) -> str:
    """``text`` with any password of a URL or ``password=`` parameter replaced by ``***``."""
    return _PARAM_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))


def parse_dsn(dsn: str) -> str:
    """``dsn`` once libpq parses it; an empty or unparsable one is a :class:`ConfigError`."""
    if not dsn.strip():
        raise ConfigError(
            "PostgresStore needs a DSN such as 'postgresql://user@host/dbname', got an empty string"
        )
    try:
        conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        # libpq may quote the whole DSN back, password included.
        raise ConfigError(
            f"PostgresStore cannot parse its DSN: {hide_password(one_line(exc))}"
        ) from None
    return dsn
