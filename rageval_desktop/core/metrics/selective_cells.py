"""The gate's selective estimator (issue 47): a judge metric compared as each run's pass rate, read from a selective
judge's verdicts on the rows it decides and the reviewers' on the rows it leaves to the desk.

A run's rows in a slice fall in two strata: the D rows the judge decides (confidence ≥ λ̂, core.review.selective),
of which it passes JP, and the A = N − D it leaves to people. The reviewers' pass share h on the A comes from the
desk's sample of the run's abstentions (a uniform sample; exact when every abstention is rated). On the D the judge's
verdicts are corrected by its net error b there — the reviewers' pass minus the judge's on the run's own rated rows
of the slice that it decides, weighed as drawn: prediction-powered inference within the decided stratum
(core.metrics.ppi's rectifier, with its floor for rare errors that few ratings miss). So

    pass rate = (JP + D·b + A·h) / N,     Var = (D/N)² Var b · (1 − n_b/D) + (A/N)² Var h · (1 − m/A)

with finite-population factors (no variance from what was rated whole), each run on its own ratings: nothing is
assumed to travel between runs or slices. Two runs' cells are candidate − baseline, their variances added (separate
rows, separate ratings), with Student's t on the fewest effective ratings. The selective part is where the ratings go:
few on the rows the judge decides (its errors there are rare: the guarantee), the rest where it abstains.

The guarantee (agreement ≥ 1 − α on decided rows with probability ≥ 1 − δ) and each run's coverage D/N travel with
every cell, so a slice's number states where it came from. A cell has no number, and says why, when the judge decides
nothing, a run has no sample of its abstentions drawn at the judge's present level, a slice's abstentions have no
rating, or a slice has too few rated rows that the judge decides. bench/bench_selective_gate.py measures coverage,
false alarms and power.
"""

from __future__ import annotations

import math
from typing import Any

from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.metrics.ppi import _floored, critical, rectifier
from rageval_desktop.core.review import selective
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

ALL = "all"
POINTS = 100.0
MIN_RATED_DECIDED = 5      # rated rows the judge decides, per run and slice, before its error there is read

Fitted = tuple[float, float, float, int]     # b, Var b, effective n, n


def correction(human_pass: Any, judge_pass: Any, weights: Any | None = None) -> Fitted:
    """(b, Var b, effective n, n): the reviewers' pass minus the judge's, in points, on rated rows the judge decides,
    weighed as drawn — the prediction-powered rectifier of the decided stratum; pure, for the bench."""
    import numpy as np

    d = POINTS * (np.asarray(human_pass, dtype=float) - np.asarray(judge_pass, dtype=float))
    mean, var, eff, n, _ = rectifier(d, weights)
    return mean, var, eff, n


def _calibration(project: Project, judge: Judge) -> dict[int, tuple[bool, bool, float]]:
    """Each rated row of the audit: (the reviewers' pass, the judge's pass, its weight 1/p as drawn)."""
    mark = METRICS[judge.metric].pass_mark
    assert mark is not None
    cal = selective.calibration(project, judge)
    weights = cal["weights"] if cal["weights"] is not None else [1.0] * len(cal["rows"])
    return {int(r): (bool(h >= mark), bool(j >= mark), float(w))
            for r, h, j, w in zip(cal["rows"], cal["human"], cal["judge"], weights, strict=True)}


def _run_parts(project: Project, judge: Judge, run: str, level: float, questions: set[int] | None,
               slice_of: dict[int, str], rated: dict[int, tuple[bool, bool, float]]) -> dict[str, Any]:
    """Per slice of the run (its rows linked to `questions`, golden rowids; None: every row): N, D, JP, A, the desk's
    rated abstentions (points) and the rated rows the judge decides (`cal`: reviewers' pass, judge's pass, weight);
    or why none."""
    mark = METRICS[judge.metric].pass_mark
    assert mark is not None
    rid = find_run(project, run)
    found = selective.desk_sample(project, rid, judge.metric, judge.name)
    sid, drawn_at = (None, None) if found is None else (found[0], found[1].get("level"))
    if sid is None:
        return {"why": f"no sample of {judge.name}'s abstentions on {run}: draw one for the desk (rageval sample "
                       f"--abstained {judge.name} --run {run}) and rate it"}
    if drawn_at is None or abs(drawn_at - level) > 1e-12:
        return {"why": f"the desk's sample of {run} was drawn at another confidence level than {judge.name}'s "
                       f"present one ({level:.2f}): draw it again and rate it"}
    linked = dict(project.reader().execute(
        "SELECT rr.id, g.rowid FROM run_rows rr LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.run_id = ?",
        (rid,)))
    routed = selective.route(project, [judge], [level], run)
    scores = selective.latest_scores(project, judge, rid)
    human = selective.desk_ratings(project, sid, judge.metric)
    parts: dict[str, dict[str, Any]] = {}
    for row, who in routed.items():
        key = linked.get(row)
        if questions is not None and key not in questions:
            continue
        name = slice_of.get(key, "—") if key is not None else "—"
        p = parts.setdefault(name, {"N": 0, "D": 0, "JP": 0, "A": 0, "rated": [], "cal": []})
        p["N"] += 1
        if who is not None:
            p["D"] += 1
            p["JP"] += int(scores[row] >= mark)
            if row in rated:
                p["cal"].append(rated[row])
        else:
            p["A"] += 1
            if row in human:
                p["rated"].append(POINTS * float(human[row] >= mark))
    return {"sample": sid, "slices": parts}


def _merged(parts: dict[str, dict[str, Any]], members: set[str]) -> dict[str, Any] | None:
    found = [parts[m] for m in members if m in parts]
    if not found:
        return None
    return {"N": sum(p["N"] for p in found), "D": sum(p["D"] for p in found), "JP": sum(p["JP"] for p in found),
            "A": sum(p["A"] for p in found), "rated": [v for p in found for v in p["rated"]],
            "cal": [v for p in found for v in p["cal"]]}


def fit(p: dict[str, Any]) -> Fitted:
    """The correction of one run's slice from its rated decided rows (`cal`)."""
    if not p["cal"]:
        return correction([], [])
    human, judge, weights = zip(*p["cal"], strict=True)
    return correction(human, judge, weights)


def _side(p: dict[str, Any], fitted: Fitted) -> tuple[float, float]:
    """(pass rate in points, its variance) of one run's slice (see the module)."""
    bias, var_bias, _eff, n_bias = fitted
    n, d, a = p["N"], p["D"], p["A"]
    if a == 0:
        share, var = 0.0, 0.0
    else:
        share, var, _e, m, _ = rectifier(p["rated"], None)
        if var != var:                       # one rating: the widest a share's variance can be
            var = POINTS ** 2 / 4 / max(1, m)
        var = 0.0 if m >= a else var * (a - m) / max(1, a - 1)
    if d == 0:
        bias, decided = 0.0, 0.0
    else:
        if var_bias != var_bias:             # one rated decided row: the widest its variance can be
            var_bias = POINTS ** 2 / max(1, n_bias)
        decided = (d / n) ** 2 * var_bias * max(0.0, 1.0 - n_bias / d)
    rate = (POINTS * p["JP"] + d * bias + a * share) / n
    return min(POINTS, max(0.0, rate)), decided + (a / n) ** 2 * var


def cell(a: dict[str, Any], b: dict[str, Any], fit_a: Fitted | None = None,
         fit_b: Fitted | None = None) -> dict[str, Any]:
    """One cell from the baseline's and the candidate's parts (N, D, JP, A, rated: the desk's scores in points, cal:
    the rated decided rows) — or their corrections given — candidate − baseline with its standard error, degrees of
    freedom and 95% interval: pure, for the bench."""
    fit_a = fit_a or fit(a)
    fit_b = fit_b or fit(b)
    base, var_a = _side(a, fit_a)
    cand, var_b = _side(b, fit_b)
    # no spread at all (every row judged or rated whole) still gets the error of a share of rows seen not to change,
    # as every other cell of the gate does (core.metrics.ppi._floored): 0 would read as certainty
    se = _floored(math.sqrt(var_a + var_b), min(a["N"], b["N"]))
    rated = [len(a["rated"]), len(b["rated"])]
    effective = [f[2] for f, p in ((fit_a, a), (fit_b, b)) if p["D"] and f[3] < p["D"]]     # a correction sampled
    effective += [len(p["rated"]) for p in (a, b) if 0 < len(p["rated"]) < p["A"]]        # a desk share sampled
    df = float(max(1.0, min(effective or [1e6]) - 1.0))
    half = critical(df + 1.0) * se
    delta = cand - base
    return {"baseline": base, "candidate": cand, "delta": delta, "ci": [delta - half, delta + half],
            "n": min(a["N"], b["N"]), "se": se, "df": df, "estimator": "selective", "n_rated": rated,
            "n_rated_decided": [fit_a[3], fit_b[3]], "coverage": [a["D"] / a["N"], b["D"] / b["N"]],
            "abstained": [a["A"], b["A"]], "correction": [fit_a[0], fit_b[0]]}


def run_estimate(project: Project, judge: Judge, run: str) -> dict[str, Any]:
    """One run's pass rate (points) as the gate's selective estimator reads it — the judge's verdicts on the rows it
    decides, corrected by its error on the run's rated decided rows, and the desk's rated abstentions — with its
    standard error and 95% interval (Student's t on the fewest effective ratings); or {"why": ...}. `rageval
    selective --run` shows it beside the worst-case interval of core.review.selective.combined."""
    why = selective.decidable(judge.metric)
    if why:
        return {"why": why}
    found = selective.select_for(project, judge)
    if found.level is None:
        return {"why": f"{judge.name} decides no rows: {found.needed}"}
    side = _run_parts(project, judge, run, found.level, None, {}, _calibration(project, judge))
    if "why" in side:
        return {"why": side["why"]}
    p = _merged(side["slices"], set(side["slices"]))
    assert p is not None
    if p["A"] and not p["rated"]:
        return {"why": f"none of {judge.name}'s abstentions on {run} is rated: rate the desk's sample"}
    if p["D"] and len(p["cal"]) < min(MIN_RATED_DECIDED, p["D"]):
        return {"why": f"too few rated rows of {run} that {judge.name} decides ({len(p['cal'])}; {MIN_RATED_DECIDED} "
                       "needed) to measure its error there: rate a sample of the run (rageval sample)"}
    fitted = fit(p)
    rate, var = _side(p, fitted)
    se = _floored(math.sqrt(var), p["N"])
    effective = ([fitted[2]] if p["D"] and fitted[3] < p["D"] else []) + (
        [len(p["rated"])] if 0 < len(p["rated"]) < p["A"] else [])
    df = float(max(1.0, min(effective or [1e6]) - 1.0))
    half = critical(df + 1.0) * se
    return {"pass_rate": rate / POINTS, "se": se / POINTS, "df": df,
            "ci": [max(0.0, rate - half) / POINTS, min(POINTS, rate + half) / POINTS],
            "correction": fitted[0] / POINTS, "rated_decided": fitted[3], "coverage": p["D"] / p["N"]}


def cells(project: Project, judge: Judge, baseline: str, candidate: str, questions: set[int],
          slice_of: dict[int, str], members: dict[str, set[str]]) -> dict[str, Any]:
    """{slice: cell or {"why": ...}} for the metric `judge` scores (see the module). `questions`: the golden rowids
    both runs answered; `slice_of`: each one's slice; `members`: each cell's name (a slice, a group, 'all') -> the
    slices it holds."""
    slices = list(members)
    why = selective.decidable(judge.metric)
    if why:
        return {s: {"why": why} for s in slices}
    found = selective.select_for(project, judge)
    if found.level is None:
        return {s: {"why": f"{judge.name} decides no rows: {found.needed}"} for s in slices}
    level = found.level
    rated = _calibration(project, judge)
    sides = [_run_parts(project, judge, run, level, questions, slice_of, rated) for run in (baseline, candidate)]
    for side in sides:
        if "why" in side:
            return {s: {"why": side["why"]} for s in slices}
    guarantee = {"judge": judge.name, "level": level, "alpha": found.alpha, "delta": found.delta,
                 "bound": found.bound, "decided_rated": found.decided, "rated": found.rated}
    out: dict[str, Any] = {}
    for s in slices:
        a, b = (_merged(side["slices"], members[s]) for side in sides)
        if not a or not b:
            where = "both runs" if not a and not b else baseline if not a else candidate
            out[s] = {"why": f"no row of '{s}' on {where}"}
            continue
        short = [run for run, p in ((baseline, a), (candidate, b)) if p["A"] and not p["rated"]]
        if short:
            out[s] = {"why": f"none of {judge.name}'s abstentions in '{s}' is rated on {', '.join(short)}: rate the "
                             "desk's sample"}
            continue
        few = [f"{run} {len(p['cal'])}" for run, p in ((baseline, a), (candidate, b))
               if p["D"] and len(p["cal"]) < min(MIN_RATED_DECIDED, p["D"])]
        if few:
            out[s] = {"why": f"too few rated rows of '{s}' that {judge.name} decides ({', '.join(few)}; "
                             f"{MIN_RATED_DECIDED} needed on each run) to measure its error there: rate a sample of "
                             "each run (rageval sample)"}
            continue
        out[s] = {**cell(a, b), "guarantee": guarantee}
    return out


def describe_cell(c: dict[str, Any]) -> str:
    """A selective cell's provenance in words (display rounding)."""
    g = c["guarantee"]
    cov = c["coverage"]
    return (f"{g['judge']} decides {cov[0]:.0%} / {cov[1]:.0%} of the rows (confidence ≥ {g['level']:.2f}; agreement "
            f"with people ≥ {1 - g['alpha']:.0%} on them with probability ≥ {1 - g['delta']:.0%}; its error there "
            f"measured on {c['n_rated_decided'][0]} + {c['n_rated_decided'][1]} rated rows); reviewers rated "
            f"{c['n_rated'][0]} + {c['n_rated'][1]} of the {c['abstained'][0]} + {c['abstained'][1]} rows it left")
