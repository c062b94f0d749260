"""The Dashboard's table and note as a Qt-free model (gui/models/dashboard_table.py), tested without a window on the
demo's summary and on summaries made here."""

from __future__ import annotations

from rageval_desktop.core.metrics.dashboard import dashboard
from rageval_desktop.core.store.project import Project
from rageval_desktop.gui.models.dashboard_table import Table, unsettled_text


def test_the_demo_dashboard_as_the_page_shows_it(demo_file):
    project = Project.open(demo_file, read_only=True)
    try:
        summary = dashboard(project, "v2")
    finally:
        project.close()
    table = Table(summary)
    keys = [key for key, _ in table.columns]
    # with ratings, the judge metrics and their corrected values come before the retrieval columns (issue 77)
    assert keys[:3] == ["slice", "n", "n_with_gold"]
    assert keys.index("correctness_ppi_value") < keys.index("hit@5") < keys.index("mrr")
    assert dict(table.columns)["ndcg@10"] == "nDCG@10" and "correctness_ppi_value" in table.scored
    assert "any gold chunk in the top 5" in table.header_tips["hit@5"]
    records = {r["slice"]: r for r in table.records()}
    assert set(records) == set(summary["slices"])
    every = records["all"]
    assert every["correctness_coverage_pct"] == "100%" and "95% CI [" in every["correctness__tip"]
    assert every["correctness_ppi_value"] == summary["slices"]["all"]["correctness_ppi"]["estimate"]
    note = table.notes(None)
    assert note.startswith("Scores on 0–100.") and "'corrected'" in note and "The audit would retire" in note
    assert "grey" not in note and "(grey) beside v2" in table.notes({"run": "v1"})


def test_a_run_no_judge_scored_says_what_to_do():
    summary = {"run": "r", "judge_metrics": [], "slices": {"all": {"n": 3, "n_with_gold": 0}}, "judges": {},
               "retired_judges": [], "unsettled_judges": [], "repeated_questions": 0,
               "golden_set_changed_since_run": True}
    table = Table(summary)
    assert [key for key, _ in table.columns][-2:] == ["p95_latency_ms", "cost_per_query"]
    assert table.records() == [{"slice": "all", "n": 3, "n_with_gold": 0}]
    note = table.notes(None)
    assert "The golden set changed since this run was imported." in note
    assert note.endswith("No judge has scored this run yet: run judges from the Judges view.")


def test_unsettled_judges_in_words():
    said = unsettled_text([{"judge": "a", "n": 40, "verdict": "retire"},
                           {"judge": "b", "n": 12, "verdict": "needs more ratings"},
                           {"judge": "c", "n": 50, "verdict": "retire", "selective": True}])
    assert said == ("Retired as a whole but kept for the rows it decides (selective): c (n=50). The audit would "
                    "retire a (n=40): still counted until Audit › Record audit and apply. Counted, not yet confirmed "
                    "by human ratings: b (needs more ratings, n=12).")
