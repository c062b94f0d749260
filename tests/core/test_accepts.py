"""False accepts first (issue 30): the judge's pass/fail against the reviewers', per slice, with Wilson intervals —
checked against a count made directly from the ratings and statsmodels' interval."""

from __future__ import annotations

import json

from statsmodels.stats.proportion import proportion_confint

from rageval_desktop.cli import main
from rageval_desktop.core.judges.registry import add_judge, get_judge
from rageval_desktop.core.review.accepts import pass_fail


def test_false_accepts_are_what_the_judge_passes_and_the_reviewers_fail(demo):
    judge = get_judge(demo, "answer-recall")           # correctness_binary, pass mark 1
    found = pass_fail(demo, judge)
    rows = demo.reader().execute(
        "SELECT h.run_row_id, h.score, j.score FROM human_ratings h JOIN judgments j ON j.run_row_id = h.run_row_id "
        "AND j.judge_id = ? AND j.status = 'ok' WHERE h.metric = 'correctness_binary' AND h.withdrawn_at IS NULL "
        "AND h.skipped = 0", (judge.id,)).fetchall()
    assert len(rows) == found["slices"]["all"]["n"] == 144    # one reviewer: the consensus is the rating
    wrong = sorted(r for r, human, score in rows if score >= 1 and human < 1)
    assert sorted(a["run_row_id"] for a in found["false_accepts"]) == wrong
    assert found["slices"]["all"]["false_accepts"] == len(wrong)
    failed = [r for r in rows if r[1] < 1]
    far = found["slices"]["all"]["false_accept_rate"]
    assert far["n"] == len(failed) and far["value"] == len(wrong) / len(failed)
    low, high = proportion_confint(len(wrong), len(failed), method="wilson")
    assert abs(far["ci"][0] - low) < 1e-9 and abs(far["ci"][1] - high) < 1e-9
    assert sum(s["n"] for name, s in found["slices"].items() if name != "all") == 144


def test_a_metric_without_a_pass_mark_has_no_pass_fail(demo):
    add_judge(demo, "nug", "nuggets", "llm", model="m", base_url="http://127.0.0.1:9/v1")
    assert pass_fail(demo, get_judge(demo, "nug")) is None


def test_the_cli_reports_licence_and_false_accepts(demo, capsys):
    path = str(demo.path)
    demo.close()
    assert main(["agreement", path, "--json"]) == 0
    found = {r["judge"]: r for r in json.loads(capsys.readouterr().out)}
    recall = found["answer-recall"]
    assert recall["licence"]["tier"] == "explore" and recall["licence"]["reasons"] == ["no recorded audit"]
    assert recall["pass_fail"]["slices"]["all"]["false_accepts"] == len(recall["pass_fail"]["false_accepts"])
