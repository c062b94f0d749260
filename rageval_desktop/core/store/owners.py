"""Who is running what: a job's owner is alive while its process exists on this host and its heartbeat is
fresh. Jobs whose owner died are marked 'interrupted' (on every open and before every job), and their leases
on (judge, run) pairs are released, so a second process never pays for the same calls while the first lives.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.store.changes import Area

if TYPE_CHECKING:
    import sqlite3

    from rageval_desktop.core.store.project import Project

HEARTBEAT_S = 5.0           # a running job writes its heartbeat at least this often
STALE_S = 120.0             # an owner on another host silent for this long is taken for dead
ours: set[int] = set()      # jobs this process is running now


def host() -> str:
    try:
        return socket.gethostname() or "unknown"
    except OSError:
        return "unknown"


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _age_s(stamp: str | None) -> float:
    if not stamp:
        return float("inf")
    try:
        return (datetime.now(UTC) - datetime.fromisoformat(stamp)).total_seconds()
    except ValueError:
        return float("inf")


def owner_alive(job_id: int, pid: int | None, job_host: str | None, heartbeat_at: str | None) -> bool:
    if job_host in (None, host()):  # on this machine the process table is the truth
        return job_id in ours if pid == os.getpid() else pid_alive(pid)
    return _age_s(heartbeat_at) < STALE_S  # another machine sharing the file: only the heartbeat tells


def dead_jobs(conn: sqlite3.Connection) -> list[int]:
    return [jid for jid, pid, job_host, beat in conn.execute(
        "SELECT id, pid, host, heartbeat_at FROM jobs WHERE status = 'running'")
        if not owner_alive(jid, pid, job_host, beat)]


def mark_dead_jobs(project: Project) -> int:
    """Jobs left 'running' by a process that is gone (killed, crashed) become 'interrupted'; writes only when
    there is something to mark."""
    if not dead_jobs(project.reader()):
        return 0
    with project.write("mark interrupted jobs", changed=(Area.JOBS,)) as conn:
        return interrupt_dead_jobs(conn)


def interrupt_dead_jobs(conn: sqlite3.Connection) -> int:
    """Inside a write: dead owners' jobs become 'interrupted' and their leases go."""

    stale = dead_jobs(conn)
    conn.executemany("UPDATE jobs SET status = 'interrupted', finished_at = ?, message = "
                     "'the process running it stopped; resume to finish' WHERE id = ?",
                     [(utcnow(), j) for j in stale])
    conn.executemany("DELETE FROM job_leases WHERE job_id = ?", [(j,) for j in stale])
    return len(stale)


class LeaseHeld(RagevalError):
    """Another live job is running the same judge on the same run."""


def take_leases(conn: sqlite3.Connection, job_id: int, pairs: list[tuple[int, int]],
                names: dict[int, str] | None = None) -> None:
    """Inside the transaction that starts the job: hold every (judge_id, run_id) pair, or hold none and raise."""
    interrupt_dead_jobs(conn)  # a job that died since this project was opened frees its pairs here
    conn.execute("DELETE FROM job_leases WHERE job_id IN (SELECT id FROM jobs WHERE status != 'running')")
    for judge_id, run_id in pairs:
        row = conn.execute("SELECT l.job_id, j.pid, j.host FROM job_leases l JOIN jobs j ON j.id = l.job_id "
                           "WHERE l.judge_id = ? AND l.run_id = ?", (judge_id, run_id)).fetchone()
        if row is not None:
            other, pid, other_host = row
            judge = (names or {}).get(judge_id, f"#{judge_id}")
            raise LeaseHeld(f"judge '{judge}' is already running on this run in job {other} (process {pid} on "
                            f"{other_host or 'this host'}); wait for it to finish, or cancel it, then run again — "
                            "nothing was sent twice")
    conn.executemany("INSERT INTO job_leases (judge_id, run_id, job_id) VALUES (?, ?, ?)",
                     [(j, r, job_id) for j, r in pairs])


def release_leases(conn: sqlite3.Connection, job_id: int) -> None:
    conn.execute("DELETE FROM job_leases WHERE job_id = ?", (job_id,))
