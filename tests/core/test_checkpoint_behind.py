"""A large write's commit leaves the write-ahead log's copy into the file to a helper thread
(`Project.checkpoint_behind`), which copies it while the caller goes on; nothing is lost if the copy cannot run, and
the automatic checkpoint is back on however the block ends."""

from __future__ import annotations

import json
import sqlite3

import pytest

from rageval_desktop.core.base.errors import ImportFailed, WriteFailed
from rageval_desktop.core.importers import import_run
from rageval_desktop.core.store.changes import Area

ROWS = 3000   # about 1,500 pages of log: past the 1,000 at which a commit would copy it itself


def _fill(project) -> None:
    with project.write("fill", changed=(Area.RUNS,)) as conn:
        conn.execute("INSERT INTO runs (name, source_file, format, config, created_at) "
                     "VALUES ('r', 'f', 'native', '{}', '2026-01-01')")
        conn.executemany("INSERT INTO run_rows (run_id, position, external_id, question, answer) "
                         "VALUES (1, ?, ?, 'q', ?)", [(i, f"e{i}", "x" * 2000) for i in range(ROWS)])


def test_the_commit_leaves_the_copy_to_the_helper_and_the_helper_copies_it_all(project):
    before = project.path.stat().st_size
    with project.checkpoint_behind() as checkpoint:
        _fill(project)
        assert project.path.stat().st_size == before          # committed, and only in the log so far
        checkpoint.start()
        checkpoint.join()
        busy, pages, copied = checkpoint.result
        assert busy == 0 and copied == pages > 1000
        assert project.path.stat().st_size > before + ROWS * 2000
    assert project.pragma("wal_autocheckpoint") == 1000


def test_a_write_that_fails_inside_leaves_the_automatic_checkpoint_on(project):
    with pytest.raises(WriteFailed, match="nothing of this step was saved"), project.checkpoint_behind():
        with project.write("fail", changed=(Area.RUNS,)) as conn:
            conn.execute("INSERT INTO run_rows (run_id, position, external_id, question) VALUES (99, 1, 'e', 'q')")
            conn.execute("INSERT INTO run_rows (run_id, position, external_id, question) VALUES (99, 1, 'e', 'q')")
    assert project.pragma("wal_autocheckpoint") == 1000


def test_a_copy_that_cannot_run_loses_nothing(project, monkeypatch):
    """The helper's connection fails to open: the rows stay in the log, and the next checkpoint copies them."""
    import rageval_desktop.core.store.project as store

    def refused(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    with project.checkpoint_behind() as checkpoint:
        _fill(project)
        monkeypatch.setattr(store.sqlite3, "connect", refused)
        checkpoint.start()
        checkpoint.join()
        monkeypatch.undo()
        assert checkpoint.result is None
    assert project.reader().execute("SELECT COUNT(*) FROM run_rows").fetchone()[0] == ROWS
    other = sqlite3.connect(project.path)     # (not the last connection: closing it leaves the log as it is)
    busy, pages, copied = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    other.close()
    assert busy == 0 and copied == pages > 1000


def test_a_runs_import_is_in_the_file_when_it_returns(project, tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?", "answer": "a" * 3000,
                                        "retrieved": [{"chunk_id": "c", "text": "t" * 3000}]}) + "\n"
                            for i in range(1200)))
    before = project.path.stat().st_size
    import_run(project, path, "v1")
    assert project.path.stat().st_size > before + 1200 * 6000    # copied by the helper, not left in the log
    assert project.pragma("wal_autocheckpoint") == 1000
    with pytest.raises(ImportFailed, match="already exists"):
        import_run(project, path, "v1")
    assert project.pragma("wal_autocheckpoint") == 1000


def test_two_blocks_at_once_leave_the_automatic_checkpoint_on_when_the_last_ends(project):
    """Two imports on two threads of the app: the first to end must not turn the checkpoint back on under the
    second, nor the second leave it off for the session."""
    first = project.checkpoint_behind()
    second = project.checkpoint_behind()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert project.pragma("wal_autocheckpoint") == 0
    second.__exit__(None, None, None)
    assert project.pragma("wal_autocheckpoint") == 1000


def test_the_import_says_it_is_writing_the_file_until_the_copy_is_done(project, tmp_path, monkeypatch):
    """'done' comes after the helper's copy, not before the wait for it."""
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.store.project import Checkpoint

    said: list[str] = []
    join = Checkpoint.join
    monkeypatch.setattr(Checkpoint, "join", lambda self: (said.append("(copy waited for)"), join(self))[1])
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"id": "q", "question": "Q?", "answer": "a", "retrieved": []}) + "\n")
    import_run(project, path, "v1", ctx=TaskContext(on_progress=lambda done, total, message: said.append(message)))
    assert said[-3:] == ["writing the project file", "(copy waited for)", "done"]
