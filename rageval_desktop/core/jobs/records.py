"""The jobs table: what ran, with what parameters, how far it got — so an interrupted job can be resumed."""

from __future__ import annotations

import json
import os
from typing import Any

from rageval_desktop.core.errors import NotFound
from rageval_desktop.core.store.project import Project, utcnow

_OURS: set[int] = set()  # jobs this process is running now


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def mark_interrupted(project: Project) -> int:
    """Jobs left 'running' by a process that is gone (killed, crashed) become 'interrupted'."""
    me = os.getpid()
    stale = [jid for jid, pid in project.reader().execute("SELECT id, pid FROM jobs WHERE status = 'running'")
             if (pid == me and jid not in _OURS) or (pid != me and not _alive(pid))]
    if stale:
        with project.write("mark interrupted jobs", changed=("jobs",)) as conn:
            conn.executemany("UPDATE jobs SET status = 'interrupted', finished_at = ?, message = "
                             "'the process running it stopped; resume to finish' WHERE id = ?",
                             [(utcnow(), j) for j in stale])
    return len(stale)


def start(project: Project, kind: str, params: dict[str, Any], total: int) -> int:
    with project.write("start job", changed=("jobs",)) as conn:
        cur = conn.execute("INSERT INTO jobs (kind, params, status, progress_total, pid, created_at, started_at, "
                           "heartbeat_at) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
                           (kind, json.dumps(params), total, os.getpid(), utcnow(), utcnow(), utcnow()))
    _OURS.add(cur.lastrowid)
    return cur.lastrowid


def progress(conn, job_id: int, done: int) -> None:
    """Called inside the writer's transaction, beside the judgments it commits."""
    conn.execute("UPDATE jobs SET progress_done = ?, heartbeat_at = ? WHERE id = ?", (done, utcnow(), job_id))


def finish(project: Project, job_id: int, status: str, message: str | None) -> None:
    with project.write("finish job", changed=("jobs",)) as conn:
        conn.execute("UPDATE jobs SET status = ?, message = ?, finished_at = ? WHERE id = ?",
                     (status, message, utcnow(), job_id))
    _OURS.discard(job_id)


def get(project: Project, job_id: int) -> dict[str, Any]:
    row = project.reader().execute("SELECT id, kind, params, status, progress_done, progress_total, message, "
                                   "created_at, finished_at FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"no job {job_id}")
    return _as_dict(row)


def list_jobs(project: Project) -> list[dict[str, Any]]:
    return [_as_dict(r) for r in project.reader().execute(
        "SELECT id, kind, params, status, progress_done, progress_total, message, created_at, finished_at "
        "FROM jobs ORDER BY id DESC")]


def _as_dict(row: tuple) -> dict[str, Any]:
    jid, kind, params, status, done, total, message, created, finished = row
    return {"id": jid, "kind": kind, "params": json.loads(params), "status": status, "done": done, "total": total,
            "message": message, "created_at": created, "finished_at": finished}
