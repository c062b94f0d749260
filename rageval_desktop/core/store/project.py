"""Opening, creating and writing a project file.

Why plain sqlite3 here: `sqlite_utils.db` imports pandas when it is installed (~0.4 s), and the GUI must show
its first window before pandas loads. So opening, checking and reading use sqlite3; bulk writes get a
sqlite-utils `Database` over the same writer connection lazily (`Project.utils`).

Concurrency: WAL, so readers never block the writer. In a process, every write goes through one lane
(`Project.write`: a lock + one connection + BEGIN IMMEDIATE); another process waits on the busy timeout.
Readers get a connection per thread; a connection is never shared across threads.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import (
    NeedsMigration,
    ProjectExists,
    ProjectRefused,
    RagevalError,
    WriteFailed,
)
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store import integrity, owners, reads, tidy
from rageval_desktop.core.store.changes import Area, Changes, areas_of
from rageval_desktop.core.store.files import (
    BUSY_TIMEOUT_MS,
    READER_CACHE_KIB,
    WRITER_CACHE_KIB,
    _version_refusal,
    connect_read_only,
    decodable,
    default_actor,
    is_immutable,
    read_header,
    refused_because,
    restore_hint,
)
from rageval_desktop.core.store.oplog import Recording
from rageval_desktop.core.store.schema import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
)

if TYPE_CHECKING:
    import sqlite_utils

def inspect_file(path: Path) -> tuple[int, int]:
    """Refuse anything that is not a project of a schema we understand, at a cost that does not grow with the file
    (header, schema, the tables needed, one page of each: `integrity.cheap_check`); never write to it. Every page is
    read by `integrity.check` — on demand, and after an unclean shutdown.

    Returns (application_id, user_version). Raises ProjectRefused with a message fit for the user.
    """
    app_id, version = read_header(path)
    try:
        conn = connect_read_only(path)
    except sqlite3.Error as exc:
        raise ProjectRefused(f"{path}: cannot be opened: {exc}") from exc
    try:
        if version:  # a file being created has no tables yet
            integrity.cheap_check(conn, path, restore_hint(path))
    finally:
        conn.close()
    return app_id, version


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The id of the row an INSERT made (sqlite3 says None only for a statement that inserted no row)."""
    if cur.lastrowid is None:
        raise RagevalError("an insert made no row")
    return cur.lastrowid


def write_failed(path: Path, op: str, exc: sqlite3.Error) -> WriteFailed:
    """An SQLite error on the writer lane, in words a user can act on. The transaction was rolled back."""
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return WriteFailed(f"{path}: could not save ({op}): another process kept the project locked for "
                           f"{BUSY_TIMEOUT_MS // 1000} s ({text}); nothing of this step was saved — try again "
                           "when the other import or job has finished", kind="busy")
    if "full" in low:
        return WriteFailed(f"{path}: could not save ({op}): the disk is full ({text}); nothing of this step was "
                           "saved — free some space and try again", kind="full")
    if "readonly" in low or "read-only" in low:
        return WriteFailed(f"{path}: could not save ({op}): the file is read-only ({text})", kind="readonly")
    if isinstance(exc, sqlite3.IntegrityError):
        return WriteFailed(f"{path}: could not save ({op}): the data breaks a rule of the project file ({text}); "
                           "nothing of this step was saved", kind="constraint")
    if "i/o" in low or "disk" in low:
        return WriteFailed(f"{path}: could not save ({op}): the disk reported an error ({text}); nothing of this "
                           "step was saved", kind="io")
    return WriteFailed(f"{path}: could not save ({op}): {text}; nothing of this step was saved", kind="other")


class Checkpoint:
    """The write-ahead log copied into the file on a helper thread (`Project.checkpoint_behind`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.thread: threading.Thread | None = None
        self.result: tuple[int, int, int] | None = None   # SQLite's (busy, log pages, pages copied), once done

    def start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._copy, name="rageval-checkpoint", daemon=True)
            self.thread.start()

    def _copy(self) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA synchronous = NORMAL")
                self.result = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            finally:
                conn.close()      # never the last connection (the writer's is open): the log stays as it is
        except sqlite3.Error:     # not copied now: the next checkpoint copies it, and nothing is lost meanwhile
            self.result = None

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


class Project:
    """An open project file. Thread-safe: call `reader()` per thread and `write()` from any thread."""

    extra_pragmas: tuple[str, ...] = ()   # run by every connection this process opens (tests set limits with it)
    # each reader's page cache in this process: the app's window, whose large reads run in its helper process, keeps
    # a smaller one (gui.operations.window_readers)
    reader_cache_kib: int = READER_CACHE_KIB

    def __init__(self, path: Path, *, actor: str | None = None, read_only: bool = False) -> None:
        self.path = Path(path)
        self.actor = actor or default_actor()
        self.read_only = read_only
        self._write_lock = threading.RLock()
        self._checkpoints_held = 0        # `checkpoint_behind` blocks open, and the setting they put aside
        self._autocheckpoint = 1000
        self._writer: sqlite3.Connection | None = None
        self._local = threading.local()
        self._readers: dict[int, sqlite3.Connection] = {}     # by the thread that reads through it (its ident)
        self._readers_lock = threading.Lock()
        self._utils: sqlite_utils.Database | None = None
        self.changes_since_backup = 0
        self.last_backup_at = 0.0
        self.listeners: list[Callable[[Changes], object]] = []  # told after each committed write
        self._closed = False
        self.check_due = False          # the last close was not clean and the full check was deferred (the app)
        self._session = False           # this process is recorded in the file as having it open
        self._references_off = False    # the writer's foreign-key lookups are off (write(checked_references=False))
        self.copy_of: Path | None = None   # read through a migrated temporary copy of this (older) file
        self.copy_from_version: int | None = None
        self.opening_notes: list[str] = []  # what opening did that the person opening it must hear (tidy.py)

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
            conn = project._connect(WRITER_CACHE_KIB)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            project._writer = conn
            project._migrate(from_version=0)
            project._session = integrity.begin_session(conn, utcnow())
            with project.write("create project", changed=(Area.SETTINGS,)) as w:
                w.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
                    ("name", name or path.stem), ("created_at", utcnow()), ("created_by", project.actor)])
                # no slices yet: a project has the slices its data brings (or that a curator adds)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the header on disk says what the file is
        except BaseException:  # never leave a half-made project behind
            project.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            raise
        project.changes_since_backup = 0  # nothing a backup would save yet
        return project

    @classmethod
    def open(cls, path: str | Path, *, actor: str | None = None, migrate: bool = True,
             read_only: bool = False, check: str = "now") -> Project:
        """Open a project. `read_only`: to inspect (info, metrics, reports) — nothing is written, no sidecar
        files are created where none existed, an older schema is not migrated (ProjectRefused says so).

        After an unclean shutdown (a process that had it open died) every page is checked: at once with
        `check="now"` (a damaged file is refused), or later with `check="defer"` — `check_due` is then set and the
        caller (the app) runs `integrity.check_after_unclean_shutdown` in the background."""
        path = Path(path)
        _, version = inspect_file(path)
        refusal = _version_refusal(path, version, migrate=migrate and not read_only)
        if refusal is not None:
            raise refusal
        project = cls(path, actor=actor, read_only=read_only)
        if not read_only:
            try:
                project._writer = project._connect(WRITER_CACHE_KIB)
            except sqlite3.Error as exc:
                raise ProjectRefused(f"{path}: cannot be opened for writing: {exc}") from None
        try:
            project._check_unclean(check)
            # the header can lag the file's WAL (a process that migrated it died before a checkpoint): the version
            # SQLite reads, WAL included, is the one to migrate from
            version = project.schema_version()
            refusal = _version_refusal(path, version, migrate=migrate and not read_only)
            if refusal is not None:
                raise refusal
        except BaseException:
            project.close()
            raise
        if read_only:
            project.opening_notes += tidy.held_secrets(project)
            return project
        if version < SCHEMA_VERSION:
            project.backup(f"pre-migration-v{version}-to-v{SCHEMA_VERSION}")
            project._migrate(from_version=version)
        project._after_open()
        return project

    @classmethod
    def open_for_reading(cls, path: str | Path, *, actor: str | None = None) -> Project:
        """Open to read (info, metrics, compare, gate, report): nothing is written, and a file of an older schema is
        never migrated in place — it is read through a migrated copy in a temporary folder (`copy_of` names the
        file; the copy goes when the project is closed). A CI job gating on a project kept in its repository used to
        rewrite it, and teammates on the previous release were then refused it."""
        try:
            return cls.open(path, actor=actor, read_only=True)
        except NeedsMigration as exc:
            return cls._migrated_copy(Path(path), exc.version, actor)

    @classmethod
    def _migrated_copy(cls, path: Path, version: int, actor: str | None) -> Project:
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="rageval-read-"))
        copy = folder / path.name
        try:
            source = connect_read_only(path)
            try:
                target = sqlite3.connect(copy)
                try:
                    source.backup(target)     # a consistent snapshot, the WAL's committed pages included
                finally:
                    target.close()
            finally:
                source.close()
            scratch = cls(copy, actor=actor)
            scratch._writer = scratch._connect(WRITER_CACHE_KIB)
            try:
                scratch._migrate(from_version=version)
            finally:
                scratch.close()
            project = cls.open(copy, actor=actor, read_only=True)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        project.copy_of, project.copy_from_version = path, version
        return project

    def _check_unclean(self, check: str) -> None:
        try:
            unclean = bool(integrity.dead_sessions(self.reader()))
        except sqlite3.DatabaseError as exc:
            raise refused_because(self.path, exc) from None
        if not unclean:
            return
        if check == "defer":
            self.check_due = True
            return
        report = integrity.check_after_unclean_shutdown(self)
        if report is not None and not report.ok:
            raise ProjectRefused(integrity.damaged_message(report, restore_hint(self.path)))

    def _after_open(self) -> None:
        """Jobs left 'running' by a process that is gone become 'interrupted' as soon as anyone opens the file, and
        secrets stored in judges' settings are removed (said in `opening_notes`); this process is recorded as having
        it open (so that a crash is noticed by the next open)."""
        writer = self._writer
        assert writer is not None
        self._session = integrity.begin_session(writer, utcnow())
        backups.clean_leftovers(self.path)    # what a killed backup or restore left: hidden files as large as this
        # tidying is opportunistic: under another process's write lock an open waited the full busy timeout (10 s)
        writer.execute(f"PRAGMA busy_timeout = {integrity.SESSION_TIMEOUT_MS}")
        try:
            try:
                owners.mark_dead_jobs(self)
            except WriteFailed:
                pass  # another process is writing; the next open (or the next job) tidies up
            try:
                self.opening_notes += tidy.remove_stored_secrets(self)
            except WriteFailed:
                pass  # the same: the next open removes them
        finally:
            writer.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def _connect(self, cache_kib: int = READER_CACHE_KIB) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        with decodable(conn):
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # durable across process kills in WAL mode
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA cache_size = -{cache_kib}")
            for statement in Project.extra_pragmas:
                conn.execute(f"PRAGMA {statement}")
        return conn

    def pragma(self, statement: str) -> Any:
        """A PRAGMA on the writer connection (a limit, a timeout, a checkpoint), outside any transaction; its first
        row's first value (None when it returns no row)."""
        if self._writer is None:
            raise RagevalError(f"{self.path}: the project is closed")
        with self._write_lock:
            row = self._writer.execute(f"PRAGMA {statement}").fetchone()
        return row[0] if row else None

    @property
    def in_transaction(self) -> bool:
        """A write is open on the writer lane (after any write has returned: never — it committed or rolled back)."""
        return self._writer is not None and self._writer.in_transaction

    def _migrate(self, from_version: int) -> None:
        conn = self._writer
        assert conn is not None
        with self._write_lock:
            for migration in MIGRATIONS:
                if migration.version <= from_version:
                    continue
                if migration.foreign_keys_off:  # outside the transaction, where the pragma takes effect
                    conn.execute("PRAGMA foreign_keys = OFF")
                what = migration.description.replace("'", "''")
                try:
                    conn.executescript(
                        f"BEGIN IMMEDIATE;\n{migration.sql}\nPRAGMA user_version = {migration.version};\n"
                        f"INSERT INTO audit_log (at, actor, action, entity, details) VALUES "
                        f"('{utcnow()}', 'rageval', 'migrate', 'schema', "
                        f"json_object('to', {migration.version}, 'what', '{what}'));\n"
                        "COMMIT;")
                except sqlite3.Error:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                finally:
                    if migration.foreign_keys_off:
                        conn.execute("PRAGMA foreign_keys = ON")

    # --- connections ---------------------------------------------------------------------------
    def reader(self) -> sqlite3.Connection:
        """A read connection owned by the calling thread (sees every committed write), kept by the thread's ident:
        a Qt pool thread runs each task with fresh thread-locals, so a reader kept in them was a new connection for
        every task the window ran (20 tasks, 21 connections, each with its page cache and file handle, until the
        project closed). The readers of threads that have ended are closed as a new one is made; a thread that
        takes an ended one's ident takes its reader (no other thread can be using it)."""
        ident = threading.get_ident()
        conn = self._readers.get(ident)
        if conn is not None and is_immutable(conn) and Path(f"{self.path}-wal").exists():
            # opened immutable while nobody had the file open; a writer has opened it since: read as it writes
            with self._readers_lock:
                self._readers.pop(ident, None)
            conn.close()
            conn = None
        if conn is None:
            conn = self._new_reader()
            threading.current_thread()      # a thread Python did not start (Qt's) is listed from now on, for good
            living = {t.ident for t in threading.enumerate()}
            with self._readers_lock:
                ended = [c for i, c in self._readers.items() if i not in living]
                self._readers = {i: c for i, c in self._readers.items() if i in living}
                self._readers[ident] = conn
            for old in ended:
                try:
                    old.close()
                except sqlite3.Error:
                    pass
        return conn

    def _new_reader(self) -> sqlite3.Connection:
        if self._closed:
            raise RagevalError(f"{self.path}: the project is closed")
        conn = connect_read_only(self.path) if self.read_only else self._connect(Project.reader_cache_kib)
        if self.read_only and Project.reader_cache_kib != READER_CACHE_KIB:
            conn.execute(f"PRAGMA cache_size = -{Project.reader_cache_kib}")
        conn.execute("PRAGMA query_only = ON")
        return conn

    @contextmanager
    def extra_reader(self) -> Iterator[sqlite3.Connection]:
        """A read connection of its own for the duration (a query run on a helper thread), closed after."""
        conn = self._new_reader()
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def checkpoint_behind(self) -> Iterator[Checkpoint]:
        """Writes inside commit without copying the write-ahead log into the file (SQLite's automatic checkpoint,
        run by the commit that passes 1,000 pages: 0.3 s of a 30k-row import's 95 MB, 0.8 s at 100k); `start()`
        copies it on a helper thread and a connection of its own while the caller goes on — reads and small writes,
        which a checkpoint never blocks. Leaving waits for the copy and turns the automatic checkpoint back on. A
        copy that cannot finish (a reader holding an older snapshot) leaves the rest to the next checkpoint: the log
        keeps every page until it is copied, so nothing is lost either way."""
        if self.read_only or self._writer is None:    # the write inside says why it cannot
            yield Checkpoint(self.path)
            return
        with self._write_lock:      # (two threads may each hold it: the last to leave turns it back on)
            if not self._checkpoints_held:
                self._autocheckpoint = self.pragma("wal_autocheckpoint")
                self.pragma("wal_autocheckpoint = 0")
            self._checkpoints_held += 1
        checkpoint = Checkpoint(self.path)
        try:
            yield checkpoint
        finally:
            checkpoint.join()
            with self._write_lock:
                self._checkpoints_held -= 1
                if not self._checkpoints_held and self._writer is not None:
                    try:
                        self.pragma(f"wal_autocheckpoint = {int(self._autocheckpoint)}")
                    except sqlite3.Error:   # the file went away meanwhile: the write that needs it says so
                        pass

    @contextmanager
    def write(self, op: str, *, changed: tuple[Area, ...] = (),
              checked_references: bool = True) -> Iterator[sqlite3.Connection]:
        """One named operation = one transaction on the single writer lane.

        `changed` names the areas the op touched; listeners get them, typed (`Changes`), after the commit. An
        undoable operation being recorded on this thread (`recording`) is committed in the same transaction, if the
        write changed anything.
        `checked_references=False`: SQLite does not look up each inserted row's references (foreign keys), nor
        cascade a delete, in this transaction — for a bulk insert whose rows refer only to rows that exist by
        construction (a run's import: 0.3-0.7 s of 500k passages' inserts), which checks what it must itself. The
        lookups are on again before the lock is let go and before listeners are told.
        """
        areas = areas_of(changed)
        if self.read_only:
            raise RagevalError(f"{self.path}: opened read-only; cannot {op}")
        if self._writer is None:
            raise RagevalError(f"{self.path}: the project is closed; cannot {op}")
        with self._write_lock:
            conn = self._writer
            try:
                self._references_on(conn)      # left off by a write that could not end cleanly: on first, or fail
                if self._references_off:
                    raise sqlite3.OperationalError("the reference checks could not be turned back on")
                if not checked_references:     # (outside a transaction, where the pragma takes effect)
                    conn.execute("PRAGMA foreign_keys = OFF")
                    self._references_off = True
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                self._references_on(conn)
                raise write_failed(self.path, op, exc) from None
            before = conn.total_changes
            try:
                try:
                    yield conn
                except BaseException as exc:
                    self._rollback(conn)
                    if isinstance(exc, sqlite3.Error):  # the real cause, never "cannot rollback"
                        raise write_failed(self.path, op, exc) from exc
                    raise
                operation = None
                recording = getattr(self._local, "recording", None)
                try:
                    if recording is not None and recording.id is None and conn.total_changes > before:
                        operation = recording.commit(conn)
                        areas = areas | {Area.OPERATIONS}
                    conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    self._rollback(conn)
                    if recording is not None:
                        recording.id = None
                    raise write_failed(self.path, op, exc) from exc
            finally:
                self._references_on(conn)
                reads.forget(self)             # whatever a block of shared reads kept may be stale now
            self.changes_since_backup += 1
        changes = Changes(op, areas, operation, getattr(self._local, "initiator", None))
        for listener in list(self.listeners):
            listener(changes)

    def _references_on(self, conn: sqlite3.Connection) -> None:
        """The writer's reference lookups back on after a write that had them off. Never raises (it runs as a write
        ends, failed or not); if they are still off (a transaction SQLite could not end), the next write turns them
        on before it begins, or fails."""
        if self._references_off:
            try:
                conn.execute("PRAGMA foreign_keys = ON")
                self._references_off = not conn.execute("PRAGMA foreign_keys").fetchone()[0]
            except sqlite3.Error:
                pass

    @contextmanager
    def initiated_by(self, initiator: str) -> Iterator[None]:
        """While inside, the writes on this thread announce `initiator` with their changes (Anki's initiator: a page
        that asked for a write and refreshes when it lands skips the refresh its announcement would cause)."""
        previous = getattr(self._local, "initiator", None)
        self._local.initiator = initiator
        try:
            yield
        finally:
            self._local.initiator = previous

    @contextmanager
    def recording(self, record: Recording) -> Iterator[Recording]:
        """While inside, the first write on this thread that changes something commits `record` (an undoable
        operation's row) in its own transaction: the edit and its undo entry are saved together or not at all."""
        previous = getattr(self._local, "recording", None)
        self._local.recording = record
        try:
            yield record
        finally:
            self._local.recording = previous

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        """SQLite rolls back by itself after some errors (a full disk); a second ROLLBACK must not replace the
        real error with "cannot rollback - no transaction is active"."""
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

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
        return int(self.reader().execute("PRAGMA user_version").fetchone()[0])

    @staticmethod
    def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
        """Inside a write: set one meta key."""
        conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                     "value = excluded.value", (key, value))

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
            src = self._writer or self.reader()
            out = backups.backup_to_rotation(src, self.path, reason)
        self.changes_since_backup = 0
        self.last_backup_at = time.monotonic()
        return out

    def replace_contents(self, source: sqlite3.Connection) -> None:
        """Make this project a page-for-page copy of `source` (a restore), through SQLite's backup API on the
        writer lane: other readers see one consistent switch, and the WAL stays coherent (nothing of an older
        `-wal` can be replayed over the result). The caller backs up the current state first."""
        if self._writer is None:
            raise RagevalError(f"{self.path}: the project is closed or read-only; cannot restore into it")
        with self._write_lock:
            try:
                source.backup(self._writer)
                self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise write_failed(self.path, "restore", exc) from exc

    def backup_if_changed(self, min_interval_s: float = 600.0) -> Path | None:
        """The periodic backup: only when something changed and not more often than the interval."""
        if self.changes_since_backup == 0:
            return None
        if self.last_backup_at and time.monotonic() - self.last_backup_at < min_interval_s:
            return None
        return self.backup("periodic")

    def close(self) -> None:
        """Never raises: closing after a failed write (full disk, locked file) must still release the file."""
        self._close()
        if self.copy_of is not None:      # the migrated temporary copy a read went through
            import shutil

            shutil.rmtree(self.path.parent, ignore_errors=True)

    def _close(self) -> None:
        self._closed = True
        with self._readers_lock:
            for conn in self._readers.values():
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._readers.clear()
        self._local = threading.local()
        with self._write_lock:
            if self._writer is not None:
                try:
                    self._rollback(self._writer)
                    if self._session:  # a clean close; if this fails, the next open checks the file
                        integrity.end_session(self._writer)
                    self._writer.execute("PRAGMA optimize")
                except sqlite3.Error:
                    pass
                try:
                    self._writer.close()
                except sqlite3.Error:
                    pass
                self._writer = None
                self._utils = None

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
