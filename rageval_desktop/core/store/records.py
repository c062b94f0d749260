"""The jobs table: what ran, with what parameters, how far it got — so an interrupted job can be resumed."""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import NotFound
from rageval_desktop.core.store import owners
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project


def start(project: Project, kind: str, params: dict[str, Any], total: int,
          leases: list[tuple[int, int]] | None = None, lease_names: dict[int, str] | None = None) -> int:
    """Record a running job; with `leases`, hold those (judge_id, run_id) pairs in the same transaction (or
    raise LeaseHeld and record nothing)."""
    with project.write("start job", changed=(Area.JOBS,)) as conn:
        now = utcnow()
        cur = conn.execute("INSERT INTO jobs (kind, params, status, progress_total, pid, host, created_at, "
                           "started_at, heartbeat_at) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                           (kind, json.dumps(params), total, os.getpid(), owners.host(), now, now, now))
        job_id = cur.lastrowid
        assert job_id is not None
        _own(conn, job_id, leases, lease_names)
    return job_id


def _own(conn: sqlite3.Connection, job_id: int, leases: list[tuple[int, int]] | None,
         lease_names: dict[int, str] | None) -> None:
    """This process runs the job: it is ours before its leases are taken (their check must see it alive); a lease
    held elsewhere leaves it not ours (LeaseHeld, and the write rolls back)."""
    owners.ours.add(job_id)
    if leases:
        try:
            owners.take_leases(conn, job_id, leases, lease_names)
        except BaseException:
            owners.ours.discard(job_id)
            raise


def restart(project: Project, job_id: int, total: int, leases: list[tuple[int, int]] | None = None,
            lease_names: dict[int, str] | None = None) -> None:
    """Run a recorded job again under its own id (a batch job resumed, its rows judged): this process owns it now,
    with its leases (or LeaseHeld, and nothing changes)."""
    with project.write("resume job", changed=(Area.JOBS,)) as conn:
        now = utcnow()
        conn.execute("UPDATE jobs SET status = 'running', progress_total = ?, pid = ?, host = ?, heartbeat_at = ?, "
                     "message = NULL, finished_at = NULL WHERE id = ?", (total, os.getpid(), owners.host(), now,
                                                                          job_id))
        owners.release_leases(conn, job_id)
        _own(conn, job_id, leases, lease_names)


def progress(conn: sqlite3.Connection, job_id: int, done: int, cost_usd: float | None = None,
             usage_estimated: int = 0) -> None:
    """Called inside the writer's transaction, beside the judgments it commits: the count and the cost of what
    is committed (kept in params, so the jobs table shows what the job has spent, and how many of its replies' costs
    are estimated: their server stated no token usage)."""
    if cost_usd is None:
        conn.execute("UPDATE jobs SET progress_done = ?, heartbeat_at = ? WHERE id = ?", (done, utcnow(), job_id))
    else:
        conn.execute("UPDATE jobs SET progress_done = ?, heartbeat_at = ?, params = json_set(params, '$.cost_usd', ?, "
                     "'$.usage_estimated', ?) WHERE id = ?", (done, utcnow(), cost_usd, usage_estimated, job_id))


def heartbeat(conn: sqlite3.Connection, job_id: int) -> None:
    conn.execute("UPDATE jobs SET heartbeat_at = ? WHERE id = ?", (utcnow(), job_id))


def finish(project: Project, job_id: int, status: str, message: str | None) -> None:
    try:
        with project.write("finish job", changed=(Area.JOBS,)) as conn:
            conn.execute("UPDATE jobs SET status = ?, message = ?, finished_at = ? WHERE id = ?",
                         (status, message, utcnow(), job_id))
            owners.release_leases(conn, job_id)
    finally:
        # if even this write failed (full disk), the job is no longer ours: the next open marks it interrupted
        owners.ours.discard(job_id)


def get(project: Project, job_id: int) -> dict[str, Any]:
    row = project.reader().execute("SELECT id, kind, params, status, progress_done, progress_total, message, "
                                   "created_at, finished_at, started_at FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"no job {job_id}")
    return _as_dict(row)


def list_jobs(project: Project) -> list[dict[str, Any]]:
    return [_as_dict(r) for r in project.reader().execute(
        "SELECT id, kind, params, status, progress_done, progress_total, message, created_at, finished_at, started_at "
        "FROM jobs ORDER BY id DESC")]


def _as_dict(row: tuple) -> dict[str, Any]:
    jid, kind, params, status, done, total, message, created, finished, started = row
    seconds = _seconds(started or created, finished)
    params = json.loads(params)
    return {"id": jid, "kind": kind, "params": params, "status": status, "done": done, "total": total,
            "message": message, "created_at": created, "started_at": started, "finished_at": finished,
            "seconds": seconds, "rows_per_s": done / seconds if seconds and done else None,
            "cost_usd": params.get("cost_usd"), "usage_estimated": int(params.get("usage_estimated") or 0)}


def _seconds(start: str | None, end: str | None) -> float | None:
    """Wall time of a finished job, from its stored UTC timestamps."""
    from datetime import datetime

    if not start or not end:
        return None
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None
