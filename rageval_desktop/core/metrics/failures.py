"""Why a row failed: retrieval (gold chunk never retrieved), reranker (retrieved, but not among the passages
that reached the prompt) or generation (the gold chunk was in the prompt, the answer still fails its judge)."""

from __future__ import annotations

from typing import Any

from rageval_desktop.core.judges.registry import METRICS
from rageval_desktop.core.metrics.dashboard import ALL, ordered_slices
from rageval_desktop.core.metrics.rowdata import RunData, load_run, texts
from rageval_desktop.core.store.project import Project

CLASSES = ("retrieval", "reranker", "generation")


def classify(data: RunData) -> Any:
    """The run's rows with `failed_judges` (metrics under their pass mark) and `failure` (a class or None)."""
    import numpy as np

    frame = data.frame.copy()
    failed = [[] for _ in range(len(frame))]
    for metric in data.metrics:
        spec = METRICS.get(metric)
        if spec is None or spec.pass_mark is None:   # derived scores (umbrela_*) have no pass mark of their own
            continue
        raw = frame[f"{metric}__raw"].to_numpy()
        for i in np.nonzero(raw < spec.pass_mark)[0]:
            failed[i].append(metric)
    frame["failed_judges"] = failed
    classes = []
    for has_gold, rank, k, judged_bad in zip(frame["n_gold"] > 0, frame["first_gold_rank"], frame["prompt_k"],
                                             failed, strict=True):
        if has_gold and not np.isfinite(rank):
            classes.append("retrieval")
        elif has_gold and rank > k:
            classes.append("reranker")
        elif judged_bad:
            classes.append("generation")
        else:
            classes.append(None)
    frame["failure"] = classes
    return frame


def failure_counts(project: Project, run: str, classified: Any = None) -> dict[str, Any]:
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
                 classified: Any = None) -> list[dict[str, Any]]:
    """Failing rows, filtered; `sample` picks that many at random (reproducible from the seed). `classified`: as in
    `failure_counts`."""
    frame = classify(load_run(project, run)) if classified is None else classified
    frame = frame[frame["failure"].notna()]
    if failure:
        frame = frame[frame["failure"] == failure]
    if slice_tag:
        frame = frame[frame["slice"] == slice_tag]
    if metric:
        frame = frame[[metric in f for f in frame["failed_judges"]]]
    if sample is not None and len(frame) > sample:
        frame = frame.sample(n=sample, random_state=seed)
    cols = ["golden_id", "slice", "failure", "failed_judges", "first_gold_rank", "prompt_k"]
    text = texts(project, [int(i) for i in frame.index])
    rows = []
    for row_id, r in frame[cols].iterrows():
        external, question, answer, gold = text[int(row_id)]
        item = {"row_id": int(row_id), "external_id": external, **{c: r[c] for c in cols}, "question": question,
                "answer": answer, "gold_answer": gold}
        rank = item["first_gold_rank"]
        item["first_gold_rank"] = None if rank != rank else int(rank)
        item["prompt_k"] = int(item["prompt_k"])
        rows.append(item)
    return rows


def failures(project: Project, run: str, **filters: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(counts, rows) from one load of the run."""
    frame = classify(load_run(project, run))
    return failure_counts(project, run, frame), failure_rows(project, run, classified=frame, **filters)
