"""Issue 46: a planned sample looks at a quarter, half, three quarters and all of it, each look on exactly its
prefix of the desk's order, with Lan–DeMets O'Brien–Fleming-type boundaries; other looks use the anytime interval."""

from __future__ import annotations

import pytest

from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement, evidence, ratings, sampling
from rageval_desktop.core.review.audit_plan import QUARTERS, crossing
from tests.core.test_sampling_modes import split  # noqa: F401  (the fixture)


def rated(p, truth, size: int, upto: int, *, skip: int | None = None):
    """A planned stratified sample of `size`, its first `upto` targets rated with the truth (but the `skip`-th)."""
    sample = sampling.create_sample(p, "v1", "correctness_binary", size, seed=3)
    for i, row in enumerate(sample.row_ids[:upto]):
        if i != skip:
            ratings.rate(p, row, "correctness_binary", "ann", truth[row], sample_id=sample.id)
    return sample


def test_boundaries_match_published_lan_demets_values():
    """gsDesign's sfLDOF, one-sided 0.025, four equal looks: 4.3326, 2.9631, 2.3590, 2.0141 (α = 0.05 here is
    split in two one-sided halves)."""
    found = evidence.look_boundaries(QUARTERS, alpha=0.05)
    assert found == pytest.approx([4.3326, 2.9631, 2.3590, 2.0141], abs=2e-3)
    assert evidence.look_boundaries((1.0,))[0] == pytest.approx(2.0537, abs=1e-3)   # one look: z at 0.04
    assert evidence.look_sizes(100) == [25, 50, 75, 100] and evidence.look_sizes(3) == [1, 2, 3]


def test_the_designs_power_is_the_chance_of_crossing_some_look():
    assert crossing(0.0) == pytest.approx(0.02, abs=2e-3)             # no drift: the one-sided α spent
    assert 0.78 < crossing(2.92) < 0.82                                # 80% power at about the fixed design's drift


def test_a_clear_judge_is_kept_at_the_half_look_on_that_prefix_only(split):  # noqa: F811
    p, truth, _ = split
    rated(p, truth, 120, 60)
    result = agreement.agreement(p, get_judge(p, "b"), breakdowns=False)
    assert result.look == "interim"
    assert [x["n"] for x in result.looks] == [30, 60]
    assert result.looks[1]["z"] == pytest.approx(3.09, abs=0.01)
    assert result.verdict == "keep" and result.deciding_look is not None
    assert "planned look at" in result.stopping
    assert "looks 30 targets" in agreement.planned_text(result.as_dict())


def test_a_look_is_not_reached_while_a_target_before_it_waits(split):  # noqa: F811
    p, truth, _ = split
    rated(p, truth, 120, 60, skip=10)                       # the 11th target is still to rate
    result = agreement.agreement(p, get_judge(p, "b"), breakdowns=False)
    assert result.look == "interim" and result.looks == [] and result.deciding_look is None
    assert "no planned look reached yet" in agreement.planned_text(result.as_dict())


def test_an_extension_keeps_the_looks_already_reached(split):  # noqa: F811
    p, truth, _ = split
    sample = rated(p, truth, 40, 20)
    sampling.extend_sample(p, sample.id, 40)
    plan, size, _ = sampling.plan_state(p.reader(), sample.id)
    assert plan is not None and size == 80
    assert plan["looks"] == [10, 20, 40, 60, 80]             # 10 and 20 were reached; the rest spread over 80


def test_the_cli_tells_the_plans_looks(split, capsys):  # noqa: F811
    """`rageval agreement` printed nothing of the plan: the API's result left out `look` (and now the looks)."""
    import json

    from rageval_desktop.cli import main

    p, truth, _ = split
    rated(p, truth, 120, 60)
    path = str(p.path)
    p.close()
    capsys.readouterr()
    assert main(["agreement", path, "--judge", "b", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)[0]
    assert found["look"] == "interim" and found["plan_looks"] == [30, 60, 90, 120]
    assert [x["n"] for x in found["looks"]] == [30, 60] and found["deciding_look"] is not None
    assert main(["agreement", path, "--judge", "b"]) == 0
    assert "a planned sample, not all rated: looks 30 targets" in capsys.readouterr().out
