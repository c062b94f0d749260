"""Comparing two runs on the questions both answered, and the CI gate built on it.

The delta of each metric is the mean of per-question differences (candidate - baseline) with a paired
bootstrap 95% CI; a drop is measured in points on the 0–100 scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.errors import RagevalError
from rageval_desktop.core.metrics.dashboard import ALL, ordered_slices
from rageval_desktop.core.metrics.rowdata import RunData, load_run
from rageval_desktop.core.metrics.stats import mean_ci
from rageval_desktop.core.store.project import Project

GATE_RETRIEVAL = ("recall@5", "recall@10", "mrr", "ndcg@10")


class GateUsageError(RagevalError):
    """Missing data or an impossible request: exit code 2, not a regression."""


def _paired(a: RunData, b: RunData) -> Any:
    import pandas as pd

    left = a.frame[a.frame["golden_id"].notna()].drop_duplicates("golden_id").set_index("golden_id")
    right = b.frame[b.frame["golden_id"].notna()].drop_duplicates("golden_id").set_index("golden_id")
    shared = left.index.intersection(right.index)
    return pd.concat({"a": left.loc[shared], "b": right.loc[shared]}, axis=1), len(shared)


def compare(project: Project, baseline: str, candidate: str, metrics: list[str] | None = None) -> dict[str, Any]:
    a, b = load_run(project, baseline), load_run(project, candidate)
    joined, shared = _paired(a, b)
    if shared == 0:
        raise GateUsageError(f"runs '{baseline}' and '{candidate}' share no golden questions; nothing to compare "
                             "(link run rows to golden rows by id or question)")
    judge_metrics = [m for m in a.metrics if m in b.metrics]
    wanted = metrics or [*GATE_RETRIEVAL, *judge_metrics]
    missing = [m for m in wanted if m not in GATE_RETRIEVAL and m not in judge_metrics
               and m not in a.frame.columns]
    if missing:
        have = ", ".join([*GATE_RETRIEVAL, *judge_metrics])
        raise GateUsageError(f"no data for {', '.join(missing)} on both runs (an active judge must have scored both; "
                             f"available: {have})")
    slice_col = joined[("a", "slice")]
    out: dict[str, Any] = {"baseline": baseline, "candidate": candidate, "shared_questions": shared,
                           "metrics": wanted, "slices": {},
                           "retired_judges": a.retired or b.retired}
    groups = [(s, slice_col == s) for s in ordered_slices(joined["a"])] + [(ALL, slice_col == slice_col)]
    for name, mask in groups:
        part = joined[mask]
        entry: dict[str, Any] = {"n": int(mask.sum())}
        for m in wanted:
            before, after = part[("a", m)].astype(float), part[("b", m)].astype(float)
            both = before.notna() & after.notna()
            if not both.any():
                entry[m] = None
                continue
            delta, low, high = mean_ci((after[both] - before[both]).to_numpy())
            entry[m] = {"baseline": round(float(before[both].mean()), 2),
                        "candidate": round(float(after[both].mean()), 2),
                        "delta": round(delta, 2), "ci": [round(low, 2), round(high, 2)], "n": int(both.sum())}
        out["slices"][name] = entry
    return out


@dataclass
class GateResult:
    passed: bool
    regressions: list[dict[str, Any]] = field(default_factory=list)
    comparison: dict[str, Any] = field(default_factory=dict)
    max_slice_drop: float = 2.0
    max_aggregate_drop: float = 0.0


def gate(project: Project, baseline: str, candidate: str, *, max_slice_drop: float = 2.0,
         max_aggregate_drop: float = 0.0, metrics: list[str] | None = None) -> GateResult:
    return evaluate_gate(compare(project, baseline, candidate, metrics), max_slice_drop=max_slice_drop,
                         max_aggregate_drop=max_aggregate_drop)


def evaluate_gate(comparison: dict[str, Any], *, max_slice_drop: float = 2.0,
                  max_aggregate_drop: float = 0.0) -> GateResult:
    """The gate's rule, once: used by `rageval gate`, the GUI's Compare page and the reports."""
    regressions = []
    for name, entry in comparison["slices"].items():
        limit = max_aggregate_drop if name == ALL else max_slice_drop
        for m in comparison["metrics"]:
            cell = entry.get(m)
            if cell and -cell["delta"] > limit + 1e-9:
                regressions.append({"slice": name, "metric": m, "baseline": cell["baseline"],
                                    "candidate": cell["candidate"], "drop": round(-cell["delta"], 2),
                                    "allowed": limit, "ci": cell["ci"], "n": cell["n"]})
    return GateResult(not regressions, regressions, comparison, max_slice_drop, max_aggregate_drop)


def gate_markdown(result: GateResult) -> str:
    """For a pull-request comment: every name from data is escaped (core.text.md_escape)."""
    from rageval_desktop.core.text import md_escape as md

    c = result.comparison
    head = "✅ **No regression**" if result.passed else f"❌ **{len(result.regressions)} regression(s)**"
    lines = [f"### RAG evaluation gate: {md(c['candidate'])} vs {md(c['baseline'])}", "",
             f"{head} — {c['shared_questions']} shared questions; a slice may drop at most "
             f"{result.max_slice_drop:g} points, the aggregate {result.max_aggregate_drop:g}.", ""]
    if result.regressions:
        lines += ["| slice | metric | baseline | candidate | drop | 95% CI of delta | n |",
                  "|---|---|---:|---:|---:|---|---:|"]
        for r in result.regressions:
            lines.append(f"| {md(r['slice'])} | {md(r['metric'])} | {r['baseline']:.1f} | {r['candidate']:.1f} | "
                         f"**{r['drop']:.1f}** | [{r['ci'][0]:.1f}, {r['ci'][1]:.1f}] | {r['n']} |")
        lines.append("")
    metrics = c["metrics"]
    lines += ["<details><summary>All slices</summary>", "",
              "| slice | n | " + " | ".join(map(md, metrics)) + " |", "|---|---:|" + "---:|" * len(metrics)]
    for name, entry in c["slices"].items():
        cells = []
        for m in metrics:
            cell = entry.get(m)
            cells.append("—" if not cell else f"{cell['candidate']:.1f} ({cell['delta']:+.1f})")
        lines.append(f"| {md(name)} | {entry['n']} | " + " | ".join(cells) + " |")
    lines += ["", "</details>", ""]
    if c.get("retired_judges"):
        names = ", ".join(md(r["judge"]) for r in c["retired_judges"])
        lines.append(f"_Retired judges left out: {names}._")
    return "\n".join(lines) + "\n"
