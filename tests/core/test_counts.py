"""Counts kept as rows change (schema 16): `info` and the app's navigation read them instead of counting a million
rows. Every kind of change keeps them equal to a count of the rows themselves, and the migration fills them in."""

from __future__ import annotations

import json
import sqlite3

from rageval_desktop.core.golden import edits
from rageval_desktop.core.importers import import_golden, import_run
from rageval_desktop.core.store import browse
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import project_info


def counted(p: Project) -> dict:
    """What `project_info` reports, counted from the rows themselves."""
    r = p.reader()
    runs = [{"name": n, "rows": rows, "linked": linked} for n, rows, linked in r.execute(
        "SELECT r.name, COUNT(rr.id), COUNT(rr.golden_id) FROM runs r LEFT JOIN run_rows rr ON rr.run_id = r.id "
        "WHERE r.purpose = 'run' GROUP BY r.id ORDER BY r.id")]
    slices = dict(r.execute("SELECT s.name, COUNT(g.id) FROM slices s LEFT JOIN golden_rows g ON g.slice_tag = s.name "
                            "AND g.status != 'retired' GROUP BY s.name ORDER BY s.position"))
    return {"golden_rows": r.execute("SELECT COUNT(*) FROM golden_rows WHERE status != 'retired'").fetchone()[0],
            "golden_rows_retired": r.execute("SELECT COUNT(*) FROM golden_rows WHERE status = 'retired'").fetchone()[0],
            "slices": slices, "runs": runs}


def reported(p: Project) -> dict:
    info = project_info(p)
    return {"golden_rows": info["golden_rows"], "golden_rows_retired": info["golden_rows_retired"],
            "slices": info["slices"], "runs": [{k: r[k] for k in ("name", "rows", "linked")} for r in info["runs"]]}


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_counts_follow_every_change(tmp_path):
    golden = [{"id": f"g{i}", "question": f"Question {i}?", "gold_answer": "a", "gold_chunk_ids": [f"c{i}"],
               "slice_tag": ("easy", "edge", None)[i % 3]} for i in range(12)]
    _write(tmp_path / "g.jsonl", golden)
    run = [{"id": f"g{i}" if i < 10 else f"x{i}", "question": f"Question {i}?" if i < 10 else f"Other {i}?",
            "answer": "a", "retrieved": [{"chunk_id": f"c{i}", "text": "t"}]} for i in range(14)]
    _write(tmp_path / "r.jsonl", run)
    with Project.create(tmp_path / "c.rageval") as p:
        assert reported(p) == counted(p)
        import_golden(p, tmp_path / "g.jsonl")
        import_run(p, tmp_path / "r.jsonl", "v1")
        import_run(p, tmp_path / "r.jsonl", "v2")
        assert reported(p) == counted(p) and reported(p)["runs"][0] == {"name": "v1", "rows": 14, "linked": 10}
        edits.set_status(p, "g1", "retired", "test")                      # a status changes
        edits.edit_row(p, "g2", "test", slice_tag="edge")                 # a slice changes
        assert reported(p) == counted(p)
        import_run(p, tmp_path / "r.jsonl", "v1", replace=True)          # a run replaced in one transaction
        with p.write("delete a golden row") as w:                          # its run rows lose their link (SET NULL)
            w.execute("DELETE FROM golden_rows WHERE id = 'g3'")
        assert reported(p) == counted(p) and reported(p)["runs"][0]["linked"] == 9
        with p.write("delete a run") as w:                                 # its rows go with it (CASCADE)
            w.execute("DELETE FROM runs WHERE name = 'v2'")
        assert reported(p) == counted(p)
        assert [(name, rows) for _, name, rows in browse.list_runs(p)] == [("v1", 14)]


def test_the_migration_fills_the_counts_in(tmp_path, demo_file):
    import shutil

    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    conn = sqlite3.connect(path)
    conn.executescript("""BEGIN;
        DROP TRIGGER golden_counts_insert; DROP TRIGGER golden_counts_delete; DROP TRIGGER golden_counts_update;
        DROP TRIGGER run_counts_new_run; DROP TRIGGER run_counts_insert; DROP TRIGGER run_counts_delete;
        DROP TRIGGER run_counts_update; DROP TABLE golden_counts; DROP TABLE run_counts;
        DROP INDEX judgments_scores;   -- and v17's
        PRAGMA user_version = 15; COMMIT;""")
    conn.close()
    with Project.open(path) as p:
        assert p.schema_version() == 17
        assert reported(p) == counted(p) and reported(p)["golden_rows"] == 72
