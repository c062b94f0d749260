"""Calibrations that travel (core.review.transport): a judge audited on v1 keeps its gate licence on a run whose
ratings show the same errors, and loses it there — only there — when the run's ratings show it erring more; the gate
lists it as unlicensed on that candidate."""

from __future__ import annotations

import pytest

from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement, ratings, transport
from rageval_desktop.core.review.licence import licence
from rageval_desktop.core.review.settings import set_policy


def _judged(project, run):
    return project.reader().execute(
        "SELECT x.run_row_id, x.score FROM judgments x JOIN judges j ON j.id = x.judge_id JOIN run_rows rr ON "
        "rr.id = x.run_row_id JOIN runs r ON r.id = rr.run_id WHERE j.name = 'answer-recall' AND r.name = ? "
        "AND x.status = 'ok' ORDER BY x.run_row_id", (run,)).fetchall()


@pytest.fixture
def audited(demo):
    """answer-recall rated on all of v1 by a reviewer who agrees with it on all but 3 rows, its audit recorded and
    licensed to gate; no ratings of v2 yet."""
    with demo.write("only this test's ratings") as w:
        w.execute("DELETE FROM human_ratings")
    for i, (row, score) in enumerate(_judged(demo, "v1")):
        ratings.rate(demo, row, "correctness_binary", "ann", score if i % 24 else 1.0 - score)
    judge = get_judge(demo, "answer-recall")
    result = agreement.agreement(demo, judge)
    agreement.apply(demo, result)
    set_policy(demo, threshold=min(0.7, round(result.anytime_ci[0] - 0.05, 2)))
    assert licence(demo, judge).tier == "gate"
    return demo, judge


def test_no_ratings_on_the_run_reuse_the_audit_unchecked(audited):
    project, judge = audited
    found = transport.transport(project, judge, "v2")
    assert found.status == "not checked" and "reused unchecked" in transport.describe(found)
    assert licence(project, judge, run="v2").tier == "gate"


def test_a_run_where_the_judge_errs_as_audited_holds(audited):
    project, judge = audited
    for i, (row, score) in enumerate(_judged(project, "v2")[:20]):
        ratings.rate(project, row, "correctness_binary", "ann", score if i != 7 else 1.0 - score)
    found = transport.transport(project, judge, "v2")
    assert found.status in ("holds", "cannot tell") and found.n_run == 20 and found.errors_run == pytest.approx(0.05)
    assert licence(project, judge, run="v2").tier == "gate"


def test_a_run_where_the_judge_errs_more_suspends_its_licence_there_only(audited):
    project, judge = audited
    for i, (row, score) in enumerate(_judged(project, "v2")[:20]):
        ratings.rate(project, row, "correctness_binary", "ann", score if i % 3 else 1.0 - score)   # 7 of 20 wrong
    found = transport.transport(project, judge, "v2")
    assert found.status == "suspended" and found.p_value <= 0.05
    assert found.errors_run == pytest.approx(7 / 20) and found.errors_audit == pytest.approx(3 / 72)
    set_policy(project, threshold=0.1)          # the whole audit, v2's ratings in it, still clears a low bar
    assert licence(project, judge).tier == "gate"
    held = licence(project, judge, run="v2")
    assert held.tier == "monitor" and held.reasons[0].startswith("suspended on v2: errors 35% there, 4% where audited")
    assert held.evidence["transport"]["status"] == "suspended"
    assert licence(project, judge, run="v1").tier == "gate"            # where it was audited it still gates


def test_too_few_ratings_on_the_run_cannot_tell(audited):
    project, judge = audited
    for row, score in _judged(project, "v2")[:4]:
        ratings.rate(project, row, "correctness_binary", "ann", 1.0 - score)    # 4 of 4 wrong, but only 4
    found = transport.transport(project, judge, "v2")
    assert found.status == "cannot tell" and "are the least a check reads" in transport.describe(found)


def test_the_gate_says_when_an_audit_travels_unchecked(audited):
    from rageval_desktop.core.metrics.gate import gate

    project, judge = audited
    result = gate(project, "v1", "v2", metrics=["correctness_binary"])
    assert "correctness_binary" not in {u["metric"] for u in result.unlicensed}      # it gates...
    said = [w for w in result.as_dict()["warnings"] if "answer-recall on v2" in w]
    assert said == ["answer-recall on v2: no ratings on v2 yet — its audit elsewhere is reused unchecked"]
    for i, (row, score) in enumerate(_judged(project, "v2")[:20]):
        ratings.rate(project, row, "correctness_binary", "ann", score if i % 3 else 1.0 - score)
    set_policy(project, threshold=0.1)
    suspended = gate(project, "v1", "v2", metrics=["correctness_binary"])
    assert [u["metric"] for u in suspended.unlicensed] == ["correctness_binary"]          # ...until a shift shows
    assert "suspended on v2" in suspended.unlicensed[0]["why"] and not suspended.passed
