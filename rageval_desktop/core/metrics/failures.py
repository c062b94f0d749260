"""Why a row failed: retrieval (gold chunk never retrieved), reranker (retrieved, but not among the passages
that reached the prompt) or generation (the gold chunk was in the prompt, the answer still fails its judge).

A judge metric fails a row when the judges' mean scores it under the metric's pass mark (`MetricSpec.pass_mark`:
correctness under 4 of 5, a binary metric under 1, …); a retrieval metric (hit@k, recall@k, precision@k, mrr,
ndcg@k) when the row has gold chunk ids and none of them is in its top k (the metric is 0). A chart bar's failures
are exactly its metric's: `failure_rows(metric=…)` lists the rows failing that metric, whatever their class."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.metrics.dashboard import ALL, ordered_slices
from rageval_desktop.core.metrics.retrieval import is_retrieval
from rageval_desktop.core.metrics.rowdata import RunData, load_run, texts
from rageval_desktop.core.store.project import Project

if TYPE_CHECKING:
    from numpy import ndarray
    from pandas import DataFrame

CLASSES = ("retrieval", "reranker", "generation")


def _judged_bad(data: RunData) -> dict[str, Any]:
    """Per metric with a pass mark, which rows score under it (a boolean array over the frame's rows)."""
    out = {}
    for metric in data.metrics:
        spec = METRICS.get(metric)
        if spec is None or spec.pass_mark is None:   # derived scores (umbrela_*) have no pass mark of their own
            continue
        out[metric] = data.frame[f"{metric}__raw"].to_numpy() < spec.pass_mark
    return out


def classify(data: RunData) -> DataFrame:
    """The run's rows with `failure` (a class or None) and `<metric>__fails` per judged metric, column at a time: a
    million rows classify in well under a second. Which judges a row fails (`failed_judges`) is listed for the rows a
    caller shows (`failure_rows`)."""
    import numpy as np
    import pandas as pd

    frame = data.frame
    bad = _judged_bad(data)
    judged_bad = np.logical_or.reduce(list(bad.values())) if bad else np.zeros(len(frame), dtype=bool)
    has_gold = frame["n_gold"].to_numpy() > 0
    rank = frame["first_gold_rank"].to_numpy(dtype=float)
    missed = has_gold & ~np.isfinite(rank)
    cut = has_gold & ~missed & (rank > frame["prompt_k"].to_numpy())
    codes = np.select([missed, cut, judged_bad], [0, 1, 2], default=-1)
    out = frame.copy(deep=False)     # the run's columns shared, not copied (hundreds of MB at a million rows)
    out["failure"] = pd.Categorical.from_codes(codes, categories=list(CLASSES))
    for metric, under in bad.items():
        out[f"{metric}{FAILS}"] = under
    for metric in [c for c in frame.columns if is_retrieval(c) and "__" not in c]:
        out[f"{metric}{MISSES}"] = has_gold & (frame[metric].to_numpy(dtype=float) <= 0)
    out.attrs["judges"] = dict(data.judges)
    return out


FAILS = "__fails"     # a `classify` column per judge metric with a pass mark: the row scores under it
MISSES = "__misses"   # a `classify` column per retrieval metric: the row has gold ids and none in its top k


def metric_fails(frame: DataFrame, metric: str) -> ndarray:
    """The rows of a `classify` frame failing one metric (judge or retrieval); all False when it has no verdict."""
    import numpy as np

    for suffix in (FAILS, MISSES):
        if f"{metric}{suffix}" in frame:
            return np.asarray(frame[f"{metric}{suffix}"].to_numpy(), dtype=bool)
    return np.zeros(len(frame), dtype=bool)


def _failed_metrics(frame: DataFrame, positions: Iterable[int]) -> list[list[str]]:
    """For the rows at these positions of a `classify` frame: the judge metrics each scores under its pass mark."""
    flags = {c[:-len(FAILS)]: frame[c].to_numpy() for c in frame.columns if c.endswith(FAILS)}
    return [[m for m, under in flags.items() if under[i]] for i in positions]


def pass_marks(frame: DataFrame) -> dict[str, dict[str, Any]]:
    """What a failure is, per judge metric of a `classify` frame: its pass mark, scale and judges."""
    judges = frame.attrs.get("judges", {})
    return {m: {"pass_mark": METRICS[m].pass_mark, "high": METRICS[m].high, "judges": judges.get(m, [])}
            for m in (c[:-len(FAILS)] for c in frame.columns if c.endswith(FAILS))}


def failure_counts(project: Project, run: str, classified: DataFrame | None = None) -> dict[str, Any]:
    """Failing rows per class and slice. `classified`: the run's `classify` frame, if the caller has it (a million
    rows take seconds to load and classify: load once, ask both questions)."""
    frame = classify(load_run(project, run)) if classified is None else classified
    out: dict[str, Any] = {}
    for name in [*ordered_slices(frame), ALL]:
        part = frame if name == ALL else frame[frame["slice"] == name]
        out[name] = {"n": len(part), **{c: int((part["failure"] == c).sum()) for c in CLASSES}}
    return out


def failing_row_ids(project: Project, run: str, failure: str | None = None) -> list[int]:
    """Ids of the run's failing rows (of one class, or of any)."""
    frame = classify(load_run(project, run))
    frame = frame[frame["failure"].notna() if failure is None else frame["failure"] == failure]
    return [int(i) for i in frame.index]


def failure_rows(project: Project, run: str, *, failure: str | None = None, slice_tag: str | None = None,
                 metric: str | None = None, sample: int | None = None, seed: int = 7,
                 classified: DataFrame | None = None, answers: bool = True) -> list[dict[str, Any]]:
    """Failing rows, filtered; `sample` picks that many at random (reproducible from the seed). `classified`: as in
    `failure_counts`. Without `answers`, the rows carry neither the answer nor the gold answer (not read: the
    Failures page's listing shows neither, and its detail pane reads the row it shows)."""
    import numpy as np

    full = classify(load_run(project, run)) if classified is None else classified
    # a metric's failures are its own, whatever their class (a hit@5 miss whose gold chunk is at rank 7 may be no
    # failure of the pipeline); without a metric, the rows with a failure class
    keep = metric_fails(full, metric).copy() if metric else full["failure"].notna().to_numpy().copy()
    if failure:
        keep &= (full["failure"] == failure).to_numpy()
    if slice_tag:
        keep &= (full["slice"] == slice_tag).to_numpy()
    positions = np.nonzero(keep)[0]
    if sample is not None and len(positions) > sample:
        positions = np.sort(np.random.default_rng(seed).choice(positions, size=sample, replace=False))
    frame = full.iloc[positions]
    metrics_failed = _failed_metrics(full, positions)
    judges = full.attrs.get("judges", {})
    ids = [int(i) for i in frame.index]
    text = texts(project, ids, answers=answers)
    # a column at a time, not a Series a row (iterrows: 8.7 s and a few hundred MB for 182,221 rows)
    slices, classes, ranks, ks = (frame[c].tolist() for c in ("slice", "failure", "first_gold_rank", "prompt_k"))
    rows = []
    for row_id, failed, where, kind, rank, k in zip(ids, metrics_failed, slices, classes, ranks, ks, strict=True):
        external, question, answer, gold, golden = text[row_id]
        named = list(dict.fromkeys(j for m in failed for j in judges.get(m, [])))
        item = {"row_id": row_id, "external_id": external, "golden_id": golden, "slice": where, "failure": kind,
                "first_gold_rank": None if rank != rank else int(rank), "prompt_k": int(k),
                "failed_metrics": failed, "failed_judges": named, "question": question}
        if answers:
            item["answer"], item["gold_answer"] = answer, gold
        rows.append(item)
    return rows


def failures(project: Project, run: str, **filters: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(counts, rows) from one load of the run."""
    frame = classify(load_run(project, run))
    return failure_counts(project, run, frame), failure_rows(project, run, classified=frame, **filters)


def failure_listing(project: Project, run: str, judges: Collection[str] | None = None, answers: bool = True,
                    **filters: Any) -> dict[str, Any]:
    """What the Failures page shows, from one load of the run: the counts per class and slice, the rows, what a
    failure is (`pass_marks`: each judge metric's pass mark and judges) and, with a metric, how many rows of the
    slice fail it (`metric_failures`). `judges`: generation failures by these judges' verdicts only (None: every
    active judge's)."""
    frame = classify(load_run(project, run, judges=judges))
    out: dict[str, Any] = {"counts": failure_counts(project, run, frame), "pass_marks": pass_marks(frame),
           "rows": failure_rows(project, run, classified=frame, answers=answers, **filters), "metric_failures": None}
    metric = filters.get("metric")
    if metric:
        part = frame if not filters.get("slice_tag") else frame[frame["slice"] == filters["slice_tag"]]
        out["metric_failures"] = int(metric_fails(part, metric).sum())
    return out
