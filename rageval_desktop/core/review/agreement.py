"""Judge-human agreement, with confidence intervals, and the retirement verdict it leads to.

Statistics come from well-kept implementations: scikit-learn (Cohen's kappa, quadratic-weighted kappa, confusion
matrix), scipy (Spearman), the `krippendorff` package (alpha). Judge scores are put on the human scale by rounding
(an embedding judge's 3.27 counts as 3). Where several reviewers rated a row, the judge is compared with their
consensus: the median, ties rounded down.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_desktop.core.errors import RagevalError
from rageval_desktop.core.judges.registry import Judge, get_judge, list_judges
from rageval_desktop.core.review.settings import RetirementPolicy, policy
from rageval_desktop.core.store.project import Project, utcnow

RESAMPLES = 1000
DB_VERDICT = {"keep": "pass", "retire": "retire", "insufficient": "not_enough_ratings"}


@dataclass
class Agreement:
    judge: str
    metric: str
    n: int
    statistic: str
    value: float | None
    ci: list[float | None]
    verdict: str                      # keep | retire | insufficient
    judge_status: str
    threshold: float
    min_n: int
    needed: int                       # more rated rows before a verdict is possible
    stats: dict[str, Any] = field(default_factory=dict)
    confusion: dict[str, Any] = field(default_factory=dict)
    per_slice: dict[str, Any] = field(default_factory=dict)
    per_run: dict[str, Any] = field(default_factory=dict)
    reviewers: int = 0
    compared_with: str = ""
    human_ceiling: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _statistic(name: str, judge: Any, human: Any, labels: list[float]) -> float:
    import numpy as np

    if len(judge) == 0:
        return float("nan")
    if name == "exact":
        return float(np.mean(judge == human))
    if name == "within_one":
        return float(np.mean(np.abs(judge - human) <= 1))
    if name in ("cohen_kappa", "quadratic_kappa"):
        from sklearn.metrics import cohen_kappa_score

        if len(set(judge) | set(human)) < 2:
            return float("nan")
        with np.errstate(divide="ignore", invalid="ignore"):
            value = cohen_kappa_score(human, judge, labels=labels,
                                      weights="quadratic" if name == "quadratic_kappa" else None)
        return float(value)
    if name == "spearman":
        from scipy.stats import spearmanr

        if np.all(judge == judge[0]) or np.all(human == human[0]):
            return float("nan")
        return float(spearmanr(judge, human).statistic)
    if name == "krippendorff_alpha":
        import krippendorff

        data = np.vstack([judge, human]).astype(float)
        if len(np.unique(data)) < 2:
            return float("nan")
        return float(krippendorff.alpha(reliability_data=data, value_domain=labels, level_of_measurement="ordinal"))
    raise RagevalError(f"unknown statistic '{name}'")


STATS = ("exact", "within_one", "cohen_kappa", "quadratic_kappa", "spearman", "krippendorff_alpha")


def _bootstrap(name: str, judge: Any, human: Any, labels: list[float], seed: int = 11) -> list[float | None]:
    import numpy as np

    n = len(judge)
    if n < 2:
        return [None, None]
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(RESAMPLES):
        idx = rng.integers(0, n, n)
        values.append(_statistic(name, judge[idx], human[idx], labels))
    values = np.asarray(values)
    values = values[np.isfinite(values)]
    if values.size < RESAMPLES // 2:
        return [None, None]
    return [round(float(np.percentile(values, 2.5)), 4), round(float(np.percentile(values, 97.5)), 4)]


def pairs(project: Project, judge: Judge) -> Any:
    """One row per rated target: the judge's score on the human scale and the humans' consensus."""
    import numpy as np
    import pandas as pd

    conn = project.reader()
    humans = pd.read_sql_query(
        "SELECT h.id, h.run_row_id, h.passage_rank, h.reviewer, h.score FROM human_ratings h WHERE h.metric = ? "
        "AND h.withdrawn_at IS NULL AND h.skipped = 0 ORDER BY h.id", conn, params=(judge.metric,))
    judged = pd.read_sql_query(
        "SELECT x.run_row_id, x.passage_rank, x.score AS judge_score, COALESCE(g.slice_tag, '(unlinked)') AS slice, "
        "r.name AS run FROM judgments x JOIN run_rows rr ON rr.id = x.run_row_id JOIN runs r ON r.id = rr.run_id "
        "LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE x.judge_id = ? AND x.status = 'ok'",
        conn, params=(judge.id,))
    if humans.empty or judged.empty:
        empty = pd.DataFrame(columns=["run_row_id", "passage_rank", "judge", "human", "reviewers", "slice", "run"])
        return empty, humans
    latest = humans.drop_duplicates(["run_row_id", "passage_rank", "reviewer"], keep="last")
    consensus = latest.groupby(["run_row_id", "passage_rank"]).agg(
        human=("score", lambda s: float(np.floor(np.median(s)))), reviewers=("reviewer", "nunique")).reset_index()
    merged = consensus.merge(judged, on=["run_row_id", "passage_rank"], how="inner")
    spec = judge.spec
    merged["judge"] = np.clip(np.floor(merged["judge_score"] + 0.5), spec.low, spec.high)
    return merged, latest


def _human_ceiling(latest: Any, labels: list[float]) -> float | None:
    """Krippendorff's alpha between reviewers on the rows more than one of them rated."""
    import krippendorff
    import numpy as np

    if latest.empty or latest["reviewer"].nunique() < 2:
        return None
    table = latest.pivot_table(index="reviewer", columns=["run_row_id", "passage_rank"], values="score",
                               aggfunc="last")
    shared = table.columns[table.notna().sum() >= 2]
    if len(shared) < 2:
        return None
    data = table[shared].to_numpy(dtype=float)
    if len(np.unique(data[np.isfinite(data)])) < 2:
        return None
    return round(float(krippendorff.alpha(reliability_data=data, value_domain=labels,
                                          level_of_measurement="ordinal")), 4)


def agreement(project: Project, judge: Judge, pol: RetirementPolicy | None = None) -> Agreement:

    pol = pol or policy(project)
    spec = judge.spec
    labels = [float(v) for v in range(int(spec.low), int(spec.high) + 1)]
    merged, latest = pairs(project, judge)
    deciding = pol.deciding(spec.low, spec.high)
    j = merged["judge"].to_numpy(dtype=float)
    h = merged["human"].to_numpy(dtype=float)
    n = len(merged)
    stats = {}
    for name in STATS:
        value = _statistic(name, j, h, labels)
        stats[name] = None if not math.isfinite(value) else round(value, 4)
    value = stats[deciding]
    ci = _bootstrap(deciding, j, h, labels) if n >= 2 else [None, None]
    if n < pol.min_n or value is None:
        verdict = "insufficient"
    elif value < pol.threshold:
        verdict = "retire"
    else:
        verdict = "keep"
    confusion: dict[str, Any] = {"labels": labels, "rows": "human", "columns": "judge", "matrix": []}
    if n:
        from sklearn.metrics import confusion_matrix

        confusion["matrix"] = confusion_matrix(h, j, labels=labels).tolist()
    per_slice = {}
    for name, part in merged.groupby("slice"):
        v = _statistic(deciding, part["judge"].to_numpy(float), part["human"].to_numpy(float), labels)
        per_slice[name] = {"n": len(part), "value": None if not math.isfinite(v) else round(v, 4)}
    per_run = {}
    for name, part in merged.groupby("run"):
        v = _statistic(deciding, part["judge"].to_numpy(float), part["human"].to_numpy(float), labels)
        per_run[name] = {"n": len(part), "value": None if not math.isfinite(v) else round(v, 4)}
    reviewers = int(latest["reviewer"].nunique()) if not latest.empty else 0
    multi = int((merged["reviewers"] > 1).sum()) if n else 0
    compared = ("each row's only reviewer" if multi == 0 else
                f"the consensus (median, ties rounded down) of the reviewers on {multi} row(s) rated more than once")
    return Agreement(judge=judge.name, metric=judge.metric, n=n, statistic=deciding, value=value, ci=ci,
                     verdict=verdict, judge_status=judge.status, threshold=pol.threshold, min_n=pol.min_n,
                     needed=max(0, pol.min_n - n), stats=stats, confusion=confusion, per_slice=per_slice,
                     per_run=per_run, reviewers=reviewers, compared_with=compared,
                     human_ceiling=_human_ceiling(latest, labels) if not latest.empty else None)


def audit_all(project: Project, judge_name: str | None = None) -> list[Agreement]:
    judges = [get_judge(project, judge_name)] if judge_name else list_judges(project)
    return [agreement(project, j) for j in judges]


def apply(project: Project, result: Agreement, reason: str | None = None) -> str:
    """Record the audit and act on it: retire a judge under the threshold (with n >= the minimum), reinstate a
    retired judge whose new audit passes. Returns what happened."""
    judge = get_judge(project, result.judge)
    action = "recorded"
    with project.write("judge audit", changed=("judges", "audit")) as conn:
        conn.execute(
            "INSERT INTO agreement_reports (judge_id, metric, n, statistic, value, ci_low, ci_high, verdict, details, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (judge.id, judge.metric, result.n, result.statistic, result.value, result.ci[0], result.ci[1],
             DB_VERDICT[result.verdict], json.dumps(result.as_dict()), utcnow()))
        why = (f"{result.statistic} {result.value} (95% CI {result.ci[0]}–{result.ci[1]}) on n={result.n} "
               f"against threshold {result.threshold}" if result.value is not None else "")
        if result.verdict == "retire" and judge.status == "active":
            conn.execute("UPDATE judges SET status = 'retired', status_at = ?, status_reason = ? WHERE id = ?",
                         (utcnow(), reason or f"agreement with humans too low: {why}", judge.id))
            action = "retired"
        elif result.verdict == "keep" and judge.status == "retired":
            conn.execute("UPDATE judges SET status = 'active', status_at = ?, status_reason = ? WHERE id = ?",
                         (utcnow(), reason or f"reinstated after a passing audit: {why}", judge.id))
            action = "reinstated"
        project.audit(conn, f"audit: {action}", "judge", judge.name, verdict=result.verdict, statistic=result.statistic,
                      value=result.value, ci=result.ci, n=result.n, threshold=result.threshold, reason=reason)
    return action


def set_status(project: Project, judge_name: str, status: str, reason: str, *, force: bool = False) -> None:
    """Retire by hand (any time, with a reason) or reinstate (only after a passing audit; `force` is for undoing
    a retirement just made, and is recorded as such)."""
    if not reason.strip():
        raise RagevalError("say why: a retirement or reinstatement needs a reason")
    judge = get_judge(project, judge_name)
    if status not in ("active", "retired"):
        raise RagevalError("status is active or retired")
    if status == "active" and not force:
        result = agreement(project, judge)
        if result.verdict != "keep":
            raise RagevalError(f"'{judge_name}' can be reinstated only after a new audit passes (now: "
                               f"{result.verdict}, {result.statistic} {result.value} on n={result.n})")
    with project.write("set judge status", changed=("judges", "audit")) as conn:
        conn.execute("UPDATE judges SET status = ?, status_at = ?, status_reason = ? WHERE id = ?",
                     (status, utcnow(), reason, judge.id))
        project.audit(conn, "retire judge" if status == "retired" else "reinstate judge", "judge", judge_name,
                      reason=reason)


def audit_history(project: Project, judge: str) -> list[dict[str, Any]]:
    """The recorded audits of one judge, newest first."""
    return [{"at": at[:16].replace("T", " "), "n": n, "statistic": st, "value": v, "verdict": ver}
            for at, n, st, v, ver in project.reader().execute(
                "SELECT a.created_at, a.n, a.statistic, a.value, a.verdict FROM agreement_reports a JOIN judges j "
                "ON j.id = a.judge_id WHERE j.name = ? ORDER BY a.id DESC", (judge,))]
