"""Opening, creating and writing a project file.

Why plain sqlite3 here: `sqlite_utils.db` imports pandas when it is installed (~0.4 s), and the GUI must show
its first window before pandas loads. So opening, checking and reading use sqlite3; bulk writes get a
sqlite-utils `Database` over the same writer connection lazily (`Project.utils`).

Concurrency: WAL, so readers never block the writer. In a process, every write goes through one lane
(`Project.write`: a lock + one connection + BEGIN IMMEDIATE); another process waits on the busy timeout.
Readers get a connection per thread; a connection is never shared across threads.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.errors import ProjectExists, ProjectRefused
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store.schema import (
    APPLICATION_ID,
    DEFAULT_SLICES,
    MIGRATIONS,
    SCHEMA_VERSION,
)

if TYPE_CHECKING:
    import sqlite_utils

BUSY_TIMEOUT_MS = 10_000
SQLITE_HEADER = b"SQLite format 3\x00"
EXTENSION = ".rageval"


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_actor() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "unknown"


def inspect_file(path: Path) -> tuple[int, int]:
    """Refuse anything that is not a healthy project of a schema we understand; never write to it.

    Returns (application_id, user_version). Raises ProjectRefused with a message fit for the user.
    """
    if not path.exists():
        raise ProjectRefused(f"{path}: no such file")
    if not path.is_file():
        raise ProjectRefused(f"{path}: not a file")
    with path.open("rb") as fh:
        header = fh.read(len(SQLITE_HEADER))
    if not header:
        raise ProjectRefused(f"{path}: the file is empty, not a RAGEval project")
    if header != SQLITE_HEADER:
        raise ProjectRefused(f"{path}: not a RAGEval project (not an SQLite database)")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise ProjectRefused(f"{path}: cannot be opened: {exc}") from exc
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise ProjectRefused(
                f"{path}: not a RAGEval project (it is an SQLite database of another application, "
                f"application_id {app_id:#x})")
        if version > SCHEMA_VERSION:
            raise ProjectRefused(
                f"{path}: made by a newer RAGEval Desktop (schema {version}, this app reads up to "
                f"{SCHEMA_VERSION}); update the app to open it")
        rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        if rows != ["ok"]:
            raise ProjectRefused(f"{path}: the file is damaged (quick_check: {'; '.join(rows[:3])}); "
                                 "restore a backup from the .backups folder beside it")
    except sqlite3.DatabaseError as exc:
        raise ProjectRefused(f"{path}: the file is damaged ({exc}); restore a backup") from exc
    finally:
        conn.close()
    return app_id, version


class Project:
    """An open project file. Thread-safe: call `reader()` per thread and `write()` from any thread."""

    def __init__(self, path: Path, *, actor: str | None = None) -> None:
        self.path = Path(path)
        self.actor = actor or default_actor()
        self._write_lock = threading.RLock()
        self._writer: sqlite3.Connection | None = None
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._utils: sqlite_utils.Database | None = None
        self.changes_since_backup = 0
        self.last_backup_at = 0.0
        self.listeners: list[Any] = []  # callables(op_name, changed) told after each committed write

    # --- opening -------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, *, name: str | None = None, actor: str | None = None) -> Project:
        path = Path(path)
        if path.exists():
            raise ProjectExists(f"{path}: already exists; open it, or choose another name")
        if not path.parent.exists():
            raise ProjectRefused(f"{path.parent}: no such folder")
        project = cls(path, actor=actor)
        try:
            conn = project._connect()
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            project._writer = conn
            project._migrate(from_version=0)
            with project.write("create project") as w:
                w.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
                    ("name", name or path.stem), ("created_at", utcnow()), ("created_by", project.actor)])
                w.executemany("INSERT INTO slices (name, position) VALUES (?, ?)",
                              [(s, i) for i, s in enumerate(DEFAULT_SLICES)])
        except BaseException:  # never leave a half-made project behind
            project.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            raise
        project.changes_since_backup = 0  # nothing a backup would save yet
        return project

    @classmethod
    def open(cls, path: str | Path, *, actor: str | None = None, migrate: bool = True) -> Project:
        path = Path(path)
        _, version = inspect_file(path)
        if version < SCHEMA_VERSION and not migrate:
            raise ProjectRefused(f"{path}: schema {version} needs migrating to {SCHEMA_VERSION}")
        project = cls(path, actor=actor)
        project._writer = project._connect()
        if version < SCHEMA_VERSION:
            project.backup(f"pre-migration-v{version}-to-v{SCHEMA_VERSION}")
            project._migrate(from_version=version)
        return project

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # durable across process kills in WAL mode
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _migrate(self, from_version: int) -> None:
        conn = self._writer
        assert conn is not None
        with self._write_lock:
            for migration in MIGRATIONS:
                if migration.version <= from_version:
                    continue
                try:
                    conn.executescript(
                        f"BEGIN IMMEDIATE;\n{migration.sql}\nPRAGMA user_version = {migration.version};\n"
                        f"INSERT INTO audit_log (at, actor, action, entity, details) VALUES "
                        f"('{utcnow()}', 'rageval', 'migrate', 'schema', "
                        f"json_object('to', {migration.version}, 'what', '{migration.description}'));\n"
                        "COMMIT;")
                except sqlite3.Error:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise

    # --- connections ---------------------------------------------------------------------------
    def reader(self) -> sqlite3.Connection:
        """A read connection owned by the calling thread (sees every committed write)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def write(self, op: str, *, changed: tuple[str, ...] = ()) -> Iterator[sqlite3.Connection]:
        """One named operation = one transaction on the single writer lane.

        `changed` names what the op touched (e.g. "golden", "runs"); listeners refresh from it.
        """
        if self._writer is None:
            raise RuntimeError("project is closed")
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self.changes_since_backup += 1
        for listener in list(self.listeners):
            listener(op, changed)

    @property
    def utils(self) -> sqlite_utils.Database:
        """sqlite-utils over the writer connection; use only inside `write()`."""
        if self._utils is None:
            import sqlite_utils

            self._utils = sqlite_utils.Database(self._writer)
        return self._utils

    def audit(self, conn: sqlite3.Connection, action: str, entity: str | None = None,
              entity_id: str | None = None, **details: Any) -> None:
        conn.execute(
            "INSERT INTO audit_log (at, actor, action, entity, entity_id, details) VALUES (?, ?, ?, ?, ?, ?)",
            (utcnow(), self.actor, action, entity, entity_id, json.dumps(details, default=str)))

    # --- facts ---------------------------------------------------------------------------------
    def schema_version(self) -> int:
        return self.reader().execute("PRAGMA user_version").fetchone()[0]

    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.reader().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def golden_fingerprint(self, conn: sqlite3.Connection | None = None) -> str:
        """Changes whenever any golden row changes: lets a run say "golden set changed since"."""
        conn = conn or self.reader()
        digest = hashlib.sha256()
        for gid, rev in conn.execute("SELECT id, revision FROM golden_rows ORDER BY id"):
            digest.update(f"{gid}\x00{rev}\x01".encode())
        return digest.hexdigest()[:16]

    # --- backups -------------------------------------------------------------------------------
    def backup(self, reason: str) -> Path:
        """Online backup (consistent even while others write), rotated."""
        with self._write_lock:
            src = self._writer or self._connect()
            out = backups.backup_to_rotation(src, self.path, reason)
        self.changes_since_backup = 0
        self.last_backup_at = time.monotonic()
        return out

    def backup_if_changed(self, min_interval_s: float = 600.0) -> Path | None:
        """The periodic backup: only when something changed and not more often than the interval."""
        if self.changes_since_backup == 0:
            return None
        if self.last_backup_at and time.monotonic() - self.last_backup_at < min_interval_s:
            return None
        return self.backup("periodic")

    def close(self) -> None:
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        self._local = threading.local()
        with self._write_lock:
            if self._writer is not None:
                self._writer.execute("PRAGMA optimize")
                self._writer.close()
                self._writer = None
                self._utils = None

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
