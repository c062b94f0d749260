"""A judge job plans from keys first (issue 15): nothing to do costs the keys, not the rows' text, and the text of
the rows that need work is read a chunk at a time."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

from rageval_desktop.core.jobs import judge_job, work
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec, job_items
from rageval_desktop.core.judges.registry import add_judge, get_judge
from tests.conftest import REPO
from tests.core.test_judging import make_project


def test_the_fast_key_is_the_idempotency_key(tmp_path):
    p = make_project(tmp_path / "p.rageval", n=3)
    try:
        add_judge(p, "lex", "correctness", "lexical", params={"measure": "recall"})
        add_judge(p, "grades", "passage_relevance", "llm", model="m", params={"temperature": 0.3, "seed": 7})
        for name in ("lex", "grades"):
            judge = get_judge(p, name)
            maker = work.KeyMaker(judge)
            for rid, rank, against in ((1, 0, None), (12345, 3, None), (7, 0, "2:abc\\"), (9, 0, 'q"x')):
                assert maker.make(rid, rank, against) == work.idem_key(judge, rid, rank, against)
                # the bytes earlier versions hashed (stored judgments are found by them)
                sampling = {k: judge.params.get(k) for k in ("temperature", "max_tokens", "seed", "measure", "model",
                                                             "mode")}
                blob = json.dumps([judge.id, judge.rubric_id, judge.model_id, sampling, rid, rank]
                                  + ([against] if against else []), sort_keys=True)
                assert maker.make(rid, rank, against) == hashlib.sha256(blob.encode()).hexdigest()
    finally:
        p.close()


def test_a_job_with_nothing_to_do_reads_no_text_and_one_with_work_reads_it_in_chunks(tmp_path, monkeypatch):
    p = make_project(tmp_path / "p.rageval", n=40)
    try:
        add_judge(p, "lex", "correctness", "lexical")
        statements: list[str] = []
        p.reader().set_trace_callback(statements.append)
        monkeypatch.setattr(judge_job, "LOCAL_CHUNK", 16)
        first = run_judge_job(p, JobSpec(run="v1", judges=["lex"]))
        assert first.done == 40 and first.ok == 40
        text_reads = [s for s in statements if "rr.answer" in s]
        assert len(text_reads) == 3                    # 40 rows, 16 at a time: the text of each chunk, once
        # a lexical judge compares the answer with the reference: the passages (most of a row's text) stay unread
        assert not [s for s in statements if "FROM retrieved_passages" in s]
        statements.clear()
        again = run_judge_job(p, JobSpec(run="v1", judges=["lex"]))
        assert again.rows == 0 and again.skipped == 40 and again.done == 0
        assert not [s for s in statements if "rr.answer" in s or "retrieved_passages" in s]
        assert p.reader().execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 40
    finally:
        p.close()


NOOP = """
import json, sys
from rageval_desktop.cli import main
code = main(["judge", sys.argv[1], "--run", "v1", "--judge", "lex", "--json"])
print(json.dumps({"code": code, "openai": "openai" in sys.modules, "torch": "torch" in sys.modules}))
"""


def test_rageval_judge_loads_no_llm_client_when_no_call_is_made(tmp_path):
    path = tmp_path / "p.rageval"
    p = make_project(path, n=5)
    add_judge(p, "lex", "correctness", "lexical")
    p.close()
    for _ in range(2):  # the first run judges (locally), the second has nothing to do
        out = subprocess.run([sys.executable, "-c", NOOP, str(path)], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()
        facts = json.loads(out[-1])
        assert facts == {"code": 0, "openai": False, "torch": False}


def test_connection_retries_are_reported_by_kind(tmp_path, capsys, monkeypatch):
    """A server that is not there: every retry is a `connection` retry, in the stats and in the CLI's words."""
    import socket

    from rageval_desktop.cli import main

    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    path = tmp_path / "p.rageval"
    p = make_project(path, n=3)
    add_judge(p, "gone", "correctness", "llm", model="m", base_url=f"http://127.0.0.1:{port}/v1",
              api_key_ref="JUDGE_KEY", params={"timeout": 1.0, "max_retries": 1})
    p.close()
    # not one row connected: the job stopped, and says so with exit 1 (not "done")
    assert main(["judge", str(path), "--run", "v1", "--json"]) == 1
    stats = json.loads(capsys.readouterr().out)
    assert stats["errors_by_kind"] == {"connection": 3} and stats["stopped"] == "fatal"
    assert stats["retries_by_kind"] == {"connection": 3} and stats["retries"] == 3
    assert main(["judge", str(path), "--run", "v1"]) == 1           # errors are retried on the next run
    out, err = capsys.readouterr()
    assert "3 retries (connection 3)" in out
    assert "judge 'gone' cannot reach its endpoint" in err


def test_a_judge_that_reads_passages_still_gets_them(tmp_path):
    p = make_project(tmp_path / "p.rageval", n=5)
    try:
        add_judge(p, "lex", "correctness", "lexical")
        add_judge(p, "grades", "passage_relevance", "llm", model="m")
        plan = job_items(p, JobSpec(run="v1"), [get_judge(p, "lex"), get_judge(p, "grades")])
        items = [i for chunk in plan.chunks() for i in chunk]
        graded = [i for i in items if i.judge.name == "grades"]
        assert graded and all(i.fields["passage"] for i in graded)     # each passage's own text
        assert all("Chunk" in i.fields["contexts"] for i in items if i.judge.name == "grades")
    finally:
        p.close()


def test_the_v11_migration_keeps_every_judgment_and_a_rerun_still_judges_nothing(tmp_path):
    """v11 rebuilds the judgments table: unique by (row, judge, rank, key) instead of the key alone (a random hash,
    whose index was written at random places). A v10 project's judgments keep their ids, keys and scores, and the
    job that made them finds them all again."""
    import sqlite3

    import pytest

    from rageval_desktop.core.base.errors import WriteFailed
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.schema import MIGRATIONS, SCHEMA_VERSION

    path = tmp_path / "p.rageval"
    p = make_project(path, n=30)
    add_judge(p, "lex", "correctness", "lexical")
    assert run_judge_job(p, JobSpec(run="v1", judges=["lex"])).done == 30
    p.close()
    conn = sqlite3.connect(path)
    before = conn.execute("SELECT id, run_row_id, idem_key, score FROM judgments ORDER BY id").fetchall()
    conn.close()
    # the same file as v10 made it: the judgments table and its indexes as they were
    v10 = sqlite3.connect(":memory:")
    v10.executescript("\n".join(m.sql for m in MIGRATIONS[:10]))
    ddl = v10.execute("SELECT sql FROM sqlite_master WHERE name = 'judgments'").fetchone()[0]
    assert "idem_key          TEXT NOT NULL UNIQUE" in ddl
    conn = sqlite3.connect(path)
    conn.executescript(f"""PRAGMA foreign_keys = OFF; BEGIN;
        ALTER TABLE judgments DROP COLUMN confidence; ALTER TABLE llm_cache DROP COLUMN logprobs;   -- v20's
        ALTER TABLE judgments RENAME TO judgments_now; DROP INDEX judgments_target; DROP INDEX judgments_judge;
        {ddl};
        INSERT INTO judgments SELECT * FROM judgments_now; DROP TABLE judgments_now;
        CREATE INDEX judgments_row ON judgments (run_row_id, judge_id);
        CREATE INDEX judgments_judge ON judgments (judge_id, status);
        DROP TABLE operations; DROP TABLE decisions;   -- v13 and v14 make them again
        DROP TABLE judge_checks; ALTER TABLE runs DROP COLUMN purpose;   -- and v15
        DROP TRIGGER golden_counts_insert; DROP TRIGGER golden_counts_delete; DROP TRIGGER golden_counts_update;
        DROP TRIGGER run_counts_new_run; DROP TRIGGER run_counts_insert; DROP TRIGGER run_counts_delete;
        DROP TRIGGER run_counts_update; DROP TABLE golden_counts; DROP TABLE run_counts;   -- and v16
        DROP TRIGGER corpus_chunks_count_insert; DROP TRIGGER corpus_chunks_count_delete;
        DROP TRIGGER human_ratings_count_insert; DROP TRIGGER human_ratings_count_delete;
        DROP TRIGGER human_ratings_count_update; DROP TABLE table_counts;   -- and v18 (judgments: with the table)
        DROP TABLE reviewer_hold_ratings; DROP TABLE reviewer_holds; DROP TABLE reviewer_checks;   -- and v19
        DROP TABLE review_pack_checks;   -- and v21 (reviewer_checks.origin: with its table)
        DROP TRIGGER run_values_new_run; DROP TRIGGER run_values_run_gone; DROP TRIGGER run_values_row_insert;
        DROP TRIGGER run_values_row_update; DROP TRIGGER run_values_row_delete;
        DROP TRIGGER run_values_passage_update; DROP TRIGGER run_values_passage_delete;
        DROP TRIGGER run_values_golden_insert; DROP TRIGGER run_values_golden_update;
        DROP TRIGGER run_values_golden_delete; DROP TABLE run_values;   -- and v22
        DROP TABLE outside_keys; DROP TABLE outside_exports; DROP TABLE review_pack_rows;   -- and v24
        DROP TABLE pair_packs; DROP TABLE pair_judgments; DROP TABLE pair_ratings; DROP TABLE pair_sample_rows;
        DROP TABLE pair_samples;   -- and v25
        PRAGMA user_version = 10; COMMIT;""")
    conn.close()
    with Project.open(path) as p:
        r = p.reader()
        assert p.schema_version() == SCHEMA_VERSION >= 11
        assert r.execute("SELECT id, run_row_id, idem_key, score FROM judgments ORDER BY id").fetchall() == before
        indexes = {n for (n,) in r.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'judgments' "
                                           "AND type = 'index'")}
        # no index over the bare key any more (v17 adds the verdicts' index)
        assert indexes == {"judgments_target", "judgments_judge", "judgments_scores"}
        again = run_judge_job(p, JobSpec(run="v1", judges=["lex"]))
        assert (again.rows, again.skipped) == (0, 30)
        with pytest.raises(WriteFailed, match="UNIQUE"), p.write("test") as w:   # still one judgment per target+key
            w.execute("INSERT INTO judgments (judge_id, run_row_id, passage_rank, idem_key, status, created_at) "
                      "SELECT judge_id, run_row_id, passage_rank, idem_key, 'error', 'now' FROM judgments LIMIT 1")
        assert r.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 30
