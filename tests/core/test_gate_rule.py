"""The default gate is a test with a stated error rate (issue 27). Each case failed on the code before it: the old
rule failed 99% of unchanged pull requests, had no undecided verdict, no exit code 3, a bootstrap interval that
undercovered skewed metrics and said [100, 100] for 12 of 12, and let the dashboard and the gate disagree about
rows the gate did not compare without a word."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.stats import diff_ci, holm
from rageval_desktop.core.base.verdicts import EXIT_NOT_DECISION_GRADE, Decision
from rageval_desktop.core.metrics.compare import paired_cell
from rageval_desktop.core.metrics.gate import evaluate_gate
from rageval_desktop.core.metrics.gate_config import CellRule, GateConfig
from rageval_desktop.core.metrics.simulate import gate_error_rates

WAIVED = ["--metrics", "correctness", "--allow-unlicensed", "judge under test"]  # the judge is what is tested


def test_holm_equals_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(4)
    for _ in range(8):
        p = rng.random(rng.integers(1, 40)) ** 3
        reject, adjusted = holm(list(p), 0.05)
        expected = multipletests(p, alpha=0.05, method="holm")
        assert reject == list(expected[0]) and adjusted == pytest.approx(list(expected[1]), abs=1e-12)


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_unchanged_pull_requests_fail_at_most_alpha_and_the_point_rule_cries_wolf():
    """Seeded null PRs (35 cells: 6 slices of 20-100 questions, 5 metrics); bench/bench_gate.py runs 1,000."""
    default = gate_error_rates(200, seed=7, churn=1.0)
    assert default["fail_rate"] <= 0.05
    zero_limit = gate_error_rates(200, seed=8, churn=1.0, max_slice_drop=0.0)
    assert zero_limit["fail_rate"] <= 0.06
    point = gate_error_rates(60, seed=9, churn=0.3, rule="point")
    assert point["fail_rate"] > 0.9                                   # why it is no longer the default


@pytest.mark.slow   # heavy: make test-slow (and CI) run it
def test_a_large_drop_in_one_slice_is_caught_and_a_small_one_says_what_it_could_detect():
    caught = gate_error_rates(60, seed=3, churn=0.3, drop=30)
    assert caught["caught_rate"] >= 0.9
    small = gate_error_rates(40, seed=5, churn=0.3, drop=5)
    assert small["undecided_rate"] == 1.0 and 8 < small["detectable_drop"] < 30


def _comparison(before, after, name="easy"):
    return {"baseline": "a", "candidate": "b", "metrics": ["hit@5"], "shared_questions": len(before),
            "slices": {name: {"n": len(before), "hit@5": paired_cell(np.asarray(before, float),
                                                                     np.asarray(after, float))}}}


def test_a_cell_passes_only_when_shown_safe_and_cannot_tell_is_its_own_outcome():
    """Was (issue 44): an unsettled cell passed with exit 0 unless --strict; "no regression shown" was a pass."""
    same = [100.0] * 30 + [0.0] * 10
    small = evaluate_gate(_comparison(same, same))
    # nothing changed on 40 questions, yet up to ~9% of them could change unseen: not proof within 2 points
    assert small.decision is Decision.NOT_DECISION_GRADE and small.exit_code == EXIT_NOT_DECISION_GRADE == 3
    assert not small and not small.passed
    assert small.undecided[0]["detectable_drop"] > 2
    big = [100.0] * 3000 + [0.0] * 1000
    shown = evaluate_gate(_comparison(big, big))
    assert shown.decision is Decision.PASS and shown and shown.exit_code == 0
    assert shown.safe[0]["status"] == "within"
    worse = [0.0] * 30 + [0.0] * 10
    failed = evaluate_gate(_comparison(same, worse))
    assert failed.decision is Decision.REGRESSION and failed.exit_code == 1 and not failed
    assert failed.regressions[0]["p_adjusted"] < 0.05


def test_a_configured_cell_passes_on_its_power_at_the_tolerance_and_not_beyond_it():
    """Under a configuration a cell passes when no drop is shown and a drop of its tolerance would have been
    caught with the configured power on this comparison's own spread; a tolerance below what it can detect is
    not decision-grade, never a pass."""
    rng = np.random.default_rng(5)
    before = rng.choice([0.0, 100.0], 200, p=[0.3, 0.7])
    after = np.where(rng.random(200) < 0.3, rng.choice([0.0, 100.0], 200, p=[0.3, 0.7]), before)
    comparison = _comparison(before, after)
    detects = evaluate_gate(comparison).undecided[0]["detectable_drop"]      # at allowed 2, power 0.8
    wide = GateConfig({("easy", "hit@5"): CellRule(tolerance=40.0, allowed=0.0, power=0.8)})
    narrow = GateConfig({("easy", "hit@5"): CellRule(tolerance=3.0, allowed=0.0, power=0.8)})
    passed = evaluate_gate(comparison, config=wide)
    assert passed.decision is Decision.PASS and passed.safe[0]["status"] in ("within", "powered")
    assert passed.safe[0]["detectable_drop"] <= 40
    refused = evaluate_gate(comparison, config=narrow)
    assert refused.decision is Decision.NOT_DECISION_GRADE
    assert refused.undecided[0]["detectable_drop"] > 3 and detects > 3
    missing = GateConfig({("edge", "hit@5"): CellRule(tolerance=40.0, allowed=0.0, power=0.8)})
    gone = evaluate_gate(comparison, config=missing)
    assert gone.decision is Decision.NOT_DECISION_GRADE and gone.not_evaluated[0]["slice"] == "edge"


def test_t_interval_covers_skewed_differences_where_the_percentile_bootstrap_did_not():
    """MRR-like paired differences (mostly 0, a few large jumps): the percentile bootstrap covered 91.7-93.1%."""
    rng = np.random.default_rng(11)
    population = np.concatenate([np.zeros(850), rng.choice([-100, -50, -66.7, 50, 66.7, 100, -75], 150)])
    truth = population.mean()
    covered = 0
    for _ in range(2000):
        _, low, high = diff_ci(rng.choice(population, 30))
        covered += low <= truth <= high
    assert covered / 2000 >= 0.94


def test_a_candidate_with_rows_the_gate_cannot_compare_is_warned_about(tmp_path, capsys):
    """Was: extra candidate rows not linked to the golden set moved the dashboard's 'all' by -20 points while the
    gate passed with n 40 and delta 0, without a word."""
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.importers import import_golden, import_run
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.store.project import Project

    golden = [{"id": f"g{i}", "question": f"q{i}?", "gold_answer": "a", "slice_tag": "easy",
               "gold_chunk_ids": [f"c{i}"]} for i in range(40)]
    row = {"answer": "a", "retrieved": [{"chunk_id": "x", "text": "t"}]}
    v1 = [{"id": f"a{i}", "golden_id": f"g{i}", "question": f"q{i}?", **row} for i in range(40)]
    v2 = v1 + [{"id": f"extra{i}", "question": f"unlinked question {i}?", **row} for i in range(20)]
    for name, rows in (("g.jsonl", golden), ("v1.jsonl", v1), ("v2.jsonl", v2)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "u.rageval"
    with Project.create(path) as p:
        import_golden(p, tmp_path / "g.jsonl", check_duplicates=False)
        import_run(p, tmp_path / "v1.jsonl", "v1")
        import_run(p, tmp_path / "v2.jsonl", "v2")
        judge = add_judge(p, "j", "correctness", "lexical", params={"measure": "f1"})
        ids = p.reader().execute("SELECT rr.id, rr.golden_id FROM run_rows rr ORDER BY rr.id").fetchall()
        with p.write("judgments") as w:
            w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) VALUES "
                          "(?, ?, ?, 'ok', ?, ?)", [(judge.id, r, f"k{r}", 5.0 if g else 1.0, utcnow())
                                                     for r, g in ids])
    assert main(["gate", str(path), "--baseline", "v1", "--candidate", "v2", *WAIVED,
                 "--json"]) == 3          # 40 questions cannot show a drop within 2 points: not decision-grade
    out = json.loads(capsys.readouterr().out)
    assert out["comparison"]["coverage"]["candidate"]["unlinked"] == 20
    warning = out["warnings"][0]
    assert "20 question(s) are not compared (20 not linked to the golden set)" in warning
    assert "correctness 66.7 there, 100.0 on the compared questions" in warning
    assert main(["gate", str(path), "--baseline", "v1", "--candidate", "v2", *WAIVED]) == 3
    assert "warning: candidate 'v2': 20 question(s) are not compared" in capsys.readouterr().out


def test_max_t_charges_correlated_tests_less_than_holm_and_independent_ones_the_same():
    from rageval_desktop.core.base.stats import max_t

    p = [0.004] + [0.5] * 9
    _, independent, _ = max_t(p, np.eye(10), 0.05)
    assert independent[0] == pytest.approx(1 - (1 - 0.004) ** 10, abs=0.004)      # Sidak, up to Monte Carlo
    _, together, _ = max_t(p, np.ones((10, 10)), 0.05)
    assert together[0] == pytest.approx(0.004, abs=0.002)                          # one test in ten copies
    assert holm(p, 0.05)[1][0] == pytest.approx(0.04)


def test_the_comparison_carries_the_cells_correlation_and_the_gate_uses_it(tmp_path):
    from rageval_desktop.core.metrics.compare import compare
    from rageval_desktop.core.store.project import Project
    from tests.core.test_gate_decisions import build

    path = build(tmp_path, {"easy": 30, "edge": 30}, {"easy-0", "easy-1"} | {f"edge-{i}" for i in range(12)})
    with Project.open(path, read_only=True) as p:
        comparison = compare(p, "v1", "v2")
    found = comparison["cell_correlation"]
    cells = [tuple(c) for c in found["cells"]]
    matrix = np.asarray(found["matrix"])
    assert np.allclose(np.diag(matrix), 1) and np.allclose(matrix, matrix.T)
    edge = cells.index(("edge", "hit@5"))
    assert matrix[edge, cells.index(("edge", "hit@10"))] > 0.9                    # the same questions' hits
    assert matrix[edge, cells.index(("easy", "hit@5"))] == 0                      # no question in common
    assert 0.5 < matrix[edge, cells.index(("all", "hit@5"))] < 1                  # half of 'all'
    result = evaluate_gate(comparison, max_slice_drop=5)
    assert result.adjustment == "max-T" and {r["slice"] for r in result.regressions} == {"edge", "all"}


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_max_t_finds_more_regressions_than_holm_at_the_same_error_rate():
    found = gate_error_rates(120, seed=21, churn=0.3, drop=15)
    holm_found = gate_error_rates(120, seed=21, churn=0.3, drop=15, holm=True)
    assert found["caught_rate"] >= holm_found["caught_rate"] + 0.02


def test_a_misspelt_run_is_a_usage_error_not_a_regression(tmp_path, capsys):
    """Was: exit 1, the code for a regression (issue 28's exit-code item for the gate)."""
    from tests.core.test_gate_decisions import build

    path = build(tmp_path, {"easy": 12}, set())
    for command in ("gate", "compare"):
        assert main([command, path, "--baseline", "v1", "--candidate", "nosuchrun"]) == 2
        err = capsys.readouterr().err
        assert "no run named 'nosuchrun' (runs: v1, v2)" in err and "Traceback" not in err


def test_names_in_the_gate_comment_neither_mention_anyone_nor_reorder_text():
    """Was: a run named '@cand' pinged a user in the pull request, and an RTL override reordered the comment."""
    from rageval_desktop.core.base.text import md_escape

    text = md_escape("@cand v1\u202e2v")
    assert "@cand" not in text and "@\u200bcand" in text
    assert "\u202e" not in text and "202E" in text
    assert md_escape("a@b.com") == "a@b.com" and md_escape("hit@5") == "hit@5"
    assert md_escape("(@cand)") == "\\(@\u200bcand\\)"


@pytest.mark.slow   # heavy: `make test-all` and CI run it; bench/bench_gate.py measures it at 1,000 per line
def test_a_planned_gate_passes_unchanged_pull_requests_and_catches_each_tolerance():
    """Issue 44's goal, seeded and small: under a configuration from `gate plan` (simulated), unchanged pull
    requests are failed in <= 5% and mostly pass; a drop of a cell's tolerance is caught in >= 95% (planned for
    95% however often a pull request is retried: 98.5% on a first attempt) — on a yes/no metric (hit@5) and on the
    1-5 judge. (At 95% over every attempt a slice of 100 questions is gated on its own at tolerances up to 40.)"""
    from rageval_desktop.core.metrics.simulate import simulated_plan

    config = simulated_plan(churn=0.3, like=True, max_tolerance=40.0)["config"]
    null = gate_error_rates(150, seed=31, churn=0.3, config=config)
    assert null["fail_rate"] <= 0.05 and null["pass_rate"] >= 0.9
    for cell in (("keyword-heavy", "hit@5"), ("all", "hit@5"), ("keyword-heavy", "correctness")):
        found = gate_error_rates(60, seed=32, churn=0.3, drop=config.cells[cell].tolerance, regressed=cell[0],
                                 metric=cell[1], config=config)
        assert found["caught_rate"] >= 0.95, cell


def test_a_configured_cell_with_too_few_questions_is_not_evaluated_never_skipped():
    """A configured cell below the configuration's `min_slice_n` was set aside as 'reported, not gated' (and, with
    no drop over its allowed one, not even reported), and the gate passed on its other cells."""
    big = [100.0] * 3000 + [0.0] * 1000
    comparison = _comparison(big, big)
    comparison["slices"]["tiny"] = {"n": 4, "hit@5": paired_cell(np.full(4, 100.0), np.full(4, 100.0))}
    config = GateConfig({("easy", "hit@5"): CellRule(10.0, 1.0, 0.8), ("tiny", "hit@5"): CellRule(10.0, 1.0, 0.8)},
                        min_slice_n=5)
    result = evaluate_gate(comparison, config=config)
    assert result.decision is Decision.NOT_DECISION_GRADE and not result
    assert [(u["slice"], u["kind"]) for u in result.not_evaluated] == [("tiny", "config")]
    assert "fewer than the configuration's 5" in result.not_evaluated[0]["why"]
    shown = evaluate_gate(comparison, config=GateConfig({("easy", "hit@5"): CellRule(10.0, 1.0, 0.8)}, min_slice_n=5))
    assert shown.decision is Decision.PASS
