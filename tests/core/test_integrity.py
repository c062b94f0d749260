"""Opening checks only what is cheap; every page is read by `rageval check` and after an unclean shutdown (issue 15).

A page deep in the file (a corpus leaf) is damaged here: the cheap check on open cannot see it — by design, its cost
must not grow with the file — so these tests pin down the two places that must still find it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.errors import ProjectRefused
from rageval_desktop.core.store import integrity
from rageval_desktop.core.store.project import Project
from tests.conftest import REPO, file_digest

PAGE = 4096
CRASH = """
import os, sys
from rageval_desktop.core.store.project import Project
p = Project.open(sys.argv[1])
with p.write("a change") as w:
    w.execute("INSERT INTO meta (key, value) VALUES ('crashed-after', 'yes')")
p.pragma("wal_checkpoint(TRUNCATE)")
os._exit(0)   # killed: no close
"""


def _big(path: Path) -> None:
    with Project.create(path) as p, p.write("fill") as w:
        w.executemany("INSERT INTO corpus_chunks (chunk_id, doc_id, text) VALUES (?, 'd', ?)",
                      [(f"c{i:05d}", f"chunk {i} " + "text " * 150) for i in range(3000)])


def _damage_deep_page(path: Path) -> None:
    """Smash a page near the end of the file (a corpus_chunks leaf or its index), far from anything an open reads."""
    raw = bytearray(path.read_bytes())
    pages = len(raw) // PAGE
    at = (pages - 40) * PAGE
    raw[at:at + PAGE] = b"\xa5" * PAGE
    path.write_bytes(bytes(raw))


def _sessions(path: Path) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [k for (k,) in conn.execute("SELECT key FROM meta WHERE key LIKE 'session/%'")]
    finally:
        conn.close()


def _crash(path: Path) -> None:
    subprocess.run([sys.executable, "-c", CRASH, str(path)], check=True, cwd=REPO)


def test_a_clean_close_leaves_no_session_and_a_sound_file_checks_ok(tmp_path, capsys):
    path = tmp_path / "p.rageval"
    _big(path)
    with Project.open(path) as p:
        assert _sessions(path) == [integrity.session_key()]
        assert not p.check_due
    assert _sessions(path) == []
    assert main(["check", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # the default reads every index against its table too (issue 28: quick_check called damaged files sound)
    assert report["ok"] is True and report["kind"] == "integrity_check" and report["problems"] == []
    assert main(["check", str(path), "--quick"]) == 0
    assert "sound (quick_check" in capsys.readouterr().out
    assert main(["check", str(path), "--full"]) == 0          # the old flag, still accepted
    assert "sound (integrity_check" in capsys.readouterr().out


def test_a_damaged_deep_page_is_not_read_on_open_but_rageval_check_finds_it(tmp_path, capsys):
    path = tmp_path / "p.rageval"
    _big(path)
    with Project.open(path) as p:
        p.backup("manual")
    _damage_deep_page(path)
    with Project.open(path) as p:          # the open's cost does not depend on the file: it cannot see the page
        assert not p.check_due
    digest = file_digest(path)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().err
    assert "the file is damaged (integrity_check" in out and f"rageval restore {path}" in out
    assert main(["check", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False
    assert file_digest(path) == digest      # checking never writes


def test_after_an_unclean_shutdown_the_next_open_reads_every_page_and_refuses_damage(tmp_path):
    path = tmp_path / "p.rageval"
    _big(path)
    with Project.open(path) as p:
        p.backup("manual")
    _crash(path)
    assert len(_sessions(path)) == 1                  # the killed process's record stayed
    _damage_deep_page(path)
    with pytest.raises(ProjectRefused) as refused:
        Project.open(path)
    message = str(refused.value)
    assert "damaged (quick_check" in message and "after an unclean shutdown" in message
    assert "rageval restore" in message
    with pytest.raises(ProjectRefused):               # a failed check clears nothing: still refused
        Project.open(path, read_only=True)
    deferred = Project.open(path, check="defer")     # the app: opens at once, checks in the background
    try:
        assert deferred.check_due
        report = integrity.check_after_unclean_shutdown(deferred)
        assert report is not None and not report.ok and report.reason == "unclean shutdown"
    finally:
        deferred.close()


def test_an_unclean_shutdown_of_a_sound_file_is_checked_once_then_forgotten(tmp_path, monkeypatch):
    path = tmp_path / "p.rageval"
    _big(path)
    _crash(path)
    calls = []
    real = integrity.check
    monkeypatch.setattr(integrity, "check", lambda *a, **k: calls.append(k) or real(*a, **k))
    with Project.open(path) as p:
        assert p.reader().execute("SELECT value FROM meta WHERE key = 'crashed-after'").fetchone() == ("yes",)
        assert p.meta(integrity.LAST_CHECK_KEY)
    assert [c.get("reason") for c in calls] == ["unclean shutdown"]
    with Project.open(path):
        pass
    assert len(calls) == 1 and _sessions(path) == []


def test_a_backup_carries_no_session_so_a_restored_file_does_not_look_crashed(tmp_path):
    path = tmp_path / "p.rageval"
    with Project.create(path) as p:
        out = p.backup("manual")
        assert _sessions(path)
    assert _sessions(out) == []


def test_reading_a_damaged_page_in_a_command_says_damaged_and_names_rageval_check(tmp_path, capsys, monkeypatch):
    """A command that reaches the damaged page later (the open could not see it) ends in plain words, exit 1."""
    import argparse

    from rageval_desktop import cli
    from rageval_desktop.cli import base

    path = tmp_path / "p.rageval"
    _big(path)
    _damage_deep_page(path)

    def read_every_chunk(args):
        with base.open_project(args.project, read_only=True) as p:
            p.reader().execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM corpus_chunks").fetchone()
        return 0

    class Parser:
        def parse_args(self, argv):
            return argparse.Namespace(project=str(path), func=read_every_chunk)

        def parse_known_args(self, argv):
            return self.parse_args(argv), []

    monkeypatch.setattr(cli, "build_parser", Parser)
    assert main([]) == 1
    err = capsys.readouterr().err
    assert "the project file is damaged" in err and f"rageval check {path}" in err


def test_read_only_opens_after_an_unclean_shutdown_check_the_unchanged_file_once(tmp_path, monkeypatch):
    """Was: a read-only open cannot record its passing check in the file, so every later read-only open (rageval
    metrics, compare, report …) read every page again — 22 s per command on a 3 GB project."""
    path = tmp_path / "p.rageval"
    _big(path)
    _crash(path)
    checks: list[str] = []
    real = integrity.check
    monkeypatch.setattr(integrity, "check", lambda *a, **k: checks.append("full") or real(*a, **k))
    for _ in range(3):
        with Project.open(path, read_only=True) as p:
            assert p.reader().execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0] == 3000
    assert checks == ["full"]
    assert len(_sessions(path)) == 1                   # nothing was written to the file
    _damage_deep_page(path)                            # the file changed: checked again, and refused
    with pytest.raises(ProjectRefused):
        Project.open(path, read_only=True)
    assert checks == ["full", "full"]


def test_text_that_is_not_utf8_in_a_table_the_open_reads_is_damage_not_an_internal_error(demo_file, tmp_path, capsys):
    """Found by flipping bits in project files: one byte of a column's name in the schema. SQLite keeps any bytes as
    text, and Python's sqlite3 raised UnicodeDecodeError naming the columns of the open's cheap check (info, metrics
    and compare said "internal error")."""
    import shutil
    import sqlite3

    path = tmp_path / "p.rageval"
    shutil.copy(demo_file, path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = replace(sql, ' prompt_tokens ', ' ' || CAST(x'cf' AS TEXT) || "
                 "'rompt_tokens ') WHERE name = 'judgments'")
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert main(["info", str(path)]) == 1
    err = capsys.readouterr().err
    assert "the file is damaged (text in table judgments that is not UTF-8)" in err and "internal error" not in err


def test_a_value_that_is_not_utf8_deep_in_a_table_is_named_as_damage_without_sending_to_check(demo_file, tmp_path,
                                                                                              capsys):
    """rageval check reads pages, not text: it would call this file sound, so the message does not send the user
    there (it said "the project could not be read")."""
    import shutil
    import sqlite3

    path = tmp_path / "p.rageval"
    shutil.copy(demo_file, path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE run_rows SET answer = CAST(x'cf41' AS TEXT) WHERE id = (SELECT MAX(id) FROM run_rows)")
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert main(["failures", str(path), "--run", "v2"]) == 1
    err = capsys.readouterr().err
    assert "the project file is damaged: it holds text that is not UTF-8" in err and "rageval backups" in err
    assert "rageval check" not in err


def _break_rules(demo_file, tmp_path) -> Path:
    """The demo project with values that break their tables' rules inside sound pages, as a flipped bit or a tool
    that ignored the rules leaves them: a job's settings no longer JSON, a passage ranked 0."""
    import shutil
    import sqlite3

    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    conn.execute("UPDATE jobs SET params = '{\"run\": \"v1\"' ")
    conn.execute("UPDATE retrieved_passages SET rank = 0 WHERE run_row_id = (SELECT MIN(run_row_id) "
                 "FROM retrieved_passages) AND rank = 1")
    conn.commit()
    conn.close()
    return path


def test_rageval_check_finds_values_that_break_their_tables_rules(demo_file, tmp_path, capsys):
    """SQLite's integrity_check skips CHECK rules on a read-only connection, and a check never opens to write: a
    job's settings that were no longer JSON, or a rank of 0, were 'sound'."""
    path = _break_rules(demo_file, tmp_path)
    before = file_digest(path)
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "CHECK constraint failed in jobs (json_valid(params))" in err
    assert "CHECK constraint failed in retrieved_passages (rank >= 1): 1 row(s)" in err
    assert file_digest(path) == before                    # read-only
    assert main(["check", str(path), "--quick"]) == 0     # the quick check reads pages, not rules


def test_table_rules_are_read_from_the_schema_whatever_they_quote():
    sql = ("CREATE TABLE t (a TEXT CHECK (a IN ('x)', 'y')), -- a CHECK (in a comment)\n"
           " \"check\" INTEGER, b TEXT NOT NULL DEFAULT 'CHECK (no)' CHECK (json_valid(b)), CHECK (a != b))")
    assert integrity.table_rules(sql) == ["a IN ('x)', 'y')", "json_valid(b)", "a != b"]


def test_a_command_reading_a_stored_value_that_is_no_longer_json_names_the_damage(demo_file, tmp_path, capsys):
    """`rageval jobs list` stopped with an internal JSONDecodeError (and a crash log) on a job's damaged settings."""
    path = _break_rules(demo_file, tmp_path)
    capsys.readouterr()
    assert main(["jobs", "list", str(path)]) == 1
    err = capsys.readouterr().err
    assert "the project file is damaged: " in err and "CHECK constraint failed in jobs (json_valid(params))" in err
    assert "values that break the file's rules" in err and "internal error" not in err


def test_a_value_of_another_type_than_its_column_is_damage_check_finds_and_json_output_names(demo_file, tmp_path,
                                                                                             capsys):
    """Found by flipping bits in project files: a run row's question became bytes (a flipped bit in the record's
    header); `failures --json` stopped with an internal TypeError, and `rageval check` called the file sound."""
    import shutil
    import sqlite3

    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE run_rows SET question = CAST(question AS BLOB) WHERE id = (SELECT MIN(id) FROM run_rows)")
    conn.execute("UPDATE human_ratings SET score = 'four' WHERE rowid = (SELECT MIN(rowid) FROM human_ratings)")
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "a value of the wrong type in run_rows (question: not text): 1 row(s)" in err
    assert "a value of the wrong type in human_ratings (score: not a number): 1 row(s)" in err
    # the rating read as a number failed (a ValueError): the damage behind it is named, not an internal error
    assert main(["failures", str(path), "--run", "v1", "--json", "--sample", "1000"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "the project file is damaged: " in err and "human_ratings (score: not a number)" in err
    assert "internal error" not in err
    conn = sqlite3.connect(path)
    conn.execute("UPDATE human_ratings SET score = 4 WHERE score = 'four'")
    conn.commit()
    conn.close()
    # the question as bytes reaches the JSON: nothing half-written, the damage said
    assert main(["failures", str(path), "--run", "v1", "--json", "--sample", "1000"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "the project file is damaged: a value that should be text is stored as bytes" in err


def test_a_missing_value_where_one_is_required_is_found_though_sqlite_trusts_the_column(tmp_path):
    """Found by flipping bits: a rating's passage rank read as NULL in a NOT NULL column (every agreement read stopped
    on a NaN); SQLite answers `IS NULL` on such a column with 'never', so the rule asks the value's type."""
    import sqlite3

    path = tmp_path / "t.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    conn.execute("INSERT INTO t VALUES (NULL, 'x'), (1, 'y')")
    conn.commit()
    conn.execute("PRAGMA writable_schema = ON")     # the rule as the schema says it; the record as damage left it
    conn.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE t (a INTEGER NOT NULL, b TEXT)' WHERE name = 't'")
    conn.commit()
    conn.close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert conn.execute("SELECT COUNT(*) FROM t WHERE a IS NULL").fetchone()[0] == 0      # what SQLite says
    assert integrity.broken_rules(conn) == ["a missing value in t (a: required): 1 row(s)"]
    conn.close()


def test_a_failure_over_a_malformed_page_is_said_as_damage(tmp_path):
    """Found by fuzzing: `selective` met a score stored as bytes next to a malformed page; the search for the damage
    behind the failure met the malformed page too, gave up, and the failure was called an internal error."""
    from rageval_desktop.core.store import integrity

    path = tmp_path / "big.rageval"
    _big(path)
    _damage_deep_page(path)
    said = integrity.failure_damage(path, ValueError("could not convert string to float: b'...'"))
    assert said is not None and "the project file is damaged" in said and "malformed" in said
