"""`rageval gate plan`: what each cell of a gate can detect, before any candidate exists, and a configuration that
gates only what the data can honour.

A cell's power depends on its questions (n) and on the spread of the per-question differences a pull request
makes (sd): the test catches a drop of `allowed + (t_level + t_power) * sd / sqrt(n)` with the wanted power, where
`level` is the single-step level of the family's adjustment (Bonferroni's alpha/K when the cells' correlation is
unknown, the max-T level when it is measured: both at most what the gate charges). The spread comes from either

- a past candidate (`like`): the differences it made against the baseline, cell by cell — pull requests are
  assumed to change answers as much as it did; or
- the baseline alone and a churn c, the share of questions a pull request answers anew from the same
  distribution: sd = sd(baseline) * sqrt(2c). c = 1 (every answer independent) is the cautious default.

A drop of D points also spreads the differences (a share of questions falls): the detectable drop counts that
too (core.base.stats.detectable_drop_bounded), or a binary metric's power would be overstated. The allowed drop
defaults to 1 point: with 0, an unchanged pull request sits on the test's boundary and the family-wise false-fail
rate measured 5.0-6.5%, above the promised 5% (bench/bench_gate.py); with 1 it measured 0.3-1.7%.

Each cell is proposed the tolerance it can honour — the wanted one, or its detectable drop times HEADROOM (a pull
request's own spread varies around the planned one; the gate checks the power on the pull request's own), rounded
up to half a point. Slices that cannot reach `max_tolerance` alone are merged into one group; 'all' is always
gated. For every cell the plan also says how many questions would reach the wanted tolerance.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from rageval_desktop._version import __version__
from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.stats import detectable_drop_bounded, max_t, normal_quantile, unseen_change_se
from rageval_desktop.core.metrics.attempts import levels
from rageval_desktop.core.metrics.compare import (
    COVERAGE,
    GateUsageError,
    compare,
    family_matrix,
)
from rageval_desktop.core.metrics.dashboard import ALL, ordered_slices
from rageval_desktop.core.metrics.gate_config import CellRule, GateConfig
from rageval_desktop.core.metrics.retrieval import canonical_name, is_retrieval, named
from rageval_desktop.core.metrics.rowdata import load_run, per_question
from rageval_desktop.core.store.project import Project

Spread = dict[tuple[str, str], tuple[int, float]]      # (slice or group, metric) -> (questions, sd of differences)
POWER_PLANNED = 0.95    # a drop of a cell's tolerance is caught with this chance however often a PR is retried
HEADROOM = 1.15         # planned tolerance = detectable drop x this: room for a pull request's own spread
ALLOWED = 1.0           # a drop shown beyond this fails: an unchanged pull request sits a point inside it
MERGED = "merged"


def _check(tolerance: float, max_tolerance: float, allowed: float, power: float, alpha: float, churn: float) -> None:
    for name, flag, value, low, high in (("the tolerance", "--tolerance", tolerance, 0.0, 100.0),
                                         ("the largest tolerance", "--max-tolerance", max_tolerance, 0.0, 100.0),
                                         ("the allowed drop", "--allowed", allowed, 0.0, 100.0),
                                         ("the churn", "--churn", churn, 0.0, 1.0)):
        if not (math.isfinite(value) and low <= value <= high):
            raise GateUsageError(f"{name} must lie between {low:g} and {high:g} (got {value:g})",
                                 cli_hint=f"check {flag}")
    if churn <= 0:
        raise GateUsageError("the churn must be above 0: a pull request that changes no answer needs no gate",
                             cli_hint="check --churn")
    if not allowed < tolerance <= max_tolerance:
        raise GateUsageError(f"the allowed drop ({allowed:g}) must be below the tolerance ({tolerance:g}), and the "
                             f"tolerance at most the largest tolerance ({max_tolerance:g})",
                             cli_hint="check --allowed, --tolerance and --max-tolerance")
    if not (0.5 <= power < 1):
        raise GateUsageError(f"the power lies between 0.5 and 1 (got {power:g})", cli_hint="check --power")
    if not (0 < alpha < 0.5):
        raise GateUsageError(f"the family-wise error rate lies between 0 and 0.5 (got {alpha:g})",
                             cli_hint="check --alpha")


def _spread_from_baseline(project: Project, baseline: str, metrics: list[str] | None, churn: float,
                          groups: dict[str, list[str]], judged: list[str]) -> tuple[Spread, list[str]]:
    """(n, sd of the differences) per cell when a pull request answers a share `churn` of questions anew."""
    data = load_run(project, baseline)
    q = per_question(data.frame)
    q = q[q.index >= 0]                                       # linked to the golden set, as the gate compares
    wanted = [canonical_name(m) for m in metrics] if metrics else [*named("headline"), *data.metrics]
    q[COVERAGE] = 100.0                  # the baseline answered each of its questions: no spread seen (floored)
    wanted += [COVERAGE] if COVERAGE not in wanted else []
    judged[:] = data.metrics
    missing = [m for m in wanted if m not in q.columns]
    if missing:
        raise GateUsageError(f"'{baseline}' has no {', '.join(missing)} to plan from (not judged, or no such metric)")
    masks = {s: q["slice"] == s for s in ordered_slices(q)}
    masks |= {g: q["slice"].isin(v) for g, v in groups.items()}
    masks[ALL] = q["slice"] == q["slice"]
    out = {}
    for name, mask in masks.items():
        for m in wanted:
            values = q.loc[mask, m].astype(float)
            if is_retrieval(m):
                values = values[q.loc[mask, "n_gold"] > 0]
            values = values.dropna()
            sd = float(values.std(ddof=1)) if len(values) > 1 else math.nan
            out[(name, m)] = (int(len(values)), sd * math.sqrt(2 * churn))
    return out, wanted


def _spread_from_like(project: Project, baseline: str, like: str, metrics: list[str] | None,
                      groups: dict[str, list[str]], left_out: list[dict[str, Any]],
                      judged: list[str]) -> tuple[Spread, list[str], Any]:
    """(n, sd of the differences) per cell as `like` made them against the baseline; the metrics it cannot say
    anything of (not judged on both runs) are added to `left_out`, with why."""
    if like == baseline:
        raise GateUsageError(f"the run the changes are like is the baseline itself ('{baseline}'): name another run, "
                             "whose differences from the baseline are like a pull request's")
    comparison = compare(project, baseline, like, metrics, groups=groups)
    left_out[:] = comparison["missing"]
    judged[:] = comparison["judged_on_both"]
    out = {}
    for name, entry in comparison["slices"].items():
        for m in comparison["metrics"]:
            cell = entry.get(m)
            if cell:
                out[(name, m)] = (int(cell["n"]), float(cell["se"]) * math.sqrt(cell["n"]))
    wanted = [m for m in comparison["metrics"] if m not in {x["metric"] for x in comparison["missing"]}]
    return out, wanted, comparison["cell_correlation"]


def _level(cells: list[tuple[str, str]], alpha: float, correlation: Any) -> float:
    """The single-step level a lone drop must clear in this family: max-T's when the correlation is known."""
    matrix = family_matrix(correlation, cells)
    if matrix is None:
        return alpha / max(1, len(cells))
    from scipy.special import ndtr

    _, _, critical = max_t([0.5] * len(cells), matrix, alpha)
    return float(1 - ndtr(critical))


def _round_up(value: float, step: float = 0.5) -> float:
    return math.ceil(value / step - 1e-9) * step


def _needed(n: int, sd: float, level: float, power: float, allowed: float, tolerance: float) -> int | None:
    """Questions a cell needs to catch a drop of `tolerance` with `power` (normal approximation; a spread of none
    seen is floored as the cell's own error is)."""
    if sd != sd or tolerance <= allowed or n < 2:
        return None
    spread = max(sd, unseen_change_se(n) * math.sqrt(n)) ** 2 + tolerance * (100 - tolerance)   # the drop's own
    z = normal_quantile(1 - level) + normal_quantile(power)
    return max(2, math.ceil(spread * (z * HEADROOM / (tolerance - allowed)) ** 2))


def plan(project: Project, baseline: str, *, like: str | None = None, churn: float = 1.0, tolerance: float = 5.0,
         max_tolerance: float = 20.0, allowed: float = ALLOWED, power: float = POWER_PLANNED, alpha: float = 0.05,
         metrics: list[str] | None = None) -> dict[str, Any]:
    """Per cell: questions, spread, the drop it detects, the tolerance proposed, the questions the wanted tolerance
    needs; and the configuration (`config`, a GateConfig) that gates what can be honoured."""
    _check(tolerance, max_tolerance, allowed, power, alpha, churn)

    left_out: list[dict[str, Any]] = []
    judged: list[str] = []

    def spread(groups: dict[str, list[str]]) -> tuple[Spread, list[str], Any]:
        if like:
            return _spread_from_like(project, baseline, like, metrics, groups, left_out, judged)
        stats, wanted = _spread_from_baseline(project, baseline, metrics, churn, groups, judged)
        return stats, wanted, None

    found = plan_cells(spread, tolerance=tolerance, max_tolerance=max_tolerance, allowed=allowed, power=power,
                       alpha=alpha, planned={"baseline": baseline, "like": like, "churn": None if like else churn})
    # the judge metrics the plan was not asked for are not gated on purpose, and say so (a metric judged later is
    # in neither list: the gate cannot tell until a plan takes it)
    planned = set(found["config"].metrics) | {x["metric"] for x in left_out}
    found["config"] = replace(found["config"], not_gated={m: "not asked for when the gate was planned (--metrics)"
                                                          for m in judged if m not in planned})
    found["assumption"] = (f"pull requests change answers as much as '{like}' did against '{baseline}'" if like else
                           f"a pull request answers {churn:.0%} of questions anew (the spread of '{baseline}' times "
                           f"sqrt(2 x {churn:g}))")
    return {"baseline": baseline, "like": like, "churn": None if like else churn, "left_out": left_out, **found}


def plan_cells(spread: Any, *, tolerance: float, max_tolerance: float, allowed: float, power: float, alpha: float,
               planned: dict[str, Any] | None = None) -> dict[str, Any]:
    """The plan from a spread: `spread(groups)` gives (n, sd) per cell, the metrics, and the cells' correlation
    (or None) for the slices, the merged groups and 'all' (bench/bench_gate.py plans simulated projects with it)."""
    groups: dict[str, list[str]] = {}
    # each cell honours its tolerance on a pull request's first attempt, which spends a share of each budget: later
    # attempts spend less (core.metrics.attempts), so a retried pull request asks for more evidence
    first_alpha, _, needed = levels(alpha, power, 1, True)
    first_power = power if needed is None else needed
    for _ in range(3):                        # the family shapes each cell's level, the cells shape the family
        stats, wanted, correlation = spread(groups)
        rows = _propose(stats, wanted, groups, tolerance, max_tolerance, allowed, first_power, first_alpha,
                        correlation)
        slices = {r["slice"] for r in rows if r["slice"] not in (ALL, *groups)}
        short = sorted({r["slice"] for r in rows if r["slice"] in slices and not r["gated"]})
        merged = {MERGED: short} if 2 <= len(short) < len(slices) else {}     # all of them is 'all' again
        if merged == groups:
            break
        groups = merged
    gated = [r for r in rows if r["gated"]]
    config = GateConfig({(r["slice"], r["metric"]): CellRule(r["tolerance"], allowed, power) for r in gated},
                        {k: tuple(v) for k, v in groups.items()}, alpha, power, 1,
                        {**(planned or {}), "tolerance": tolerance, "max_tolerance": max_tolerance,
                         "headroom": HEADROOM, "when": utcnow(), "app_version": __version__},
                        retries="spent")
    return {"tolerance": tolerance, "max_tolerance": max_tolerance, "allowed": allowed, "power": power,
            "alpha": alpha, "groups": groups, "cells": rows, "config": config}


def _propose(stats: dict[tuple[str, str], tuple[int, float]], wanted: list[str], groups: dict[str, list[str]],
             tolerance: float, max_tolerance: float, allowed: float, power: float, alpha: float,
             correlation: Any) -> list[dict[str, Any]]:
    keys = [k for k in stats if k[1] in wanted and (k[1] != COVERAGE or k[0] == ALL)]   # coverage: on 'all' only
    level = _level(keys, alpha, correlation)
    rows = []
    for (name, m) in keys:
        n, sd = stats[(name, m)]
        row: dict[str, Any] = {"slice": name, "metric": m, "n": n, "sd": sd, "level": level, "detectable": None,
                               "tolerance": None, "needed": _needed(n, sd, level, power, allowed, tolerance),
                               "gated": False}
        if n >= 2 and sd == sd:
            # no spread seen (every question hit) is not no spread to come: the floor is the error of a share of
            # changed questions when none of n was seen to change, as the gate's own cells take it
            se = max(sd / math.sqrt(n), unseen_change_se(n))
            mde = detectable_drop_bounded(se, n, n - 1, allowed, level, power)
            proposed = max(tolerance, _round_up(mde * HEADROOM))
            row.update(detectable=mde, tolerance=min(proposed, 100.0))
            row["gated"] = name == ALL or proposed <= max_tolerance
            if name in groups:
                row["merges"] = groups[name]
            row["why"] = ("gated" if proposed <= max_tolerance else
                          f"detects {mde:.1f}+ only: gated through 'all'" + (" and the merged slices"
                                                                            if name not in groups else "")
                          if name != ALL else f"detects {mde:.1f}+ only, above the largest tolerance: add questions")
        else:
            row["why"] = "too few questions with data to measure a spread"
        rows.append(row)
    return rows
