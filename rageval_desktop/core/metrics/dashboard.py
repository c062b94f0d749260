"""The dashboard: per run and slice (and "all"), retrieval metrics, judge metrics with CIs and coverage,
latency and cost. Every number is on 0–100 except latency (ms) and cost (USD per query)."""

from __future__ import annotations

from typing import Any

from rageval_desktop.core.metrics.rowdata import RunData, load_run
from rageval_desktop.core.metrics.stats import mean_ci, percentile
from rageval_desktop.core.store.project import Project

ALL = "all"
SLICE_ORDER = ("easy", "edge", "adversarial", "time-sensitive", "multi-hop", "keyword-heavy")


def retrieval_columns(ks: tuple[int, ...]) -> list[str]:
    cols = [f"recall@{k}" for k in ks] + ["mrr"] + [f"ndcg@{k}" for k in ks]
    cols += [f"recall_frac@{k}" for k in ks] + [f"precision@{k}" for k in ks]
    return cols


def group_summary(frame: Any, data: RunData) -> dict[str, Any]:
    """The numbers of one slice (or of all rows)."""
    n = len(frame)
    with_gold = int((frame["n_gold"] > 0).sum())
    out: dict[str, Any] = {"n": n, "n_with_gold": with_gold, "n_without_gold": n - with_gold}
    for col in retrieval_columns(data.ks):
        values = frame.loc[frame["n_gold"] > 0, col]
        out[col] = round(float(values.mean()), 2) if len(values) else None
    for metric in data.metrics:
        mean, low, high = mean_ci(frame[metric])
        status = frame[f"{metric}__status"]
        out[metric] = None if mean is None else round(mean, 2)
        out[f"{metric}_ci"] = None if mean is None else [round(low, 2), round(high, 2)]
        out[f"{metric}_coverage"] = round(float((status == "ok").mean()), 4) if n else None
        out[f"{metric}_unparsed_rate"] = round(float((status == "unparsed").mean()), 4) if n else None
        out[f"{metric}_error_rate"] = round(float((status == "error").mean()), 4) if n else None
    p50, p95 = percentile(frame["latency_ms"], 50), percentile(frame["latency_ms"], 95)
    out["p50_latency_ms"] = None if p50 is None else round(p50, 1)
    out["p95_latency_ms"] = None if p95 is None else round(p95, 1)
    cost = frame["cost_usd"].dropna()
    out["cost_per_query"] = round(float(cost.mean()), 8) if len(cost) else None
    return out


def ordered_slices(frame: Any) -> list[str]:
    present = list(dict.fromkeys(frame["slice"]))
    known = [s for s in SLICE_ORDER if s in present]
    return known + sorted(s for s in present if s not in known)


def summarise(data: RunData) -> dict[str, Any]:
    frame = data.frame
    slices = {s: group_summary(frame[frame["slice"] == s], data) for s in ordered_slices(frame)}
    slices[ALL] = group_summary(frame, data)
    return {"run": data.run, "slices": slices, "judge_metrics": data.metrics, "judges": data.judges,
            "retired_judges": data.retired, "golden_set_changed_since_run": data.golden_changed,
            "scale": "0-100 (latency in ms, cost in USD per query)"}


def dashboard(project: Project, run: str, ks: tuple[int, ...] = (5, 10, 50)) -> dict[str, Any]:
    return summarise(load_run(project, run, ks))


def dashboard_table(summary: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The compact table the GUI and reports show: slice x the numbers people scan first."""
    metrics = summary["judge_metrics"]
    headers = ["slice", "n", "recall@5", "mrr", *metrics, "p95 latency ms", "cost/query"]
    rows = []
    for name, s in summary["slices"].items():
        rows.append([name, s["n"], s.get("recall@5"), s.get("mrr"), *[s.get(m) for m in metrics],
                     s.get("p95_latency_ms"), s.get("cost_per_query")])
    return headers, rows
