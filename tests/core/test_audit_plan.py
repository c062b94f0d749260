"""Plan the audit before anyone rates (issue 46): the ratings that reach a verdict 80% of the time for a judge at a
plausible agreement, in the sampling mode asked for, and a warning when a requested size cannot decide."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.review import audit_plan


@pytest.mark.parametrize("margins", [[0.5, 0.5], [0.3, 0.7], [0.1, 0.15, 0.2, 0.3, 0.25]])
def test_the_planned_size_has_the_power_it_promises(margins):
    statistic = "cohen_kappa" if len(margins) == 2 else "quadratic_kappa"
    sig = audit_plan.sigma(0.85, margins, statistic)
    m = audit_plan.effective_needed(0.85, sig, 0.7, 30)
    assert m is not None and 30 <= m < 2000
    assert audit_plan.power_at(0.85, sig, 0.7, 30, m) >= 0.8 > audit_plan.power_at(0.85, sig, 0.7, 30, m - 5)
    assert audit_plan.effective_needed(0.7, sig, 0.7, 30) is None          # on the threshold: never kept


def test_sample_plan_says_what_a_size_can_decide_and_warns_before_drawing(demo, capsys):
    path = str(demo.path)
    demo.close()
    capsys.readouterr()
    assert main(["sample", path, "--run", "v2", "--metric", "correctness_binary", "--plan", "--size", "40",
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["kappa"] == 0.85 and plan["kappa_source"].startswith("assumed")
    assert plan["requested"]["size"] == 40 and plan["requested"]["power"] < 0.5 and "warning" in plan
    assert plan["ratings"] is None and "the run has 72 targets" in plan["why"]   # a 72-row run cannot decide
    assert main(["sample", path, "--run", "v2", "--metric", "correctness_binary", "--size", "40"]) == 0
    said = capsys.readouterr()
    assert "warning: a sample of 40 keeps a judge at cohen_kappa 0.85 only" in said.err
    assert "sample " in said.out                                   # the sample is drawn all the same
    assert main(["sample", path, "--run", "v2", "--metric", "correctness_binary"]) == 0   # no size: the plan's
    said = capsys.readouterr().out
    assert "40 rows" in said and "the plan proposes no size (the run has 72 targets" in said


def test_sample_without_a_size_takes_the_plans(demo, capsys):
    """Issue 46: `rageval sample` proposes (and draws) the planned size when the plan has one."""
    from rageval_desktop.core.review.settings import set_policy

    set_policy(demo, threshold=0.3)
    path = str(demo.path)
    demo.close()
    capsys.readouterr()
    assert main(["sample", path, "--run", "v2", "--metric", "correctness_binary", "--plan", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["ratings"]
    assert planned and planned != 40
    assert main(["sample", path, "--run", "v2", "--metric", "correctness_binary", "--json"]) == 0
    drawn = json.loads(capsys.readouterr().out)
    assert len(drawn["row_ids"]) == planned and drawn["size_from"] == "plan"


def test_the_proposed_size_has_the_power_the_plan_claims(demo):
    """The design effect at the proposed size, not at the effective n, decides: a size whose own effective n fell
    under the minimum read 'plan 35 for 80%' beside '35 keeps it 0% of the time'."""
    from rageval_desktop.core.review.settings import set_policy

    set_policy(demo, threshold=0.5)
    for metric, mode in (("correctness", "stratified"), ("correctness", "uncertain"),
                         ("correctness_binary", "stratified")):
        plan = audit_plan.plan_audit(demo, "v2", metric, mode=mode)
        if plan["ratings"] is None:
            continue
        again = audit_plan.plan_audit(demo, "v2", metric, mode=mode, size=plan["ratings"])
        assert again["requested"]["power"] >= 0.8, (metric, mode, again["requested"])


def test_a_weighted_plan_foresees_the_audits_jackknife_widening(demo):
    """A planned 1-5 `uncertain` sample sized on Kish's design effect alone kept a judge at 0.81 in 70% of audits:
    the audit widens a weighted sample's interval to the jackknife's error. The planner now foresees it."""
    from rageval_desktop.core.store.queries import run_id

    rid = run_id(demo, "v2")
    margins = audit_plan.margins_of(demo, rid, "correctness")
    kish = audit_plan.design_effect(demo, rid, "correctness", "uncertain", 40)
    foreseen = audit_plan.design_effect(demo, rid, "correctness", "uncertain", 40, kappa=0.8, margins=margins,
                                        statistic="quadratic_kappa")
    assert foreseen > kish
    plain = audit_plan.design_effect(demo, rid, "correctness", "stratified", 40, kappa=0.8, margins=margins,
                                     statistic="quadratic_kappa")
    assert plain == audit_plan.design_effect(demo, rid, "correctness", "stratified", 40)   # unweighted: Kish's


@pytest.mark.parametrize("mode", ["stratified", "uncertain"])
def test_a_plan_reads_the_runs_targets_once(demo, monkeypatch, mode):
    """Every draw the planner previews (up to fourteen) read the run's targets again: 1.3 s each at 200k rows."""
    from rageval_desktop.core.review import targets

    calls = []
    real = targets.candidates
    monkeypatch.setattr(targets, "candidates", lambda *a, **k: calls.append(a) or real(*a, **k))
    plan = audit_plan.plan_audit(demo, "v1", "correctness", mode=mode, size=40)
    assert plan["requested"]["size"] == 40 and plan["effective_needed"]
    assert len(calls) == 1
    audit_plan.plan_audit(demo, "v1", "correctness", mode=mode, size=40)
    assert len(calls) == 2          # nothing kept after the plan: the next one reads what the file holds then
