"""One run as a table of rows: slice, retrieval metrics against gold ids, judge scores on 0–100, latency, cost.

Everything a dashboard, a comparison, the gate or the failure browser needs is computed here once, from a few
set-based queries (no per-row SQL), so 100k rows x 3 judges stays in seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.judges.registry import METRICS
from rageval_desktop.core.metrics import retrieval
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

DEFAULT_PROMPT_K = 5  # passages assumed to reach the prompt when a run does not say (in_prompt)


@dataclass
class RunData:
    run: str
    run_id: int
    frame: Any                                   # pandas.DataFrame indexed by run row id
    metrics: list[str]                           # judge metrics with at least one active judge that scored
    judges: dict[str, list[str]] = field(default_factory=dict)   # metric -> active judge names used
    retired: list[dict[str, Any]] = field(default_factory=list)  # judges left out, and why
    ks: tuple[int, ...] = retrieval.DEFAULT_KS
    golden_changed: bool = False


def load_run(project: Project, run: str, ks: tuple[int, ...] = retrieval.DEFAULT_KS) -> RunData:
    import numpy as np
    import pandas as pd

    conn = project.reader()
    rid = find_run(project, run)
    base = pd.read_sql_query(
        "SELECT rr.id AS row_id, rr.golden_id, rr.external_id, rr.question, rr.answer, rr.latency_ms, rr.cost_usd, "
        "COALESCE(g.slice_tag, '(unlinked)') AS slice, g.gold_chunk_ids, g.gold_answer "
        "FROM run_rows rr LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.run_id = ? ORDER BY rr.position",
        conn, params=(rid,)).set_index("row_id")
    gold_lists = [json.loads(v) if isinstance(v, str) else [] for v in base["gold_chunk_ids"]]
    base["n_gold"] = [len(set(g)) for g in gold_lists]
    base = base.drop(columns=["gold_chunk_ids"])
    hits: dict[int, list[int]] = {}
    for row_id, rank in conn.execute(
            "SELECT p.run_row_id, MIN(p.rank) FROM retrieved_passages p JOIN run_rows rr ON rr.id = p.run_row_id "
            "JOIN golden_rows g ON g.id = rr.golden_id JOIN json_each(g.gold_chunk_ids) j ON j.value = p.chunk_id "
            "WHERE rr.run_id = ? GROUP BY p.run_row_id, p.chunk_id", (rid,)):
        hits.setdefault(row_id, []).append(rank)
    prompt_k = dict(conn.execute(
        "SELECT p.run_row_id, SUM(p.in_prompt) FROM retrieved_passages p JOIN run_rows rr ON rr.id = p.run_row_id "
        "WHERE rr.run_id = ? AND p.in_prompt IS NOT NULL GROUP BY p.run_row_id", (rid,)))
    names = [f"{m}@{k}" for k in ks for m in ("recall", "recall_frac", "precision", "ndcg")] + ["mrr"]
    table = np.full((len(base), len(names)), np.nan)
    first = np.full(len(base), np.nan)
    for i, (row_id, n_gold) in enumerate(zip(base.index, base["n_gold"], strict=True)):
        if n_gold == 0:
            continue
        ranks = sorted(hits.get(row_id, []))
        values = retrieval.row_metrics(ranks, n_gold, ks)
        table[i] = [values[n] for n in names]
        if ranks:
            first[i] = ranks[0]
    for j, name in enumerate(names):
        base[name] = table[:, j] * 100.0
    base["first_gold_rank"] = first
    base["prompt_k"] = [prompt_k.get(r, DEFAULT_PROMPT_K) for r in base.index]
    data = RunData(run=run, run_id=rid, frame=base, metrics=[], ks=ks)
    _add_judge_scores(project, data)
    fingerprint = conn.execute("SELECT golden_fingerprint FROM runs WHERE id = ?", (rid,)).fetchone()[0]
    data.golden_changed = bool(fingerprint) and fingerprint != project.golden_fingerprint()
    return data


def _add_judge_scores(project: Project, data: RunData) -> None:
    import numpy as np
    import pandas as pd

    conn = project.reader()
    judges = pd.read_sql_query("SELECT id, name, metric, status, status_at, status_reason FROM judges", conn)
    for _, j in judges[judges["status"] == "retired"].iterrows():
        data.retired.append({"judge": j["name"], "metric": j["metric"], "since": j["status_at"],
                             "reason": j["status_reason"]})
    rows = pd.read_sql_query(
        "SELECT x.run_row_id AS row_id, x.judge_id, x.status, x.score FROM judgments x "
        "JOIN run_rows rr ON rr.id = x.run_row_id WHERE rr.run_id = ?", conn, params=(data.run_id,))
    active = judges[judges["status"] == "active"].set_index("id")
    rows = rows[rows["judge_id"].isin(active.index)]
    if rows.empty:
        return
    rows["metric"] = active.loc[rows["judge_id"], "metric"].to_numpy()
    frame = data.frame
    for metric, group in rows.groupby("metric", sort=False):
        spec = METRICS.get(metric)
        if spec is None:
            continue
        data.judges[metric] = sorted(active.loc[group["judge_id"].unique(), "name"])
        ok = group[group["status"] == "ok"].copy()
        ok["norm"] = (ok["score"] - spec.low) / (spec.high - spec.low) * 100.0
        # passages average within a row; judges of the same metric average per row
        per_judge = ok.groupby(["row_id", "judge_id"])["norm"].mean()
        per_row = per_judge.groupby(level="row_id").mean()
        raw = ok.groupby(["row_id", "judge_id"])["score"].mean().groupby(level="row_id").mean()
        frame[metric] = per_row.reindex(frame.index).to_numpy()
        frame[f"{metric}__raw"] = raw.reindex(frame.index).to_numpy()
        statuses = group.groupby("row_id")["status"].agg(set)
        status = np.array(["missing"] * len(frame), dtype=object)
        lookup = statuses.reindex(frame.index)
        for i, s in enumerate(lookup):
            if isinstance(s, set):
                status[i] = "ok" if "ok" in s else "unparsed" if "unparsed" in s else "error"
        frame[f"{metric}__status"] = status
        data.metrics.append(metric)
