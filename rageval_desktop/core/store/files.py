"""The project file below the Project object: its header read without SQLite, read-only connections, the
schema versions this app opens, and the words for restoring a backup."""

from __future__ import annotations

import getpass
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rageval_desktop.core.base.errors import NeedsMigration, ProjectRefused, RagevalError
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store.schema import APPLICATION_ID, SCHEMA_VERSION

BUSY_TIMEOUT_MS = 10_000
SQLITE_HEADER = b"SQLite format 3\x00"
EXTENSION = ".rageval"


def default_actor() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "unknown"


def restore_hint(path: Path) -> str:
    """What every message that suggests restoring says: the command and where the backups are."""
    folder = backups.backup_dir(path)
    found = backups.list_backups(path)
    if not found:
        return f"no backups exist in {folder}"
    return (f"restore a backup with: rageval restore {path} BACKUP (or File → Restore from backup…); "
            f"{len(found)} backup(s) in {folder}, newest {found[-1].name}")


def read_header(path: Path) -> tuple[int, int]:
    """(application_id, user_version) from the file's 100-byte header, without SQLite: refusing a file must
    never create `-wal`/`-shm` files beside it or change it in any way."""
    if not path.exists():
        raise ProjectRefused(f"{path}: no such file")
    if not path.is_file():
        raise ProjectRefused(f"{path}: not a file")
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise ProjectRefused(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not header:
        raise ProjectRefused(f"{path}: the file is empty, not a RAGEval project")
    if header[:len(SQLITE_HEADER)] != SQLITE_HEADER:
        raise ProjectRefused(f"{path}: not a RAGEval project (not an SQLite database)")
    if len(header) < 100:
        raise ProjectRefused(f"{path}: the file is damaged (shorter than an SQLite header); {restore_hint(path)}")
    version = int.from_bytes(header[60:64], "big")
    app_id = int.from_bytes(header[68:72], "big")
    if (app_id != APPLICATION_ID or version > SCHEMA_VERSION) and Path(f"{path}-wal").exists():
        # page 1 may be newer in the WAL than in the file (not checkpointed yet): ask SQLite, read-only
        try:
            conn = connect_read_only(path)
            try:
                app_id = conn.execute("PRAGMA application_id").fetchone()[0]
                version = conn.execute("PRAGMA user_version").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise refused_because(path, exc) from None
    if app_id != APPLICATION_ID:
        raise ProjectRefused(
            f"{path}: not a RAGEval project (it is an SQLite database of another application, "
            f"application_id {app_id:#x})")
    refusal = _version_refusal(path, version, migrate=True)
    if refusal is not None:
        raise refusal
    return app_id, version


def _version_refusal(path: Path, version: int, *, migrate: bool) -> RagevalError | None:
    """Why a file of this schema version cannot be opened (None: it can): newer than this app, or older and not to
    be migrated now."""
    if version > SCHEMA_VERSION:
        return ProjectRefused(f"{path}: made by a newer RAGEval Desktop (schema {version}, this app reads up to "
                              f"{SCHEMA_VERSION}); update the app to open it")
    if version < SCHEMA_VERSION and not migrate:
        return NeedsMigration(f"{path}: schema {version} needs migrating to {SCHEMA_VERSION}; open it once for "
                              "writing (the app, or any rageval command that changes it) to migrate (a backup is "
                              "taken first)", version=version)
    return None


WRITER_CACHE_KIB = 64 * 1024   # the writer's page cache: a million-row run's indexes stay in memory as it grows
READER_CACHE_KIB = 16 * 1024   # each reader's (one per thread); caches grow only as pages are read


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write and writes nothing, not even beside the file (issue 74: read commands left
    `-wal`/`-shm` files beside a committed project, and on a read-only folder or medium failed as "damaged").

    With no `-wal` beside the file — nobody has it open and no crashed session left committed pages in a WAL — it
    is opened immutable: no sidecar file, no lock, so it reads on a read-only folder or medium too
    (`is_immutable` says so; `Project.reader` reconnects once a writer's `-wal` appears). With a `-wal`, read-only:
    it sees the WAL's committed pages and respects the writer's locks; where SQLite cannot do that without writing
    (a read-only folder its `-shm` cannot be made in), it reads a private copy of the file and its WAL in a
    temporary folder, made once per state of the file and WAL (`_private_copy`)."""
    if not Path(f"{path}-wal").exists():
        return _connect_uri(path, "immutable=1")
    conn = _connect_uri(path, "mode=ro")
    try:
        with decodable(conn):
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError as exc:
        if not denied(exc):
            raise
        conn.close()
        return _connect_uri(_private_copy(path), "mode=ro")
    return conn


class ReadConnection(sqlite3.Connection):
    """A read-only connection that knows how it was opened (`immutable`: with no `-wal` beside the file)."""
    immutable = False


def is_immutable(conn: sqlite3.Connection) -> bool:
    """Whether `connect_read_only` opened this connection immutable (no `-wal` was beside the file then)."""
    return bool(getattr(conn, "immutable", False))


def _connect_uri(path: Path, mode: str) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                           isolation_level=None, check_same_thread=False, factory=ReadConnection)
    conn.immutable = mode == "immutable=1"
    with decodable(conn):
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute(f"PRAGMA cache_size = -{READER_CACHE_KIB}")
    return conn


DENIED = ("unable to open database file", "readonly database", "read-only", "permission denied",
          "access permission", "authorization denied")


def denied(exc: BaseException) -> bool:
    """Whether an SQLite error is one of access (a read-only folder or medium, a file not this user's to open),
    not of damage: said as such, never with a backup to restore."""
    return isinstance(exc, sqlite3.OperationalError) and any(w in str(exc).lower() for w in DENIED)


def refused_because(path: Path, exc: BaseException) -> ProjectRefused:
    """The refusal for an SQLite error met opening a project: access in words of access (nothing was changed,
    nothing to restore), anything else as damage with how to restore."""
    if denied(exc):
        return ProjectRefused(f"{path}: cannot be opened here ({exc}): the file or its folder is read-only or not "
                              "this user's to open — the file is not damaged and nothing was changed; read it "
                              "where it can be read, or copy it to a folder you can write")
    return ProjectRefused(f"{path}: the file is damaged ({exc}); {restore_hint(path)}")


_COPIES: dict[tuple[str, int, int, int], Path] = {}   # (file, its size and mtime, its WAL's size) -> the copy


def _private_copy(path: Path) -> Path:
    """The file and its WAL copied to a temporary folder of this process's (removed at exit): what a read-only
    open reads when SQLite cannot read the WAL in place without writing beside the file. One copy per state of the
    two: every reader thread of a project opened there reads the same copy, not a copy each."""
    import atexit
    import shutil
    import tempfile

    wal = Path(f"{path}-wal")
    stat = path.stat()
    state = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, wal.stat().st_size if wal.exists() else -1)
    if state in _COPIES and _COPIES[state].exists():
        return _COPIES[state]
    folder = Path(tempfile.mkdtemp(prefix="rageval-read-"))
    atexit.register(shutil.rmtree, folder, True)
    copy = folder / path.name
    shutil.copyfile(path, copy)
    if wal.exists():
        shutil.copyfile(wal, Path(f"{copy}-wal"))
    _COPIES[state] = copy
    return copy


@contextmanager
def decodable(conn: sqlite3.Connection) -> Iterator[None]:
    """SQLite reads the schema at a connection's first statement; a schema whose text is not UTF-8 (one flipped
    byte in a name) makes Python's sqlite3 raise UnicodeDecodeError while it words SQLite's error, which no
    `except sqlite3.Error` caught: check, info and restore stopped with an internal error. Here it is the
    DatabaseError it is (the connection is closed)."""
    try:
        yield
    except UnicodeDecodeError:
        conn.close()
        raise sqlite3.DatabaseError("malformed database schema (its text is not valid UTF-8)") from None
