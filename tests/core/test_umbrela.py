"""UMBRELA retrieval scores from passage grades, as open-rag-eval computes them — and unscored is not wrong."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from rageval_desktop.core.base.scoring.umbrela import row_scores


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
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.metrics.compare import compare
    from rageval_desktop.core.metrics.dashboard import dashboard
    from rageval_desktop.core.store.project import Project

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


def test_consistency_across_repeated_query_runs(project, tmp_path):
    """open-rag-eval's query_run: the same questions asked 3 times import as one run; the dashboard says how
    many repeats there are and how much each question's scores move between them."""
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.importers import import_run
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.metrics.dashboard import dashboard
    from tests.core.test_importers import write

    rows = [{"query_id": f"q{q}", "query": f"Question {q}?", "query_run": run, "passage_id": "[1]",
             "passage": "p", "generated_answer": f"A{q}.{run}"} for q in (1, 2) for run in (1, 2, 3)]
    import_run(project, write(tmp_path / "ore.csv", rows), "r")
    judge = add_judge(project, "j", "correctness", "llm", model="m", base_url="http://127.0.0.1:9/v1")
    scores = {"A1.1": 5, "A1.2": 3, "A1.3": 4, "A2.1": 2, "A2.2": 2, "A2.3": 2}   # q1 moves, q2 does not
    ids = dict(project.reader().execute("SELECT answer, id FROM run_rows"))
    with project.write("scores") as w:
        w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                      "VALUES (?, ?, ?, 'ok', ?, ?)", [(judge.id, ids[a], a, float(s), utcnow())
                                                       for a, s in scores.items()])
    summary = dashboard(project, "r")
    assert summary["repeated_questions"] == 2
    c = summary["slices"]["all"]["consistency"]
    assert (c["questions"], c["max_repeats"]) == (2, 3)
    q1_std = float(np.std([100.0, 50.0, 75.0]))            # 5, 3, 4 on 1-5 as 0-100
    assert c["metrics"]["correctness"]["mean_std"] == pytest.approx(q1_std / 2)
    assert c["metrics"]["correctness"]["mean_cv"] == pytest.approx((q1_std / 75.0 + 0.0) / 2)
    assert summary["slices"]["all"]["correctness"] == pytest.approx((75.0 + 25.0) / 2)   # repeats averaged first


def test_a_run_without_gold_ids_charts_its_umbrela_scores():
    from rageval_desktop.core.reports.plots import slice_bars

    slices = {"all": {"n": 3, "n_with_gold": 0, "hit@5": None, "mrr": None, "umbrela_p@5": 60.0,
                      "umbrela_mrr": 80.0, "answered": 100.0}}
    summary = {"run": "r", "slices": slices, "judge_metrics": ["answered", "umbrela_p@5", "umbrela_mrr"]}
    regions: list = []
    assert slice_bars({"dashboard": summary}, size=(900, 300), regions=regions).startswith(b"\x89PNG")
    assert [r.metric for r in regions] == ["umbrela_p@5", "umbrela_mrr", "answered"]   # no empty hit@5 / mrr panels


def test_umbrela_scores_equal_open_rag_evals_own_code_on_80_grade_lists():
    """Parity held as a fixture (issue 28): tests/data/open-rag-eval/umbrela_parity.json holds what open-rag-eval's
    UMBRELAMetric.compute returned for 80 seeded grade lists of 1-12 passages (its `source` says which commit), so a
    change on either side that breaks parity fails here. A k beyond the list is skipped by both."""
    import json

    from rageval_desktop.core.base.scoring.umbrela import row_scores
    from tests.conftest import REPO

    found = json.loads((REPO / "tests/data/open-rag-eval/umbrela_parity.json").read_text())
    assert len(found["cases"]) == 80
    for case in found["cases"]:
        ours = row_scores(case["grades"])
        for k in (1, 3, 5):
            theirs = case["precision@"].get(str(k))
            assert ours[f"umbrela_p@{k}"] == (None if theirs is None else pytest.approx(100 * theirs)), case
        theirs = case["AP@"].get("5")
        assert ours["umbrela_ap@5"] == (None if theirs is None else pytest.approx(100 * theirs)), case
        assert ours["umbrela_mrr"] == pytest.approx(100 * case["MRR"]), case
