"""The audit's decisions keep their stated error rates (issue 27): intervals that cover at n = 30 and are never a
point, samples weighted as they were drawn, verdicts that stay right under repeated looks. Seeded simulations of
the audit's own functions (core.review.simulate); bench/bench_agreement_rules.py runs the large ones. Each failed
on the code before: the percentile bootstrap covered 73-93% and said [1, 1] for perfect samples, stratified
ratings weighed 1, and a verdict on a 95% CI re-read every ten ratings decided wrongly a third of the time."""

from __future__ import annotations

import numpy as np
import pytest

from rageval_desktop.core.review import evidence
from rageval_desktop.core.review.simulate import sequential, single_look


@pytest.mark.parametrize("kappa", [0.6, 0.8])
def test_the_interval_covers_at_n_30(kappa):
    found = single_look(kappa, 30, "uniform", runs=300, seed=1)
    assert found["coverage"] >= 0.92


def test_a_sample_that_always_agreed_gets_an_interval_not_a_point():
    h = np.arange(12) % 2
    low, high = evidence.interval(evidence.posterior("cohen_kappa", h, h, 2))
    assert low < 0.8 and high > 0.99
    low, high = evidence.interval(evidence.posterior("quadratic_kappa", h * 4, h * 4, 5))
    assert low < 0.9


def test_stratified_ratings_are_weighted_as_drawn():
    """Equal allocation under-samples the largest slice, where the judge disagrees most: unweighted, a judge of
    population kappa 0.65 looks like 0.75 and is kept; weighted, the estimate is unbiased."""
    weighted = single_look(0.65, 60, "stratified", runs=200, seed=2)
    unweighted = single_look(0.65, 60, "stratified", runs=200, seed=2, weighted=False)
    assert abs(weighted["bias"]) < 0.02 < unweighted["bias"] - 0.05
    assert weighted["keep"] <= 0.02


def test_uncertain_samples_neither_retire_a_good_judge_nor_lose_coverage():
    found = single_look(0.74, 30, "uncertain", runs=200, seed=3)
    assert found["retire"] <= 0.02 and found["coverage"] >= 0.93


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_repeated_looks_keep_the_error_rate():
    """Rate 30, look, rate 10 more and look again until decided (up to 300): at kappa exactly 0.7 any verdict is
    wrong; the old rule reached one 33% of the time."""
    found = sequential(0.70, runs=120, seed=4)
    assert found["keep"] + found["retire"] <= 0.06


def test_the_effective_n_is_what_the_minimum_asks_for():
    from rageval_desktop.core.review.agreement import decide
    from rageval_desktop.core.review.settings import RetirementPolicy

    pol = RetirementPolicy()
    assert decide(0.95, [0.9, 1.0], 40, pol, anytime=[0.85, 1.0], n_eff=40)[0] == "keep"
    verdict, more = decide(0.95, [0.9, 1.0], 40, pol, anytime=[0.85, 1.0], n_eff=22.5)
    assert verdict == "needs more ratings" and more == 8
    assert evidence.effective_n(np.array([1.0, 1.0, 4.0, 4.0]), 4) == pytest.approx(100 / 34)


def test_a_judge_kept_on_kappa_but_scoring_high_is_flagged_wherever_it_counts(tmp_path):
    """Was: a judge 0.45 points high on a 1-5 scale was kept (weighted kappa 0.95) while every mean it fed was
    about 11 points high, unflagged."""
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.judges.registry import add_judge, get_judge
    from rageval_desktop.core.metrics.rowdata import load_run
    from rageval_desktop.core.review import agreement, ratings
    from tests.core.test_judging import make_project

    p = make_project(tmp_path / "b.rageval", n=60)
    judge = add_judge(p, "generous", "correctness", "lexical")
    rows = [r for r, in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
    human = {r: 1 + i % 5 for i, r in enumerate(rows)}
    with p.write("judgments") as w:
        w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) VALUES "
                      "(?, ?, ?, 'ok', ?, ?)", [(judge.id, r, f"k{r}", min(5.0, human[r] + 0.45), utcnow())
                                                 for r in rows])
    for r in rows:
        ratings.rate(p, r, "correctness", "ann", human[r])
    result = agreement.agreement(p, get_judge(p, "generous"))
    assert result.verdict == "keep"
    assert result.bias["mean"] == pytest.approx(0.45 / 4 * 100 * 48 / 60, abs=0.5) and result.bias["flagged"]
    assert all(v["bias"]["mean"] > 5 for v in result.per_slice.values())
    flagged = load_run(p, "v1").unsettled
    assert [u["judge"] for u in flagged] == ["generous"] and "biased +" in flagged[0]["verdict"]
    assert "beyond ±5" in agreement.describe(result)
    p.close()


def test_ppi_delta_carries_the_covariance_of_the_judge_and_its_correction():
    """Was: ppi_delta left out the covariance terms ppi_mean has: coverage 97-100%, intervals ~10% too wide."""
    import rageval_desktop.core.metrics.ppi as ppi

    rng = np.random.default_rng(0)
    size, rated, runs = 300, 40, 300
    covered, widths, old_widths = 0, [], []
    for _ in range(runs):
        q = rng.normal(60, 20, size)
        ha, hb = np.clip(q + rng.normal(0, 10, size), 0, 100), np.clip(q + 3 + rng.normal(0, 10, size), 0, 100)
        ja, jb = np.clip(ha + 8 + rng.normal(0, 6, size), 0, 100), np.clip(hb + 8 + rng.normal(0, 6, size), 0, 100)
        da, db = np.full(size, np.nan), np.full(size, np.nan)
        ia, ib = rng.choice(size, rated, replace=False), rng.choice(size, rated, replace=False)
        da[ia], db[ib] = ha[ia] - ja[ia], hb[ib] - jb[ib]
        found = ppi.ppi_delta(ja, jb, da, db)
        covered += found["ci"][0] <= 3.0 <= found["ci"][1]
        widths.append(found["ci"][1] - found["ci"][0])
        cross = (ppi.covariance(jb - ja, db) - ppi.covariance(jb - ja, da)) / size
        old_widths.append(2 * ppi.critical(rated) * np.sqrt(found["se"] ** 2 - 2 * cross))
    # at least 94% (the correction's variance is floored for rare, large errors the rated rows may miss: issue 46,
    # so on these small, frequent errors it covers more); the covariance still narrows the interval
    assert covered / runs >= 0.93
    assert np.mean(old_widths) > np.mean(widths)


def test_a_weighted_sample_on_a_1_to_5_scale_gets_an_interval_that_covers():
    """Issue 46: in `uncertain` samples on 1-5 scales the 95% interval covered 79-86% (Kish's effective n overstates
    what weights that go with the scores leave); widened to the jackknife's error it covers about 95% at n = 30."""
    from sklearn.metrics import cohen_kappa_score

    from rageval_desktop.core.review.agreement import judge_evidence
    from rageval_desktop.core.review.agreement_stats import confusion, from_confusion
    from rageval_desktop.core.review.sampling import inclusion_probabilities
    from rageval_desktop.core.review.settings import RetirementPolicy

    rng = np.random.default_rng(3)
    size, n, runs = 1000, 30, 150
    shift = rng.choice([0.05, -0.05, -0.25], size, p=[0.6, 0.3, 0.1])
    probs = [0.1, 0.15, 0.2, 0.3, 0.25]
    human = rng.choice(5, size, p=probs)
    judge = np.where(rng.random(size) < np.clip(0.6 + shift, 0, 1), human, rng.choice(5, size, p=probs))
    truth = cohen_kappa_score(human, judge, weights="quadratic")
    p = np.array(inclusion_probabilities(list(0.05 + np.clip(1 - 2 * np.abs(judge - 2.5) / 4, 0, 1)), n))
    covered = 0
    for _ in range(runs):
        idx = np.argsort(rng.random(size) / p)[:n]                 # a sequential Poisson draw, as the app's
        w = 1 / p[idx]
        value = float(from_confusion("quadratic_kappa", confusion(human[idx], judge[idx], 5, w)))
        ci, *_ = judge_evidence("quadratic_kappa", human[idx], judge[idx], 5, w, value, n,
                                float(w.sum() ** 2 / (w ** 2).sum()), RetirementPolicy(), draws=800)
        covered += ci[0] <= truth <= ci[1]
    assert covered / runs >= 0.9            # was about 0.84


def test_a_weighted_samples_95_interval_allows_for_its_estimated_error_as_students_t():
    """Issue 46: the 95% interval of a weighted sample is the posterior drawn on (z / t)^2 of its effective n, t on
    n - 1 degrees of freedom: its error is estimated from the n targets (Kish's n, the jackknife). Without it a 1-5
    `uncertain` audit of 30 ratings covered 93.4% (3,000 audits, bench/bench_audit_desk.py). The error the verdict
    uses is unchanged."""
    from scipy.stats import norm, t

    from rageval_desktop.core.review.agreement import judge_evidence
    from rageval_desktop.core.review.agreement_stats import statistic
    from rageval_desktop.core.review.settings import RetirementPolicy

    assert evidence.t_allowance(30) == pytest.approx((norm.ppf(0.975) / t.ppf(0.975, 29)) ** 2, rel=1e-9)
    assert evidence.t_allowance(1) == 1.0
    rng = np.random.default_rng(5)
    human = rng.integers(0, 5, 30)
    judge = np.clip(human + rng.integers(-1, 2, 30), 0, 4)
    w = rng.uniform(1, 3, 30)
    value = statistic("quadratic_kappa", human, judge, 5, w)
    n_eff = evidence.effective_n(w, 30)
    ci, used, _, _ = judge_evidence("quadratic_kappa", human, judge, 5, w, value, 30, n_eff, RetirementPolicy())
    found = evidence.posterior("quadratic_kappa", human, judge, 5, w, n_eff=n_eff)
    se, jack = float(np.std(found)), evidence.jackknife_se("quadratic_kappa", human, judge, 5, w)
    if jack > se:
        n_eff *= (se / jack) ** 2
        se = float(np.std(evidence.posterior("quadratic_kappa", human, judge, 5, w, n_eff=n_eff)))
    # Student's t on the effective n's degrees of freedom, not the count's (issue 75.6: a partly rated uncertain
    # sample of 30 weighs like fewer ratings, and its interval was drawn as if it had 29 degrees of freedom)
    assert int(n_eff) < 29
    shown = evidence.posterior("quadratic_kappa", human, judge, 5, w, n_eff=n_eff * evidence.t_allowance(int(n_eff)))
    assert ci == pytest.approx(list(evidence.interval(shown)), rel=1e-12)
    plain = evidence.interval(evidence.posterior("quadratic_kappa", human, judge, 5, w, n_eff=n_eff))
    assert ci[0] < plain[0] and ci[1] > plain[1]
    assert used == pytest.approx(list(evidence.anytime_interval(value, se, n_eff, min_n=30)), rel=1e-12)
