"""System-level agreement (issue 30): does the judge order the runs as the reviewers do? Row agreement can be only
"fair" while the run ordering matches (TREC 2024 found this of UMBRELA); the two are read side by side.

On the questions rated in every run (at least three runs), each run's mean judge score and mean human score; Kendall
τ between the two lists of means (τ-b, as scipy's `kendalltau` computes it: `tau_b`, held to it by a test), the share
of run pairs ordered the same way, and a percentile bootstrap 95% interval of τ over the shared questions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.review.agreement import rated_pairs
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.project import Project

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

MIN_RUNS = 3


def _ordered_same(judge: Any, human: Any) -> float | None:
    pairs_, same = 0, 0
    for i in range(len(judge)):
        for j in range(i + 1, len(judge)):
            a, b = judge[i] - judge[j], human[i] - human[j]
            if a == 0 and b == 0:
                continue
            pairs_ += 1
            same += (a > 0 and b > 0) or (a < 0 and b < 0)
    return same / pairs_ if pairs_ else None


def tau_b(x: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """Kendall's τ-b of x and y along the last axis, for every leading index at once: (concordant − discordant) /
    sqrt((pairs − ties in x)(pairs − ties in y)), NaN where either side is constant — scipy.stats.kendalltau's
    statistic (tests/core/test_system_agreement.py holds them equal). A bootstrap of 1,000 draws over a handful of
    runs is one array operation here; it was 1,000 calls of scipy's (17 s for 20 judges), and importing scipy.stats
    took a second of every `rageval agreement`."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((sx * sy).sum(axis=-1) / np.sqrt((sx * sx).sum(axis=-1) * (sy * sy).sum(axis=-1)),
                          dtype=np.float64)


def _draws(project: Project, n: int, resamples: int, seed: int) -> list[NDArray[np.float64]]:
    """The bootstrap's draws of n questions, as counts (how often each draw took each question), in blocks of a few
    MB. They depend only on n and the seed: every judge with n shared questions has the same draws, made once in a
    block of shared reads (core.store.reads; the audit of 20 judges made them 20 times) while they fit in one block
    (32 MB: n up to 4,000 questions at 1,000 resamples); more are made for each judge, not kept."""
    import numpy as np

    def make() -> list[NDArray[np.float64]]:
        rng = np.random.default_rng(seed)
        out = []
        block = max(1, 4_000_000 // n)                    # draws at a time: a block's counts stay a few MB
        for start in range(0, resamples, block):
            drawn = rng.integers(0, n, size=(min(block, resamples - start), n))
            times = np.bincount((drawn + n * np.arange(len(drawn))[:, None]).ravel(), minlength=drawn.size)
            out.append(times.reshape(len(drawn), n).astype(float))
        return out

    if n * resamples > 4_000_000:
        return make()
    return reads.once(project, ("bootstrap draws", n, resamples, seed), make)


def _cell_means(cell: NDArray[np.int64], values: NDArray[np.float64], questions: int,
                runs: int) -> NDArray[np.float64]:
    """The mean of `values` in each (question, run) cell (`cell`: question * runs + run, -1 for none), NaNs left
    out as a groupby's mean leaves them: a questions x runs array."""
    import numpy as np

    keep = (cell >= 0) & np.isfinite(values)
    size = questions * runs
    sums = np.bincount(cell[keep], weights=values[keep], minlength=size)
    counts = np.bincount(cell[keep], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums / counts).reshape(questions, runs)


def _products(drawn: NDArray[np.float64], both: NDArray[np.float64]) -> NDArray[np.float64]:
    """drawn @ both, in blocks of rows small enough for OpenBLAS to do each on one thread (m x n x k up to 65,536 x
    4, its threshold): a whole product spun its threads for about a CPU-second an audit on two cores, and numpy's
    einsum, its own loop, took 3.5 ms a judge where the blocks take 0.3."""
    import numpy as np

    rows = max(1, 262_144 // max(1, both.shape[0] * both.shape[1]))
    return np.concatenate([drawn[i:i + rows] @ both for i in range(0, len(drawn), rows)]) if len(drawn) else (
        np.zeros((0, both.shape[1])))


def system_agreement(project: Project, judge: Judge, *, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Kendall τ of the judge's and the humans' per-run means on shared rated questions, with its bootstrap CI;
    `reason` says why there is none (fewer than three runs rated on shared questions)."""
    import numpy as np

    merged, _latest = rated_pairs(project, judge)
    empty = {"tau": None, "ci": [None, None], "ordered_same": None, "runs": [], "questions": 0}
    if merged.empty:
        return {**empty, "reason": "no rated rows this judge judged"}
    keys = reads.once(project, ("question keys", judge.metric), lambda: dict(project.reader().execute(
        "SELECT id, COALESCE(golden_id, lower(trim(question))) FROM run_rows WHERE id IN (SELECT run_row_id FROM "
        "human_ratings WHERE metric = ?)", (judge.metric,))))                 # every rated row's question, once
    questions = [keys.get(row) for row in merged["run_row_id"].tolist()]
    named = merged["run"].tolist()
    runs = sorted(set(named))
    asked: dict[str, set[Any]] = {}
    for run, question in zip(named, questions, strict=True):
        asked.setdefault(run, set()).add(question)
    shared = set.intersection(*(asked[r] for r in runs)) if runs else set()
    if len(runs) < MIN_RUNS or len(shared) < 2:
        return {**empty, "runs": runs, "questions": len(shared),
                "reason": f"needs {MIN_RUNS} runs rated on shared questions ({len(runs)} run(s), {len(shared)} "
                          "shared question(s))"}
    # each shared question's mean judge and human score in each run (questions in order, as a groupby sorts them),
    # summed by bincount: pandas' groupby, unstack and a set lookup through pyarrow scalars took 8 ms a judge
    order = {q: i for i, q in enumerate(sorted(shared))}
    column = {r: i for i, r in enumerate(runs)}
    cell = np.fromiter((order[q] * len(runs) + column[r] if q in order else -1
                        for q, r in zip(questions, named, strict=True)),
                       np.int64, len(merged))
    judge_q, human_q = (_cell_means(cell, np.asarray(merged[name], dtype=float), len(order), len(runs))
                        for name in ("judge_score", "human_score"))                  # questions x runs
    names, judge_means, human_means = runs, judge_q.mean(axis=0), human_q.mean(axis=0)
    tau = float(tau_b(judge_means, human_means))
    both = np.concatenate([judge_q, human_q], axis=1)               # questions x (runs of the judge, of the humans)
    found = []
    for drawn in _draws(project, len(judge_q), resamples, seed):     # resample questions: a draw keeps a question
        means = _products(drawn, both) / len(judge_q)                # in every run
        found.append(tau_b(means[:, :len(runs)], means[:, len(runs):]))
    taus = np.concatenate(found) if found else np.array([])
    taus = taus[np.isfinite(taus)]
    ci = [float(np.percentile(taus, 2.5)), float(np.percentile(taus, 97.5))] if taus.size else [None, None]
    return {"tau": tau, "ci": ci, "ordered_same": _ordered_same(judge_means, human_means), "runs": names,
            "questions": len(judge_q), "judge_means": [float(v) for v in judge_means],
            "human_means": [float(v) for v in human_means], "reason": ""}
