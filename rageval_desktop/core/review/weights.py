"""Inverse-probability weights of rated targets, from the design of the sample each rating belongs to.

A rating made outside any sample, or in a sample drawn before 0.3 (no probabilities recorded), weighs 1. Every
sample drawn since records each target's inclusion probability p: n_h / N_h in a `stratified` sample (equal
allocation over slice x judge-score bands, so small strata are over-represented), a probability growing with
the target's priority in `disagreement` and `uncertain` ones. Its ratings weigh 1/p, so agreement statistics (a
weighted confusion matrix) and PPI corrections (a weighted mean) estimate what the whole run would give: the
targets drawn more often count less.
A target rated in several samples takes the weight of its first non-uniform one.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.review.columns import Columns
from rageval_desktop.core.review.targets import target_id, unit
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.project import Project

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def design(project: Project, metric: str) -> dict[tuple[int, str], float]:
    """(run row, target) -> inclusion probability, for the targets of `metric` rated within a sample that recorded
    one; `target` as in core.review.targets.target_id (the passage rank, "0" for the row, or a nugget's text).
    In a stratified sample a stratum's probability is the share of it that was *rated* (r_h / N_h): a sample rated
    halfway stands for its strata with the ratings it has, not with those still to come."""

    return reads.once(project, ("design", metric), lambda: _design(project, metric))


def _design(project: Project, metric: str) -> dict[tuple[int, str], float]:
    kind = unit(metric)
    conn = project.reader()
    rated = _rated(project, metric)
    stratified = {sid for sid, params, *_ in rated if sample_mode(params) == "stratified"}
    drawn: dict[tuple[int, str], int] = {}
    if stratified:
        marks = ",".join("?" * len(stratified))
        drawn = {(sid, key): n for sid, key, n in conn.execute(
            f"SELECT sample_id, stratum, COUNT(*) FROM review_sample_rows WHERE sample_id IN ({marks}) "
            "GROUP BY sample_id, stratum", tuple(stratified))}
    done: dict[tuple[int, str], int] = {}
    for sid, _, key, *_ in rated:
        done[(sid, key)] = done.get((sid, key), 0) + 1
    prefix = _prefixes(project, {sid: params for sid, params, *_ in rated if sid not in stratified})
    out: dict[tuple[int, str], float] = {}
    for sid, _, key, row, item, item_key, p in rated:
        if sid in stratified:
            p = p * done[(sid, key)] / drawn.get((sid, key), done[(sid, key)])
        elif sid in prefix:
            found = prefix[sid].get(f"{row}:{item}")
            if found is None:          # rated ahead of a target before it in the desk's order: not yet in the sample
                continue
            p = found
        out.setdefault((int(row), target_id(kind, int(item), item_key)), float(p))
    return out


def _prefixes(project: Project, samples: dict[int, str]) -> dict[int, dict[str, float]]:
    """For each weighted sample that kept its design: the targets of its rated prefix in key order ("row:item") with
    their probabilities at that size. The first m targets by key are the sequential Poisson sample of size m; a
    target skipped at the desk counts as done (a non-response), one not yet reached ends the prefix."""
    out: dict[int, dict[str, float]] = {}
    conn = project.reader()
    for sid, params in samples.items():
        try:
            found = (json.loads(params or "{}") or {}).get("design")
        except ValueError:
            found = None
        if not isinstance(found, dict) or not found.get("members"):
            continue
        done: dict[str, bool] = {}
        for row, item, skipped in conn.execute(
                "SELECT run_row_id, passage_rank, MIN(skipped) FROM human_ratings WHERE sample_id = ? AND "
                "withdrawn_at IS NULL GROUP BY run_row_id, passage_rank", (sid,)):
            done[f"{row}:{item}"] = not skipped
        members = sorted(found["members"].items(), key=lambda kv: kv[1][0])
        m = 0
        for name, _ in members:
            if name not in done:
                break
            m += 1
        out[sid] = {name: prefix_probability(weight, m, found) for name, (_, weight) in members[:m]
                    if done.get(name)}
    return out


@lru_cache(maxsize=1024)
def sample_mode(params: str | None) -> str:
    """A sample's mode from its stored parameters (samples from before modes existed are stratified)."""
    try:
        return str((json.loads(params or "{}") or {}).get("mode") or "stratified")
    except ValueError:
        return "stratified"


def target_weights(project: Project, metric: str) -> dict[int, float]:
    """Row -> weight (1/p) for the rows of a row metric rated in a non-uniform sample; absent rows weigh 1."""
    return {row: 1.0 / p for (row, target), p in design(project, metric).items() if target == "0"}


def weighted_pairs(project: Project, metric: str, merged: Columns) -> tuple[Columns, NDArray[np.float64] | None, int]:
    """Agreement pairs (core.review.agreement.rated_pairs: `run_row_id`, `target` columns) as the sample's design
    weighs them: (the pairs rated within a sample that recorded its probabilities, their weights 1/p or None when
    those are all equal, how many rated targets were left out). With no such sample every pair stays and weighs the
    same. Ratings outside it — made in no sample, or ahead of the rated prefix of a weighted one — cannot be weighed
    as drawn: they are left out and counted (they used to weigh 1 beside ratings weighing N/n). The audit and the
    false-accept rates both read it."""
    import numpy as np

    chosen = unrepresentative(project, metric)
    left = 0
    if chosen and not merged.empty:
        out = np.array([key in chosen for key in merged.targets()], dtype=bool)
        left = int(merged.take(out).first("run_row_id", "target").sum())
        merged = merged.take(~out)
    found = design(project, metric)
    if not found or merged.empty:
        return merged, None, left
    keys = merged.targets()
    inside = np.array([key in found for key in keys], dtype=bool)
    outside = int(merged.take(~inside).first("run_row_id", "target").sum()) if not inside.all() else 0
    merged = merged.take(inside)
    weights = np.array([1.0 / found[key] for key in keys if key in found])
    return merged, (None if weights.size == 0 or np.allclose(weights, 1.0) else weights), outside + left


NOT_DRAWN = ("chosen", "abstained")   # samples whose rows a person or a judge picked: no probability of the run


def unrepresentative(project: Project, metric: str) -> set[tuple[int, str]]:
    """Targets of `metric` whose standing ratings all come from samples that are not probability samples of the
    run (rows a person chose in triage, rows a selective judge abstained on): they speak for themselves, not for
    the run, and an audit leaves them out (was: with no other sample they were read as if drawn at random, so
    rating the disagreements listed in triage lowered the judge's κ)."""
    return reads.once(project, ("unrepresentative", metric), lambda: _unrepresentative(project, metric))


def _unrepresentative(project: Project, metric: str) -> set[tuple[int, str]]:
    kind = unit(metric)
    marks = ",".join("?" * len(NOT_DRAWN))
    rows = project.reader().execute(
        "SELECT h.run_row_id, h.passage_rank, h.item_key, MIN(CASE WHEN s.id IS NOT NULL AND "
        f"json_extract(s.params, '$.mode') IN ({marks}) THEN 1 ELSE 0 END) FROM human_ratings h "
        "LEFT JOIN review_samples s ON s.id = h.sample_id WHERE h.metric = ? AND h.withdrawn_at IS NULL AND "
        "h.skipped = 0 GROUP BY h.run_row_id, h.passage_rank, h.item_key", (*NOT_DRAWN, metric)).fetchall()
    return {(int(r), target_id(kind, int(i), k)) for r, i, k, only in rows if only}


def plan_state(conn: sqlite3.Connection, sample_id: int) -> tuple[dict[str, Any] | None, int, int]:
    """(the sample's plan or None, its targets, those rated or skipped)."""
    row = conn.execute("SELECT params FROM review_samples WHERE id = ?", (sample_id,)).fetchone()
    try:
        plan = (json.loads(row[0] or "{}") or {}).get("plan") if row else None
    except ValueError:
        plan = None
    size = conn.execute("SELECT COUNT(*) FROM review_sample_rows WHERE sample_id = ?", (sample_id,)).fetchone()[0]
    done = conn.execute(
        "SELECT COUNT(*) FROM review_sample_rows sr WHERE sr.sample_id = ? AND EXISTS (SELECT 1 FROM human_ratings h "
        "WHERE h.sample_id = sr.sample_id AND h.run_row_id = sr.run_row_id AND h.passage_rank = sr.item AND "
        "h.withdrawn_at IS NULL)", (sample_id,)).fetchone()[0]
    return (plan if isinstance(plan, dict) else None), int(size), int(done)


@dataclass(frozen=True)
class Looks:
    """Where an audit of a metric stands in its sample's plan (core.review.evidence: the plan's looks spend
    ALPHA_FINAL, the anytime interval ALPHA_INTERIM). `look`: "final" when every planned look is reached, "interim"
    while some are still ahead (and for good once an extension after the last look spent the plan), "anytime"
    without a plan (ratings from several samples or none, a sample drawn before plans). `reached` holds, for each
    planned look whose prefix of the desk's order is wholly rated or skipped, that prefix's rated targets with their
    inclusion probabilities at that size, and the strata they come from (0 for a weighted sample)."""

    look: str = "anytime"
    left: int = 0                                      # targets of the planned sample still to rate
    sizes: tuple[int, ...] = ()                        # the planned looks, in targets; the last is the whole plan
    reached: tuple[dict[tuple[int, str], float], ...] = ()
    strata: tuple[int, ...] = ()


def planned_looks(project: Project, metric: str) -> Looks:
    """The plan an audit of `metric` follows (see Looks): a plan holds while every standing rating comes from one
    sample whose plan is unspent and whose size is still the plan's."""
    return reads.once(project, ("planned_looks", metric), lambda: _planned_looks(project, metric))


def _planned_looks(project: Project, metric: str) -> Looks:
    conn = project.reader()
    samples = [sid for (sid,) in conn.execute(
        "SELECT DISTINCT sample_id FROM human_ratings WHERE metric = ? AND withdrawn_at IS NULL", (metric,))]
    if len(samples) != 1 or samples[0] is None:
        return Looks()
    sid = int(samples[0])
    plan, size, done = plan_state(conn, sid)
    if plan is None:
        return Looks()
    if plan.get("spent"):             # its last look may have been taken: the interim bound, from then on
        return Looks("interim")
    if size != plan.get("size"):
        return Looks()
    sizes = tuple(int(m) for m in (plan.get("looks") or [size]) if 0 < int(m) <= size)
    if not sizes or sizes[-1] != size:
        sizes = (*sizes, size)
    reached, strata = _prefix_designs(project, metric, sid, sizes)
    return Looks("final" if done >= size else "interim", max(0, size - done), sizes, reached, strata)


def _prefix_designs(project: Project, metric: str, sid: int, sizes: tuple[int, ...]
                    ) -> tuple[tuple[dict[tuple[int, str], float], ...], tuple[int, ...]]:
    """For each planned look whose prefix is wholly rated or skipped: its rated targets -> inclusion probability at
    that size, and its strata. A weighted sample's prefix is by key (the sequential Poisson sample of that size); a
    stratified one's by position (round-robin over strata: a prefix is itself a stratified sample, each stratum
    standing for its N_h with the r_h of it rated)."""
    conn = project.reader()
    kind = unit(metric)
    row = conn.execute("SELECT params FROM review_samples WHERE id = ?", (sid,)).fetchone()
    try:
        params = json.loads(row[0] or "{}") or {} if row else {}
    except ValueError:
        params = {}
    done: dict[tuple[int, int], bool] = {(int(r), int(i)): not skipped for r, i, skipped in conn.execute(
        "SELECT run_row_id, passage_rank, MIN(skipped) FROM human_ratings WHERE sample_id = ? AND withdrawn_at IS "
        "NULL GROUP BY run_row_id, passage_rank", (sid,))}
    members = conn.execute("SELECT run_row_id, item, item_key, stratum, inclusion FROM review_sample_rows WHERE "
                           "sample_id = ? ORDER BY position", (sid,)).fetchall()
    found = params.get("design") if isinstance(params, dict) else None
    weighted = isinstance(found, dict) and bool(found.get("members"))
    if weighted:
        assert isinstance(found, dict)
        order = {name: key for name, (key, _) in found["members"].items()}
        members = sorted(members, key=lambda m: order.get(f"{m[0]}:{m[1]}", float("inf")))
    elif sample_mode(row[0] if row else None) != "stratified":
        return (), ()
    drawn: dict[str, int] = {}
    for m in members:
        drawn[m[3]] = drawn.get(m[3], 0) + 1
    reached: list[dict[tuple[int, str], float]] = []
    strata: list[int] = []
    for m in sizes:
        prefix = members[:m]
        if len(prefix) < m or any((r, i) not in done for r, i, *_ in prefix):
            break
        rated = [p for p in prefix if done[(p[0], p[1])] and (p[4] or 0) > 0]
        out, used = _look(kind, rated, m, found if weighted else None, drawn)
        reached.append(out)
        strata.append(used)
    return tuple(reached), tuple(strata)


def _look(kind: str, rated: list[tuple], m: int, design: dict[str, Any] | None,
          drawn: dict[str, int]) -> tuple[dict[tuple[int, str], float], int]:
    """One look's rated targets -> inclusion probability at size `m`, and its strata: a weighted sample's by the
    sequential Poisson sample of that size (`design`), a stratified one's as r_h / N_h (no strata for a weighted)."""
    out: dict[tuple[int, str], float] = {}
    if design is not None:
        for r, i, key, _, _ in rated:
            weight = design["members"][f"{r}:{i}"][1]
            out[(int(r), target_id(kind, int(i), key))] = prefix_probability(weight, m, design)
        return out, 0
    counts: dict[str, int] = {}
    for p in rated:
        counts[p[3]] = counts.get(p[3], 0) + 1
    for r, i, key, stratum, p in rated:   # stored p is n_h / N_h: r_h / N_h for the prefix
        out[(int(r), target_id(kind, int(i), key))] = float(p) * counts[stratum] / drawn[stratum]
    return out, len(counts)


def strata_used(project: Project, metric: str) -> int:
    """How many strata of stratified samples the standing ratings of `metric` come from (each takes a degree of
    freedom from the audit's effective n: core.review.evidence.stratified_n)."""
    return reads.once(project, ("strata used", metric), lambda: len(
        {(sid, key) for sid, params, key, *_ in _rated(project, metric) if sample_mode(params) == "stratified"}))


def _rated(project: Project, metric: str) -> list[tuple]:
    """(sample, params, stratum, run row, item, item key, inclusion) of every target of `metric` rated (and not
    withdrawn or skipped) within a sample that recorded its inclusion probabilities."""
    return reads.once(project, ("rated", metric), lambda: project.reader().execute(
        "SELECT s.id, s.params, sr.stratum, sr.run_row_id, sr.item, sr.item_key, sr.inclusion FROM review_sample_rows "
        "sr JOIN review_samples s ON s.id = sr.sample_id WHERE s.metric = ? AND sr.inclusion > 0 AND EXISTS (SELECT 1 "
        "FROM human_ratings h WHERE h.sample_id = s.id AND h.run_row_id = sr.run_row_id AND h.passage_rank = sr.item "
        "AND h.withdrawn_at IS NULL AND h.skipped = 0) ORDER BY s.id", (metric,)).fetchall())


def prefix_probability(weight: float, m: int, design: dict[str, Any]) -> float:
    """The inclusion probability of a target of priority `weight` in the sequential Poisson sample of size m drawn
    from the design's population (`inclusion_probabilities` at size m: the largest priorities capped at 1, the rest
    proportional). Only the m largest priorities can be capped at size m, and the design keeps those."""
    if m >= design["population"]:
        return 1.0
    top, total = design["top"], design["total"]
    capped = 0
    while True:
        rest = total - sum(top[:capped])
        room = m - capped
        more = sum(1 for w in top[capped:] if rest > 0 and room * w / rest >= 1.0)
        if more == 0 or capped + more > len(top):
            break
        capped += more
    rest = total - sum(top[:capped])
    if capped and weight >= top[capped - 1]:
        return 1.0
    return min(1.0, (m - capped) * weight / rest) if rest > 0 else 1.0
