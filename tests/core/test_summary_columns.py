"""The dashboard's numbers worked out a column at a time (`dashboard.slice_summaries`) are the numbers each slice's own
table gave, number for number and key for key; a lean load (retrieval metrics computed when asked for) summarises
to the same JSON as a full one."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rageval_desktop.core.base.stats import mean_ci, percentile
from rageval_desktop.core.metrics import retrieval, values
from rageval_desktop.core.metrics.dashboard import ALL, ordered_slices, summarise
from rageval_desktop.core.metrics.ppi import ppi_mean
from rageval_desktop.core.metrics.rowdata import STATUSES, RunData, keep_values, load_run, per_question
from rageval_desktop.core.store.browse import list_runs

KS = (5, 10, 50)


def retrieval_columns(ks):
    return [c for c in retrieval.names(ks) if c != "first_rank"]


def _reference(rows, questions, data) -> dict:
    """One slice's numbers from its own tables of rows and questions (how the dashboard worked them out before)."""
    n = len(questions)
    with_gold = int((questions["n_gold"] > 0).sum())
    out = {"n": n, "n_with_gold": with_gold, "n_without_gold": n - with_gold, "rows": len(rows)}
    gold = questions.loc[questions["n_gold"] > 0]
    for col in retrieval_columns(data.ks):
        out[col] = float(gold[col].mean()) if len(gold) else None
    for col in retrieval.named("headline"):
        if col in gold:
            _, low, high = mean_ci(gold[col])
            out[f"{col}_ci"] = None if low is None else [low, high]
    for metric in data.metrics:
        mean, low, high = mean_ci(questions[metric])
        status = rows[f"{metric}__status"]
        out[metric] = mean
        out[f"{metric}_ci"] = None if mean is None else [low, high]
        out[f"{metric}_n"] = int(questions[metric].notna().sum())
        sd = questions[metric].std()
        out[f"{metric}_sd"] = float(sd) if sd == sd else None
        out[f"{metric}_coverage"] = float((status == "ok").mean()) if len(rows) else None
        out[f"{metric}_unparsed_rate"] = float((status == "unparsed").mean()) if len(rows) else None
        out[f"{metric}_error_rate"] = float((status == "error").mean()) if len(rows) else None
        if f"{metric}__diff" in questions:
            out[f"{metric}_ppi"] = ppi_mean(questions[metric], questions[f"{metric}__diff"],
                                            questions[f"{metric}__weight"])
    out["p50_latency_ms"] = percentile(rows["latency_ms"], 50)
    out["p95_latency_ms"] = percentile(rows["latency_ms"], 95)
    cost = rows["cost_usd"].dropna()
    out["cost_per_query"] = float(cost.mean()) if len(cost) else None
    return out


def _run(seed: int, repeats: bool) -> RunData:
    rng = np.random.default_rng(seed)
    n = 3000
    n_gold = rng.integers(0, 4, n) * (rng.random(n) < 0.9)
    frame = pd.DataFrame({
        "latency_ms": np.where(rng.random(n) < 0.05, np.nan, rng.gamma(2.0, 300.0, n)),
        "cost_usd": np.where(rng.random(n) < 0.3, np.nan, rng.random(n) / 1000),
        "slice": pd.Categorical(rng.choice(["easy", "edge", "multi-hop", "zeta"], n, p=[0.5, 0.3, 0.2, 0.0])),
        "n_gold": n_gold,
        "qkey": rng.integers(0, n // 3, n) if repeats else np.arange(n)}, index=pd.Index(np.arange(10, 10 + n)))
    for col in retrieval_columns(KS):
        value = rng.integers(0, 2, n) * 100.0 if col.startswith("hit") else rng.random(n) * 100
        frame[col] = np.where(n_gold > 0, value, np.nan)
    codes = rng.choice(4, n, p=[0.8, 0.08, 0.07, 0.05])
    frame["correctness"] = np.where(codes == 0, np.round(rng.random(n) * 4) * 25, np.nan)
    frame["correctness__status"] = pd.Categorical.from_codes(codes, categories=[*STATUSES, "missing"])
    rated = rng.random(n) < 0.05
    frame["correctness__diff"] = np.where(rated, rng.choice([-25.0, 0.0, 0.0, 25.0], n), np.nan)
    frame["correctness__weight"] = np.where(rated, rng.choice([1.0, 2.5], n), np.nan)
    return RunData(run="r", run_id=1, frame=frame, metrics=["correctness"], ks=KS)


@pytest.mark.parametrize("repeats", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_a_column_at_a_time_is_each_slices_own_table(seed, repeats):
    data = _run(seed, repeats)
    frame = data.frame
    questions = per_question(frame)
    expected = {s: _reference(frame[frame["slice"] == s], questions[questions["slice"] == s], data)
                for s in ordered_slices(frame)}
    expected[ALL] = _reference(frame, questions, data)
    found = summarise(data)["slices"]
    for part in found.values():
        part.pop("consistency", None)
    # the same numbers to the last bit, the same keys in the same order (--json prints them as they come)
    assert json.dumps(found) == json.dumps(expected)


def test_a_lean_load_summarises_as_a_full_one(demo):
    for _, run, _ in list_runs(demo):
        full = json.dumps(summarise(load_run(demo, run)))
        lean = load_run(demo, run, lean=True)
        assert lean.hits is not None and "hit@5" not in lean.frame    # computed when asked, not held
        assert json.dumps(summarise(lean)) == full
        keep_values(demo, demo.reader().execute("SELECT id FROM runs WHERE name = ?", (run,)).fetchone()[0],
                    minimum=0)
        assert json.dumps(summarise(load_run(demo, run, lean=True))) == full


def test_kept_codes_and_ranks_stay_small(demo):
    run = list_runs(demo)[0][1]
    rid = demo.reader().execute("SELECT id FROM runs WHERE name = ?", (run,)).fetchone()[0]
    keep_values(demo, rid, minimum=0)
    judged = values.stored(demo.reader(), rid)["judgments"]
    row_id, judge_id, rank, status, score = judged
    assert score.dtype == np.float64      # scores as they were read; ids in the fewest bytes that hold them
    assert row_id.dtype.kind == "i" and row_id.dtype.itemsize < 8
    assert judge_id.dtype.itemsize <= 2 and rank.dtype.itemsize <= 2 and status.dtype == np.int8
    hit_ranks = values.stored(demo.reader(), rid)["passages"][1]
    assert hit_ranks.dtype.itemsize == 1


@pytest.mark.parametrize("runs", [("v1", "v2"), ("v2", "v1")])
def test_a_comparison_reads_the_numbers_a_full_load_holds(demo, runs):
    """compare loads lean, with the retrieval metrics asked for computed when asked: each slice's cell is the paired
    cell of the full tables' questions (the demo's second run's row ids are not its golden rows' rowids: a column
    aligned by index instead of taken by position would be NaN)."""
    from rageval_desktop.core.metrics.compare import compare, paired_cell
    from rageval_desktop.core.metrics.retrieval import is_retrieval

    full_a, full_b = load_run(demo, runs[0]), load_run(demo, runs[1])
    assert not (load_run(demo, "v2").frame.index.to_numpy() == load_run(demo, "v2").frame["qkey"].to_numpy()).all()
    names = ["recall@10", "precision@50", "ndcg@5", "mrr", *full_a.metrics[:2]]
    found = compare(demo, *runs, metrics=names)
    a, b = per_question(full_a.frame), per_question(full_b.frame)
    shared = a.index[a.index >= 0].intersection(b.index[b.index >= 0])
    assert found["shared_questions"] == len(shared)
    slices = a.loc[shared, "slice"].astype(str)
    checked = 0
    for name in [*ordered_slices(a.loc[shared]), ALL]:
        mask = slices == name if name != ALL else slices == slices
        assert found["slices"][name]["n"] == int(mask.sum()) > 0
        for m in names:
            before, after = a.loc[shared, m][mask].astype(float), b.loc[shared, m][mask].astype(float)
            both = before.notna() & after.notna()
            if is_retrieval(m):
                both &= a.loc[shared, "n_gold"][mask] > 0
            expected = paired_cell(before[both].to_numpy(), after[both].to_numpy()) if both.any() else None
            assert found["slices"][name][m] == expected, (name, m)
            checked += expected is not None
    assert checked >= 5 * len(found["slices"])


@pytest.mark.parametrize("seed", range(6))
def test_question_keys_are_unique_as_pandas_says(seed):
    from rageval_desktop.core.metrics.rowdata import unique

    rng = np.random.default_rng(seed)
    for n in (0, 1, 2, 50, 5000):
        for span in (n, 3 * n, 10**12):
            keys = rng.integers(-span // 3 - 1, span + 1, n) if seed % 2 else \
                rng.choice(np.arange(-span // 3 - 1, span + 1), min(n, span), replace=False) if span < 10**6 else \
                np.unique(rng.integers(-(10**11), 10**12, n))
            assert unique(keys) == pd.Series(keys).is_unique, (n, span)


def test_a_columns_parts_are_taken_when_asked_for():
    from rageval_desktop.core.metrics.dashboard import Parts

    column = np.arange(6.0)
    parts = Parts(column, {"a": np.array([0, 2], dtype=np.int32), "b": np.array([5]), "all": None})
    assert list(parts) == ["a", "b", "all"] and len(parts) == 3
    assert [list(v) for v in parts.values()] == [[0.0, 2.0], [5.0], list(column)]
    assert parts["all"] is column and dict(parts.items())["b"].tolist() == [5.0]
