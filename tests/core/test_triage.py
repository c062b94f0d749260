"""Triage listings on the demo: filters agree with the core decisions they name (failure classes, pass marks)."""

from __future__ import annotations

import pytest

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.metrics.failures import failure_counts
from rageval_desktop.core.metrics.triage import Filters, describe, golden_source, run_source
from rageval_desktop.core.review.disagreements import disagreeing_rows
from rageval_desktop.core.review.sampling import get_sample, sample_of_rows


def ids(p, **kw):
    return run_source(p, 2, "v2", Filters(**kw)).ids(p)


def test_failure_filters_list_what_the_failure_browser_counts(demo):
    counts = failure_counts(demo, "v2")["all"]
    for name in ("retrieval", "reranker", "generation"):
        assert len(ids(demo, failure=name)) == counts[name]
    assert len(ids(demo, failure="any")) == sum(counts[c] for c in ("retrieval", "reranker", "generation"))


def test_disagreements_are_verdicts_on_both_sides_of_the_pass_mark(demo):
    rows = disagreeing_rows(demo, "v2")
    assert rows and ids(demo, disagreements=True) == rows
    conn = demo.reader()
    judged = ("SELECT j.metric, x.score FROM judgments x JOIN judges j ON j.id = x.judge_id WHERE x.run_row_id = ? "
              "AND x.status = 'ok' AND j.status = 'active'")
    rated = "SELECT metric, score FROM human_ratings WHERE run_row_id = ? AND skipped = 0 AND withdrawn_at IS NULL"

    def verdicts(row: int, *queries: str) -> set[bool]:
        marks = {"correctness": 4, "correctness_binary": 1}
        return {score >= marks[m] for q in queries for m, score in conn.execute(q, (row,))}

    for row in rows:
        assert verdicts(row, judged, rated) == {True, False}
    agreeing = [r for r in ids(demo) if r not in rows]
    assert all(len(verdicts(r, judged, rated)) == 1 for r in agreeing)
    # retired judges no longer count: what is left are rows where the human's own two ratings split
    from rageval_desktop.core.review.agreement import set_status

    set_status(demo, "minilm-similarity", "retired", "test")
    set_status(demo, "answer-recall", "retired", "test")
    left = disagreeing_rows(demo, "v2")
    assert set(left) < set(rows) and all(verdicts(r, rated) == {True, False} for r in left)


def test_sort_search_and_golden_status(demo):
    source = run_source(demo, 2, "v2")
    latency = [c.header for c in source.columns].index("latency")
    ordered = source.ids(demo, (latency, True))
    values = [source.page(demo, [i])[i][latency] for i in ordered[:5]]
    assert values == sorted(values, reverse=True)
    headers = [c.header for c in source.columns]
    for name in ("slice", "gold@5"):   # these read the golden row: the join comes with the sort
        col = headers.index(name)
        got = [source.page(demo, [i])[i][col] for i in source.ids(demo, (col, False))]
        assert got == sorted(got, key=lambda v: (v is None, v))
    assert len(ids(demo, search="ASSERT")) >= 1                    # case-insensitive
    assert len(golden_source(Filters(status="approved")).ids(demo)) == 72
    assert golden_source(Filters(status="draft")).ids(demo) == []
    assert golden_source(Filters(search="py-00")).ids(demo)[:2] == ["py-001", "py-002"]
    assert describe(Filters(disagreements=True, slice_tag="easy")) == "slice easy, disagreements"


def test_review_these_makes_a_recorded_non_random_sample(demo):
    rows = ids(demo, disagreements=True)
    sample = sample_of_rows(demo, "v2", "correctness", rows, reason="disagreements")
    assert get_sample(demo, sample.id).row_ids == rows
    params = demo.reader().execute("SELECT params FROM review_samples WHERE id = ?", (sample.id,)).fetchone()[0]
    assert '"mode": "chosen"' in params and '"reason": "disagreements"' in params
    with pytest.raises(RagevalError, match="not rows of run 'v2'"):
        sample_of_rows(demo, "v2", "correctness", [rows[0], 1])       # row 1 belongs to v1


def test_a_judges_latest_judgment_is_what_the_table_shows_sorts_and_disagrees_on(demo):
    """A row judged twice by one judge: the newer judgment counts (column, sort, score filter, disagreements)."""
    from rageval_desktop.core.base.clock import utcnow

    source = run_source(demo, 2, "v2")
    headers = [c.header for c in source.columns]
    col = headers.index("answer-recall")
    row = ids(demo)[0]
    judge_id = demo.reader().execute("SELECT id FROM judges WHERE name = 'answer-recall'").fetchone()[0]
    old = source.page(demo, [row])[row][col]
    newer = 0.0 if old else 1.0
    with demo.write("a newer judgment") as w:
        w.execute("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                  "VALUES (?, ?, 'newer', 'ok', ?, ?)", (judge_id, row, newer, utcnow()))
    assert source.page(demo, [row])[row][col] == newer
    first = source.ids(demo, (col, newer == 1.0))[0]
    assert source.page(demo, [first])[first][col] == newer
    assert (row in ids(demo, judge="answer-recall", score_min=newer, score_max=newer)) is True
    assert (row in ids(demo, judge="answer-recall", score_min=old, score_max=old)) is False
    # the newer verdict is the one that agrees or disagrees with the others on the row
    marks = {"correctness": 4, "correctness_binary": 1}

    def split(r: int) -> bool:
        conn = demo.reader()
        latest = conn.execute("SELECT j.metric, x.score, x.status FROM judgments x JOIN judges j ON j.id = x.judge_id "
                              "WHERE x.run_row_id = ? AND j.status = 'active' AND x.passage_rank = 0 AND x.id IN "
                              "(SELECT MAX(id) FROM judgments WHERE run_row_id = ? GROUP BY judge_id)", (r, r))
        verdicts = {score >= marks[m] for m, score, status in latest if status == "ok"}
        verdicts |= {score >= marks[m] for m, score in conn.execute(
            "SELECT metric, score FROM human_ratings WHERE run_row_id = ? AND skipped = 0 AND withdrawn_at IS NULL "
            "AND passage_rank = 0", (r,))}
        return len(verdicts) == 2

    assert (row in disagreeing_rows(demo, "v2")) == split(row)
    with demo.write("and back") as w:
        w.execute("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                  "VALUES (?, ?, 'newest', 'ok', ?, ?)", (judge_id, row, old, utcnow()))
    assert source.page(demo, [row])[row][col] == old
    assert (row in disagreeing_rows(demo, "v2")) == split(row)
