"""The store under everyday faults: a full disk, a locked file, damaged and foreign files, backups, restores,
and jobs whose process died. Each test names the defect it guards against."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.errors import ProjectRefused, WriteFailed
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.restore import restore
from tests.conftest import REPO, file_digest, table_dump


def _fill(project: Project, n: int, tag: str) -> None:
    with project.write("fill") as w:
        w.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [(f"{tag}{i}", "x" * 200) for i in range(n)])


def _sidecars(path: Path) -> list[str]:
    return [s for s in ("-wal", "-shm") if Path(f"{path}{s}").exists()]


def test_full_disk_names_the_real_cause_and_the_project_stays_usable(project):
    """Was: `cannot rollback - no transaction is active` hid `database or disk is full`."""
    pages = project.pragma("page_count")
    project.pragma(f"max_page_count = {pages + 1}")
    before = table_dump(project.path)
    with pytest.raises(WriteFailed) as failed:
        _fill(project, 2000, "a")
    assert failed.value.kind == "full" and "disk is full" in str(failed.value)
    assert "cannot rollback" not in str(failed.value)
    assert not project.in_transaction
    assert table_dump(project.path) == before            # all or nothing
    project.pragma("max_page_count = 1073741823")
    _fill(project, 10, "b")                               # the lane still works


def test_a_locked_project_is_a_clear_retryable_error(project):
    other = sqlite3.connect(project.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    project.pragma("busy_timeout = 100")
    try:
        with pytest.raises(WriteFailed) as failed:
            _fill(project, 1, "a")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert failed.value.kind == "busy" and failed.value.retryable
    assert "another process" in str(failed.value)


def test_second_import_while_one_writes_is_a_clear_error_not_a_traceback(project, tmp_path, capsys):
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"question": "What?", "gold_answer": "That."}) + "\n")
    project.close()
    holder = sqlite3.connect(project.path, isolation_level=None, timeout=0.1)
    holder.execute("BEGIN IMMEDIATE")
    try:
        import rageval_desktop.core.store.project as store

        old, store.BUSY_TIMEOUT_MS = store.BUSY_TIMEOUT_MS, 200
        try:
            code = main(["import", "golden", str(project.path), str(golden), "--no-dedupe-check"])
        finally:
            store.BUSY_TIMEOUT_MS = old
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("error: ") and "locked" in err and "Traceback" not in err


def test_refusing_a_file_never_creates_sidecars_or_changes_it(tmp_path):
    other = tmp_path / "other.rageval"
    conn = sqlite3.connect(other)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    digest = file_digest(other)
    with pytest.raises(ProjectRefused, match="another application"):
        Project.open(other)
    assert _sidecars(other) == [] and file_digest(other) == digest


def test_a_damaged_project_is_refused_untouched_and_the_message_says_how_to_restore(tmp_path):
    path = tmp_path / "d.rageval"
    with Project.create(path) as p:
        _fill(p, 400, "a")
        p.backup("manual")
    raw = bytearray(path.read_bytes())
    raw[4096 * 2: 4096 * 4] = b"\xff" * 8192
    path.write_bytes(bytes(raw))
    digest = file_digest(path)
    with pytest.raises(ProjectRefused) as refused:
        Project.open(path)
    message = str(refused.value)
    assert "damaged" in message and f"rageval restore {path}" in message
    assert str(backups.backup_dir(path)) in message
    assert _sidecars(path) == [] and file_digest(path) == digest


def test_info_on_a_backup_does_not_rewrite_it(tmp_path, capsys):
    """Was: `rageval info BACKUP` switched the backup to WAL mode (a write) and left -wal/-shm beside it."""
    path = tmp_path / "p.rageval"
    with Project.create(path) as p:
        out = p.backup("manual")
    digest = file_digest(out)
    assert main(["info", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["golden_rows"] == 0
    assert file_digest(out) == digest and _sidecars(out) == []


def test_a_backup_on_a_full_disk_leaves_no_partial_file(project, monkeypatch):
    def tiny(path):
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA max_page_count = 2")
        return conn

    _fill(project, 200, "a")
    monkeypatch.setattr(backups, "_open_destination", tiny)
    with pytest.raises(WriteFailed, match="no backup was made"):
        project.backup("manual")
    folder = backups.backup_dir(project.path)
    assert [p.name for p in folder.iterdir()] == []


CRASH_AFTER_WRITE = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA wal_autocheckpoint = 0")
conn.execute("INSERT INTO meta (key, value) VALUES ('written-after-the-backup', 'newer')")
os._exit(0)  # a crash: the committed row lives only in the -wal
"""


def test_restore_over_a_crashed_sessions_wal_restores_the_backup_and_keeps_the_newer_state(tmp_path, capsys):
    """Was: no restore command; copying a backup over the file while a -wal remained damaged the project or
    silently kept the newer rows."""
    path = tmp_path / "p.rageval"
    with Project.create(path) as p:
        _fill(p, 50, "a")
        old = p.backup("manual")
    subprocess.run([sys.executable, "-c", CRASH_AFTER_WRITE, str(path)], check=True, cwd=REPO)
    assert Path(f"{path}-wal").stat().st_size > 0
    assert main(["restore", str(path), str(old), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    with Project.open(path) as p:
        keys = {k for (k,) in p.reader().execute("SELECT key FROM meta")}
        assert p.reader().execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert p.reader().execute("SELECT action FROM audit_log ORDER BY id DESC LIMIT 1").fetchone()[0] == "restore"
    assert "written-after-the-backup" not in keys and "a49" in keys
    saved = Path(report["saved_current_as"][0])                       # the state before the restore is kept
    conn = sqlite3.connect(f"file:{saved}?mode=ro", uri=True)
    assert conn.execute("SELECT value FROM meta WHERE key = 'written-after-the-backup'").fetchone() == ("newer",)
    conn.close()


def test_restore_replaces_a_damaged_project_and_drops_its_stale_wal(tmp_path):
    path = tmp_path / "p.rageval"
    with Project.create(path) as p:
        _fill(p, 300, "a")
        good = p.backup("manual")
    subprocess.run([sys.executable, "-c", CRASH_AFTER_WRITE, str(path)], check=True, cwd=REPO)
    raw = bytearray(path.read_bytes())
    raw[4096 * 2: 4096 * 5] = b"\x00\x13" * 6144
    path.write_bytes(bytes(raw))
    with pytest.raises(ProjectRefused):
        Project.open(path)
    report = restore(path, good)
    assert report.replaced_damaged_file and any(s.endswith("-wal") for s in report.saved_current_as)
    assert table_dump(path)["meta"] == table_dump(good)["meta"]
    with Project.open(path) as p:
        assert p.reader().execute("PRAGMA quick_check").fetchone()[0] == "ok"


def test_restore_refuses_a_bad_backup_and_changes_nothing(tmp_path, capsys):
    path = tmp_path / "p.rageval"
    Project.create(path).close()
    bogus = tmp_path / "bogus.rageval"
    bogus.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)
    digest = file_digest(path)
    assert main(["restore", str(path), str(bogus)]) == 1
    assert capsys.readouterr().err.startswith("error: cannot restore from")
    assert file_digest(path) == digest


def test_a_job_whose_process_died_is_marked_interrupted_on_open(tmp_path):
    path = tmp_path / "p.rageval"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with Project.create(path) as p, p.write("fake job") as w:
        w.execute("INSERT INTO jobs (kind, status, pid, created_at) VALUES ('judge', 'running', ?, '2026-01-01')",
                  (dead.pid,))
        w.execute("INSERT INTO jobs (kind, status, pid, created_at) VALUES ('judge', 'running', ?, '2026-01-01')",
                  (os.getppid(),))  # a live process: left alone
    with Project.open(path) as p:
        statuses = [s for (s,) in p.reader().execute("SELECT status FROM jobs ORDER BY id")]
    assert statuses == ["interrupted", "running"]


@pytest.mark.slow
def test_a_backup_with_a_zeroed_page_is_refused_and_the_project_is_left_as_it_was(tmp_path, capsys):
    """Was (issue 28): 12 of 12 backups with a zeroed 4 KiB page were restored with exit 0 and most left the
    project damaged; the backup is now checked page by page, index by index, before anything changes."""
    from rageval_desktop.core.store import integrity

    path = tmp_path / "p.rageval"
    assert main(["demo", str(path)]) == 0
    with Project.open(path) as p:
        source = p.backup("manual")
    pristine = tmp_path / "pristine.rageval"
    pristine.write_bytes(path.read_bytes())
    before = table_dump(path)
    pages = Path(source).stat().st_size // 4096
    refused = 0
    for page in range(2, pages, max(1, pages // 12)):
        broken = tmp_path / f"b{page}.rageval"
        data = bytearray(Path(source).read_bytes())
        data[page * 4096:(page + 1) * 4096] = bytes(4096)
        broken.write_bytes(bytes(data))
        code = main(["restore", str(path), str(broken)])
        err = capsys.readouterr().err
        if code == 1:      # a page in use: refused, the project as it was
            assert err.startswith("error: cannot restore from") and "nothing was changed" in err
            assert table_dump(path) == before
            refused += 1
        else:              # a free page: nothing of the data was on it
            assert code == 0
        assert integrity.check(path, full=True).ok     # never left damaged either way
        path.write_bytes(pristine.read_bytes())
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert refused >= 8


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_restore_refuses_while_another_process_runs_a_job_or_holds_the_write_lock(tmp_path, capsys):
    """Was (issue 28): a restore during another process's job lost what that job committed afterwards, and one
    under another process's write lock waited silently for minutes, then exited 0."""
    import time

    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.store import owners

    path = tmp_path / "p.rageval"
    assert main(["demo", str(path)]) == 0
    with Project.open(path) as p:
        source = p.backup("manual")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with Project.open(path) as p, p.write("a job elsewhere") as w:
            w.execute("INSERT INTO jobs (kind, params, status, progress_total, pid, host, created_at, started_at, "
                      "heartbeat_at) VALUES ('judge', '{}', 'running', 10, ?, ?, ?, ?, ?)",
                      (other.pid, owners.host(), utcnow(), utcnow(), utcnow()))
        before = table_dump(path)
        assert main(["restore", str(path), str(source)]) == 1
        err = capsys.readouterr().err
        assert f"is running in process {other.pid}" in err and "nothing was changed" in err
        assert table_dump(path) == before
    finally:
        other.kill()
        other.wait()
    holder = sqlite3.connect(path)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        assert main(["restore", str(path), str(source)]) == 1
        assert time.monotonic() - started < 10          # refused after about 2 s, not minutes
        assert "another process is writing to this project" in capsys.readouterr().err
    finally:
        holder.rollback()
        holder.close()
    assert main(["restore", str(path), str(source)]) == 0     # the job's process is gone: its record is no reason


def test_what_a_killed_backup_or_restore_left_behind_is_cleaned_on_the_next_open(tmp_path):
    """Was (issue 28): killed backups and restores left hidden full-size files (`*.partial`, `.P.restoring`) that
    were never removed or listed. A leftover whose writer is still alive stays."""
    import time

    from rageval_desktop.core.store.backup import backup_dir

    path = tmp_path / "p.rageval"
    Project.create(path).close()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    folder = backup_dir(path)
    folder.mkdir(exist_ok=True)
    dead = [folder / f"p-1-manual.{gone.pid}.partial", tmp_path / f".p.rageval.restoring-{gone.pid}"]
    alive = [folder / f"p-2-manual.{os.getpid()}.partial", tmp_path / f".p.rageval.restoring-{os.getpid()}"]
    old = [folder / "p-3-manual.partial", tmp_path / ".p.rageval.restoring"]
    for leftover in dead + alive + old:
        leftover.write_bytes(b"x" * 4096)
    for leftover in old:
        os.utime(leftover, (time.time() - 7200, time.time() - 7200))
    with Project.open(path):
        pass
    assert not any(p.exists() for p in dead + old) and all(p.exists() for p in alive)
