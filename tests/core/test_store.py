"""The project file: creation, refusal, migration, the writer lane, backups, concurrent processes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rageval_desktop.core.base.errors import ProjectExists, ProjectRefused, WriteFailed
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store.changes import Area, Changes
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from tests.conftest import file_digest

EXPECTED_TABLES = {
    "meta", "slices", "golden_rows", "golden_edits", "golden_versions", "golden_version_rows", "corpus_chunks",
    "runs", "run_rows", "retrieved_passages", "rubrics", "judges", "jobs", "judgments", "review_samples",
    "review_sample_rows", "human_ratings", "agreement_reports", "audit_log", "embeddings", "llm_cache", "prices",
}


def test_create_sets_identity_wal_and_schema(tmp_path):
    path = tmp_path / "p.rageval"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables >= EXPECTED_TABLES
    slices = [r[0] for r in conn.execute("SELECT name FROM slices ORDER BY position")]
    assert slices == []  # was: six demo slices with 0 rows; a project has the slices its data brings


def test_connections_enforce_foreign_keys_and_busy_timeout(project):
    conn = project.reader()
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    with pytest.raises(WriteFailed, match="FOREIGN KEY") as failed, project.write("bad") as w:
        w.execute("INSERT INTO run_rows (run_id, position, external_id, question) VALUES (999, 1, 'x', 'q')")
    assert failed.value.kind == "constraint" and isinstance(failed.value.__cause__, sqlite3.IntegrityError)


def test_create_refuses_existing_file(tmp_path):
    path = tmp_path / "p.rageval"
    path.write_text("keep me")
    with pytest.raises(ProjectExists):
        Project.create(path)
    assert path.read_text() == "keep me"


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"hello, I am a text file\n" * 10, "not an SQLite database"),
])
def test_refuses_non_databases_untouched(tmp_path, content, message):
    path = tmp_path / "x.rageval"
    path.write_bytes(content)
    with pytest.raises(ProjectRefused, match=message):
        Project.open(path)
    assert path.read_bytes() == content


def test_refuses_other_application_untouched(tmp_path):
    path = tmp_path / "other.rageval"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    before = file_digest(path)
    with pytest.raises(ProjectRefused, match="another application"):
        Project.open(path)
    assert file_digest(path) == before
    assert not (tmp_path / "other.rageval-wal").exists()


def test_refuses_newer_schema_untouched(tmp_path):
    path = tmp_path / "new.rageval"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = file_digest(path)
    with pytest.raises(ProjectRefused, match="newer RAGEval"):
        Project.open(path)
    assert file_digest(path) == before


def test_refuses_damaged_file_untouched(tmp_path):
    path = tmp_path / "bad.rageval"
    with Project.create(path) as p, p.write("fill") as w:
        w.executemany("INSERT INTO corpus_chunks (chunk_id, doc_id, text) VALUES (?, 'd', ?)",
                      [(f"c{i}", "text " * 200) for i in range(400)])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")  # fold the WAL in so the damage lands in the main file
    conn.close()
    raw = bytearray(path.read_bytes())
    page = 4096
    for offset in range(3 * page, 12 * page, page):  # smash b-tree page headers
        raw[offset:offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))
    before = file_digest(path)
    with pytest.raises(ProjectRefused, match="damaged"):
        Project.open(path)
    assert file_digest(path) == before


def _make_v1(path):
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.executescript(MIGRATIONS[0].sql + "\nPRAGMA user_version = 1;")
    conn.execute("INSERT INTO meta VALUES ('name', 'old')")
    conn.commit()
    conn.close()


def test_migration_takes_a_backup_first_and_upgrades(tmp_path):
    path = tmp_path / "old.rageval"
    _make_v1(path)
    with Project.open(path) as p:
        assert p.schema_version() == SCHEMA_VERSION
        assert p.meta("name") == "old"
        tables = {r[0] for r in p.reader().execute("SELECT name FROM sqlite_master")}
        assert "embeddings" in tables
        actions = [r[0] for r in p.reader().execute("SELECT action FROM audit_log")]
        assert "migrate" in actions
    saved = backups.list_backups(path)
    assert len(saved) == 1 and "pre-migration-v1" in saved[0].name
    conn = sqlite3.connect(saved[0])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT value FROM meta WHERE key = 'name'").fetchone()[0] == "old"
    conn.close()


def test_open_without_migrate_refuses_old_schema(tmp_path):
    path = tmp_path / "old.rageval"
    _make_v1(path)
    with pytest.raises(ProjectRefused, match="needs migrating"):
        Project.open(path, migrate=False)


def test_failed_write_rolls_back(project):
    with pytest.raises(RuntimeError), project.write("half") as w:
        w.execute("INSERT INTO meta VALUES ('a', 'b')")
        raise RuntimeError("boom")
    assert project.meta("a") is None


def test_listeners_hear_what_changed_typed(project):
    heard = []
    project.listeners.append(heard.append)
    with project.write("rename", changed=(Area.SETTINGS,)) as w:
        w.execute("UPDATE meta SET value = 'x' WHERE key = 'name'")
    assert heard == [Changes("rename", frozenset({Area.SETTINGS}))]
    assert heard[0].touches(Area.SETTINGS, Area.JUDGES) and not heard[0].touches(Area.JUDGES)


def test_changes_carry_their_initiator_on_the_thread_that_said_it(project):
    import threading

    heard = []
    project.listeners.append(heard.append)
    with project.initiated_by("page:audit"):
        with project.write("rename", changed=(Area.SETTINGS,)) as w:
            w.execute("UPDATE meta SET value = 'x' WHERE key = 'name'")
        def elsewhere() -> None:      # another thread: not initiated
            with project.write("rename", changed=(Area.SETTINGS,)) as w:
                w.execute("UPDATE meta SET value = 'y' WHERE key = 'name'")

        other = threading.Thread(target=elsewhere)
        other.start()
        other.join()
    with project.write("rename", changed=(Area.SETTINGS,)) as w:
        w.execute("UPDATE meta SET value = 'z' WHERE key = 'name'")
    assert [c.initiator for c in heard] == ["page:audit", None, None]


def test_a_write_names_only_areas_that_exist(project):
    """Free strings were never checked: a typo ("judgement") refreshed nothing. Now it fails at the write."""
    with pytest.raises(ValueError, match="judgement"), project.write("x", changed=("judgement",)):
        pass


def test_backups_rotate_and_are_consistent(project):
    for i in range(backups.KEEP + 3):
        with project.write("n") as w:
            w.execute("INSERT OR REPLACE INTO meta VALUES ('n', ?)", (str(i),))
        project.backup(f"step{i}")
    saved = backups.list_backups(project.path)
    assert len(saved) == backups.KEEP
    newest = sqlite3.connect(saved[-1])
    assert newest.execute("SELECT value FROM meta WHERE key = 'n'").fetchone()[0] == str(backups.KEEP + 2)
    assert newest.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    newest.close()


def test_periodic_backup_only_when_changed(project):
    assert project.backup_if_changed(min_interval_s=0) is None
    with project.write("n") as w:
        w.execute("INSERT INTO meta VALUES ('k', 'v')")
    assert project.backup_if_changed(min_interval_s=0) is not None
    assert project.backup_if_changed(min_interval_s=0) is None


WRITER = textwrap.dedent("""
    import sys
    from rageval_desktop.core.store.project import Project
    p = Project.open(sys.argv[1])
    for i in range(300):
        with p.write("w") as w:
            w.execute("INSERT INTO corpus_chunks (chunk_id, doc_id, text) VALUES (?, 'd', 'x')",
                      (f"{sys.argv[2]}-{i}",))
    p.close()
""")


def test_two_processes_write_safely(tmp_path):
    path = tmp_path / "shared.rageval"
    Project.create(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag]) for tag in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with Project.open(path) as p:
        assert p.reader().execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0] == 600
        assert p.reader().execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_v5_migration_rebuilds_judges_without_losing_what_points_at_them(tmp_path):
    """v5 rebuilds the judges table (a new kind, 'hhem'); with foreign keys on, dropping the old table would
    cascade-delete every judgment — the migration must keep them, and foreign keys must be on again after."""
    path = tmp_path / "v4.rageval"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.executescript("\n".join(m.sql for m in MIGRATIONS[:4]) + "\nPRAGMA user_version = 4;")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("INSERT INTO runs (id, name, created_at) VALUES (1, 'v1', 'now')")
    conn.execute("INSERT INTO run_rows (id, run_id, position, external_id, question) VALUES (1, 1, 0, 'q1', 'Why?')")
    conn.execute("INSERT INTO judges (id, name, metric, kind, created_at) "
                 "VALUES (7, 'j', 'correctness', 'lexical', 'now')")
    conn.execute("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                 "VALUES (7, 1, 'k', 'ok', 3, 'now')")
    conn.commit()
    conn.close()
    with Project.open(path) as p:
        assert p.schema_version() == SCHEMA_VERSION
        r = p.reader()
        assert r.execute("SELECT judge_id, score FROM judgments").fetchall() == [(7, 3.0)]
        assert r.execute("SELECT name, kind FROM judges").fetchall() == [("j", "lexical")]
        with p.write("test") as w:
            w.execute("INSERT INTO judges (name, metric, kind, created_at) VALUES ('h', 'hallucination', 'hhem', 'n')")
            assert w.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            with pytest.raises(sqlite3.IntegrityError):
                w.execute("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, created_at) "
                          "VALUES (999, 1, 'x', 'error', 'now')")


def test_the_v6_migration_keeps_every_sample_row_as_a_row_target(tmp_path):
    """v6 rebuilds review_sample_rows with an item column in its key: a v5 sample's rows become row targets
    (item 0) in their order, and its ratings keep counting; generated nugget lists get their judge's scope."""
    from rageval_desktop.core.review.sampling import get_sample

    path = tmp_path / "v5.rageval"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.executescript("\n".join(m.sql for m in MIGRATIONS[:5]) + "\nPRAGMA user_version = 5;")
    conn.execute("INSERT INTO runs (id, name, created_at) VALUES (1, 'v1', 'now')")
    conn.executemany("INSERT INTO run_rows (id, run_id, position, external_id, question) VALUES (?, 1, ?, ?, 'Q?')",
                     [(i, i, f"q{i}") for i in (1, 2, 3)])
    conn.execute("INSERT INTO review_samples (id, run_id, metric, seed, created_at) VALUES (4, 1, 'correctness', 0, "
                 "'now')")
    conn.executemany("INSERT INTO review_sample_rows (sample_id, run_row_id, position, stratum) VALUES (4, ?, ?, 's')",
                     [(3, 0), (1, 1), (2, 2)])
    conn.execute("INSERT INTO human_ratings (run_row_id, metric, reviewer, score, sample_id, created_at) "
                 "VALUES (3, 'correctness', 'ann', 4, 4, 'now')")
    conn.execute("INSERT INTO judges (id, name, metric, kind, created_at) VALUES (7, 'nug', 'nuggets', 'llm', 'now')")
    conn.executemany("INSERT INTO nugget_lists (question_key, scope, status, question, nuggets, judge_id, updated_at) "
                     "VALUES ('g1', ?, ?, 'Q?', '[]', ?, 'now')",
                     [("run:1", "generated", 7), ("golden", "edited", None)])
    conn.commit()
    conn.close()
    with Project.open(path) as p:
        assert p.schema_version() == SCHEMA_VERSION
        sample = get_sample(p, 4)
        assert (sample.row_ids, sample.items, sample.keys) == ([3, 1, 2], [0, 0, 0], [None, None, None])
        assert p.reader().execute("SELECT run_row_id, passage_rank, item_key FROM human_ratings").fetchall() == [
            (3, 0, None)]
        # a generated nugget list now belongs to its run and its judge; a curated one stays 'golden'
        assert p.reader().execute("SELECT scope FROM nugget_lists ORDER BY id").fetchall() == [
            ("run:1/judge:7",), ("golden",)]


def test_a_migration_a_killed_process_committed_but_never_checkpointed_is_not_run_again(tmp_path):
    """The file's header says schema 9, its WAL says 11 (the process that migrated died before a checkpoint): the
    next open migrates from what SQLite reads, WAL included — re-running v10 failed ('index already exists')."""
    from rageval_desktop.core.store.project import inspect_file

    path = tmp_path / "v9.rageval"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.executescript("\n".join(m.sql for m in MIGRATIONS[:9]) + "\nPRAGMA user_version = 9;")
    conn.close()
    killed = ("import os, sys\nfrom rageval_desktop.core.store.project import Project\n"
              "p = Project.open(sys.argv[1])\nassert p.schema_version() > 9\nos._exit(0)\n")
    subprocess.run([sys.executable, "-c", killed, str(path)], check=True, timeout=120)
    assert Path(f"{path}-wal").exists() and inspect_file(path)[1] == 9     # the header lags the WAL
    with Project.open(path) as p:
        assert p.schema_version() == SCHEMA_VERSION
        assert p.reader().execute("SELECT COUNT(*) FROM audit_log WHERE action = 'migrate'").fetchone()[0] == \
            SCHEMA_VERSION - 9                                              # v10, v11...: each ran once
