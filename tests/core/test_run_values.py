"""A large run's per-row values kept once (schema v22, core.metrics.values): the numbers read from them are the
numbers read from the tables, and a part is never used once what it was read from has changed."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.metrics import rowdata, values
from rageval_desktop.core.metrics.compare import compare
from rageval_desktop.core.metrics.dashboard import dashboard
from rageval_desktop.core.metrics.rowdata import keep_values
from rageval_desktop.core.store.browse import list_runs
from rageval_desktop.core.store.queries import project_info


def _rid(p, run: str) -> int:
    return p.reader().execute("SELECT id FROM runs WHERE name = ?", (run,)).fetchone()[0]


def _kept(p, run: str) -> set[str]:
    return set(values.stored(p.reader(), _rid(p, run)))


def _numbers(p, run: str) -> str:
    return json.dumps(dashboard(p, run), sort_keys=True, default=str)


def test_the_numbers_read_from_kept_values_are_the_tables_numbers(demo):
    runs = [name for _, name, _ in list_runs(demo)]
    read = {run: _numbers(demo, run) for run in runs}
    compared = json.dumps(compare(demo, runs[0], runs[1]), sort_keys=True, default=str)
    for run in runs:
        assert _kept(demo, run) == set()
        assert keep_values(demo, _rid(demo, run)) == ()          # the demo's runs are small: nothing kept
        assert keep_values(demo, _rid(demo, run), minimum=0) == values.PARTS
        assert _kept(demo, run) == set(values.PARTS)
        assert keep_values(demo, _rid(demo, run), minimum=0) == ()   # kept already: nothing read again
        found = {r["name"]: r["values_kept"] for r in project_info(demo)["runs"]}[run]
        assert found == sorted(values.PARTS)                             # `rageval info` says so
    assert {run: _numbers(demo, run) for run in runs} == read
    assert json.dumps(compare(demo, runs[0], runs[1]), sort_keys=True, default=str) == compared


def test_every_change_takes_away_the_parts_it_touches(demo):
    run = list_runs(demo)[0][1]
    rid = _rid(demo, run)

    def changed(sql: str, *params) -> set[str]:
        keep_values(demo, rid, minimum=0)
        assert _kept(demo, run) == set(values.PARTS)
        with demo.write("test: a change") as w:
            w.execute(sql, params)
        left = _kept(demo, run)
        assert _numbers(demo, run) == live(), sql     # what is read is the tables' numbers, whatever is left
        return left

    def live() -> str:
        hold = values.stored
        values.stored = lambda conn, rid: {}
        try:
            return _numbers(demo, run)
        finally:
            values.stored = hold

    row, golden = demo.reader().execute("SELECT id, golden_id FROM run_rows WHERE run_id = ? AND golden_id IS NOT "
                                        "NULL ORDER BY id LIMIT 1", (rid,)).fetchone()
    judge = demo.reader().execute("SELECT judge_id FROM judgments WHERE run_row_id = ?", (row,)).fetchone()[0]
    assert changed("UPDATE judgments SET score = 0 WHERE run_row_id = ?", row) == {"rows", "passages"}
    assert changed("DELETE FROM judgments WHERE run_row_id = ? AND judge_id = ?", row, judge) == {"rows", "passages"}
    assert changed("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                   "VALUES (?, ?, 'test', 'ok', 1, ?)", judge, row, utcnow()) == {"rows", "passages"}
    assert changed("UPDATE judgments SET rationale = 'why' WHERE run_row_id = ?", row) == set(values.PARTS)
    assert changed("UPDATE retrieved_passages SET chunk_id = 'elsewhere' WHERE run_row_id = ? AND rank = 1",
                   row) == {"rows", "judgments"}
    assert changed("DELETE FROM retrieved_passages WHERE run_row_id = ? AND rank = 2", row) == {"rows", "judgments"}
    assert changed("UPDATE golden_rows SET gold_chunk_ids = '[\"elsewhere\"]' WHERE id = ?", golden) == {"judgments"}
    assert changed("UPDATE golden_rows SET slice_tag = 'edge' WHERE id = ?", golden) == {"judgments"}
    assert changed("UPDATE golden_rows SET question = 'Reworded?' WHERE id = ?", golden) == set(values.PARTS)
    # a golden row no run row names changes nothing a run reads
    assert changed("INSERT INTO golden_rows (id, question, question_norm, created_at, updated_at) "
                   "VALUES ('new', 'New?', 'new?', '', '')") == set(values.PARTS)
    # golden rowids renumbered without a trigger firing (as SQLite says an outside VACUUM may): the rows part's
    # question keys are no longer the golden rows', and it is not used
    assert changed("UPDATE golden_rows SET rowid = rowid + 100000") == {"judgments", "passages"}
    # its rows lose their link (ON DELETE SET NULL: an update of the rows)
    assert changed("DELETE FROM golden_rows WHERE id = ?", golden) == set()
    assert changed("UPDATE run_rows SET latency_ms = 1 WHERE id = ?", row) == set()
    keep_values(demo, rid, minimum=0)
    with demo.write("test: the run goes") as w:
        w.execute("DELETE FROM runs WHERE id = ?", (rid,))
    assert demo.reader().execute("SELECT COUNT(*) FROM run_values WHERE run_id = ?", (rid,)).fetchone()[0] == 0


def test_a_change_while_the_values_are_read_is_not_kept(demo, monkeypatch):
    """The parts are marked, read on helper threads, then kept only where their mark survived: a judgment saved
    while they were read leaves that part out (keeping it would show stale numbers until the next change)."""
    run = list_runs(demo)[0][1]
    rid = _rid(demo, run)
    row = demo.reader().execute("SELECT MIN(id) FROM run_rows WHERE run_id = ?", (rid,)).fetchone()[0]
    reads = list(rowdata.READS)

    def judgments_then_a_job_saves_one(project, run_id):
        out = reads[1](project, run_id)
        with project.write("test: a job saves a judgment") as w:
            w.execute("UPDATE judgments SET score = 0 WHERE run_row_id = ?", (row,))
        return out

    monkeypatch.setattr(rowdata, "READS", (reads[0], judgments_then_a_job_saves_one, reads[2]))
    assert set(keep_values(demo, rid, minimum=0)) == {"rows", "passages"}
    assert _kept(demo, run) == {"rows", "passages"}


def test_a_damaged_or_foreign_blob_is_not_used(demo):
    run = list_runs(demo)[0][1]
    rid = _rid(demo, run)
    before = _numbers(demo, run)
    keep_values(demo, rid, minimum=0)
    blob = demo.reader().execute("SELECT data FROM run_values WHERE run_id = ? AND part = 'judgments'",
                                 (rid,)).fetchone()[0]
    for bad in (b"", b"PK\x03\x04 not ours", blob[:-3], blob + b"\x00", blob.replace(b"<i", b"|O", 1), None,
                "RVV1 text, not bytes"):
        with demo.write("test: damage") as w:
            w.execute("UPDATE run_values SET data = ? WHERE run_id = ? AND part = 'judgments'", (bad, rid))
        assert _kept(demo, run) == {"rows", "passages"}
        assert _numbers(demo, run) == before
    assert keep_values(demo, rid, minimum=0) == ("judgments",)        # read again, and kept


@pytest.mark.parametrize("value", [[0, 1, 2**31, -(2**40)], [0.1, float("nan"), 1e300, -0.0, float("inf")],
                                   [1.0, 2.5, float("nan")], []])
def test_numbers_come_back_exactly_in_the_dtype_they_went_in(value):
    import numpy as np

    array = np.asarray(value, dtype=float if any(isinstance(v, float) for v in value) else np.int64)
    back = values.decode("judgments", values.encode("judgments", (array, array, array, array, array)))
    assert back is not None
    assert back[0].dtype == array.dtype and np.array_equal(back[0], array, equal_nan=True)
    assert np.signbit(back[0]).tolist() == np.signbit(array).tolist()
    back[0][:0] = 0          # writable (frames are built on them)


def test_an_import_and_a_job_keep_a_large_runs_values(tmp_path, monkeypatch):
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.store.project import Project
    from tests.support.capitals import short_capitals

    monkeypatch.setattr(values, "KEEP_FROM", 20)
    small = short_capitals(tmp_path, 12)
    with Project.open(small) as p:
        assert _kept(p, "v1") == set()            # 12 rows: under the size from which values are kept
    (tmp_path / "c.rageval").rename(tmp_path / "small.rageval")
    path = short_capitals(tmp_path, 30)
    with Project.open(path) as p:
        assert _kept(p, "v1") == set(values.PARTS)
        before = _numbers(p, "v1")
        add_judge(p, "lex", "correctness", "lexical")
        assert _kept(p, "v1") == set(values.PARTS)
        stats = run_judge_job(p, JobSpec(run="v1", judges=["lex"]))
        assert stats.done == 30
        assert _kept(p, "v1") == set(values.PARTS)      # the judgments the job saved, kept again at its end
        after = _numbers(p, "v1")
        assert after != before and "correctness" in json.loads(after)["judge_metrics"]
        hold = values.stored
        monkeypatch.setattr(values, "stored", lambda conn, rid: {})
        assert _numbers(p, "v1") == after
        monkeypatch.setattr(values, "stored", hold)
        with p.write("test: as a file from before v22 left it") as w:
            w.execute("DELETE FROM run_values")
        again = run_judge_job(p, JobSpec(run="v1", judges=["lex"]))
        assert again.done == 0 and _kept(p, "v1") == set(values.PARTS)   # a job with nothing to do keeps them


def test_a_golden_import_keeps_again_what_it_took_away(demo, monkeypatch, tmp_path):
    """Re-importing the golden set with new gold ids or slices takes the linked runs' parts away (their triggers);
    the import then keeps them again, so metrics stay quick, and they are the tables' numbers."""
    from rageval_desktop.core.importers.golden_import import import_golden

    monkeypatch.setattr(values, "KEEP_FROM", 1)
    runs = [name for _, name, _ in list_runs(demo)]
    for run in runs:
        keep_values(demo, _rid(demo, run))
        assert _kept(demo, run) == set(values.PARTS)
    golden, question, slice_tag = demo.reader().execute(
        "SELECT id, question, slice_tag FROM golden_rows WHERE id IN (SELECT golden_id FROM run_rows) "
        "ORDER BY id LIMIT 1").fetchone()
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps({"id": golden, "question": question, "gold_chunk_ids": ["elsewhere"],
                                "slice_tag": "edge" if slice_tag != "edge" else "easy"}) + "\n")
    seen = []
    hold = rowdata.keep_values

    def watched(project, rid, **kw):
        seen.append((rid, set(_kept(project, next(r for r in runs if _rid(project, r) == rid)))))
        return hold(project, rid, **kw)

    monkeypatch.setattr(rowdata, "keep_values", watched)
    report = import_golden(demo, path)
    assert report.updated == 1 and not [w for w in report.warnings if "not kept" in w]
    assert {rid for rid, _ in seen} == {_rid(demo, run) for run in runs}
    assert all(before == {"judgments"} for _, before in seen)      # the change took the two parts away ...
    for run in runs:
        assert _kept(demo, run) == set(values.PARTS)               # ... and the import kept them again
    monkeypatch.setattr(values, "stored", lambda conn, rid: {})
    live = {run: _numbers(demo, run) for run in runs}
    monkeypatch.undo()
    assert {run: _numbers(demo, run) for run in runs} == live


def test_values_kept_in_a_v22_file_are_carried_over_to_a_table_with_rowids(demo_file, tmp_path):
    """v22 kept the blobs in a WITHOUT ROWID table, where every lookup read whole rows on its way down (megabytes
    each); v23 moves them to a table whose key is an index, keeping what was kept."""
    import shutil
    import sqlite3

    from rageval_desktop.core.store.project import Project

    path = tmp_path / "old.rageval"
    shutil.copy(demo_file, path)
    with Project.open(path) as p:
        rid = _rid(p, list_runs(p)[0][1])
        keep_values(p, rid, minimum=0)
        before = {part: p.reader().execute("SELECT data FROM run_values WHERE run_id = ? AND part = ?",
                                           (rid, part)).fetchone()[0] for part in values.PARTS}
        numbers = _numbers(p, list_runs(p)[0][1])
    conn = sqlite3.connect(path)       # the file as v22 left it
    conn.executescript("""
        CREATE TABLE v22 (run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                          part TEXT NOT NULL CHECK (part IN ('rows', 'judgments', 'passages')), data BLOB,
                          PRIMARY KEY (run_id, part)) WITHOUT ROWID;
        INSERT INTO v22 SELECT run_id, part, data FROM run_values;
        DROP TABLE run_values;
        PRAGMA legacy_alter_table = ON;
        ALTER TABLE v22 RENAME TO run_values;
        DROP TABLE outside_keys; DROP TABLE outside_exports; DROP TABLE review_pack_rows;   -- v24's
        DROP TABLE pair_packs; DROP TABLE pair_judgments; DROP TABLE pair_ratings; DROP TABLE pair_sample_rows;
        DROP TABLE pair_samples;   -- and v25's
        PRAGMA user_version = 22;""")
    conn.close()
    with Project.open(path) as p:
        plan = " ".join(str(r) for r in p.reader().execute(
            "EXPLAIN QUERY PLAN SELECT data FROM run_values WHERE run_id = ? AND part = ?", (rid, "rows")))
        assert "INDEX" in plan and "PRIMARY KEY" not in plan, plan     # looked up by its index, then one row read
        assert {part: p.reader().execute("SELECT data FROM run_values WHERE run_id = ? AND part = ?",
                                         (rid, part)).fetchone()[0] for part in values.PARTS} == before
        assert _kept(p, list_runs(p)[0][1]) == set(values.PARTS)
        assert _numbers(p, list_runs(p)[0][1]) == numbers
        with p.write("test: a judgment changes") as w:     # the v22 triggers still take a part away
            w.execute("UPDATE judgments SET score = 0 WHERE run_row_id = (SELECT MIN(id) FROM run_rows "
                      "WHERE run_id = ?)", (rid,))
        assert _kept(p, list_runs(p)[0][1]) == {"rows", "passages"}


def test_an_undone_golden_edit_keeps_the_values_again(demo_file, tmp_path, monkeypatch):
    """`rageval undo` of a golden edit changes the row back (its trigger takes the linked runs' parts away); the
    command then keeps them again, as a golden import does."""
    import shutil

    from rageval_desktop.cli import main
    from rageval_desktop.core import ops
    from rageval_desktop.core.store.project import Project

    monkeypatch.setattr(values, "KEEP_FROM", 1)
    path = tmp_path / "demo.rageval"
    shutil.copy(demo_file, path)
    with Project.open(path) as p:
        golden = p.reader().execute("SELECT golden_id FROM run_rows WHERE golden_id IS NOT NULL ORDER BY id "
                                    "LIMIT 1").fetchone()[0]
        ops.run(p, ops.EditGoldenRow(id=golden, fields={"slice_tag": "edge"}, reason="test"),
                initiator="test")
        rowdata.keep_missing_values(p)
        runs = [name for _, name, _ in list_runs(p)]
        assert all(_kept(p, run) == set(values.PARTS) for run in runs)
    assert main(["undo", str(path), "--yes"]) == 0
    with Project.open(path) as p:
        assert p.reader().execute("SELECT slice_tag FROM golden_rows WHERE id = ?", (golden,)).fetchone()[0] != "edge"
        assert all(_kept(p, run) == set(values.PARTS) for run in runs)


def test_values_kept_a_part_at_a_time_are_those_kept_at_once(demo):
    """The app's background upkeep reads the parts one after another (less memory at once): the same blobs."""
    from rageval_desktop.core.store.changes import Area

    rid = _rid(demo, list_runs(demo)[0][1])

    def blobs() -> dict[str, bytes]:
        return dict(demo.reader().execute("SELECT part, data FROM run_values WHERE run_id = ?", (rid,)))

    assert keep_values(demo, rid, minimum=0) == values.PARTS
    at_once = blobs()
    with demo.write("test: the kept values forgotten", changed=(Area.CACHES,)) as w:
        w.execute("DELETE FROM run_values WHERE run_id = ?", (rid,))
    assert blobs() == {}
    assert keep_values(demo, rid, minimum=0, parallel=False) == values.PARTS
    assert blobs() == at_once
