"""Review samples: 30-50 targets of a run per metric (rows; or passages, nuggets, citations for the metrics judged
per item: see `core.review.targets`), stratified by slice and by judge score so that low and high scores are both
present, reproducible from a seed, and extendable. A row's targets sit next to each other."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.vocab import METRICS, SLICE_OF, UNLINKED
from rageval_desktop.core.review import targets
from rageval_desktop.core.review.agreement import scale
from rageval_desktop.core.review.evidence import look_sizes
from rageval_desktop.core.review.targets import Candidate
from rageval_desktop.core.review.weights import plan_state, sample_mode
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

INSERT_ROW = ("INSERT INTO review_sample_rows (sample_id, run_row_id, item, item_key, position, stratum, inclusion) "
              "VALUES (?, ?, ?, ?, ?, ?, ?)")
MODES = {"stratified": "every slice and judge-score band, round robin (the default); each rating weighs its "
                       "stratum's size over its ratings, so the statistics speak for the whole run",
         "disagreement": "the targets the judges disagree on, then those near the pass mark, mostly first (as "
                         "EvalGen orders them); drawn with unequal probabilities, which the statistics undo — "
                         "however far the rating has got, in the order shown",
         "uncertain": "the targets whose judge score sits nearest the pass mark, mostly first; drawn with unequal "
                      "probabilities, which the statistics undo — however far the rating has got, in the order "
                      "shown"}
WEIGHTED = ("disagreement", "uncertain")   # modes drawn with unequal, recorded probabilities
# every target keeps a chance to be drawn, and a large one: a defensive mixture (Hesterberg 1995) — an informative
# target is drawn at most 3 times (uncertain) or 4 times (disagreement) as often as the least. At 0.05 (21x) the
# weights' long tail biased a 1-5 audit of 30 uncertain ratings by -0.08 with 86% coverage and an error of 0.25;
# at 0.5, -0.01, 96% and 0.18 (bench/bench_audit_desk.py).
FLOOR = 0.5


@dataclass
class Sample:
    """A review sample: what to rate, in order. Each position is a target (row, item): `row_ids[i]` with
    `items[i]` (0 = the row; a passage's rank, or a nugget's or citation's number) and `keys[i]` (a nugget's or a
    citation's text). For row metrics `items` are all 0 and `row_ids` holds no repeats."""
    id: int
    run: str
    metric: str
    seed: int
    row_ids: list[int]
    items: list[int] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)
    mode: str = "stratified"          # MODES, or "chosen" (rows a person picked: not representative)
    looks: list[int] = field(default_factory=list)   # its plan's looks, in targets (empty: no plan, or spent)
    params: dict[str, Any] = field(default_factory=dict)   # as drawn: mode, plan, and what its mode records

    @property
    def unit(self) -> str:
        return targets.unit(self.metric)

    @property
    def targets(self) -> list[tuple[int, int]]:
        return list(zip(self.row_ids, self.items or [0] * len(self.row_ids), strict=True))


def strata_of(project: Project, rid: int, metric: str) -> list[tuple[Candidate, str]]:
    """Every target with its stratum 'slice|low|mid|high|unjudged', from the active judges' mean score on it (read
    once within a block of shared reads, core.store.reads: the list is shared, not to be changed in place)."""
    return reads.once(project, ("strata", rid, metric), lambda: _strata_of(project, rid, metric))


def _strata_of(project: Project, rid: int, metric: str) -> list[tuple[Candidate, str]]:
    spec = METRICS[metric]
    conn = project.reader()
    slices = dict(conn.execute(f"SELECT rr.id, {SLICE_OF} FROM run_rows rr LEFT JOIN golden_rows g ON "
                               "g.id = rr.golden_id WHERE rr.run_id = ?", (rid,)))
    out = []
    names: dict[tuple[str, str], str] = {}     # each stratum's name made once (not a string per target)
    for c in targets.candidates(conn, metric, run_id=rid):
        if not c.scores:
            band = "unjudged"
        else:
            x = (sum(c.scores) / len(c.scores) - spec.low) / (spec.high - spec.low)
            band = "low" if x < 1 / 3 else "mid" if x < 2 / 3 else "high"
        where = slices.get(c.row_id, UNLINKED)
        name = names.get((where, band))
        if name is None:
            name = names[(where, band)] = f"{where}|{band}"
        out.append((c, name))
    return out


def _grouped(picked: list[tuple[Candidate, str]]) -> list[tuple[Candidate, str]]:
    """A row's targets next to each other (the reviewer reads its answer once), rows in the order drawn."""
    first: dict[int, int] = {}
    for i, (c, _) in enumerate(picked):
        first.setdefault(c.row_id, i)
    return sorted(picked, key=lambda p: (first[p[0].row_id], p[0].item))


def _draw(project: Project, rid: int, metric: str, size: int, rng: Any,
          have: dict[tuple[int, int], str] | None = None
          ) -> tuple[list[tuple[Candidate, str]], dict[tuple[int, int], float]]:
    """A stratified draw of `size` targets beside those already in the sample (`have`: target -> stratum), and
    the inclusion probability n_h / N_h of every target the sample then holds: the round robin allocates equally,
    so a small stratum is over-represented and its ratings must weigh less (N_h / n_h) to speak for the run."""
    have = have or {}
    every = strata_of(project, rid, metric)
    pool = [(c, key) for c, key in every if (c.row_id, c.item) not in have]
    strata: dict[str, list[int]] = {}
    for i, (_, key) in enumerate(pool):
        strata.setdefault(key, []).append(i)
    picked = _grouped([pool[i] for i, _ in _allocate(strata, size, rng)])
    population: dict[str, int] = {}
    for _, key in every:
        population[key] = population.get(key, 0) + 1
    members = {**have, **{(c.row_id, c.item): key for c, key in picked}}
    taken: dict[str, int] = {}
    for key in members.values():
        taken[key] = taken.get(key, 0) + 1
    inclusion = {target: taken[key] / max(population.get(key, 0), taken[key]) for target, key in members.items()}
    return picked, inclusion


def _insert(conn: sqlite3.Connection, sample_id: int, start: int, picked: list[tuple[Candidate, str]],
            inclusion: dict[tuple[int, int], float] | None = None) -> None:
    conn.executemany(INSERT_ROW, [(sample_id, c.row_id, c.item, c.key, start + i, key,
                                   (inclusion or {}).get((c.row_id, c.item)))
                                  for i, (c, key) in enumerate(picked)])


def priority(scores: list[float], metric: str, mode: str, step: float | None = None) -> float:
    """How informative a target's rating is likely to be, from the active judges' scores on it: `disagreement`
    weighs their spread (as a share of the scale) and, half as much, how near their mean is to the pass mark;
    `uncertain` the nearness alone. Never below FLOOR (an unjudged target too). `step` (the human scale's step,
    `scale_step`) is read once per draw by the caller: reading it per target cost seconds per 2,000 targets."""
    spec = METRICS[metric]
    if not scores:
        return FLOOR
    span = spec.high - spec.low
    mean = sum(scores) / len(scores)
    step = scale_step(metric) if step is None else step
    mark = (spec.pass_mark - step / 2) if spec.pass_mark is not None else spec.low + span / 2
    near = max(0.0, 1.0 - 2.0 * abs(mean - mark) / span)
    spread = (max(scores) - min(scores)) / span if len(scores) > 1 else 0.0
    return FLOOR + (spread + 0.5 * near if mode == "disagreement" else near)


def scale_step(metric: str) -> float:
    """The distance between the first two points of the human scale (the whole span for a one-point scale)."""
    spec = METRICS[metric]
    points = sorted(scale(metric))
    return (points[1] - points[0]) if len(points) > 1 else spec.high - spec.low


def inclusion_probabilities(weights: list[float], size: int) -> list[float]:
    """Probabilities proportional to `weights` that sum to `size` (at most 1 each: the largest are capped and
    the rest rescaled until none exceeds 1)."""
    n = len(weights)
    if size >= n:
        return [1.0] * n
    probs = [0.0] * n
    capped: set[int] = set()
    while True:
        free = [i for i in range(n) if i not in capped]
        total = sum(weights[i] for i in free)
        room = size - len(capped)
        over = [i for i in free if room * weights[i] / total >= 1.0]
        if not over:
            for i in free:
                probs[i] = room * weights[i] / total
            for i in capped:
                probs[i] = 1.0
            return probs
        capped.update(over)


def _draw_weighted(project: Project, rid: int, metric: str, size: int, mode: str, rng: Any,
                   have: set[tuple[int, int]] | frozenset[tuple[int, int]] = frozenset()
                   ) -> tuple[list[tuple[Candidate, str]], dict[tuple[int, int], float], dict[str, Any]]:
    """Sequential Poisson sampling (Ohlsson 1998): each target gets an inclusion probability p proportional to its
    priority, a uniform u, and the `size` smallest u / p are drawn — a fixed-size sample whose probabilities are
    (very nearly) p, recorded so that ratings can weigh 1/p. Targets already in the sample (`have`) count towards
    the size: an extension redraws with the larger size.

    The desk shows the targets in key order (a row's targets together): the first m targets by key are themselves
    the sequential Poisson sample of size m, so a sample rated part-way is still a sample, weighed with the
    probabilities of size m (`prefix_probability`; was: the most informative first, and after 30 of 40 ratings κ
    was biased by -0.35). The returned design keeps what those probabilities need: each member's key rank and
    priority, the population's total priority and its largest ones."""
    pool = sorted(strata_of(project, rid, metric),                 # a stable order: the seed reproduces the draw
                  key=lambda p: (p[0].row_id, p[0].item))
    step = scale_step(metric)
    weights = [priority(c.scores, metric, mode, step) for c, _ in pool]
    total = min(len(pool), size + len(have))
    probs = inclusion_probabilities(weights, total)
    keys = rng.random(len(pool)) / [max(p, 1e-12) for p in probs]
    order = sorted(range(len(pool)), key=lambda i: keys[i])[:total]
    chosen = [i for i in order if (pool[i][0].row_id, pool[i][0].item) not in have][:size]
    inclusion = {(c.row_id, c.item): probs[i] for i, (c, _) in enumerate(pool)}
    design = {"population": len(pool), "total": float(sum(weights)),
              "top": sorted((float(w) for w in weights), reverse=True)[:total],
              "members": {f"{pool[i][0].row_id}:{pool[i][0].item}": [rank, float(weights[i])]
                          for rank, i in enumerate(order)}}
    return _grouped([(pool[i][0], f"{pool[i][1]}|{mode}") for i in chosen]), inclusion, design


def preview_draw(project: Project, rid: int, metric: str, mode: str, size: int,
                 seed: int = 0) -> tuple[list[tuple[Candidate, str]], dict[tuple[int, int], float]]:
    """What a draw of `size` in `mode` would pick, with every target's inclusion probability; nothing is written (the
    audit planner's design effect)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if mode == "stratified":
        return _draw(project, rid, metric, size, rng)
    picked, inclusion, _ = _draw_weighted(project, rid, metric, size, mode, rng)
    return picked, inclusion


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


def create_sample(project: Project, run: str, metric: str, size: int = 40, seed: int = 0,
                  mode: str = "stratified") -> Sample:
    """A new sample of `size` targets. `mode` (MODES): `stratified` allocates equally over slice x judge-score
    bands and records each target's n_h / N_h; `disagreement` and `uncertain` put the most informative targets
    first, draw them with unequal probabilities and record those. Agreement statistics and PPI corrections weight
    each rating by the inverse (core.review.weights), so every mode estimates what the whole run would give."""
    import numpy as np

    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    if mode not in MODES:
        raise RagevalError(f"unknown sampling mode '{mode}'; choose one of {', '.join(MODES)}")
    if size < 1:
        raise RagevalError("a sample needs at least one row")
    rid = find_run(project, run)
    rng = np.random.default_rng(seed)
    inclusion: dict[tuple[int, int], float] | None = None
    params: dict[str, Any] = {"size": size, "unit": targets.unit(metric), "mode": mode}
    if mode == "stratified":
        picked, inclusion = _draw(project, rid, metric, size, rng)
    else:
        picked, inclusion, params["design"] = _draw_weighted(project, rid, metric, size, mode, rng)
    if not picked:
        raise RagevalError(_nothing_to_rate(run, metric))
    # the plan: the audit looks at a quarter, half, three quarters and all of it (core.review.evidence.LOOKS)
    params["plan"] = {"size": len(picked), "looks": look_sizes(len(picked))}
    with project.write("create review sample", changed=(Area.REVIEW,)) as conn:
        cur = conn.execute("INSERT INTO review_samples (run_id, metric, seed, params, created_at) "
                           "VALUES (?, ?, ?, ?, ?)", (rid, metric, seed, json.dumps(params), utcnow()))
        sid = cur.lastrowid
        assert sid is not None
        _insert(conn, sid, 0, picked, inclusion)
        project.audit(conn, "create sample", "review_sample", str(sid), run=run, metric=metric, size=len(picked),
                      seed=seed, unit=params["unit"], mode=mode)
    return get_sample(project, sid)


MAX_CHOSEN = 500   # rows in a sample made from a listing


def _nothing_to_rate(run: str, metric: str) -> str:
    kind = targets.unit(metric)
    if kind in targets.BY_TEXT:
        return (f"run '{run}' has no {kind}s judged for {metric} yet: run a {metric} judge on it first (the "
                f"{kind}s to rate are the ones a judge judged)")
    return f"run '{run}' has nothing to rate for {metric}"


def sample_of_rows(project: Project, run: str, metric: str, row_ids: list[int], reason: str = "", *,
                   mode: str = "chosen", extra: dict[str, Any] | None = None, most: int = MAX_CHOSEN) -> Sample:
    """A sample of rows a person chose (e.g. the disagreements listed in triage), in the order given. It is not
    representative of the run, and says so: params.mode = "chosen" (or `mode`: "abstained" for the rows a selective
    judge leaves to people, core.review.selective) and the reason are recorded, with `extra` parameters."""
    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    rows = list(dict.fromkeys(int(r) for r in row_ids))[:most]
    if not rows:
        raise RagevalError("a sample needs at least one row")
    rid = find_run(project, run)
    conn = project.reader()
    found = {r[0] for r in conn.execute(
        f"SELECT id FROM run_rows WHERE run_id = ? AND id IN ({','.join('?' * len(rows))})", (rid, *rows))}
    if len(found) != len(rows):
        raise RagevalError(f"{len(rows) - len(found)} of the chosen rows are not rows of run '{run}'")
    order = {row: i for i, row in enumerate(rows)}
    chosen = [(c, "chosen") for c in targets.candidates(conn, metric, row_ids=rows)]
    chosen.sort(key=lambda p: (order[p[0].row_id], p[0].item))     # every target of each row, rows as given
    if not chosen:
        raise RagevalError(_nothing_to_rate(run, metric))
    params = {"size": len(rows), "mode": mode, "reason": reason, "unit": targets.unit(metric), **(extra or {})}
    with project.write("create review sample", changed=(Area.REVIEW,)) as w:
        cur = w.execute("INSERT INTO review_samples (run_id, metric, seed, params, created_at) VALUES (?, ?, 0, ?, ?)",
                        (rid, metric, json.dumps(params), utcnow()))
        sid = cur.lastrowid
        assert sid is not None
        _insert(w, sid, 0, chosen)
        project.audit(w, "create sample", "review_sample", str(sid), run=run, metric=metric, size=len(rows),
                      mode=mode, reason=reason)
    return get_sample(project, sid)


def extend_sample(project: Project, sample_id: int, more: int) -> Sample:
    """Top up a sample with rows it does not hold yet, from the same strata logic and a derived seed."""
    import numpy as np

    sample = get_sample(project, sample_id)
    rid = find_run(project, sample.run)
    if sample.mode in WEIGHTED:
        # the same keys (same seed) with the larger size: the sample grows as if drawn at that size at once,
        # and every target's recorded probability becomes the one of the larger draw
        picked, inclusion, design = _draw_weighted(project, rid, sample.metric, more, sample.mode,
                                                   np.random.default_rng(sample.seed), set(sample.targets))
        with project.write("extend review sample", changed=(Area.REVIEW,)) as conn:
            _replan(conn, sample_id, len(sample.row_ids) + len(picked))
            _insert(conn, sample_id, len(sample.row_ids), picked, inclusion)
            conn.execute("UPDATE review_samples SET params = json_set(params, '$.design', json(?)) WHERE id = ?",
                         (json.dumps(design), sample_id))
            conn.executemany("UPDATE review_sample_rows SET inclusion = ? WHERE sample_id = ? AND run_row_id = ? "
                             "AND item = ?", [(p, sample_id, r, i) for (r, i), p in inclusion.items()])
            project.audit(conn, "extend sample", "review_sample", str(sample_id), added=len(picked))
        return get_sample(project, sample_id)
    rounds = project.reader().execute("SELECT COUNT(*) FROM audit_log WHERE action = 'extend sample' AND "
                                      "entity_id = ?", (str(sample_id),)).fetchone()[0]
    have = {(r, i): key for r, i, key in project.reader().execute(
        "SELECT run_row_id, item, stratum FROM review_sample_rows WHERE sample_id = ?", (sample_id,))}
    picked, inclusion = _draw(project, rid, sample.metric, more, np.random.default_rng([sample.seed, rounds + 1]),
                              have)
    with project.write("extend review sample", changed=(Area.REVIEW,)) as conn:
        _replan(conn, sample_id, len(sample.row_ids) + len(picked))
        _insert(conn, sample_id, len(sample.row_ids), picked, inclusion if sample.mode == "stratified" else None)
        if sample.mode == "stratified":     # every stratum's n_h / N_h as the sample now holds it
            conn.executemany("UPDATE review_sample_rows SET inclusion = ? WHERE sample_id = ? AND run_row_id = ? "
                             "AND item = ?", [(p, sample_id, r, i) for (r, i), p in inclusion.items()])
        project.audit(conn, "extend sample", "review_sample", str(sample_id), added=len(picked))
    return get_sample(project, sample_id)


def _replan(conn: sqlite3.Connection, sample_id: int, size: int) -> None:
    """An extension before the plan's last look moves it to the new size: the looks already reached stay where they
    were (their data are fixed), the rest are spread over the new size as a new plan's would be. Once every target
    was rated the last look may have been taken: the plan is spent, and the audit keeps the interim (anytime)
    interval from then on."""
    plan, targets_, done = plan_state(conn, sample_id)
    if plan is None or plan.get("spent"):
        return
    if done >= targets_:
        plan = {**plan, "spent": True}
    else:
        kept = [int(m) for m in (plan.get("looks") or []) if int(m) <= done]
        plan = {"size": size, "looks": sorted({*kept, *(m for m in look_sizes(size) if m > max(kept, default=0))})}
    conn.execute("UPDATE review_samples SET params = json_set(params, '$.plan', json(?)) WHERE id = ?",
                 (json.dumps(plan), sample_id))


def get_sample(project: Project, sample_id: int) -> Sample:
    conn = project.reader()
    row = conn.execute("SELECT s.id, r.name, s.metric, s.seed, s.params FROM review_samples s JOIN runs r ON "
                       "r.id = s.run_id WHERE s.id = ?", (sample_id,)).fetchone()
    if row is None:
        raise NotFound(f"no review sample {sample_id}")
    found = conn.execute("SELECT run_row_id, item, item_key FROM review_sample_rows WHERE sample_id = ? "
                         "ORDER BY position", (sample_id,)).fetchall()
    try:
        params = json.loads(row[4] or "{}") or {}
    except ValueError:
        params = {}
    params = params if isinstance(params, dict) else {}
    return Sample(row[0], row[1], row[2], row[3], [r for r, _, _ in found], [i for _, i, _ in found],
                  [k for _, _, k in found], mode=sample_mode(row[4]), looks=_looks(params, len(found)),
                  params=params)


def _looks(params: dict[str, Any], size: int) -> list[int]:
    """The looks of a sample's unspent plan, as it stands (core.review.weights.planned_looks reads them the same)."""
    plan = params.get("plan")
    if not isinstance(plan, dict) or plan.get("spent") or plan.get("size") != size:
        return []
    found = sorted(int(m) for m in (plan.get("looks") or [size]) if 0 < int(m) <= size)
    return found if found and found[-1] == size else [*found, size]


def list_samples(project: Project) -> list[dict[str, Any]]:
    """Every sample: `rows` counts its targets (rows, or passages, nuggets, citations: see `unit`)."""
    return [{"id": i, "run": r, "metric": m, "unit": targets.unit(m) if m in METRICS else "row", "seed": s,
             "rows": n, "rated": rated, "created_at": c, "mode": sample_mode(params)}
            for i, r, m, s, n, rated, c, params in project.reader().execute(
                "SELECT s.id, r.name, s.metric, s.seed, COUNT(sr.run_row_id), "
                "(SELECT COUNT(DISTINCT h.run_row_id || ':' || h.passage_rank) FROM human_ratings h "
                " WHERE h.sample_id = s.id AND h.withdrawn_at IS NULL AND h.skipped = 0), s.created_at, s.params "
                "FROM review_samples s "
                "JOIN runs r ON r.id = s.run_id LEFT JOIN review_sample_rows sr ON sr.sample_id = s.id "
                "GROUP BY s.id ORDER BY s.id")]
