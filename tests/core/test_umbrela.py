"""UMBRELA retrieval scores from passage grades, as open-rag-eval computes them — and unscored is not wrong."""

from __future__ import annotations

import shutil

import pytest

from rageval_desktop.core.metrics.umbrela import row_scores


def test_scores_as_open_rag_eval_computes_them():
    s = row_scores([3, 0, 2, 1, 2])
    assert s["umbrela_p@1"] == 100.0 and s["umbrela_p@3"] == pytest.approx(200 / 3) and s["umbrela_p@5"] == 60.0
    assert s["umbrela_ap@5"] == pytest.approx(100 * (1 + 2 / 3 + 3 / 5) / 3)   # precision at the relevant positions
    assert s["umbrela_mrr"] == 100.0 and s["umbrela_mean"] == pytest.approx(100 * 8 / 15)
    late = row_scores([0, 1, 2])
    assert late["umbrela_mrr"] == pytest.approx(100 / 3) and late["umbrela_p@1"] == 0.0
    none = row_scores([0, 1, 0, 0, 1])
    assert (none["umbrela_ap@5"], none["umbrela_mrr"]) == (0.0, 0.0)


def test_a_k_beyond_the_list_is_skipped_not_zero():
    s = row_scores([3, 2])
    assert s["umbrela_p@1"] == 100.0 and s["umbrela_p@3"] is None and s["umbrela_p@5"] is None
    assert s["umbrela_ap@5"] is None and s["umbrela_mrr"] == 100.0


def test_an_ungraded_passage_leaves_what_depends_on_it_unknown():
    s = row_scores([0, None, 3, 0, 0])
    assert s["umbrela_p@1"] == 0.0 and s["umbrela_p@3"] is None and s["umbrela_p@5"] is None
    assert s["umbrela_mrr"] is None                         # the first relevant may be the ungraded one
    assert s["umbrela_mean"] == pytest.approx(100 * 3 / 12)  # over the graded passages only
    assert row_scores([])["umbrela_mean"] is None and row_scores([None])["umbrela_mrr"] is None


def test_the_dashboard_and_compare_show_umbrela_scores_per_slice(demo_file, tmp_path):
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.metrics.compare import compare
    from rageval_desktop.core.metrics.dashboard import dashboard
    from rageval_desktop.core.store.project import Project, utcnow

    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        judge = add_judge(p, "umbrela", "passage_relevance", "llm", model="m", base_url="http://127.0.0.1:9/v1")
        rows = [r[0] for r in p.reader().execute("SELECT id FROM run_rows")]
        with p.write("grades") as w:   # grades 3, 0, 2, 1, 0 on every row; rank 2 unparsed on the first row
            w.executemany(
                "INSERT INTO judgments (judge_id, run_row_id, passage_rank, idem_key, status, score, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(judge.id, r, rank, f"u{r}-{rank}", "unparsed" if (r == rows[0] and rank == 2) else "ok",
                  None if (r == rows[0] and rank == 2) else float(g), utcnow())
                 for r in rows for rank, g in zip(range(1, 6), (3, 0, 2, 1, 0), strict=True)])
        summary = dashboard(p, "v2")
        every = summary["slices"]["all"]
        assert "umbrela_p@5" in summary["judge_metrics"]
        assert every["umbrela_p@1"] == 100.0 and every["umbrela_p@5"] == pytest.approx(40.0)
        assert every["umbrela_p@3"] == pytest.approx(200 / 3) and every["umbrela_p@3_ci"] is not None
        first_v1 = compare(p, "v1", "v2")
        assert first_v1["slices"]["all"]["umbrela_mrr"]["delta"] == pytest.approx(0.0)
        v1 = dashboard(p, "v1")["slices"]["all"]
        assert v1["umbrela_p@3_n"] == 71                     # the row with an ungraded passage is not a zero
