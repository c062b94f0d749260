"""Review samples: 30-50 rows of a run per metric, stratified by slice and by judge score so that low and high
scores are both present, reproducible from a seed, and extendable."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rageval_desktop.core.errors import NotFound, RagevalError
from rageval_desktop.core.judges.registry import METRICS
from rageval_desktop.core.store.project import Project, utcnow
from rageval_desktop.core.store.queries import run_id as find_run

INSERT_ROW = "INSERT INTO review_sample_rows (sample_id, run_row_id, position, stratum) VALUES (?, ?, ?, ?)"


@dataclass
class Sample:
    id: int
    run: str
    metric: str
    seed: int
    row_ids: list[int]


def _strata(project: Project, rid: int, metric: str) -> dict[int, str]:
    """Row id -> stratum 'slice|low|mid|high|unjudged' from the active judges' mean score on this metric."""
    spec = METRICS[metric]
    conn = project.reader()
    scores: dict[int, list[float]] = {}
    for row_id, score in conn.execute(
            "SELECT x.run_row_id, x.score FROM judgments x JOIN judges j ON j.id = x.judge_id JOIN run_rows rr "
            "ON rr.id = x.run_row_id WHERE rr.run_id = ? AND j.metric = ? AND j.status = 'active' "
            "AND x.status = 'ok'", (rid, metric)):
        scores.setdefault(row_id, []).append(score)
    out = {}
    for row_id, slice_tag in conn.execute("SELECT rr.id, COALESCE(g.slice_tag, '(unlinked)') FROM run_rows rr "
                                          "LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.run_id = ?", (rid,)):
        values = scores.get(row_id)
        if not values:
            band = "unjudged"
        else:
            x = (sum(values) / len(values) - spec.low) / (spec.high - spec.low)
            band = "low" if x < 1 / 3 else "mid" if x < 2 / 3 else "high"
        out[row_id] = f"{slice_tag}|{band}"
    return out


def _allocate(strata: dict[str, list[int]], size: int, rng: Any) -> list[tuple[int, str]]:
    """Round-robin over strata in a seeded order: every stratum gets a row before any gets two."""
    pools = {k: list(rng.permutation(v)) for k, v in strata.items()}
    order = list(rng.permutation(sorted(pools)))
    picked: list[tuple[int, str]] = []
    while len(picked) < size and any(pools.values()):
        for key in order:
            if pools[key] and len(picked) < size:
                picked.append((int(pools[key].pop()), key))
    return picked


def create_sample(project: Project, run: str, metric: str, size: int = 40, seed: int = 0) -> Sample:
    import numpy as np

    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    if size < 1:
        raise RagevalError("a sample needs at least one row")
    rid = find_run(project, run)
    strata: dict[str, list[int]] = {}
    for row_id, key in _strata(project, rid, metric).items():
        strata.setdefault(key, []).append(row_id)
    picked = _allocate(strata, size, np.random.default_rng(seed))
    with project.write("create review sample", changed=("review",)) as conn:
        cur = conn.execute("INSERT INTO review_samples (run_id, metric, seed, params, created_at) "
                           "VALUES (?, ?, ?, ?, ?)", (rid, metric, seed, json.dumps({"size": size}), utcnow()))
        sid = cur.lastrowid
        conn.executemany(INSERT_ROW, [(sid, row, i, key) for i, (row, key) in enumerate(picked)])
        project.audit(conn, "create sample", "review_sample", str(sid), run=run, metric=metric, size=len(picked),
                      seed=seed)
    return get_sample(project, sid)


MAX_CHOSEN = 500   # rows in a sample made from a listing


def sample_of_rows(project: Project, run: str, metric: str, row_ids: list[int], reason: str = "") -> Sample:
    """A sample of rows a person chose (e.g. the disagreements listed in triage), in the order given. It is not
    representative of the run, and says so: params.mode = "chosen" and the reason are recorded."""
    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    rows = list(dict.fromkeys(int(r) for r in row_ids))[:MAX_CHOSEN]
    if not rows:
        raise RagevalError("a sample needs at least one row")
    rid = find_run(project, run)
    conn = project.reader()
    found = {r[0] for r in conn.execute(
        f"SELECT id FROM run_rows WHERE run_id = ? AND id IN ({','.join('?' * len(rows))})", (rid, *rows))}
    if len(found) != len(rows):
        raise RagevalError(f"{len(rows) - len(found)} of the chosen rows are not rows of run '{run}'")
    params = {"size": len(rows), "mode": "chosen", "reason": reason}
    with project.write("create review sample", changed=("review",)) as w:
        cur = w.execute("INSERT INTO review_samples (run_id, metric, seed, params, created_at) VALUES (?, ?, 0, ?, ?)",
                        (rid, metric, json.dumps(params), utcnow()))
        sid = cur.lastrowid
        w.executemany(INSERT_ROW, [(sid, row, i, "chosen") for i, row in enumerate(rows)])
        project.audit(w, "create sample", "review_sample", str(sid), run=run, metric=metric, size=len(rows),
                      mode="chosen", reason=reason)
    return get_sample(project, sid)


def extend_sample(project: Project, sample_id: int, more: int) -> Sample:
    """Top up a sample with rows it does not hold yet, from the same strata logic and a derived seed."""
    import numpy as np

    sample = get_sample(project, sample_id)
    rid = find_run(project, sample.run)
    have = set(sample.row_ids)
    strata: dict[str, list[int]] = {}
    for row_id, key in _strata(project, rid, sample.metric).items():
        if row_id not in have:
            strata.setdefault(key, []).append(row_id)
    rounds = project.reader().execute("SELECT COUNT(*) FROM audit_log WHERE action = 'extend sample' AND "
                                      "entity_id = ?", (str(sample_id),)).fetchone()[0]
    picked = _allocate(strata, more, np.random.default_rng([sample.seed, rounds + 1]))
    with project.write("extend review sample", changed=("review",)) as conn:
        start = len(sample.row_ids)
        conn.executemany(INSERT_ROW, [(sample_id, row, start + i, key) for i, (row, key) in enumerate(picked)])
        project.audit(conn, "extend sample", "review_sample", str(sample_id), added=len(picked))
    return get_sample(project, sample_id)


def get_sample(project: Project, sample_id: int) -> Sample:
    conn = project.reader()
    row = conn.execute("SELECT s.id, r.name, s.metric, s.seed FROM review_samples s JOIN runs r ON r.id = s.run_id "
                       "WHERE s.id = ?", (sample_id,)).fetchone()
    if row is None:
        raise NotFound(f"no review sample {sample_id}")
    rows = [r[0] for r in conn.execute("SELECT run_row_id FROM review_sample_rows WHERE sample_id = ? "
                                       "ORDER BY position", (sample_id,))]
    return Sample(row[0], row[1], row[2], row[3], rows)


def list_samples(project: Project) -> list[dict[str, Any]]:
    return [{"id": i, "run": r, "metric": m, "seed": s, "rows": n, "rated": rated, "created_at": c}
            for i, r, m, s, n, rated, c in project.reader().execute(
                "SELECT s.id, r.name, s.metric, s.seed, COUNT(sr.run_row_id), "
                "(SELECT COUNT(DISTINCT h.run_row_id) FROM human_ratings h WHERE h.sample_id = s.id "
                " AND h.withdrawn_at IS NULL AND h.skipped = 0), s.created_at FROM review_samples s "
                "JOIN runs r ON r.id = s.run_id LEFT JOIN review_sample_rows sr ON sr.sample_id = s.id "
                "GROUP BY s.id ORDER BY s.id")]
