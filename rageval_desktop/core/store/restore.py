"""Restore a project from a backup without ever making things worse.

1. The backup is checked first (ours, a schema we read, then `integrity_check`: every page and every index — a
   backup with one zeroed page passed the open's cheap check and was restored, leaving the project damaged),
   opened so that nothing is written to it.
2. The current state is saved: a healthy project gets a normal backup ("before-restore") — opening it replays a
   `-wal` a crashed session left behind, so those pages are in that backup too; a damaged project's files
   (main file, `-wal`, `-shm`) are copied aside as they are, for forensics.
3. A healthy project is restored in place through SQLite's backup API into its own (WAL) connection: SQLite
   writes the pages, other readers see one consistent switch, the `-wal`/`-shm` stay coherent. A damaged
   project is replaced: the backup is copied to a temporary file beside it, checked, its stale `-wal`/`-shm`
   are removed (they would be replayed onto the restored file) and the copy is renamed over it.
4. The result is opened normally (checked again), and the restore is written to the audit log.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rageval_desktop.core.base.errors import ProjectRefused, RagevalError
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store import integrity, owners
from rageval_desktop.core.store.backup import backup_dir
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.files import connect_read_only
from rageval_desktop.core.store.project import Project, inspect_file


@dataclass
class RestoreReport:
    project: str
    restored_from: str
    saved_current_as: list[str]
    replaced_damaged_file: bool
    warnings: list[str] = field(default_factory=list)    # what the person restoring must hear (an unverified backup)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _save_damaged(path: Path) -> list[str]:
    folder = backup_dir(path)
    folder.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    saved = []
    for suffix in ("", "-wal", "-shm"):
        src = Path(f"{path}{suffix}")
        if src.exists():
            dst = folder / f"{path.stem}-{stamp}-damaged-before-restore.rageval-file{suffix}"
            shutil.copy2(src, dst)
            saved.append(str(dst))
    return saved


BUSY_WAIT_S = 2.0       # how long a restore waits for another process's write before saying so


def _refuse_if_locked(path: Path) -> None:
    """A write lock another process holds made the restore wait silently for minutes: it is refused after
    BUSY_WAIT_S."""
    probe = sqlite3.connect(path, timeout=BUSY_WAIT_S)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.rollback()
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            return                                   # a damaged file: the restore's own path deals with it
        raise RagevalError(f"{path}: another process is writing to this project ({exc}); a restore now would wait "
                           "for it or lose its work — close the app or command using it, then restore; nothing was "
                           "changed") from None
    except sqlite3.DatabaseError:
        return
    finally:
        probe.close()


def _refuse_if_jobs(project: Project) -> None:
    """A restore replaces every page: a job running in another process would lose what it commits after it (a job
    that had reported 345 saved kept 342, then died on a broken reference). Refused, naming the process."""
    owners.mark_dead_jobs(project)                  # a killed job's record is no reason to refuse
    running = [(jid, pid, where) for jid, pid, where in project.reader().execute(
        "SELECT id, pid, host FROM jobs WHERE status = 'running'") if jid not in owners.ours]
    if running:
        jid, pid, where = running[0]
        raise RagevalError(f"{project.path}: job {jid} is running in process {pid} on {where or 'this host'}; a "
                           f"restore now would lose what it saves — wait for it to finish or cancel it (rageval jobs "
                           f"cancel {project.path} {jid}), then restore; nothing was changed")


def restore(project_path: str | Path, backup_path: str | Path, *, actor: str | None = None) -> RestoreReport:
    path, source = Path(project_path), Path(backup_path)
    if path.resolve() == source.resolve():
        raise RagevalError(f"{source}: that is the project itself; choose a backup file")
    try:
        inspect_file(source)
    except ProjectRefused as exc:
        raise RagevalError(f"cannot restore from {source}: {str(exc).split(': ', 1)[-1].split('; ')[0]}; nothing "
                           f"was changed — choose another backup (rageval backups {path})") from None
    changed = backups.checksum_problem(source)      # a flipped data byte passes integrity_check; not the checksum
    if changed is not None:
        raise RagevalError(f"cannot restore from {source}: {changed}; nothing was changed — choose another backup "
                           f"(rageval backups {path})")
    found = integrity.check(source, full=True)      # every page and every index: a damaged backup is refused whole
    if not found.ok:
        shown = "; ".join(found.problems[:2])
        raise RagevalError(f"cannot restore from {source}: the backup is damaged ({found.kind}: {shown}); nothing was "
                           f"changed — choose another backup (rageval backups {path})")
    healthy = path.exists()
    replaced = False
    if healthy:
        try:
            current = Project.open(path, actor=actor)
        except ProjectRefused:
            healthy = False
    if healthy:
        try:
            _refuse_if_locked(path)    # a healthy project only: a probe's close would replay a damaged one's -wal
            _refuse_if_jobs(current)
        except BaseException:
            current.close()
            raise
    if healthy:
        try:
            saved = [str(current.backup("before-restore"))]
            src = connect_read_only(source)
            try:
                current.replace_contents(src)
            except RagevalError as exc:
                raise RagevalError(f"{exc}; the project as it was is saved in {saved[0]}") from None
            finally:
                src.close()
        finally:
            current.close()
    else:
        saved = _save_damaged(path) if path.exists() else []
        tmp = path.with_name(f".{path.name}.restoring-{os.getpid()}")   # cleaned on a later open if we die
        tmp.unlink(missing_ok=True)
        try:
            src, dst = connect_read_only(source), sqlite3.connect(tmp)
            try:
                src.backup(dst)
                dst.execute("PRAGMA journal_mode = WAL")
                if dst.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                    raise RagevalError(f"{source}: the copy did not pass quick_check; nothing was changed")
            finally:
                src.close()
                dst.close()
            for suffix in ("-wal", "-shm"):  # stale sidecars would be replayed onto the restored file
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            tmp.replace(path)
            replaced = True
        except (sqlite3.Error, OSError) as exc:
            tmp.unlink(missing_ok=True)
            raise RagevalError(f"{path}: the restore failed ({exc}); nothing was changed") from None
    with Project.open(path, actor=actor) as restored:
        every = (Area.GOLDEN, Area.RUNS, Area.JUDGES, Area.JUDGMENTS, Area.RATINGS, Area.JOBS)
        with restored.write("restore from backup", changed=every) as conn:
            restored.audit(conn, "restore", "project", None, source=str(source), saved=saved)
    unverified = backups.unverified(source)
    return RestoreReport(str(path), str(source), saved, replaced, [unverified] if unverified else [])
