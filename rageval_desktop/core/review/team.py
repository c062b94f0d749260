"""The team's view of one metric's ratings: per reviewer (targets rated, median seconds per rating, agreement
with the others' consensus and with each judge, each with its bootstrap 95% CI), the inter-annotator matrix
(pairwise weighted kappa on the targets both rated; Krippendorff's alpha over everyone), and the adjudication
queue: targets where reviewers disagree by more than one point (on a scale of three points or fewer, any
disagreement), where a lead sets the consensus score with a reason. Agreement everywhere then uses that score.

The statistic is the one the retirement policy decides with (quadratic-weighted kappa on ordered scales, Cohen's
kappa on yes/no); values are unrounded, displays round.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges.registry import list_judges
from rageval_desktop.core.review import agreement_stats as st
from rageval_desktop.core.review import evidence
from rageval_desktop.core.review.agreement import (
    _finite,
    human_ceiling,
    human_frame,
    judged_frame,
    scale,
    settled,
    to_points,
)
from rageval_desktop.core.review.columns import Columns
from rageval_desktop.core.review.ratings import check_score
from rageval_desktop.core.review.sampling import get_sample
from rageval_desktop.core.review.settings import policy
from rageval_desktop.core.review.targets import BY_TEXT, unit
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project, inserted_id

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MAX_QUEUE = 500


@dataclass
class Estimate:
    n: int
    value: float | None
    ci: list[float | None]


@dataclass
class ReviewerStats:
    reviewer: str
    rated: int
    median_seconds: float | None
    with_consensus: Estimate
    with_judges: dict[str, Estimate] = field(default_factory=dict)


@dataclass
class TeamReport:
    metric: str
    statistic: str
    labels: list[float]
    reviewers: list[ReviewerStats]
    pairwise: list[dict[str, Any]]          # {a, b, n, value}
    alpha: float | None                     # Krippendorff's alpha (ordinal) over every reviewer
    shared_targets: int                     # targets rated by two reviewers or more
    queue: list[dict[str, Any]]             # disagreements nobody has settled yet
    settled: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _estimate(name: str, h: Any, j: Any, k: int) -> Estimate:
    n = len(h)
    if n == 0:
        return Estimate(0, None, [None, None])
    value = _finite(st.statistic(name, h, j, k))
    ci = list(evidence.interval(evidence.posterior(name, h, j, k))) if n >= 2 and value is not None else [None, None]
    return Estimate(n, value, [_finite(c) if c is not None else None for c in ci])


def spread_limit(k: int) -> int:
    """Points of disagreement that send a target to the queue: more than one point, or any on a short scale."""
    return 0 if k <= 3 else 1


def misses(metric: str, score: object, expected: object) -> NDArray[np.bool_]:
    """Whether each score is an error against the expected one, as the decisions it feeds count errors (issue 75):
    on a metric with a pass mark (correctness passes at 4 of 1-5), a different verdict — pass against fail — which
    is what the selective licence, the gate's pass rates and the failures read, so a 3 drifting to a 4 is an error
    and a 4 read as a 5 is not; on one without a mark, a miss by more than the team's tolerance (`spread_limit`:
    any on a scale of three points or fewer, more than one point on a longer one). Scores on the metric's scale;
    numbers or arrays alike (a boolean array; 0-d for numbers)."""
    import numpy as np

    s, e = np.asarray(score, dtype=float), np.asarray(expected, dtype=float)
    mark = METRICS[metric].pass_mark if metric in METRICS else None
    if mark is not None:
        found = (s >= mark - 1e-9) != (e >= mark - 1e-9)
    else:
        labels = scale(metric)
        step = labels[1] - labels[0] if len(labels) > 1 else 1.0
        found = np.abs(s - e) > spread_limit(len(labels)) * step + 1e-9
    out: NDArray[np.bool_] = np.asarray(found, dtype=bool)
    return out


def team_report(project: Project, metric: str, sample_id: int | None = None) -> TeamReport:
    """The report over every rating of `metric`, or only the targets of one sample."""
    import numpy as np

    labels = scale(metric)
    k = len(labels)
    name = policy(project).deciding(k)
    latest = human_frame(project, metric)
    if sample_id is not None:
        wanted = set(get_sample(project, sample_id).targets)
        latest = latest[[(r, i) in wanted for r, i in zip(latest["run_row_id"], latest["passage_rank"],
                                                           strict=True)]]
    if latest.empty:
        return TeamReport(metric, name, labels, [], [], None, 0, [], 0)
    latest = latest.assign(point=to_points(latest["score"], labels, judge=False))
    judges = [j for j in list_judges(project) if j.metric == metric]
    judged = {j.name: judged_frame(project, j) for j in judges}
    people = sorted(latest["reviewer"].unique())
    out = []
    for person in people:
        mine = latest[latest["reviewer"] == person]
        others = latest[latest["reviewer"] != person]
        seconds = mine["seconds_taken"].dropna()
        theirs = others.groupby(["run_row_id", "target"])["score"].median().rename("others").reset_index()
        both = mine.merge(theirs, on=["run_row_id", "target"])
        with_others = _estimate(name, both["point"].to_numpy(np.int64),
                                to_points(both["others"], labels, judge=False).astype(np.int64), k)
        versus = {}
        for judge_name, frame in judged.items():
            paired = mine.merge(frame, on=["run_row_id", "target"])
            versus[judge_name] = _estimate(name, paired["point"].to_numpy(np.int64),
                                           to_points(paired["judge_score"], labels, judge=True).astype(np.int64), k)
        out.append(ReviewerStats(person, len(mine), float(np.median(seconds)) if len(seconds) else None,
                                 with_others, versus))
    pairwise = []
    for i, a in enumerate(people):
        for b in people[i + 1:]:
            ra = latest[latest["reviewer"] == a][["run_row_id", "target", "point"]]
            rb = latest[latest["reviewer"] == b][["run_row_id", "target", "point"]]
            both = ra.merge(rb, on=["run_row_id", "target"], suffixes=("_a", "_b"))
            est = _estimate(name, both["point_a"].to_numpy(np.int64), both["point_b"].to_numpy(np.int64), k)
            pairwise.append({"a": a, "b": b, "n": est.n, "value": est.value, "ci": est.ci})
    kind = unit(metric)
    lead = settled(project, metric)
    limit, step = spread_limit(k), (labels[1] - labels[0] if k > 1 else 1.0)
    queue, shared, done = [], 0, 0
    for (row, target), rated in latest.groupby(["run_row_id", "target"], sort=False):
        if (row, target) in lead:
            done += 1
        if rated["reviewer"].nunique() < 2:
            continue
        shared += 1
        width = int(rated["point"].max() - rated["point"].min())
        if width > limit and (row, target) not in lead:
            queue.append({"row_id": int(row), "target": target, "spread": width * step,
                          "item": int(rated["passage_rank"].iloc[-1]),
                          "item_key": target if kind in BY_TEXT else None,
                          "what": {"row": "row", "passage": f"passage {target}"}.get(kind, kind),
                          "ratings": {r: float(v) for r, v in zip(rated["reviewer"], rated["score"], strict=True)},
                          "comments": {r: c for r, c in zip(rated["reviewer"], rated["comment"], strict=True)
                                       if isinstance(c, str) and c.strip()}})
    queue.sort(key=lambda q: (-q["spread"], q["row_id"]))
    queue = queue[:MAX_QUEUE]
    conn = project.reader()
    for q in queue:   # the row's run, id and question, for people
        q["run"], q["external_id"], q["question"] = conn.execute(
            "SELECT r.name, rr.external_id, rr.question FROM run_rows rr JOIN runs r ON r.id = rr.run_id "
            "WHERE rr.id = ?", (q["row_id"],)).fetchone()
    ceiling = human_ceiling(Columns.of_frame(latest, ("run_row_id", "target", "reviewer", "score")), labels)
    return TeamReport(metric, name, labels, out, pairwise, ceiling, shared, queue, done)


def adjudicate(project: Project, row_id: int, metric: str, score: float, reason: str, lead: str, *, item: int = 0,
               item_key: str | None = None) -> int:
    """A lead settles a disagreement: this score is the humans' consensus for the target from now on."""
    if not reason or not reason.strip():
        raise RagevalError("say why: a consensus score set by hand needs a reason")
    if not lead or not lead.strip():
        raise RagevalError("adjudications carry the lead's name (set your reviewer name)")
    score = check_score(metric, score)
    conn = project.reader()
    if not conn.execute("SELECT 1 FROM human_ratings WHERE run_row_id = ? AND metric = ? AND withdrawn_at IS NULL "
                        "AND skipped = 0", (row_id, metric)).fetchone():
        raise NotFound(f"nobody has rated run row {row_id} for {metric}: there is nothing to settle")
    with project.write("adjudicate", changed=(Area.RATINGS,)) as w:
        cur = w.execute("INSERT INTO adjudications (run_row_id, metric, item, item_key, score, reason, lead, "
                        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (row_id, metric, item, item_key, score, reason.strip(), lead.strip(), utcnow()))
        project.audit(w, "adjudicate", "run_row", str(row_id), metric=metric, item=item, item_key=item_key,
                      score=score, reason=reason.strip(), lead=lead.strip())
    return inserted_id(cur)


def withdraw_adjudication(project: Project, adjudication_id: int) -> None:
    with project.write("undo adjudication", changed=(Area.RATINGS,)) as w:
        cur = w.execute("UPDATE adjudications SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL",
                        (utcnow(), adjudication_id))
        if cur.rowcount == 0:
            raise NotFound(f"no adjudication {adjudication_id} to undo")
        project.audit(w, "undo adjudication", "adjudication", str(adjudication_id))


__all__ = ["TeamReport", "adjudicate", "spread_limit", "team_report", "withdraw_adjudication"]
