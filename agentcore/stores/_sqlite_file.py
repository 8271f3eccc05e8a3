"""What :class:`~agentcore.stores.SqliteStore` reads from SQLite's errors and its file."""

from __future__ import annotations

import os
import sqlite3

from agentcore.errors import StoreError, StoreTimeoutError

_FILE_MODE = 0o600

_SQLITE_NOTADB = 26


_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether ``exc`` says another connection holds the lock (SQLITE_BUSY or _LOCKED)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "database is locked" in str(exc) or "database table is locked" in str(exc)


class UndecodableText(Exception):
    """A stored text value is not valid UTF-8 (a damaged page); carries no part of it."""


def strict_text(raw: bytes) -> str:
    """Decode a stored text; sqlite3's own error would quote the whole value, so not that."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    raise UndecodableText  # outside the except: no chained error holds the bytes


_SQLITE_READONLY = 8


def is_readonly(exc: sqlite3.OperationalError) -> bool:
    """Whether ``exc`` says the file cannot be written (SQLITE_READONLY)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return bool(code & 0xFF == _SQLITE_READONLY)
    return "readonly database" in str(exc)


_SQLITE_CANTOPEN = 14
_SQLITE_READONLY_DIRECTORY = 8 | (6 << 8)


def access_problem(path: str, exc: sqlite3.Error) -> str | None:
    """What stops this process from using the file ``path``, as ``exc`` shows it; None if nothing.

    SQLite reports a file it may not write as SQLITE_READONLY ("attempt to
    write a readonly database"), a folder where it may not create the
    ``-wal`` and ``-shm`` files a WAL database needs (even to be read) as
    SQLITE_READONLY_DIRECTORY (the same words) or, where the folder cannot
    be written even by root (``chattr +i``), SQLITE_CANTOPEN ("unable to open
    database file"), which also stands for a file or folder it may not read.
    The text names which of them it is, and the path. The file system is
    asked which one cannot be read or written, as Python 3.10's sqlite3
    gives no error code.
    """
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    text = str(exc)
    if code is None:
        if "readonly database" in text:
            code = _SQLITE_READONLY
        elif "unable to open database file" in text:
            code = _SQLITE_CANTOPEN
        else:
            return None
    if code & 0xFF not in (_SQLITE_READONLY, _SQLITE_CANTOPEN):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    exists = os.path.exists(path)
    if code & 0xFF == _SQLITE_CANTOPEN:
        if exists and not os.access(path, os.R_OK):
            return f"{path} cannot be read by this process (permission denied)"
        if not os.access(folder, os.X_OK):
            return f"the folder {folder} cannot be entered by this process (permission denied)"
    file_writable = not exists or os.access(path, os.W_OK)
    if code == _SQLITE_READONLY_DIRECTORY or (
        file_writable and not os.access(folder, os.W_OK | os.X_OK)
    ):
        return (
            f"the folder {folder} is read-only for this process (permission denied): "
            f"SQLite must create {name}-wal and {name}-shm beside {path} to use it, "
            "even to read it; make the folder writable, or copy the file to one that is"
        )
    if code & 0xFF == _SQLITE_READONLY or not file_writable:
        also = "" if os.access(folder, os.W_OK) else f", and its folder {folder} too"
        return (
            f"{path} is read-only for this process (permission denied: {text}); make the "
            f"file (and its {name}-wal and {name}-shm, if there){also} writable"
        )
    return (
        f"{path} cannot be opened ({text}): check that this process may read and "
        "write the file and its folder"
    )


def why_failed(path: str, exc: sqlite3.Error) -> str:
    """``exc`` as a message says it: the permission problem it stands for, when it is one."""
    return access_problem(path, exc) or str(exc)


def is_not_a_database(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` says the file is no SQLite database (SQLITE_NOTADB)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    return code == _SQLITE_NOTADB or "not a database" in str(exc)


def first_undecodable(
    conn: sqlite3.Connection, session_id: str, slot_id: str, start: int, end: int
) -> int | str:
    """The index of the first message in ``start:end`` whose text does not decode."""
    indices = conn.execute(
        "SELECT idx FROM messages WHERE session_id = ? AND slot_id = ? AND idx >= ? AND idx < ? "
        "ORDER BY idx",
        (session_id, slot_id, start, end),
    ).fetchall()
    for (index,) in indices:
        try:
            conn.execute(
                "SELECT body FROM messages WHERE session_id = ? AND slot_id = ? AND idx = ?",
                (session_id, slot_id, index),
            ).fetchone()
        except UndecodableText:
            return int(index)
    return "unknown"


def create_private(path: str) -> None:
    """Create the database file readable and writable by its owner only, whatever the umask.

    SQLite gives the ``-wal`` and ``-shm`` files it creates the mode of the
    database file. An existing file is left as it is.
    """
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, _FILE_MODE)
    except FileExistsError:
        return
    except OSError as exc:
        raise StoreError(f"cannot create SQLite store {path}: {exc}") from exc
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, _FILE_MODE)  # the umask may have removed bits, never added
    finally:
        os.close(fd)


def write_refusal(path: str, exc: sqlite3.Error, wait: float) -> StoreError:
    """Why ``path`` could not be written: locked for ``wait`` seconds, read-only, or ``exc``."""
    if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
        return StoreTimeoutError(
            f"SQLite store {path} is locked: another connection held its "
            f"write lock for {wait:g} s, so a turn could not be stored now"
        )
    if isinstance(exc, sqlite3.OperationalError) and is_readonly(exc):
        return StoreError(
            f"SQLite store {path} is read-only ({exc}), so no turn could be "
            "stored; make the file and its directory writable by this process"
        )
    return StoreError(f"SQLite store {path} cannot be written: {exc}")
