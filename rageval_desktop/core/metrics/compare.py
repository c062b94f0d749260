"""Comparing two runs on the questions both answered, and the CI gate built on it.

The delta of each metric is the mean of per-question differences (candidate - baseline) with a paired
bootstrap 95% CI; a drop is measured in points on the 0-100 scale. Questions are counted as in the dashboard
(rowdata.per_question): repeats of a question are averaged first, so `metrics`, `compare` and `gate` agree on n.
Values are full precision; displays round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.errors import RagevalError
from rageval_desktop.core.metrics.dashboard import ALL, ordered_slices
from rageval_desktop.core.metrics.ppi import ESTIMATORS, applies, ppi_delta
from rageval_desktop.core.metrics.retrieval import canonical_name
from rageval_desktop.core.metrics.rowdata import RunData, load_run, per_question
from rageval_desktop.core.metrics.stats import mean_ci
from rageval_desktop.core.store.project import Project

GATE_RETRIEVAL = ("hit@5", "hit@10", "mrr", "ndcg@10")
RETRIEVAL_PREFIXES = ("hit@", "recall@", "precision@", "ndcg@", "mrr")
MIN_SLICE_N = 10


class GateUsageError(RagevalError):
    """Missing data or an impossible request: exit code 2, not a regression."""


def _paired(a: RunData, b: RunData) -> tuple[Any, int]:
    import pandas as pd

    left, right = per_question(a.frame), per_question(b.frame)
    left = left[left["golden_id"].notna()].set_index("golden_id")
    right = right[right["golden_id"].notna()].set_index("golden_id")
    shared = left.index.intersection(right.index)
    return pd.concat({"a": left.loc[shared], "b": right.loc[shared]}, axis=1), len(shared)


def is_retrieval(metric: str) -> bool:
    return metric.startswith(RETRIEVAL_PREFIXES)


def _ppi_cell(part: Any, m: str) -> dict[str, Any]:
    import numpy as np

    def column(side: str, suffix: str) -> Any:
        key = (side, f"{m}{suffix}")
        return part[key].to_numpy(dtype=float) if key in part else np.full(len(part), np.nan)

    found = ppi_delta(column("a", ""), column("b", ""), column("a", "__diff"), column("b", "__diff"),
                      column("a", "__weight"), column("b", "__weight"))
    return {**found, "estimator": "ppi"}


def compare(project: Project, baseline: str, candidate: str, metrics: list[str] | None = None,
            estimator: str = "mean") -> dict[str, Any]:
    """Per slice and metric, candidate - baseline with its 95% CI. With `estimator="ppi"`, the judge metrics
    humans rate per row are compared as PPI estimates (core.metrics.ppi: each run's judge mean corrected by its
    own ratings); where a slice has too few ratings its cell is None and `unavailable` says why."""
    if estimator not in ESTIMATORS:
        raise GateUsageError(f"unknown estimator '{estimator}'; choose one of {', '.join(ESTIMATORS)}")
    a, b = load_run(project, baseline), load_run(project, candidate)
    joined, shared = _paired(a, b)
    if shared == 0:
        raise GateUsageError(f"runs '{baseline}' and '{candidate}' share no golden questions; nothing to compare "
                             "(link run rows to golden rows by id or question)")
    judge_metrics = [m for m in a.metrics if m in b.metrics]
    wanted = [canonical_name(m) for m in metrics] if metrics else [*GATE_RETRIEVAL, *judge_metrics]
    wanted = list(dict.fromkeys(wanted))
    missing = [m for m in wanted if m not in judge_metrics and m not in joined["a"].columns]
    if missing:
        have = ", ".join([*GATE_RETRIEVAL, *judge_metrics])
        raise GateUsageError(f"no data for {', '.join(missing)} on both runs (an active judge must have scored both; "
                             f"available: {have}, and hit@k, recall@k, precision@k, ndcg@k for k in 5, 10, 50)")
    slice_col = joined[("a", "slice")]
    gold = joined[("a", "n_gold")] > 0
    out: dict[str, Any] = {"baseline": baseline, "candidate": candidate, "shared_questions": shared,
                           "metrics": wanted, "slices": {},
                           "retired_judges": a.retired or b.retired,
                           "unsettled_judges": _merge_unsettled(a, b, wanted),
                           "counting": "n counts questions both runs answered (repeats averaged first); a "
                                       "retrieval metric's n counts those with gold ids, a judge metric's those "
                                       "both runs had scored",
                           "estimator": estimator, "unavailable": []}
    groups = [(s, slice_col == s) for s in ordered_slices(joined["a"])] + [(ALL, slice_col == slice_col)]
    for name, mask in groups:
        part = joined[mask]
        entry: dict[str, Any] = {"n": int(mask.sum()), "n_with_gold": int((mask & gold).sum())}
        for m in wanted:
            if estimator == "ppi" and applies(m):
                cell = _ppi_cell(part, m)
                if cell["delta"] is None:
                    entry[m] = None
                    out["unavailable"].append({"slice": name, "metric": m, "why": cell["why"]})
                else:
                    entry[m] = cell
                continue
            before, after = part[("a", m)].astype(float), part[("b", m)].astype(float)
            both = before.notna() & after.notna()
            if is_retrieval(m):
                both &= part[("a", "n_gold")] > 0
            if not both.any():
                entry[m] = None
                continue
            delta, low, high = mean_ci((after[both] - before[both]).to_numpy())
            entry[m] = {"baseline": float(before[both].mean()), "candidate": float(after[both].mean()),
                        "delta": delta, "ci": [low, high], "n": int(both.sum())}
        out["slices"][name] = entry
    return out


def _merge_unsettled(a: RunData, b: RunData, wanted: list[str]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for item in [*a.unsettled, *b.unsettled]:
        if item["metric"] in wanted:
            seen.setdefault(item["judge"], item)
    return list(seen.values())


@dataclass
class GateResult:
    passed: bool
    regressions: list[dict[str, Any]] = field(default_factory=list)   # drops that fail the gate
    ungated: list[dict[str, Any]] = field(default_factory=list)       # drops over the limit that do not, and why
    comparison: dict[str, Any] = field(default_factory=dict)
    max_slice_drop: float = 2.0
    max_aggregate_drop: float = 2.0
    require_significant: bool = False
    min_slice_n: int = MIN_SLICE_N


def gate(project: Project, baseline: str, candidate: str, *, max_slice_drop: float = 2.0,
         max_aggregate_drop: float | None = None, metrics: list[str] | None = None,
         require_significant: bool = False, min_slice_n: int = MIN_SLICE_N, estimator: str = "mean") -> GateResult:
    """With `estimator="ppi"` a judge metric is gated on its corrected estimates: a slice with too few ratings is
    reported, not gated; 'all' without enough ratings is a usage error (exit 2), never a silent pass."""
    check_limits(max_slice_drop, max_aggregate_drop, min_slice_n)  # before loading two runs, not after
    comparison = compare(project, baseline, candidate, metrics, estimator)
    blind = undecidable(comparison)
    if blind:
        raise GateUsageError("the PPI estimator cannot gate " + "; ".join(
            f"{u['metric']} ({u['why']})" for u in blind) + ": rate a sample of each run (rageval sample, rageval "
            "rate) or gate those metrics with --estimator mean")
    return evaluate_gate(comparison, max_slice_drop=max_slice_drop, max_aggregate_drop=max_aggregate_drop,
                         require_significant=require_significant, min_slice_n=min_slice_n)


def undecidable(comparison: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics a PPI comparison cannot gate at all: too few ratings for 'all' (slices short of ratings are
    only reported). `gate` refuses them (exit 2); the Compare page says the gate cannot decide."""
    return [u for u in comparison.get("unavailable", []) if u["slice"] == ALL]


def check_limits(max_slice_drop: float, max_aggregate_drop: float | None, min_slice_n: int) -> None:
    for name, value in (("--max-slice-drop", max_slice_drop), ("--max-aggregate-drop", max_aggregate_drop)):
        if value is not None and (not math.isfinite(value) or value < 0):
            raise GateUsageError(f"{name} is a number of points a score may drop, 0 or more (got {value:g})")
    if min_slice_n < 1:
        raise GateUsageError(f"--min-slice-n is a number of questions, 1 or more (got {min_slice_n})")


def evaluate_gate(comparison: dict[str, Any], *, max_slice_drop: float = 2.0, max_aggregate_drop: float | None = None,
                  require_significant: bool = False, min_slice_n: int = MIN_SLICE_N) -> GateResult:
    """The gate's rule, once: used by `rageval gate`, the GUI's Compare page and the reports.

    A drop counts when it is larger than the limit (the slice limit, or the aggregate limit for "all", which
    defaults to the slice limit). Every drop carries its paired 95% CI and is "within noise" when the CI includes
    zero. It fails the gate unless the slice has fewer than `min_slice_n` questions for that metric (reported,
    not gated; "all" is always gated) or `require_significant` is set and the CI does not lie wholly below zero.
    Decided on unrounded values."""
    check_limits(max_slice_drop, max_aggregate_drop, min_slice_n)
    aggregate = max_slice_drop if max_aggregate_drop is None else max_aggregate_drop
    regressions, ungated = [], []
    for name, entry in comparison["slices"].items():
        limit = aggregate if name == ALL else max_slice_drop
        for m in comparison["metrics"]:
            cell = entry.get(m)
            if not cell or not -cell["delta"] > limit + 1e-9:
                continue
            low, high = cell["ci"]
            significant = high < 0
            drop = {"slice": name, "metric": m, "baseline": cell["baseline"], "candidate": cell["candidate"],
                    "drop": -cell["delta"], "allowed": limit, "ci": cell["ci"], "n": cell["n"],
                    "n_counts": "questions with gold ids" if is_retrieval(m) else "questions scored",
                    "within_noise": low <= 0 <= high, "significant": significant}
            if cell.get("estimator") == "ppi":
                drop["n_counts"] = (f"questions scored, corrected by {cell['n_rated'][0]} + {cell['n_rated'][1]} "
                                    f"rated (PPI)")
            if name != ALL and cell["n"] < min_slice_n:
                ungated.append({**drop, "why": f"fewer than {min_slice_n} questions: reported, not gated"})
            elif require_significant and not significant:
                ungated.append({**drop, "why": "the 95% CI does not lie below zero (--require-significant)"})
            else:
                regressions.append(drop)
    return GateResult(not regressions, regressions, ungated, comparison, max_slice_drop, aggregate,
                      require_significant, min_slice_n)


def rule_text(result: GateResult) -> str:
    """The rule a gate applied, in words (for the CLI, the GUI and reports)."""
    text = (f"a slice may drop at most {result.max_slice_drop:g} points, 'all' at most {result.max_aggregate_drop:g}; "
            f"slices with fewer than {result.min_slice_n} questions are reported, not gated")
    if result.require_significant:
        text += "; only drops whose 95% CI lies below zero fail"
    if result.comparison.get("estimator") == "ppi":
        text += "; judge metrics rated per row are compared as PPI estimates (judge mean corrected by ratings)"
    return text


def drop_text(r: dict[str, Any]) -> str:
    """'-12.5 points [95% CI -20.1, -4.9], n=8 questions with gold ids, within noise' (display only)."""
    text = (f"-{r['drop']:.1f} points, 95% CI of delta [{r['ci'][0]:+.1f}, {r['ci'][1]:+.1f}], "
            f"n={r['n']} {r['n_counts']}")
    return text + (", within noise" if r["within_noise"] else "")


def gate_markdown(result: GateResult) -> str:
    """For a pull-request comment: every name from data is escaped (core.text.md_escape)."""
    from rageval_desktop.core.text import md_escape as md

    c = result.comparison
    head = "✅ **No regression**" if result.passed else f"❌ **{len(result.regressions)} regression(s)**"
    lines = [f"### RAG evaluation gate: {md(c['candidate'])} vs {md(c['baseline'])}", "",
             f"{head} — {c['shared_questions']} shared questions; {rule_text(result)}.", ""]
    table = ["| slice | metric | baseline | candidate | drop | 95% CI of delta | n | |",
             "|---|---|---:|---:|---:|---|---:|---|"]

    def row(r: dict[str, Any], note: str) -> str:
        return (f"| {md(r['slice'])} | {md(r['metric'])} | {r['baseline']:.1f} | {r['candidate']:.1f} | "
                f"**{r['drop']:.1f}** | [{r['ci'][0]:+.1f}, {r['ci'][1]:+.1f}] | {r['n']} | {note} |")

    if result.regressions:
        lines += table + [row(r, "within noise" if r["within_noise"] else "") for r in result.regressions] + [""]
    if result.ungated:
        lines += ["Drops over the limit that do not fail the gate:", ""]
        lines += table + [row(r, md(r["why"])) for r in result.ungated] + [""]
    metrics = c["metrics"]
    lines += ["<details><summary>All slices</summary>", "",
              "| slice | n | with gold ids | " + " | ".join(map(md, metrics)) + " |",
              "|---|---:|---:|" + "---:|" * len(metrics)]
    for name, entry in c["slices"].items():
        cells = []
        for m in metrics:
            cell = entry.get(m)
            cells.append("—" if not cell else f"{cell['candidate']:.1f} ({cell['delta']:+.1f})")
        lines.append(f"| {md(name)} | {entry['n']} | {entry.get('n_with_gold', '—')} | " + " | ".join(cells) + " |")
    lines += ["", "</details>", ""]
    if c.get("unavailable"):
        lines += ["Not gated, too few ratings for a corrected (PPI) estimate:", ""]
        lines += [f"- {md(u['slice'])} {md(u['metric'])}: {md(u['why'])}" for u in c["unavailable"]] + [""]
    if c.get("retired_judges"):
        names = ", ".join(md(r["judge"]) for r in c["retired_judges"])
        lines.append(f"_Retired judges left out: {names}._")
    if c.get("unsettled_judges"):
        names = ", ".join(f"{md(r['judge'])} ({md(r['verdict'])}, n={r['n']})" for r in c["unsettled_judges"])
        lines.append(f"_Counted, but not yet confirmed by human ratings: {names}._")
    return "\n".join(lines) + "\n"
