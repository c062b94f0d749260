"""Review effort where it informs most: disagreement-first samples drawn with recorded unequal probabilities, whose
ratings the agreement statistics weight back; sequential stopping in words."""

from __future__ import annotations

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.judges.registry import add_judge, get_judge
from rageval_desktop.core.review import agreement, agreement_stats, ratings, sampling, settings
from rageval_desktop.core.review.sampling import inclusion_probabilities
from tests.core.test_judging import make_project

N = 200


@pytest.fixture
def split(tmp_path):
    """Two binary judges on 200 rows. They disagree on 40 rows, where judge A is wrong; where they agree, A is
    wrong on 8 more. Humans give the truth. A disagreement-first sample over-represents A's mistakes."""
    p = make_project(tmp_path / "m.rageval", n=N)
    a = add_judge(p, "a", "correctness_binary", "lexical")
    b = add_judge(p, "b", "correctness_binary", "lexical")
    rows = [r[0] for r in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 2, N).astype(float)
    score_a = truth.copy()
    score_b = truth.copy()
    disagree = rng.choice(N, 40, replace=False)
    score_a[disagree] = 1 - truth[disagree]
    rest = np.setdiff1d(np.arange(N), disagree)
    wrong_both = rng.choice(rest, 8, replace=False)
    score_a[wrong_both] = 1 - truth[wrong_both]
    score_b[wrong_both] = 1 - truth[wrong_both]
    with p.write("judgments") as w:
        for judge, scores in ((a, score_a), (b, score_b)):
            w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                          "VALUES (?, ?, ?, 'ok', ?, ?)",
                          [(judge.id, r, f"{judge.name}{r}", float(s), utcnow())
                           for r, s in zip(rows, scores, strict=True)])
    settings.set_policy(p, statistic="exact")
    yield p, dict(zip(rows, truth, strict=True)), dict(zip(rows, score_a, strict=True))
    p.close()


def test_inclusion_probabilities_are_proportional_capped_and_sum_to_the_size():
    probs = inclusion_probabilities([10.0, 1.0, 1.0, 1.0, 1.0], 2)
    assert probs[0] == 1.0 and probs[1:] == [0.25] * 4 and sum(probs) == pytest.approx(2)
    assert inclusion_probabilities([1.0, 2.0], 5) == [1.0, 1.0]


def test_a_disagreement_sample_puts_disagreements_first_and_records_its_probabilities(split):
    p, truth, _ = split
    sample = sampling.create_sample(p, "v1", "correctness_binary", 50, seed=3, mode="disagreement")
    assert sample.mode == "disagreement" and len(sample.row_ids) == 50
    a = {r: s for r, s in p.reader().execute("SELECT run_row_id, score FROM judgments x JOIN judges j ON "
                                             "j.id = x.judge_id WHERE j.name = 'a'")}
    b = {r: s for r, s in p.reader().execute("SELECT run_row_id, score FROM judgments x JOIN judges j ON "
                                             "j.id = x.judge_id WHERE j.name = 'b'")}
    disagreements = [r for r in a if a[r] != b[r]]
    drawn = [r for r in sample.row_ids if a[r] != b[r]]
    assert len(drawn) / 50 > 2 * len(disagreements) / len(a)   # over-represented: 20% of rows, over 40% drawn
    probs = dict(p.reader().execute("SELECT run_row_id, inclusion FROM review_sample_rows WHERE sample_id = ?",
                                    (sample.id,)))
    high = min(probs[r] for r in drawn)
    low = max(probs[r] for r in sample.row_ids if a[r] == b[r])
    assert 2.5 < high / low <= 4.0 + 1e-9              # a defensive mixture: at most 4x as likely (sampling.FLOOR)
    # a stratified sample records n_h / N_h per stratum (issue 27; it recorded none and weighed every rating 1)
    plain = sampling.create_sample(p, "v1", "correctness_binary", 50, seed=3)
    found = p.reader().execute("SELECT stratum, inclusion FROM review_sample_rows WHERE sample_id = ?",
                               (plain.id,)).fetchall()
    taken = {key: sum(1 for k, _ in found if k == key) for key, _ in found}
    sizes = {key: sum(1 for _, k in sampling.strata_of(p, 1, "correctness_binary") if k == key) for key in taken}
    assert all(x == pytest.approx(taken[key] / sizes[key]) for key, x in found)
    assert len({round(x, 9) for _, x in found}) > 1                 # equal allocation, unequal strata


def test_weighted_agreement_estimates_the_population_not_the_oversampled_mistakes(split, capsys):
    p, truth, score_a = split
    sample = sampling.create_sample(p, "v1", "correctness_binary", 60, seed=5, mode="disagreement")
    for row in sample.row_ids:
        ratings.rate(p, row, "correctness_binary", "ann", truth[row], sample_id=sample.id)
    population = float(np.mean([score_a[r] == truth[r] for r in truth]))        # 152 / 200 = 0.76
    rated = sample.row_ids
    unweighted = float(np.mean([score_a[r] == truth[r] for r in rated]))
    result = agreement.agreement(p, get_judge(p, "a"))
    assert result.n == 60 and result.statistic == "exact"
    assert unweighted < 0.5                                   # the sample is mostly A's mistakes
    assert abs(result.value - population) < 0.08 < abs(unweighted - population)
    assert result.ci[0] <= population <= result.ci[1]
    assert "weighted" in result.weighting and "unequal probabilities" in result.weighting
    # equal weights reproduce the unweighted statistic exactly
    h = np.array([int(truth[r]) for r in rated])
    j = np.array([int(score_a[r]) for r in rated])
    assert agreement_stats.statistic("exact", h, j, 2, np.ones(len(h))) == pytest.approx(unweighted)
    assert main(["agreement", str(p.path), "--judge", "a"]) == 0
    assert "weighted as drawn:" in capsys.readouterr().out


@pytest.mark.parametrize("mode", ["disagreement", "uncertain"])
def test_a_weighted_sample_rated_part_way_in_the_desks_order_is_still_a_sample(split, mode):
    """Issue 46: the desk showed the most informative targets first, but the weights assumed the whole sample was
    rated: after 30 of 40 ratings κ was biased by -0.35. The desk's order is now the key order, and a rated prefix
    is weighed as the sample of its size."""
    p, truth, score_a = split
    population = float(np.mean([score_a[r] == truth[r] for r in truth]))
    errors = []
    for seed in range(6):
        sample = sampling.create_sample(p, "v1", "correctness_binary", 40, seed=seed, mode=mode)
        for row in sample.row_ids[:24]:                  # part-way, in the order the desk shows them
            ratings.rate(p, row, "correctness_binary", f"r{seed}", truth[row], sample_id=sample.id)
        result = agreement.agreement(p, get_judge(p, "a"), breakdowns=False)
        errors.append(result.value - population)
        with p.write("withdraw") as w:                    # the next seed's sample starts unrated
            w.execute("UPDATE human_ratings SET withdrawn_at = 'x' WHERE withdrawn_at IS NULL")
    assert abs(float(np.mean(errors))) < 0.08, errors     # the old weights read about 0.3 low


def test_extending_a_weighted_sample_redraws_at_the_larger_size(split):
    p, _, _ = split
    sample = sampling.create_sample(p, "v1", "correctness_binary", 50, seed=3, mode="disagreement")
    grown = sampling.extend_sample(p, sample.id, 20)
    assert len(grown.row_ids) == 70 and len(set(grown.row_ids)) == 70 and grown.row_ids[:50] == sample.row_ids
    probs = [x for (x,) in p.reader().execute("SELECT inclusion FROM review_sample_rows WHERE sample_id = ?",
                                              (sample.id,))]
    rest = [x for x in probs if x < 1]
    assert len(probs) == 70 and rest and max(rest) > 0.15      # the others' probabilities grew with the size


def test_unknown_mode_is_a_clear_error(split):
    p, _, _ = split
    with pytest.raises(Exception, match="unknown sampling mode 'random'"):
        sampling.create_sample(p, "v1", "correctness_binary", 10, mode="random")


@pytest.mark.parametrize("agree, expected", [(30, "you can stop"), (20, "keep rating"), (29, "rate about 1 more")])
def test_sequential_stopping_says_when_more_ratings_would_not_change_the_verdict(split, agree, expected):
    p, truth, score_a = split
    rows = [r for r in truth if score_a[r] == truth[r]][:agree]
    rows += [r for r in truth if score_a[r] != truth[r]][: (30 if agree != 29 else 29) - agree]
    for row in rows:
        ratings.rate(p, row, "correctness_binary", "ann", truth[row])
    result = agreement.agreement(p, get_judge(p, "a"))
    assert expected in result.stopping


def test_a_prefix_probability_equals_the_draw_at_that_size():
    """The design keeps the population's total and largest priorities: enough for the probability of any member at
    any smaller size, capping included."""
    from rageval_desktop.core.review.weights import prefix_probability

    rng = np.random.default_rng(4)
    weights = list(np.r_[rng.uniform(0.05, 0.2, 300), [5.0, 4.0, 3.0, 0.9]])
    size = 40
    design = {"population": len(weights), "total": float(sum(weights)),
              "top": sorted(weights, reverse=True)[:size]}
    for m in (1, 5, 12, 30, 40):
        exact = inclusion_probabilities(weights, m)
        for i in (0, 1, 3, 10, 303):
            assert prefix_probability(weights[i], m, design) == pytest.approx(exact[i], rel=1e-9), (m, i)


def test_a_planned_sample_decides_at_its_final_look_and_waits_before_it(split):
    """Issue 46: a sample records its plan; while it is rated, the audit uses the anytime interval at the interim
    level and says how many targets are left; with every target rated, the final look's fixed-size interval (about
    2.05 errors instead of 3.1-3.5) decides. An extension after the final look spends the plan."""
    p, truth, score_a = split
    sample = sampling.create_sample(p, "v1", "correctness_binary", 60, seed=2)
    for row in sample.row_ids[:40]:
        ratings.rate(p, row, "correctness_binary", "ann", truth[row], sample_id=sample.id)
    interim = agreement.agreement(p, get_judge(p, "a"), breakdowns=False)
    assert interim.look == "interim"
    if interim.verdict == "needs more ratings":
        assert interim.needed == 20                          # the rest of the planned sample
    for row in sample.row_ids[40:]:
        ratings.rate(p, row, "correctness_binary", "ann", truth[row], sample_id=sample.id)
    final = agreement.agreement(p, get_judge(p, "a"), breakdowns=False)
    assert final.look == "final"
    low, high = final.anytime_ci
    assert high - low < interim.anytime_ci[1] - interim.anytime_ci[0]     # narrower than any interim interval
    sampling.extend_sample(p, sample.id, 10)                            # after the final look: the plan is spent
    assert agreement.agreement(p, get_judge(p, "a"), breakdowns=False).look == "interim"
    other = sampling.create_sample(p, "v1", "correctness_binary", 30, seed=9)
    ratings.rate(p, other.row_ids[0], "correctness_binary", "bob", 1.0, sample_id=other.id)
    assert agreement.agreement(p, get_judge(p, "a"), breakdowns=False).look == "anytime"   # two samples: no plan


def test_rows_a_person_chose_are_not_read_as_a_sample_of_the_run(split):
    """Rating the disagreements listed in triage (a chosen sample) used to feed the audit as if drawn at random:
    judge A, wrong on all 40 of them, read κ near -1. They are left out and counted; a drawn sample still counts."""
    p, truth, score_a = split
    rows = [r for r in truth if score_a[r] != truth[r]][:30]
    chosen = sampling.sample_of_rows(p, "v1", "correctness_binary", rows, reason="triage")
    for row in rows:
        ratings.rate(p, row, "correctness_binary", "ann", truth[row], sample_id=chosen.id)
    found = agreement.agreement(p, get_judge(p, "a"), breakdowns=False)
    assert found.n == 0 and found.outside_sample == 30 and found.verdict == "needs more ratings"
    drawn = sampling.create_sample(p, "v1", "correctness_binary", 40, seed=5)
    for row in drawn.row_ids:
        ratings.rate(p, row, "correctness_binary", "bob", truth[row], sample_id=drawn.id)
    found = agreement.agreement(p, get_judge(p, "a"), breakdowns=False)
    assert found.n >= 40 - len(set(drawn.row_ids) & set(rows)) and found.value is not None and found.value > 0
