"""Issue 47, parts 2 and 4: a selective licence — a judge too weak to gate whole runs that is shown safe on the rows it
is sure of gates those rows, the desk the rest — and the gate's selective estimator, whose cells carry each run's
coverage and the guarantee."""

from __future__ import annotations

import pytest

from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.metrics import selective_cells
from rageval_desktop.core.metrics.compare import compare
from rageval_desktop.core.metrics.gate import gate
from rageval_desktop.core.review import agreement, selective
from rageval_desktop.core.review.licence import licence, record_audit


def truth(project, run: str) -> float:
    """The reviewers' pass rate of correctness on a run (the demo rates every row), in points."""
    return 100 * project.reader().execute(
        "SELECT AVG(s >= 4) FROM (SELECT AVG(h.score) s FROM human_ratings h JOIN run_rows rr ON rr.id = h.run_row_id "
        "JOIN runs u ON u.id = rr.run_id WHERE u.name = ? AND h.metric = 'correctness' AND h.withdrawn_at IS NULL "
        "GROUP BY h.run_row_id)", (run,)).fetchone()[0]


def test_a_judge_the_audit_would_retire_is_kept_for_the_rows_it_decides(demo):
    judge = get_judge(demo, "minilm-similarity")
    result = agreement.agreement(demo, judge)
    assert result.verdict == "retire"                                    # κ 0.49 on 144 ratings
    assert record_audit(demo, result) == "kept selective"
    judge = get_judge(demo, "minilm-similarity")
    assert judge.status == "active"
    held = licence(demo, judge)
    assert held.tier == "selective" and held.evidence["selective"]["level"] is not None
    assert 0.3 < held.evidence["selective"]["coverage"] < 0.8
    assert held.describe().startswith("selective: gates only the rows it decides — confidence ≥ ")
    # without selective judging's level the same audit retires it
    other = agreement.agreement(demo, get_judge(demo, "minilm-similarity"))
    assert agreement.apply(demo, other) == "retired"


def test_the_mean_gate_does_not_let_a_selective_judge_gate_whole_runs(demo):
    record_audit(demo, agreement.agreement(demo, get_judge(demo, "minilm-similarity")))
    result = gate(demo, "v1", "v2", metrics=["correctness"])
    why = result.unlicensed[0]["why"]
    assert "minilm-similarity: selective: gates only the rows it decides" in why
    fix = next(n for n in result.not_evaluated if n["kind"] == "licence")["fix"]
    assert "--estimator selective" in fix


def test_the_selective_estimator_reads_judge_and_desk_and_states_coverage_and_guarantee(demo):
    record_audit(demo, agreement.agreement(demo, get_judge(demo, "minilm-similarity")))
    judge = get_judge(demo, "minilm-similarity")
    before = compare(demo, "v1", "v2", ["correctness"], "selective")
    assert before["slices"]["all"]["correctness"] is None
    assert "no sample of minilm-similarity's abstentions on v1" in before["unavailable"][0]["why"]
    # without the desk's samples the gate cannot tell: never a pass on the cells it could not read
    waiting = gate(demo, "v1", "v2", metrics=["correctness"], estimator="selective")
    assert waiting.decision.name == "NOT_DECISION_GRADE"
    said = next(n for n in waiting.not_evaluated if n["metric"] == "correctness" and n["slice"] == "all")
    assert said["why"].startswith("no selective estimate: no sample of") and "--abstained" in said["fix"]
    for run in ("v1", "v2"):
        selective.abstained_sample(demo, judge, run)
    found = compare(demo, "v1", "v2", ["correctness"], "selective")
    whole = found["slices"]["all"]["correctness"]
    assert whole["estimator"] == "selective"
    # the demo rates every row: the judge's decided rows are corrected by their own ratings, the desk's are rated
    # whole, so each run's estimate is the reviewers' own pass rate
    assert whole["baseline"] == pytest.approx(truth(demo, "v1")) and whole["candidate"] == pytest.approx(
        truth(demo, "v2"))
    shares = selective.selective(demo, judge)["runs"]
    assert whole["coverage"] == pytest.approx([shares["v1"]["decided"], shares["v2"]["decided"]])
    g = whole["guarantee"]
    assert (g["judge"], g["alpha"], g["delta"]) == ("minilm-similarity", 0.1, 0.1) and g["bound"] <= 0.1
    assert whole["se"] > 0                              # rated whole, yet never read as certainty
    assert "decides 50% / 40% of the rows" in selective_cells.describe_cell(whole)
    # `selective --run` shows each run as the gate reads it beside its worst-case interval
    for run, side in (("v1", "baseline"), ("v2", "candidate")):
        one = selective_cells.run_estimate(demo, judge, run)
        assert one["pass_rate"] * 100 == pytest.approx(whole[side])
        assert one["ci"][0] < one["pass_rate"] < one["ci"][1] and one["rated_decided"] > 0
    decided = gate(demo, "v1", "v2", metrics=["correctness"], estimator="selective")
    assert not decided.unlicensed                       # the selective licence lets the metric gate
    cells = [*decided.regressions, *decided.safe, *decided.undecided]
    assert {c["slice"] for c in cells} >= {"all"}
    assert all("selective" in c["n_counts"] and c["coverage"] for c in cells)


def test_a_slice_without_enough_ratings_says_what_would_give_it_a_number():
    a = {"N": 20, "D": 15, "JP": 10, "A": 5, "rated": [100.0, 0.0], "cal": [(True, True, 1.0)] * 6}
    b = {"N": 20, "D": 16, "JP": 9, "A": 4, "rated": [100.0], "cal": [(True, True, 1.0)] * 5 + [(False, True, 1.0)]}
    c = selective_cells.cell(a, b)
    assert c["correction"] == [0.0, pytest.approx(-100 / 6)]
    assert c["baseline"] == pytest.approx((100 * 10 + 5 * 50) / 20)
    assert c["candidate"] == pytest.approx((100 * 9 + 16 * -100 / 6 + 4 * 100) / 20)
    assert c["ci"][0] < c["delta"] < c["ci"][1] and c["df"] >= 1


def test_the_dashboard_states_what_a_selective_judge_decides_per_slice(demo, capsys):
    from rageval_desktop.cli import main
    from rageval_desktop.core.metrics.dashboard import dashboard

    assert dashboard(demo, "v2")["selective"] == {}                     # no audit recorded: no selective licence
    record_audit(demo, agreement.agreement(demo, get_judge(demo, "minilm-similarity")))
    found = dashboard(demo, "v2")["selective"]["correctness"]
    shares = selective.selective(demo, get_judge(demo, "minilm-similarity"))["runs"]["v2"]
    assert found["judge"] == "minilm-similarity" and found["slices"]["all"]["decided"] == pytest.approx(
        shares["decided"])
    assert sum(v["rows"] for k, v in found["slices"].items() if k != "all") == found["slices"]["all"]["rows"] == 72
    assert list(found["slices"])[-1] == "all" and found["said"].startswith("gates only the rows it decides")
    path = str(demo.path)
    demo.close()
    assert main(["metrics", path, "--run", "v2"]) == 0
    assert "selective: correctness from minilm-similarity gates only the rows it decides" in capsys.readouterr().out
