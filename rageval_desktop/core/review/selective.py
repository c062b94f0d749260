"""Selective judging (issue 47): a judge decides only the rows it is confident on, with a finite-sample guarantee
that on those rows it agrees with the reviewers' pass/fail at least 1 − α of the time, with probability ≥ 1 − δ.

The method is fixed-sequence testing over confidence levels, as in Trust or Escalate (Jung, Brahman & Choi, ICLR
2025) and Learn-then-Test (Angelopoulos et al. 2021): the levels λ are ordered from the strictest (fewest rows
decided) to the loosest before any rating is read; at each, the null "disagreement on rows with confidence ≥ λ
exceeds α" is tested with the exact binomial tail, at level δ, and the sequence stops at the first level it cannot
reject. λ̂ is the loosest level rejected; the family-wise error is δ without any correction, because a level is only
tested when every stricter one was rejected. A level whose rows cannot reject even with no disagreement (fewer than
log δ / log(1 − α) rows: 22 at α = δ = 0.1) is skipped rather than tested, so the order starts where a rejection is
possible. Ratings drawn with unequal probabilities count as drawn: the binomial uses the weighted disagreement rate
on Kish's effective n (Korn & Graubard's effective-count Clopper–Pearson, continuous in n and x through the
regularised incomplete beta function).

A judgment's confidence is, in this order (`source`): what the judge's kind declares with each verdict (a plug-in
kind's own measure, stored with the judgment); for an LLM judge set to ask for them, the probability its model gave
the verdict's side of the pass mark (token log-probabilities, stored with the judgment); else, once a stability
check of the judge as it is now has been recorded, the share of the row's repeated asks agreeing with its verdict
(Trust or Escalate's simulated annotators; stored with the judgment by core.jobs.checks) — a row never asked again
then has confidence 0 and goes to people; else the score's distance from the pass mark, as a share of the
half-scale: 0 on the mark, 1 at either end. A judge whose scores are all at the ends (a yes/no judge asked once) has
one level on that last measure: it decides every row or none — ask it again, or for log-probabilities, to give it
more.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.stats import wilson
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges.fingerprint import changed, fingerprint
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.review import evidence, sampling
from rageval_desktop.core.review.agreement import rated_pairs
from rageval_desktop.core.review.settings import selective_levels
from rageval_desktop.core.review.targets import unit
from rageval_desktop.core.review.weights import weighted_pairs
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

ALPHA = 0.1               # the disagreement allowed on decided rows
DELTA = 0.1               # the chance that the guarantee fails
ALL = "all"
MOST_ABSTAINED = 2000     # rows in one sample of abstentions


@dataclass
class Selection:
    """What fixed-sequence testing chose on one set of rated rows (see the module)."""

    alpha: float
    delta: float
    level: float | None               # λ̂: decide rows with confidence ≥ level; None: no level is shown safe
    rated: int                        # rated rows it read
    decided: int = 0                  # rated rows at or above λ̂
    disagreement: float | None = None  # their (weighted) pass/fail disagreement with the reviewers
    bound: float | None = None        # its one-sided 1 − δ upper bound (Clopper–Pearson on the effective n)
    coverage: float | None = None     # the (weighted) share of the rated rows decided: an estimate of the run's
    tested: list[dict[str, Any]] = field(default_factory=list)   # each level tested: level, n, errors, p, rejected
    needed: str = ""                  # what would let it decide (empty when it does)
    start: float | None = None        # the level the sequence starts at (start_level: fixed by the unrated rows)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def decidable(metric: str) -> str | None:
    """Why selective judging cannot decide `metric` (None: it can). It decides a row's pass or fail: a metric with
    no pass mark, or judged per passage, nugget or citation, is not one it routes yet."""
    if metric not in METRICS:
        return f"{metric} is computed from other judgments: selective judging decides a judged metric's pass or fail"
    if METRICS[metric].pass_mark is None:
        return f"{metric} has no pass mark: selective judging decides pass or fail"
    if unit(metric) != "row":
        return f"{metric} is judged per {unit(metric)}: selective judging decides whole rows"
    return None


def confidence(scores: ArrayLike, metric: str) -> NDArray[np.float64]:
    """Each score's distance from the metric's pass mark, as a share of the half-scale on that side (0 on the mark,
    1 at the end of the scale)."""
    import numpy as np

    spec = METRICS[metric]
    if spec.pass_mark is None:
        raise RagevalError(f"{metric} has no pass mark: selective judging decides pass or fail")
    s = np.asarray(scores, dtype=float)
    above = max(spec.high - spec.pass_mark, 1e-12)
    below = max(spec.pass_mark - spec.low, 1e-12)
    out = np.where(s >= spec.pass_mark, (s - spec.pass_mark) / above, (spec.pass_mark - s) / below)
    return np.clip(out, 0.0, 1.0)


SOURCES = {"declared": "what the judge's kind declares with each verdict",
           "logprobs": "the probability the model gave its verdict's side of the pass mark (token log-probabilities; "
                       "a verdict without them: 0)",
           "asks": "the share of the row's repeated asks agreeing with the verdict (a row not asked again: 0)",
           "mark": "the score's distance from the pass mark"}


def source(project: Project, judge: Judge) -> str:
    """Where the judge's confidences come from (see the module): 'declared', 'logprobs', 'asks' or 'mark'."""
    if getattr(judge.kind_of, "confidence_from", ""):
        return "declared"
    if judge.params.get("confidence") == "logprobs":
        return "logprobs"
    now = None
    for fp, summary in project.reader().execute(
            "SELECT fingerprint, summary FROM judge_checks WHERE judge_id = ? AND kind = 'stability' ORDER BY id DESC",
            (judge.id,)):
        if not (json.loads(summary).get("confidence") or {}).get("rows"):
            continue
        now = now if now is not None else fingerprint(project, judge)
        if not changed(json.loads(fp), now):
            return "asks"
    return "mark"


def source_text(project: Project, judge: Judge, found: str) -> str:
    if found == "declared":
        said = str(getattr(judge.kind_of, "confidence_from", ""))[:200]
        return f"what the {judge.kind} kind declares: {said}"
    return SOURCES[found]


def stored_confidence(project: Project, judge: Judge, rows: Any) -> dict[int, float | None]:
    """Each row's newest usable verdict's stored confidence (None where none was stored)."""
    out: dict[int, float | None] = {}
    rows = [int(r) for r in rows]
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        out.update({int(r): (None if c is None else float(c)) for r, c in project.reader().execute(
            "SELECT x.run_row_id, x.confidence FROM judgments x WHERE x.id IN (SELECT MAX(j.id) FROM judgments j "
            "WHERE j.judge_id = ? AND j.status = 'ok' AND j.passage_rank = 0 AND j.run_row_id IN "
            f"({','.join('?' * len(chunk))}) GROUP BY j.run_row_id)", (judge.id, *chunk))})
    return out


def confidences(project: Project, judge: Judge, rows: Any, scores: Any, found: str | None = None) -> Any:
    """The judge's confidence on each of `rows` (its `scores` on them), from its source: stored where the source
    stores them (a row without one: 0, left to people), else the distance from the pass mark."""
    import numpy as np

    found = found or source(project, judge)
    if found == "mark":
        return confidence(scores, judge.metric)
    stored = stored_confidence(project, judge, rows)
    return np.array([stored.get(int(r)) or 0.0 for r in rows], dtype=float)


def pool(project: Project, judge: Judge, found: str | None = None) -> NDArray[np.float64]:
    """The judge's confidence on every row it decided (its newest usable verdict each, rated or not): what fixes where
    the selection's sequence starts (start_level), read before any rating and moved by none."""
    import numpy as np

    found = found or source(project, judge)
    got = project.reader().execute(     # the runs' rows only: a stability check's repeated asks are rows of its own
        "SELECT x.score, x.confidence FROM judgments x WHERE x.id IN (SELECT MAX(j.id) FROM judgments j JOIN run_rows "
        "rr ON rr.id = j.run_row_id JOIN runs r ON r.id = rr.run_id WHERE j.judge_id = ? AND j.status = 'ok' AND "
        "j.passage_rank = 0 AND r.purpose = 'run' GROUP BY j.run_row_id)", (judge.id,)).fetchall()
    if found == "mark":
        return confidence([float(v) for v, _ in got], judge.metric)
    return np.array([float(c or 0.0) for _, c in got], dtype=float)


GRID = tuple(round(1.0 - i / 40, 3) for i in range(41))   # the levels tested, strictest first: fixed for good
START_SHARE = 0.25        # the sequence starts at the strictest level deciding at least this share of the judge's rows


def smallest_n(alpha: float, delta: float) -> int:
    """The fewest rows at which a level can be shown safe at all (every one of them agreeing), by the test
    `p_value` makes."""
    n = int(math.ceil(math.log(delta) / math.log(1.0 - alpha)))     # the fixed-n test's, a floor for this one
    while p_value(0.0, n, alpha) > delta:
        n += 1
    return n


def p_value(errors: float, n: float, alpha: float) -> float:
    """An anytime-valid p-value for "disagreement > α" with `errors` of `n` rated rows (continuous in both, for
    effective counts): 1 / the mixture likelihood ratio of agreement rates above 1 − α (uniform) against 1 − α,
    Robbins' beta-binomial mixture (core.review.evidence.above_ratio). Under the null the ratio is a nonnegative
    supermartingale, so P(it ever reaches 1/δ) ≤ δ (Ville): a licence read after every rating keeps its δ. (The
    exact binomial tail, valid at one planned n only, licensed beyond α at some look in 15-33% of audits read every
    ten ratings, against δ = 10%: issue 75, bench/bench_selective.py's repeated-look table.)"""
    if n <= 0 or errors >= n:
        return 1.0
    return min(1.0, math.exp(-evidence.above_ratio(n - errors, n, 1.0 - alpha)))


def upper_bound(errors: float, n: float, delta: float) -> float:
    """The one-sided upper bound of a rate with `errors` of `n` that `p_value`'s test gives, valid at every n at once
    with probability 1 − δ: the least rate r whose null ("disagreement ≥ r") the mixture rejects at δ — under α
    exactly when the level is shown safe (continuous in both)."""
    from scipy.optimize import brentq

    if n <= 0 or errors >= n:
        return 1.0
    limit = math.log(1.0 / delta)

    def excess(rate: float) -> float:
        return evidence.above_ratio(n - errors, n, 1.0 - rate) - limit

    low, high = min(max(errors / n, 1e-9), 1 - 1e-9), 1 - 1e-9
    if excess(high) < 0:
        return 1.0
    if excess(low) >= 0:
        return low
    return float(brentq(excess, low, high))


def start_level(pool: ArrayLike) -> float:
    """Where the sequence starts: the strictest level of GRID under which at least START_SHARE of `pool` falls —
    the confidences of every row the judge decided, known before anyone rates and unmoved by ratings. (Starting at
    the strictest level the rated rows could test moved the start stricter as ratings came, each start a new null:
    11.7% of audits licensed beyond α at some look where the promise is δ = 10%.)"""
    import numpy as np

    c = np.asarray(pool, dtype=float)
    c = c[np.isfinite(c)]
    if c.size == 0:
        return GRID[-1]
    return next(g for g in GRID if float(np.mean(c >= g)) >= START_SHARE)


def _waiting(level: float, start: float, first: int, n_eff: float, pool: ArrayLike, alpha: float) -> str:
    """What a sequence waiting at `level` needs, said as what the judged rows can still give."""
    import numpy as np

    where = f"at confidence ≥ {level:g}, where the sequence {'starts' if level == start else 'has reached'}"
    within = int(np.sum(np.asarray(pool, dtype=float) >= level))
    said = (f"{first} agreeing ratings are the fewest that can show disagreement under {alpha:g} {where}, and the "
            f"judge decided {within} row(s) there in all: judge and rate more rows (a larger run)") if within < first \
        else (f"{first - int(n_eff)} more rated row(s) {where}: {first} agreeing ratings are the fewest that can show "
              f"disagreement under {alpha:g} there")
    return said


def select(conf: Any, agree: Any, weights: Any | None = None, *, pool: ArrayLike, alpha: float = ALPHA,
           delta: float = DELTA) -> Selection:
    """Fixed-sequence testing on rated rows: `conf` each row's confidence, `agree` whether the judge's pass/fail
    matched the reviewers', `weights` 1/p when the rows were drawn with unequal probabilities, `pool` the
    confidences of every row the judge decided (rated or not: they fix where the sequence starts, start_level)."""
    import numpy as np

    if not (0 < alpha < 1 and 0 < delta < 1):
        raise RagevalError("alpha and delta must lie between 0 and 1")
    c = np.asarray(conf, dtype=float)
    a = np.asarray(agree, dtype=bool)
    w = np.ones(c.size) if weights is None else np.asarray(weights, dtype=float)
    out = Selection(alpha=alpha, delta=delta, level=None, rated=int(c.size))
    first = smallest_n(alpha, delta)
    if c.size < first:
        out.needed = (f"{first - c.size} more rated row(s): {first} agreeing ratings are the fewest that can show "
                      f"disagreement under {alpha:g} with probability {1 - delta:g}")
        return out
    # strictest first (fewest rows decided), on a grid fixed before any rating and for good, from a start no rating
    # moves: the same sequence at every look, so its first false null is the same one and Ville's δ holds for it
    out.start = start_level(pool)
    for level in (g for g in GRID if g <= out.start):
        inside = c >= level
        wi = w[inside]
        n_eff = evidence.effective_n(wi, int(inside.sum())) if weights is not None else float(inside.sum())
        if n_eff < first:                                        # cannot reject yet: the sequence waits here
            out.needed = "" if out.level is not None else _waiting(level, out.start, first, n_eff, pool, alpha)
            break
        rate = float(np.sum(wi * ~a[inside]) / np.sum(wi))
        errors = rate * n_eff
        p = p_value(errors, n_eff, alpha)
        rejected = p <= delta
        out.tested.append({"level": float(level), "n": int(inside.sum()), "effective_n": n_eff,
                           "disagreement": rate, "p_value": p, "rejected": bool(rejected)})
        if not rejected:
            break
        out.level, out.decided, out.disagreement = float(level), int(inside.sum()), rate
        out.bound = upper_bound(errors, n_eff, delta)
        out.coverage = float(np.sum(wi) / np.sum(w))
    if out.level is None:
        top = out.tested[0] if out.tested else None
        if top is not None:
            more = rows_to_show(top["disagreement"], alpha, delta)
            out.needed = (f"at its strictest level the judge disagrees with the reviewers on {top['disagreement']:.0%} "
                          f"of {top['n']} rated rows; " + (
                              f"about {more} rated rows there would show it safe if that rate holds" if more else
                              f"that is not clearly under {alpha:g}: only a judge whose confidence separates its "
                              "errors can decide alone"))
    return out


WHOLE_RUN = 0.95         # a level deciding at least this (weighted) share of the rated rows decides the whole run


def decides_every_row(found: Selection) -> bool:
    """A level that decides every rated row, or so nearly that people keep under 5% of them: a licence for the whole
    run by another door (core.review.licence holds it to the whole run's bar, and an audit that would retire the judge
    retires it). On a fixed grid the loosest level rejected need not reach the least confident rated row: a token-F1
    judge at lower bound 0.54 decided 99.3%."""
    return found.level is not None and (found.decided >= found.rated or (found.coverage or 0.0) >= WHOLE_RUN)


def rows_to_show(rate: float, alpha: float, delta: float, most: int = 5000) -> int | None:
    """The rated rows at which a disagreement rate of `rate` would reject the null at level δ (None: not under
    `most`, or the rate is not under α)."""
    if rate >= alpha:
        return None
    n = smallest_n(alpha, delta)
    while n <= most:
        if p_value(rate * n, n, alpha) <= delta:
            return n
        n = max(n + 1, int(n * 1.05))
    return None


def calibration(project: Project, judge: Judge) -> dict[str, Any]:
    """The audit's rated rows for a judge, as selective judging reads them: run row, judge score, the reviewers'
    score, the slice, and the weight 1/p of the sample's design (all 1 when equal), with how many rated rows were
    left out (core.review.weights.weighted_pairs)."""
    import numpy as np

    merged, _latest = rated_pairs(project, judge)
    outside = 0
    weights = None
    if not merged.empty:
        merged, weights, outside = weighted_pairs(project, judge.metric, merged)
    return {"rows": np.asarray(merged["run_row_id"], dtype=np.int64),
            "judge": np.asarray(merged["judge_score"], dtype=float),
            "human": np.asarray(merged["human_score"], dtype=float),
            "slice": np.array(["—" if s is None else s for s in merged["slice"].tolist()], dtype=object),
            "weights": None if weights is None else np.asarray(weights, dtype=float), "outside": outside}


def selective(project: Project, judge: Judge, *, alpha: float | None = None, delta: float | None = None
              ) -> dict[str, Any]:
    """The judge's selective licence from its audit's ratings: overall and per slice (where a slice has enough
    rated rows), the level λ̂, the disagreement on decided rows with its bound, and the share of each run's rows it
    decides there. Read-only. Overall it is `stages` for a cascade of one. α and δ: the project's unless given."""
    alpha, delta = selective_levels(project, alpha, delta)
    why = decidable(judge.metric)
    if why:
        raise RagevalError(f"{judge.name}: {why}")
    mark = METRICS[judge.metric].pass_mark
    assert mark is not None
    cal = calibration(project, judge)
    found_source = source(project, judge)
    out: dict[str, Any] = {"judge": judge.name, "metric": judge.metric, "alpha": alpha, "delta": delta,
                           "confidence": source_text(project, judge, found_source), "source": found_source,
                           "slices": {}, "runs": {}, "outside_sample": cal["outside"],
                           "could_ask": found_source == "mark" and judge.calls_llm}
    if cal["rows"].size == 0:
        out["slices"][ALL] = Selection(alpha, delta, None, 0, needed="no rated rows yet").as_dict()
        return out
    conf = confidences(project, judge, cal["rows"], cal["judge"], found_source)
    if found_source != "mark":
        out["rated_without_confidence"] = int(sum(v is None for v in
                                                  stored_confidence(project, judge, cal["rows"]).values()))
    agree = (cal["judge"] >= mark) == (cal["human"] >= mark)
    w, slices = cal["weights"], cal["slice"]
    judged = pool(project, judge, found_source)
    found = {ALL: select(conf, agree, w, pool=judged, alpha=alpha, delta=delta)}
    for name in sorted(set(slices)):
        inside = slices == name
        found[name] = select(conf[inside], agree[inside], None if w is None else w[inside], pool=judged, alpha=alpha,
                             delta=delta)
    out["slices"] = {name: f.as_dict() for name, f in found.items()}
    level = found[ALL].level
    for (run,) in project.reader().execute("SELECT name FROM runs WHERE purpose = 'run' ORDER BY id"):
        routed = route(project, [judge], [level], run)
        out["runs"][run] = {"rows": len(routed),
                            "decided": sum(1 for v in routed.values() if v is not None) / max(1, len(routed))}
    return out


def latest_scores(project: Project, judge: Judge, rid: int) -> dict[int, float]:
    """Run row of run `rid` -> the judge's newest usable score on it."""
    return {int(r): float(v) for r, v in project.reader().execute(
        "SELECT x.run_row_id, x.score FROM judgments x WHERE x.id IN (SELECT MAX(j.id) FROM judgments j JOIN run_rows "
        "rr ON rr.id = j.run_row_id WHERE j.judge_id = ? AND rr.run_id = ? AND j.status = 'ok' AND j.passage_rank = 0 "
        "GROUP BY j.run_row_id)", (judge.id, rid))}


def chain_metric(judges: list[Judge]) -> str:
    """The one metric a cascade's judges decide (raises when they differ, repeat, or it cannot be decided)."""
    if not judges:
        raise RagevalError("name at least one judge")
    metrics = {j.metric for j in judges}
    if len(metrics) > 1:
        raise RagevalError("a cascade's judges must judge one metric (they decide the same pass or fail); got "
                           + ", ".join(sorted(metrics)))
    if len({j.name for j in judges}) < len(judges):
        raise RagevalError("a judge appears twice in the cascade")
    metric = judges[0].metric
    why = decidable(metric)
    if why:
        raise RagevalError(why)
    return metric


def stages(project: Project, judges: list[Judge], *, alpha: float | None = None, delta: float | None = None
           ) -> list[Selection]:
    """A cascade's levels: each judge in turn, cheapest first, calibrated on the rated rows every judge before it
    left (abstained on, or did not judge), by fixed-sequence testing at δ / (number of judges) — so that, with
    probability at least 1 − δ, every stage's decided rows agree with people at least 1 − α of the time. One judge:
    the overall selection of `selective`. α and δ: the project's unless given."""
    import numpy as np

    alpha, delta = selective_levels(project, alpha, delta)

    metric = chain_metric(judges)
    mark = METRICS[metric].pass_mark
    assert mark is not None
    frames: dict[str, dict[int, float]] = {}
    weight: dict[int, float] = {}
    human: dict[int, float] = {}
    for j in judges:
        cal = calibration(project, j)
        ws = np.ones(cal["rows"].size) if cal["weights"] is None else cal["weights"]
        frames[j.name] = dict(zip(cal["rows"].tolist(), cal["judge"].tolist(), strict=True))
        for r, hs, wi in zip(cal["rows"].tolist(), cal["human"].tolist(), ws.tolist(), strict=True):
            human[r], weight[r] = hs, wi
    rows = sorted(human)
    confs = [confidences(project, j, rows, [frames[j.name].get(r, mark) for r in rows]) for j in judges]
    judged = [np.array([r in frames[j.name] for r in rows], dtype=bool) for j in judges]
    agrees = [np.array([(frames[j.name].get(r, mark) >= mark) == (human[r] >= mark) for r in rows], dtype=bool)
              for j in judges]
    weighted = any(abs(v - 1.0) > 1e-12 for v in weight.values())
    w = np.array([weight[r] for r in rows]) if weighted else None
    return cascade_levels([np.where(j, c, np.nan) for j, c in zip(judged, confs, strict=True)], agrees, w,
                          pools=[pool(project, j) for j in judges], alpha=alpha, delta=delta)


def cascade_levels(confs: list[Any], agrees: list[Any], weights: Any | None = None, *, pools: list[ArrayLike],
                   alpha: float = ALPHA, delta: float = DELTA) -> list[Selection]:
    """The cascade's selections on one set of rated rows: `confs[k]` judge k's confidence on each row (NaN where it
    did not judge), `agrees[k]` whether its pass/fail matched the reviewers', `pools[k]` its confidence on every row
    it decided (`pool`). Stage k is calibrated on the rows every stage before it left, at δ / stages."""
    import numpy as np

    left = np.ones(len(confs[0]), dtype=bool) if confs else np.array([], bool)
    out = []
    for conf, agree, judged in zip(confs, agrees, pools, strict=True):
        c = np.asarray(conf, dtype=float)
        here = left & np.isfinite(c)
        found = select(c[here], np.asarray(agree, bool)[here], None if weights is None else np.asarray(weights)[here],
                       pool=judged, alpha=alpha, delta=delta / len(confs))
        out.append(found)
        if found.level is not None:
            left &= ~(np.isfinite(c) & (c >= found.level))
    return out


def route(project: Project, judges: list[Judge], levels: list[float | None], run: str) -> dict[int, str | None]:
    """Each row of `run`: the name of the first judge of the cascade that decides it at its level, or None (the
    desk)."""
    rid = find_run(project, run)
    rows = [int(r) for (r,) in project.reader().execute("SELECT id FROM run_rows WHERE run_id = ? ORDER BY id",
                                                        (rid,))]
    out: dict[int, str | None] = dict.fromkeys(rows)
    for j, level in zip(judges, levels, strict=True):
        if level is None:
            continue
        scores = latest_scores(project, j, rid)
        waiting = [r for r in rows if out[r] is None and r in scores]
        if not waiting:
            continue
        conf = confidences(project, j, waiting, [scores[r] for r in waiting])
        for r, c in zip(waiting, conf, strict=True):
            if c >= level:
                out[r] = j.name
    return out


def cascade(project: Project, judges: list[Judge], *, alpha: float | None = None, delta: float | None = None,
            runs: list[str] | None = None) -> dict[str, Any]:
    """A cascade's stages and, per run, the share of rows each judge decides and the share left to the desk."""
    alpha, delta = selective_levels(project, alpha, delta)
    found = stages(project, judges, alpha=alpha, delta=delta)
    levels = [f.level for f in found]
    names = runs if runs is not None else [r for (r,) in project.reader().execute(
        "SELECT name FROM runs WHERE purpose = 'run' ORDER BY id")]
    shares = {}
    for run in names:
        routed = route(project, judges, levels, run)
        total = max(1, len(routed))
        shares[run] = {"rows": len(routed), **{j.name: sum(1 for v in routed.values() if v == j.name) / total
                                               for j in judges},
                       "desk": sum(1 for v in routed.values() if v is None) / total}
    return {"judges": [j.name for j in judges], "metric": judges[0].metric, "alpha": alpha, "delta": delta,
            "stages": [{"judge": j.name, **f.as_dict()} for j, f in zip(judges, found, strict=True)], "runs": shares}


def abstained_sample(project: Project, judges: Judge | list[Judge], run: str, *, size: int | None = None,
                     alpha: float | None = None, delta: float | None = None, seed: int = 0) -> sampling.Sample:
    """A review sample of the rows a selective judge — or a cascade, cheapest first — leaves to people in `run`:
    all of them, or a uniform `size` of them (each with probability size / abstained, recorded), so that as they
    are rated `combined` can stand for every abstention. It is not a sample of the run, and the audit leaves it out
    (core.review.weights.NOT_DRAWN)."""
    import numpy as np

    chain = judges if isinstance(judges, list) else [judges]
    alpha, delta = selective_levels(project, alpha, delta)
    found = stages(project, chain, alpha=alpha, delta=delta)
    if all(f.level is None for f in found):
        why = "; ".join(f"{j.name}: {f.needed}" for j, f in zip(chain, found, strict=True))
        raise RagevalError(f"{' → '.join(j.name for j in chain)} decides no rows at α {alpha:g}, δ {delta:g} ({why}):"
                           " every row needs a reviewer, so draw an ordinary sample")
    levels = [f.level for f in found]
    routed = route(project, chain, levels, run)
    rows = [r for r, v in routed.items() if v is None]
    if not rows:
        raise RagevalError(f"{' → '.join(j.name for j in chain)} decides every row of {run}: nothing is left to "
                           "people")
    take = min(len(rows), size or len(rows), MOST_ABSTAINED)
    rng = np.random.default_rng(seed)
    # in a random order: the desk shows a sample in its order, so the rows rated so far are a uniform share of the
    # abstentions at every point (in the run's order, a half-rated sample stood for the run's first rows only)
    picked = [int(r) for r in rng.permutation(rng.choice(rows, take, replace=False) if take < len(rows) else rows)]
    names = [j.name for j in chain]
    extra = {"judge": names[0] if len(names) == 1 else " → ".join(names), "judges": names, "levels": levels,
             "level": levels[0], "alpha": alpha, "delta": delta, "abstained": len(rows), "rows_in_run": len(routed),
             "inclusion": take / len(rows), "seed": seed}
    return sampling.sample_of_rows(project, run, chain[0].metric, picked, f"abstained by {extra['judge']}",
                                   mode="abstained", extra=extra, most=MOST_ABSTAINED)


def select_for(project: Project, judge: Judge, *, alpha: float | None = None, delta: float | None = None
               ) -> Selection:
    """The overall selection of `selective`, as a Selection (α and δ: the project's unless given)."""
    return stages(project, [judge], alpha=alpha, delta=delta)[0]


def combined(project: Project, judges: Judge | list[Judge], run: str) -> dict[str, Any] | None:
    """The run's pass rate from a selective judge (or a cascade) and the desk: each judge's verdict on the rows it
    decides, the reviewers' on the abstained rows they rated (standing for every abstention: a uniform sample of
    them), from the newest abstention sample of these judges on this run, at the levels it was drawn with. Its
    interval adds the judges' guarantee (at most α of the decided rows disagree, with probability 1 − δ: ±
    α·decided/rows) to Wilson's 95% interval of the reviewers' pass share on the abstentions. None without such a
    sample."""
    import numpy as np

    chain = judges if isinstance(judges, list) else [judges]
    names = [j.name for j in chain]
    label = names[0] if len(names) == 1 else " → ".join(names)
    rid = find_run(project, run)
    found = desk_sample(project, rid, chain[0].metric, label)
    if found is None:
        return None
    sid, params = found
    mark = METRICS[chain[0].metric].pass_mark
    assert mark is not None
    levels = [None if v is None else float(v) for v in params.get("levels", [params["level"]])]
    alpha, delta = float(params["alpha"]), float(params["delta"])
    routed = route(project, chain, levels, run)
    scores = {j.name: latest_scores(project, j, rid) for j in chain}
    decided = {r: v for r, v in routed.items() if v is not None}
    passes = sum(1 for r, v in decided.items() if scores[v][r] >= mark)
    abstained = len(routed) - len(decided)
    human = list(desk_ratings(project, sid, chain[0].metric).values())
    out: dict[str, Any] = {"run": run, "judge": label, "sample_id": sid, "levels": levels, "level": levels[0],
                           "alpha": alpha, "delta": delta, "rows": len(routed), "decided": len(decided),
                           "by_judge": {n: sum(1 for v in decided.values() if v == n) for n in names},
                           "judge_passes": passes, "abstained": abstained, "rated": len(human),
                           "drifted": abstained != params["abstained"]}
    if not human:
        out.update({"pass_rate": None, "ci": [None, None]})
        return out
    human_passes = int(np.sum(np.asarray(human) >= mark))
    out.update(combine(passes, len(decided), len(routed), human_passes, len(human), abstained, alpha))
    return out


def desk_sample(project: Project, rid: int, metric: str, label: str) -> tuple[int, dict[str, Any]] | None:
    """The newest sample of the abstentions of a judge (or a cascade, 'J1 → J2') on a run: (its id, its params)."""
    found = project.reader().execute(
        "SELECT id, params FROM review_samples WHERE run_id = ? AND metric = ? AND json_extract(params, '$.mode') = "
        "'abstained' AND json_extract(params, '$.judge') = ? ORDER BY id DESC LIMIT 1", (rid, metric, label)).fetchone()
    return None if found is None else (int(found[0]), json.loads(found[1]))


def desk_ratings(project: Project, sample_id: int, metric: str) -> dict[int, float]:
    """The reviewers' score (mean of their standing ratings) on each rated row of a sample of abstentions. Ratings made
    in the sample count; ratings made elsewhere count only once every row of the sample has one — then the sample is
    rated whole, however its ratings came; a part rated elsewhere would stand for the rows another sample chose, not
    for a uniform share of the abstentions."""
    def read(only_here: bool) -> dict[int, float]:
        return {int(r): float(v) for r, v in project.reader().execute(
            "SELECT h.run_row_id, AVG(h.score) FROM human_ratings h JOIN review_sample_rows s ON s.run_row_id = "
            "h.run_row_id AND s.sample_id = ? WHERE h.metric = ? AND h.withdrawn_at IS NULL AND h.skipped = 0 AND "
            "h.passage_rank = 0" + (" AND h.sample_id = ?" if only_here else "") + " GROUP BY h.run_row_id",
            (sample_id, metric, sample_id) if only_here else (sample_id, metric))}

    everywhere = read(False)
    size = project.reader().execute("SELECT COUNT(*) FROM review_sample_rows WHERE sample_id = ?",
                                    (sample_id,)).fetchone()[0]
    return everywhere if len(everywhere) >= size else read(True)


def combine(judge_passes: int, decided: int, rows: int, human_passes: int, rated: int, abstained: int,
            alpha: float) -> dict[str, Any]:
    """The pass rate of `rows` rows: the judge's passes on the `decided` ones, and on the `abstained` ones the
    reviewers' pass share among the `rated` (a uniform sample of them). Interval: the reviewers' Wilson 95% interval
    (exact when every abstention is rated), widened by the judge's guarantee — at most α of its decided rows
    disagree with people, so its passes are within ± α·decided (with probability 1 − δ)."""
    share = human_passes / rated
    low, high = wilson(human_passes, rated) if rated < abstained else (share, share)
    slack = alpha * decided
    return {"human_pass_share": share, "pass_rate": (judge_passes + share * abstained) / rows,
            "ci": [max(0.0, (judge_passes - slack + low * abstained) / rows),
                   min(1.0, (judge_passes + slack + high * abstained) / rows)]}


def describe(found: dict[str, Any]) -> str:
    """The selective licence in words (display rounding)."""
    lines = [f"{found['judge']} ({found['metric']}): decide only where confident, agreement with the reviewers' "
             f"pass/fail ≥ {1 - found['alpha']:.0%} on decided rows with probability ≥ {1 - found['delta']:.0%}",
             f"  confidence: {found['confidence']}"]
    if found.get("could_ask"):
        lines.append("  (an LLM judge's confidence can come from its endpoint's log-probabilities — a judge added "
                     "with the parameter confidence=logprobs — or from asking it again: a stability check of the "
                     "run, at a temperature above 0, stores one with each verdict asked)")
    if found.get("rated_without_confidence"):
        lines.append(f"  {found['rated_without_confidence']} rated rows were never asked again (confidence 0, left "
                     "to people): a stability check whose sample takes in the whole run gives them one")
    for name, s in found["slices"].items():
        if s["level"] is None:
            lines.append(f"  {name}: decides no rows ({s['rated']} rated) — {s['needed']}")
        else:
            lines.append(f"  {name}: decides rows with confidence ≥ {s['level']:.2f}: {s['decided']} of {s['rated']} "
                         f"rated ({s['coverage']:.0%}), disagreement {s['disagreement']:.1%} (bound "
                         f"{s['bound']:.1%})")
    for run, r in found["runs"].items():
        lines.append(f"  run {run}: decides {r['decided']:.0%} of its {r['rows']} rows; the rest need a reviewer")
    if "combined" in found:
        lines.append("  " + combined_text(found["combined"]))
    return "\n".join(lines)


def describe_cascade(found: dict[str, Any]) -> str:
    """A cascade in words (display rounding)."""
    lines = [f"cascade {' → '.join(found['judges'])} → desk ({found['metric']}): each decides where sure among "
             f"the rows the ones before it left; agreement with the reviewers' pass/fail ≥ {1 - found['alpha']:.0%} on "
             f"every judge's decided rows with probability ≥ {1 - found['delta']:.0%} (δ split between them)"]
    lines += [stage_line(s) for s in found["stages"]]
    for run, r in found["runs"].items():
        parts = ", ".join(f"{name} {r[name]:.0%}" for name in found["judges"])
        lines.append(f"  run {run} ({r['rows']} rows): {parts}, desk {r['desk']:.0%}")
    if "combined" in found:
        lines.append("  " + combined_text(found["combined"]))
    return "\n".join(lines)


def stage_line(s: dict[str, Any]) -> str:
    """One stage of a cascade in words: its level, the rated rows that reach it and what it decides of them."""
    if s["level"] is None:
        return f"  {s['judge']}: decides no rows ({s['rated']} rated rows reach it) — {s['needed']}"
    return (f"  {s['judge']}: confidence ≥ {s['level']:.2f}: {s['decided']} of the {s['rated']} rated rows that "
            f"reach it, disagreement {s['disagreement']:.1%} (bound {s['bound']:.1%})")


def combined_text(c: dict[str, Any] | None) -> str:
    """`combined` in words."""
    if c is None:
        return ("no sample of its abstentions on this run yet: rageval sample --abstained JUDGE --run RUN draws one "
                "for the desk")
    who = "the judge decides" if " → " not in c["judge"] else "the cascade decides"
    head = (f"run {c['run']}: {who} {c['decided']} of {c['rows']} rows ({c['judge_passes']} pass); "
            f"reviewers rated {c['rated']} of its {c['abstained']} abstentions (sample {c['sample_id']})")
    if c.get("drifted"):
        head += "; its abstentions changed since the sample was drawn (judged again?): draw a new one"
    if c["pass_rate"] is None:
        return head + "; rate some to see the run's pass rate"
    text = (head + f"; pass rate {c['pass_rate']:.1%} [{c['ci'][0]:.1%}, {c['ci'][1]:.1%}] — the interval holds the "
            f"judge's guarantee (±{c['alpha']:g} of its decided rows, probability {1 - c['delta']:.0%}) and the "
            "reviewers' 95% interval")
    corrected = c.get("corrected") or {}
    if corrected.get("pass_rate") is not None:
        text += (f"; as the gate reads it (its error on the run's {corrected['rated_decided']:g} rated decided rows "
                 f"corrected): {corrected['pass_rate']:.1%} [{corrected['ci'][0]:.1%}, {corrected['ci'][1]:.1%}]")
    elif corrected.get("why"):
        text += f"; the gate's reading: {corrected['why']}"
    return text
