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
from rageval_desktop.core.store.schema import SCHEMA_VERSION


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
            "slices": slices, "runs": runs,
            "judgments": r.execute("SELECT COUNT(*) FROM judgments").fetchone()[0],
            "corpus_chunks": r.execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0],
            "human_ratings": r.execute("SELECT COUNT(*) FROM human_ratings WHERE withdrawn_at IS NULL").fetchone()[0]}


def reported(p: Project) -> dict:
    info = project_info(p)
    return {"golden_rows": info["golden_rows"], "golden_rows_retired": info["golden_rows_retired"],
            "slices": info["slices"], "runs": [{k: r[k] for k in ("name", "rows", "linked")} for r in info["runs"]],
            **{k: info[k] for k in ("judgments", "corpus_chunks", "human_ratings")}}


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
        DROP TRIGGER judgments_count_insert; DROP TRIGGER judgments_count_delete;
        DROP TRIGGER corpus_chunks_count_insert; DROP TRIGGER corpus_chunks_count_delete;
        DROP TRIGGER human_ratings_count_insert; DROP TRIGGER human_ratings_count_delete;
        DROP TRIGGER human_ratings_count_update; DROP TABLE table_counts;   -- and v18
        DROP TABLE reviewer_hold_ratings; DROP TABLE reviewer_holds; DROP TABLE reviewer_checks;   -- and v19
        ALTER TABLE judgments DROP COLUMN confidence; ALTER TABLE llm_cache DROP COLUMN logprobs;   -- and v20
        DROP TABLE review_pack_checks;   -- and v21 (reviewer_checks.origin: with its table)
        DROP TRIGGER run_values_new_run; DROP TRIGGER run_values_run_gone; DROP TRIGGER run_values_row_insert;
        DROP TRIGGER run_values_row_update; DROP TRIGGER run_values_row_delete;
        DROP TRIGGER run_values_passage_update; DROP TRIGGER run_values_passage_delete;
        DROP TRIGGER run_values_golden_insert; DROP TRIGGER run_values_golden_update;
        DROP TRIGGER run_values_golden_delete; DROP TABLE run_values;   -- and v22
        DROP TRIGGER run_values_judgment_insert; DROP TRIGGER run_values_judgment_update;
        DROP TRIGGER run_values_judgment_delete;
        DROP TABLE outside_keys; DROP TABLE outside_exports; DROP TABLE review_pack_rows;   -- and v24
        DROP TABLE pair_packs; DROP TABLE pair_judgments; DROP TABLE pair_ratings; DROP TABLE pair_sample_rows;
        DROP TABLE pair_samples;   -- and v25
        PRAGMA user_version = 15; COMMIT;""")
    conn.close()
    with Project.open(path) as p:
        assert p.schema_version() == SCHEMA_VERSION
        assert reported(p) == counted(p) and reported(p)["golden_rows"] == 72


def test_judgments_chunks_and_ratings_counts_follow_every_change(tmp_path):
    """Schema 18: what `info` reports of judgments, corpus chunks and ratings (not withdrawn) is kept by triggers:
    a job's inserts, a re-run that inserts nothing, a rating withdrawn, a run deleted with its judgments and ratings
    (CASCADE), a ratings import that ignores a duplicate, a corpus imported and deleted."""
    from rageval_desktop.core.importers import import_corpus
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.review import ratings

    run = [{"id": f"q{i}", "question": f"Question {i}?", "answer": f"answer {i}", "gold_answer": f"answer {i}",
            "retrieved": [{"chunk_id": f"c{i}", "text": "t"}]} for i in range(8)]
    _write(tmp_path / "r.jsonl", run)
    _write(tmp_path / "corpus.jsonl", [{"chunk_id": f"c{i}", "text": f"chunk {i}"} for i in range(5)])
    with Project.create(tmp_path / "c.rageval") as p:
        import_run(p, tmp_path / "r.jsonl", "v1")
        import_run(p, tmp_path / "r.jsonl", "v2")
        add_judge(p, "lex", "correctness", "lexical")
        run_judge_job(p, JobSpec(run="v1", judges=["lex"]))
        run_judge_job(p, JobSpec(run="v2", judges=["lex"]))
        assert reported(p) == counted(p) and reported(p)["judgments"] == 16
        run_judge_job(p, JobSpec(run="v1", judges=["lex"]))               # a re-run: nothing new
        assert reported(p)["judgments"] == 16
        rows = [r for (r,) in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
        given = [ratings.rate(p, r, "correctness", "ann", 4) for r in rows[:3] + rows[8:10]]
        assert reported(p) == counted(p) and reported(p)["human_ratings"] == 5
        ratings.withdraw(p, given[0].id)                                      # withdrawn: no longer counted
        assert reported(p) == counted(p) and reported(p)["human_ratings"] == 4
        import_corpus(p, tmp_path / "corpus.jsonl")
        assert reported(p) == counted(p) and reported(p)["corpus_chunks"] == 5
        with p.write("delete a run") as w:                                 # its judgments and ratings go (CASCADE)
            w.execute("DELETE FROM runs WHERE name = 'v2'")
        with p.write("delete chunks") as w:
            w.execute("DELETE FROM corpus_chunks WHERE chunk_id IN ('c0', 'c1')")
        assert reported(p) == counted(p)
        assert (reported(p)["judgments"], reported(p)["human_ratings"], reported(p)["corpus_chunks"]) == (8, 2, 3)
