"""Issue 73: retries are spent, not free. CI re-runs a pull request's gate on every push and re-run, with answers
drawn anew; before, every attempt had the full alpha and power, so a pull request regressing by a cell's tolerance
and re-run until green shipped almost surely. Attempt k now spends 6/(pi^2 k^2) of each budget."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from rageval_desktop.core.metrics import attempts
from rageval_desktop.core.metrics.attempts import Attempt, locate, pr_from_env, remember, share
from rageval_desktop.core.metrics.compare import GateUsageError
from rageval_desktop.core.metrics.gate import evaluate_gate
from rageval_desktop.core.metrics.gate_config import CellRule, GateConfig
from rageval_desktop.core.metrics.simulate import pull_request, retry_rates


def test_the_shares_spend_at_most_each_budget_over_every_attempt():
    assert share(1) == pytest.approx(6 / math.pi ** 2)
    assert sum(share(k) for k in range(1, 100_000)) < 1.0
    assert sum(share(k) for k in range(1, 21)) > 0.97          # most of it by the 20th attempt


def test_the_pull_request_comes_from_the_ci_and_its_attempts_from_the_ledger(tmp_path):
    github = {"GITHUB_ACTIONS": "true", "GITHUB_REF": "refs/pull/42/merge", "GITHUB_REPOSITORY": "acme/rag"}
    assert pr_from_env(github) == "github:acme/rag#42"
    assert pr_from_env({"GITHUB_ACTIONS": "true", "GITHUB_REF": "refs/heads/main"}) is None     # a push, no PR
    assert pr_from_env({"GITLAB_CI": "true", "CI_MERGE_REQUEST_IID": "7", "CI_PROJECT_PATH": "g/p"}) == "gitlab:g/p!7"
    ledger = tmp_path / "attempts.jsonl"
    first = locate(None, ledger, github)
    assert (first.pr, first.number, first.earlier) == ("github:acme/rag#42", 1, 0)
    remember(first, "regression", "pr-42", "t1")
    remember(locate("github:acme/rag#41", ledger, {}), "pass", "pr-41", "t1")     # another PR's
    second = locate(None, ledger, github)
    assert (second.number, second.earlier) == (2, 1)
    assert locate(None, ledger, {**github, "GITHUB_RUN_ATTEMPT": "5"}).number == 5   # never below the CI's re-runs
    assert [json.loads(line)["pr"] for line in ledger.read_text().splitlines()] == ["github:acme/rag#42",
                                                                                   "github:acme/rag#41"]
    assert locate(None, None, {}).pr is None and "retries not counted" in locate(None, None, {}).describe()
    ledger.write_text("not json\n")
    with pytest.raises(GateUsageError, match="line 1: not an attempt of the gate's ledger"):
        locate("x", ledger, {})


def _one_cell(comparison: dict) -> tuple[float, dict]:
    """The detectable drop at 80% power of the 'all' hit@5 cell on a pull request like this one."""
    config = GateConfig({("all", "hit@5"): CellRule(90.0, 1.0, 0.8)}, power=0.8,
                        not_gated={m: "not in this test" for m in ("correctness",)})
    [cell] = evaluate_gate(comparison, config=config).safe
    return cell["detectable_drop"], cell


def test_a_pull_request_retried_until_green_ships_a_regression_only_when_retries_are_free():
    import numpy as np

    tolerance = round(_one_cell(pull_request(np.random.default_rng(1)))[0] + 0.5, 1)  # ~80% power at it, per try
    cells = {("all", "hit@5"): CellRule(tolerance, 1.0, 0.8)}
    free = GateConfig(cells, power=0.8, retries="each")
    spent = replace(free, cells={("all", "hit@5"): CellRule(tolerance, 1.0, 0.95)}, power=0.95, retries="spent")
    kwargs = {"prs": 20, "attempts": 20, "drop": tolerance, "regressed": "all", "metric": "hit@5", "seed": 3}
    before, after = retry_rates(config=free, **kwargs), retry_rates(config=spent, **kwargs)
    assert before["ship_rate"] >= 0.5              # was: re-run until green, a true regression ships
    assert after["ship_rate"] <= 0.05
    # the spent rule asks a later attempt for more evidence: the drop it can detect grows
    comparison = pull_request(np.random.default_rng(2))
    wide = replace(spent, cells={("all", "hit@5"): CellRule(tolerance * 1.3, 1.0, 0.95)})
    first = evaluate_gate(comparison, config=wide, attempt=Attempt("pr", 1))
    fifth = evaluate_gate(comparison, config=wide, attempt=Attempt("pr", 5))
    assert first.power_now == pytest.approx(1 - 0.05 * share(1) / 2) and fifth.alpha == pytest.approx(0.05 * share(5))
    assert fifth.safe[0]["detectable_drop"] > 1.2 * first.safe[0]["detectable_drop"]
    assert "attempt 5 of pr" in fifth.as_dict()["rule_text"]
    old = evaluate_gate(comparison, config=replace(wide, retries="each"), attempt=Attempt("pr", 5))
    assert "retries are not spent" in old.as_dict()["rule_text"] and old.alpha == 0.05


def test_an_unchanged_pull_request_is_not_blocked_by_its_retries():
    found = retry_rates(40, attempts=20, config=GateConfig({("all", "hit@5"): CellRule(15.0, 1.0, 0.95)},
                                                           power=0.95, retries="spent"), seed=5)
    assert found["block_rate"] <= 0.05 and found["shown_regression_rate"] <= 0.05


def test_the_ledger_is_not_written_where_it_cannot_be(tmp_path, monkeypatch):
    attempt = Attempt("pr", 1, 0, str(tmp_path / "no-such-folder" / "attempts.jsonl"))
    with pytest.raises(attempts.RagevalError, match="cannot add the attempt"):
        remember(attempt, "pass", "c", "t")
