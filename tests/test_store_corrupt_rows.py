"""A damaged stored row is named (session, slot, index or key), never shown.

Its text may be a user's message, and errors go into logs: neither the exception, nor its
chained causes, nor its traceback as a log line prints it.
"""

from __future__ import annotations

import logging
import sqlite3
import traceback
from pathlib import Path
from typing import Any

import pytest

from agentcore.errors import CorruptDataError
from agentcore.messages import Message
from agentcore.stores import MessageAppend, SqliteStore, StoreWrite

SECRET = "SECRET-PATIENT-NOTES"


def _logged(exc: BaseException, caplog: pytest.LogCaptureFixture) -> str:
    """Everything printed of ``exc``: message, repr, chain, and its log line with traceback."""
    with caplog.at_level(logging.ERROR):
        logging.getLogger("test").error("load failed: %s", exc, exc_info=exc)
    return "\n".join([str(exc), repr(exc), "".join(traceback.format_exception(exc)), caplog.text])


async def _filled(path: Path) -> None:
    secret = Message.user(f"{SECRET} " * 4)
    async with SqliteStore(path) as store:
        await store.write(
            StoreWrite(
                "sess",
                appends={
                    "main": MessageAppend(
                        0,
                        [Message.user("hello"), secret, Message.user("x")],
                    )
                },
            )
        )
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()


async def test_a_damaged_sqlite_page_names_the_row_not_its_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "store.db"
    await _filled(path)
    data = bytearray(path.read_bytes())
    at = data.find(SECRET.encode())
    assert at > 0
    data[at + 6] = 0xFF  # a flipped byte: no longer UTF-8
    path.write_bytes(bytes(data))
    async with SqliteStore(path) as store:
        with pytest.raises(CorruptDataError) as info:
            await store.load_messages("sess", "main")
        assert await store.load_messages("sess", "main", 2) == [Message.user("x")]
    message = str(info.value)
    assert "message 1 of slot 'main' in session 'sess' is not valid UTF-8" in message
    assert str(path) in message
    printed = _logged(info.value, caplog)
    assert "SECRET" not in printed
    assert "PATIENT" not in printed


@pytest.mark.parametrize(
    "body",
    [
        f'{{"role":"{SECRET}","content":[{{"type":"text","text":"{SECRET}"}}]}}',
        f'{{"role":"user","content":[{{"type":"{SECRET}","text":"{SECRET}"}}]}}',
        f'{{"role":"user","content":"{SECRET}"',
        f'["{SECRET}"]',
        f'{{"role":"user","content":[{{"type":"text","text":"{SECRET}"}}],"tokens":"{SECRET}"',
    ],
)
async def test_a_malformed_row_names_the_row_not_its_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, body: str
) -> None:
    path = tmp_path / "store.db"
    await _filled(path)
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE messages SET body = ? WHERE idx = 1", (body,))
    raw.close()
    async with SqliteStore(path) as store:
        with pytest.raises(
            CorruptDataError, match="message 1 of slot 'main' in session 'sess'"
        ) as info:
            await store.load_messages("sess", "main")
    assert "content not shown" in str(info.value)
    assert "SECRET" not in _logged(info.value, caplog)


async def test_postgres_malformed_rows_name_the_row_not_its_text(
    postgres_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    psycopg: Any = pytest.importorskip("psycopg")
    from agentcore.stores import PostgresStore

    msgs = [Message.user("a")]
    async with PostgresStore(postgres_dsn) as store:
        await store.write(
            StoreWrite("sess", appends={"main": MessageAppend(0, msgs)}, data={"k": 1})
        )
        with psycopg.connect(postgres_dsn, autocommit=True) as raw:
            raw.execute(
                "UPDATE agentcore_messages SET body = %s",
                (f'{{"role":"{SECRET}","content":[]}}',),
            )
            raw.execute("UPDATE agentcore_session_data SET value = %s", (f'{{"{SECRET}": ',))
        with pytest.raises(CorruptDataError, match="message 0 of slot 'main'") as first:
            await store.load_messages("sess", "main")
        with pytest.raises(CorruptDataError, match="data 'k' of session 'sess'") as second:
            await store.get_data("sess", "k")
    for info in (first, second):
        assert "SECRET" not in _logged(info.value, caplog)
