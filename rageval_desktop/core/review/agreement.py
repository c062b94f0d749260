"""Judge-human agreement, with confidence intervals, and the retirement verdict it leads to.

Every statistic is computed from the confusion matrix (core.review.agreement_stats; equal to scikit-learn's kappas,
scipy's Spearman and the `krippendorff` package's alpha, which is only a test oracle), and the deciding one gets a
95% interval from the Dirichlet posterior of the confusion matrix, weighted as the sample was drawn
(core.review.evidence, which says why and what it covers). The verdict reads the anytime-valid version of that
interval: see `decide`. Judge scores are put on the human scale by rounding to its nearest point (an embedding
judge's 3.27 counts as 3). Where several reviewers rated a target, the judge is compared with each of them (each
target counts once; a lead's adjudicated score replaces them where set). Its mean bias against them is measured too.
A target is a row, or — for the metrics judged per item — a passage, a nugget or a citation (core.review.targets),
each on its own scale (0-3; support 1, partial 0.5, not 0). """

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.vocab import SLICE_OF
from rageval_desktop.core.judges.fingerprint import fingerprint
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import get_judge, list_judges
from rageval_desktop.core.review import agreement_stats as st
from rageval_desktop.core.review import evidence as ev
from rageval_desktop.core.review.agreement_stats import STATS, alpha
from rageval_desktop.core.review.columns import Columns
from rageval_desktop.core.review.guidelines import human_rubric
from rageval_desktop.core.review.settings import RetirementPolicy, policy
from rageval_desktop.core.review.targets import BY_TEXT, sub_key, target_id, unit
from rageval_desktop.core.review.weights import Looks, planned_looks, strata_used, weighted_pairs
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

NEEDS_MORE = "needs more ratings"
MAX_ESTIMATE = 10_000  # "more ratings" beyond this: the estimate sits on the threshold, ratings may not settle it
DB_VERDICT = {"keep": "pass", "retire": "retire", NEEDS_MORE: "not_enough_ratings"}


@dataclass
class Agreement:
    judge: str
    metric: str
    n: int
    statistic: str
    value: float | None
    ci: list[float | None]
    verdict: str                      # keep | retire | needs more ratings
    judge_status: str
    threshold: float
    min_n: int
    needed: int                       # more rated rows that would likely settle the verdict (an estimate)
    stats: dict[str, Any] = field(default_factory=dict)
    confusion: dict[str, Any] = field(default_factory=dict)
    per_slice: dict[str, Any] = field(default_factory=dict)
    per_run: dict[str, Any] = field(default_factory=dict)
    reviewers: int = 0
    compared_with: str = ""
    human_ceiling: float | None = None
    rule: str = "interval"
    weighting: str = ""               # how a non-uniform sample's ratings were weighted (empty: not needed)
    anytime_ci: list[float | None] = field(default_factory=lambda: [None, None])  # what the verdict uses
    effective_n: float = 0.0          # Kish's effective n of the weighted ratings (n when unweighted)
    bias: dict[str, Any] = field(default_factory=dict)   # judge - human in points (Bland-Altman), core.review.evidence
    outside_sample: int = 0           # rated targets left out: made outside any sample while others were drawn
    look: str = "anytime"             # anytime (unplanned), interim or final (a planned sample): core.review.evidence
    looks: list[dict[str, Any]] = field(default_factory=list)   # the plan's looks reached: n, value, interval, z
    deciding_look: int | None = None  # the planned look (its size) whose interval `anytime_ci` is, when one is
    plan_looks: list[int] = field(default_factory=list)   # the plan's looks, in targets (empty: none, or spent)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stopping": self.stopping}

    @property
    def stopping(self) -> str:
        """Sequential stopping, in words: whether more ratings could still change the verdict. It reads the
        anytime-valid interval, which stays valid however often the audit is looked at (core.review.evidence)."""
        low, high = self.anytime_ci
        if self.value is None or low is None or high is None:
            return f"keep rating: no interval yet (at least {max(self.min_n, 2)} ratings are needed to decide)"
        side = "above" if low >= self.threshold else "below" if high < self.threshold else ""
        shown = (f"the anytime-valid interval [{low:.3f}, {high:.3f}]" if self.deciding_look is None else
                 f"the planned look at {self.deciding_look} targets, [{low:.3f}, {high:.3f}],")
        if self.verdict in ("keep", "retire") and self.rule == "interval":
            return (f"you can stop: {shown} lies entirely {side} {self.threshold:g}, so more ratings would not "
                    f"change the verdict ({self.verdict})")
        if side:
            return (f"{shown} already lies entirely {side} {self.threshold:g}, but a verdict needs an effective n of "
                    f"at least {self.min_n}: rate about {self.needed} more")
        if self.verdict in ("keep", "retire"):
            return f"decided by the point rule on n={self.n}; the interval still spans {self.threshold:g}"
        return (f"keep rating: {shown} spans {self.threshold:g}; about {self.needed} more ratings would settle it "
                f"with 80% power if the estimate holds")


def scale(metric: str) -> list[float]:
    """The scores a human gives for `metric` (0..3, 1..5, 0/1, or 0, 0.5, 1 for a nugget's or citation's support)."""

    return [p.score for p in human_rubric(metric).points]


def to_points(values: Any, labels: list[float], *, judge: bool) -> Any:
    """Indices into `labels`: a judge's score goes to the nearest point (a tie goes up: 0.5 is 1 on a 0/1 scale,
    3.5 is 4), a human consensus (a median) to the point at or below it (ties rounded down)."""
    import numpy as np

    points = np.asarray(labels, dtype=float)
    x = np.asarray(values, dtype=float)
    if judge:
        return np.searchsorted((points[:-1] + points[1:]) / 2, x, side="right")
    return np.clip(np.searchsorted(points, x + 1e-9, side="right") - 1, 0, len(points) - 1)


HUMAN_SQL = ("SELECT h.id, h.run_row_id, h.passage_rank, h.item_key, h.reviewer, h.score, h.seconds_taken, h.comment "
             "FROM human_ratings h WHERE h.metric = ? AND h.withdrawn_at IS NULL AND h.skipped = 0 ORDER BY h.id")
HUMAN_COLUMNS = ("id", "run_row_id", "passage_rank", "item_key", "reviewer", "score", "seconds_taken", "comment")


def ratings(project: Project, metric: str) -> Columns:
    """Each reviewer's standing rating per target of `metric` (the latest; withdrawn and skipped ones left out),
    with `target`: a nugget's or citation's text, else the passage rank ("0" for the row). Read once in a block of
    shared reads (core.store.reads): not to be changed in place."""
    return reads.once(project, ("ratings", metric), lambda: _ratings(project, metric))


def _ratings(project: Project, metric: str) -> Columns:
    kind = unit(metric)
    rows = project.reader().execute(HUMAN_SQL, (metric,)).fetchall()
    if kind in BY_TEXT:
        rows = [r for r in rows if r[3] is not None and (r[2] or 0) > 0]
    found = Columns.of_rows(rows, HUMAN_COLUMNS)
    found = found.with_columns(target=[target_id(kind, int(i), k) for i, k in
                                       zip(found["passage_rank"].tolist(), found["item_key"].tolist(), strict=True)])
    return found.take(found.last("run_row_id", "target", "reviewer"))


def human_frame(project: Project, metric: str) -> pd.DataFrame:
    """`ratings` as a DataFrame (the team report, the reviewers' checks and the dashboard's rated columns read it
    so). Read once in a block of shared reads: not to be changed in place."""
    return reads.once(project, ("human_frame", metric), lambda: ratings(project, metric).frame())


JUDGED_SQL = (
    "SELECT x.run_row_id, x.passage_rank, {texts}, x.score AS judge_score, " + SLICE_OF + " AS slice, r.name AS "
    "run FROM judgments x JOIN run_rows rr ON rr.id = x.run_row_id JOIN runs r ON r.id = rr.run_id "
    "LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE +x.judge_id = ? AND +x.status = 'ok' AND x.run_row_id IN "
    "(SELECT run_row_id FROM human_ratings WHERE metric = ?)")
JUDGED_COLUMNS = ("run_row_id", "passage_rank", "rationale", "detail", "judge_score", "slice", "run")


def judged(project: Project, judge: Judge) -> Columns:
    """The judge's ok verdicts on rated rows, one per target (same `target` as `ratings`). Looked up from the rated
    rows (`+` keeps SQLite off the judge's index, which walked a million judgments for 10k ratings). Read once in a
    block of shared reads: not to be changed in place."""
    return reads.once(project, ("judged", judge.id, judge.metric), lambda: _judged(project, judge))


def judged_frame(project: Project, judge: Judge) -> pd.DataFrame:
    """`judged` as a DataFrame (the team report reads it so)."""
    return judged(project, judge).frame()


JUDGED_ALL_SQL = (   # every judge of a metric: the verdicts alone (their rows' slices and runs are read once a row)
    "SELECT x.judge_id, x.run_row_id, x.passage_rank, x.score AS judge_score FROM judgments x WHERE +x.judge_id IN "
    "(SELECT id FROM judges WHERE metric = ?) AND +x.status = 'ok' AND x.run_row_id IN (SELECT run_row_id FROM "
    "human_ratings WHERE metric = ?)")
RATED_ROWS_SQL = (
    f"SELECT rr.id, {SLICE_OF}, r.name FROM run_rows rr JOIN runs r ON r.id = rr.run_id "
    "LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.id IN (SELECT run_row_id FROM human_ratings WHERE "
    "metric = ?)")


def _judged(project: Project, judge: Judge) -> Columns:
    import numpy as np

    kind = unit(judge.metric)
    texts = "x.rationale, x.detail" if kind in BY_TEXT else "NULL AS rationale, NULL AS detail"  # (read when needed)
    every = _judged_rows(project, judge.metric) if kind not in BY_TEXT and reads.active(project) else None
    if every is not None and judge.id in every[1]:   # one read of every judge of the metric in an audit, its
        return every[0].take(every[1][judge.id])      # targets made and each judge's last verdict on them kept there
    found = Columns.of_rows(project.reader().execute(JUDGED_SQL.format(texts=texts), (judge.id, judge.metric)
                                                     ).fetchall(), JUDGED_COLUMNS)
    if kind in BY_TEXT:
        found = found.take(np.asarray(found["passage_rank"], dtype=float) > 0)
        keys = [sub_key(kind, r, d) for r, d in zip(found["rationale"].tolist(), found["detail"].tolist(),
                                                    strict=True)]
        found = found.with_columns(target=keys).take(np.array([k is not None for k in keys], dtype=bool))
    else:
        found = found.with_columns(target=[str(r) for r in found["passage_rank"].tolist()])
    return found.take(found.last("run_row_id", "target"))


def _judged_rows(project: Project, metric: str) -> tuple[Columns, dict[int, NDArray[np.intp]]]:
    """Every judge's ok verdicts on the rated rows of a row metric (one verdict per row and judge: a judge's new
    verdict on a row replaces the old), read once in a block of shared reads, and each judge's positions in it."""

    def read() -> tuple[Columns, dict[int, NDArray[np.intp]]]:
        import numpy as np

        conn = project.reader()
        found = Columns.of_rows(conn.execute(JUDGED_ALL_SQL, (metric, metric)).fetchall(),
                                ("judge_id", "run_row_id", "passage_rank", "judge_score"))
        where = {row: (named, run) for row, named, run in conn.execute(RATED_ROWS_SQL, (metric,))}
        found = found.with_columns(target=[str(r) for r in found["passage_rank"].tolist()])
        found = found.take(found.last("judge_id", "run_row_id", "target")   # each judge's last verdict a target,
                           & np.isin(found["run_row_id"], list(where)))      # of a row in a run (as a join kept)
        placed = [where[row] for row in found["run_row_id"].tolist()]   # (the join by SQL made 35,000 rows' texts:
        nothing = [None] * len(found)                                    # 80 ms, against 30 here)
        return Columns({"run_row_id": found["run_row_id"], "passage_rank": found["passage_rank"],
                        "rationale": nothing, "detail": nothing, "judge_score": found["judge_score"],
                        "slice": [named for named, _ in placed], "run": [run for _, run in placed],
                        "target": found["target"]}, len(found)), found.groups("judge_id")

    return reads.once(project, ("judged rows", metric), read)


def settled(project: Project, metric: str) -> dict[tuple[int, str], float]:
    """(row, target) -> the score a lead set where reviewers disagreed (the latest standing adjudication)."""

    kind = unit(metric)
    return reads.once(project, ("settled", metric), lambda: {
        (row, target_id(kind, item, key)): score for row, item, key, score in project.reader().execute(
            "SELECT run_row_id, item, item_key, score FROM adjudications WHERE metric = ? AND withdrawn_at IS NULL "
            "ORDER BY id", (metric,))})


def _by_target(latest: Columns) -> tuple[list[tuple[int, str]], dict[tuple[int, str], list[float]],
                                         dict[tuple[int, str], set[str]]]:
    """Each rating's (row, target), and each target's scores and reviewers (NaN scores and no reviewer left out)."""
    keys = latest.targets()
    scores: dict[tuple[int, str], list[float]] = {}
    people: dict[tuple[int, str], set[str]] = {}
    for key, reviewer, score in zip(keys, latest["reviewer"].tolist(), latest["score"].tolist(), strict=True):
        found = scores.setdefault(key, [])
        if score is not None and score == score:
            found.append(float(score))
        mine = people.setdefault(key, set())
        if reviewer is not None:
            mine.add(reviewer)
    return keys, scores, people


def consensus_of(project: Project, metric: str, latest: Columns) -> Columns:
    """One row per rated target, by row and then target: the humans' consensus — the median of the reviewers'
    standing ratings, or the score a lead set for it — and how many reviewers rated it."""
    import statistics

    import numpy as np

    _keys, scores, people = _by_target(latest)
    order = sorted(scores)
    lead = settled(project, metric)
    human = [lead.get(key, statistics.median(scores[key]) if scores[key] else math.nan) for key in order]
    return Columns({"run_row_id": np.array([r for r, _ in order], dtype=np.int64),
                    "target": [t for _, t in order], "human": np.array(human, dtype=float),
                    "reviewers": np.array([len(people[key]) for key in order], dtype=np.int64)})


def consensus(project: Project, metric: str, latest: pd.DataFrame) -> pd.DataFrame:
    """`consensus_of` a DataFrame of ratings (the dashboard's rated columns), as a DataFrame."""
    return consensus_of(project, metric, Columns.of_frame(latest, ("run_row_id", "target", "reviewer", "score"))
                        ).frame()


def each_reviewer(project: Project, metric: str, latest: Columns) -> Columns:
    """One row per (rated target, reviewer) with that reviewer's score — or, where a lead settled the target, one
    row with the lead's score — and `share`, 1 / the rows of its target, so that every target counts once."""
    import numpy as np

    lead = settled(project, metric)
    keys, _scores, people = _by_target(latest)
    reviewers = latest["reviewer"].tolist()
    humans = [math.nan if s is None else float(s) for s in latest["score"].tolist()]
    if lead and keys:
        kept = [i for i, key in enumerate(keys) if key not in lead]
        decided = list(dict.fromkeys(key for key in keys if key in lead))   # each settled target once, first seen
        keys = [keys[i] for i in kept] + decided
        reviewers = [reviewers[i] for i in kept] + ["(lead)"] * len(decided)
        humans = [humans[i] for i in kept] + [float(lead[key]) for key in decided]
    size: dict[tuple[int, str], int] = {}
    for key in keys:
        size[key] = size.get(key, 0) + 1
    return Columns({"run_row_id": np.array([r for r, _ in keys], dtype=np.int64), "target": [t for _, t in keys],
                    "reviewer": reviewers, "human": np.array(humans, dtype=float),
                    "reviewers": np.array([len(people[key]) for key in keys], dtype=np.int64),
                    "share": np.array([1.0 / size[key] for key in keys], dtype=float)})


PAIR_COLUMNS = ("run_row_id", "target", "judge", "human", "human_score", "judge_score", "reviewers", "share", "slice",
                "run")


def rated_pairs(project: Project, judge: Judge, *, per_reviewer: bool = False) -> tuple[Columns, Columns]:
    """(the pairs, the ratings): one row per rated target (a row, a passage, a nugget or a citation:
    core.review.targets) the judge judged, in the humans' order — the judge's score on the human scale and the
    humans' consensus, both as indices into `scale(metric)` (`judge`, `human`), the humans' score itself
    (`human_score`), the judge's (`judge_score`), the row's slice and run. With `per_reviewer`, one row per
    reviewer of each target instead (`each_reviewer`): the judge is compared with each reviewer, not with a rounded
    median (a judge equal to two reviewers' mean matched their rounded-down median half the time). A nugget or a
    citation is matched by its text, so a rating of a nugget that is no longer in the judge's list compares with
    nothing. In a block of shared reads the pairs are made once: not to be changed in place."""
    return reads.once(project, ("pairs", judge.id, judge.metric, per_reviewer),
                      lambda: _pairs(project, judge, per_reviewer))


def pairs(project: Project, judge: Judge, *, per_reviewer: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`rated_pairs` as DataFrames, (the pairs, `human_frame`), each caller's own."""
    merged, _latest = rated_pairs(project, judge, per_reviewer=per_reviewer)
    return merged.frame(), human_frame(project, judge.metric)


def _pairs(project: Project, judge: Judge, per_reviewer: bool) -> tuple[Columns, Columns]:
    import numpy as np

    latest = ratings(project, judge.metric)
    scored = judged(project, judge)
    if latest.empty or scored.empty:
        return Columns({name: [] for name in PAIR_COLUMNS}), latest
    labels = scale(judge.metric)
    found, code, codes = reads.once(project, ("humans", judge.metric, per_reviewer),
                                    lambda: _humans(project, judge.metric, latest, per_reviewer))
    # an inner join in the humans' order: where each numbered target's one verdict is (-1: none; the extra last
    # place takes the verdicts on targets no one rated)
    at = np.full(len(code) + 1, -1, dtype=np.intp)
    places = np.array([code.get(key, len(code)) for key in scored.targets()], dtype=np.intp)
    at[places] = np.arange(len(places))
    at[len(code)] = -1
    right = at[codes]
    left = np.flatnonzero(right >= 0)
    verdicts = scored.take(right[left])
    merged = found.take(left).with_columns(
        **{name: verdicts[name] for name in verdicts if name not in ("run_row_id", "target")})
    if "share" not in merged:
        merged = merged.with_columns(share=np.ones(len(merged)))
    human = np.asarray(merged["human"], dtype=float)
    return merged.with_columns(human_score=human, human=to_points(human, labels, judge=False),
                               judge=to_points(np.asarray(merged["judge_score"], dtype=float), labels, judge=True)
                               ), latest


def _humans(project: Project, metric: str, latest: Columns, per_reviewer: bool
            ) -> tuple[Columns, dict[tuple[int, str], int], NDArray[np.intp]]:
    """The humans' side of every judge's pairs (`each_reviewer` or `consensus_of`), each target's number and each
    row's target's number: made once an audit, so that a judge's pairs are a lookup of its verdicts' targets."""
    import numpy as np

    found = each_reviewer(project, metric, latest) if per_reviewer else consensus_of(project, metric, latest)
    code: dict[tuple[int, str], int] = {}
    codes = np.array([code.setdefault(key, len(code)) for key in found.targets()], dtype=np.intp)
    return found, code, codes


def human_ceiling(latest: Columns, labels: list[float]) -> float | None:
    """Krippendorff's alpha between reviewers on the targets more than one of them rated (`latest`: `ratings`), on
    the ordinal scale of `labels` (labels no one gave weigh nothing in ordinal distances: `agreement_stats.alpha`)."""
    import numpy as np

    if latest.empty:
        return None
    people = sorted({p for p in latest["reviewer"].tolist() if p is not None})
    if len(people) < 2:
        return None
    table: dict[tuple[int, str], dict[str, float]] = {}
    for key, reviewer, score in zip(latest.targets(), latest["reviewer"].tolist(),
                                    latest["score"].tolist(), strict=True):
        if reviewer is not None and score is not None and score == score:
            table.setdefault(key, {})[reviewer] = float(score)
    shared = sorted(key for key, found in table.items() if len(found) >= 2)
    if len(shared) < 2:
        return None
    data = np.array([[table[key].get(person, math.nan) for key in shared] for person in people], dtype=float)
    if len(np.unique(data[np.isfinite(data)])) < 2:
        return None
    return alpha(data, "ordinal")


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def decide(value: float | None, ci: list[float | None], n: int, pol: RetirementPolicy, *,
           anytime: list[float | None] | None = None, n_eff: float | None = None,
           se: float | None = None) -> tuple[str, int]:
    """The verdict and how many more rated targets would settle it with 80% power, on unrounded values.

    The interval rule (the default): keep when the whole anytime-valid interval (core.review.evidence; `ci`, the
    single-look 95% interval, when none is given) is at or above the threshold, retire when it is wholly below,
    both only with an effective n of at least `min_n`; otherwise the evidence does not decide and the verdict is
    "needs more ratings". The anytime interval keeps the error rate however often the audit is looked at while
    ratings come in. The point rule (an option) compares the estimate alone with the threshold."""
    n_eff = float(n) if n_eff is None else n_eff
    short = max(0, math.ceil(pol.min_n - n_eff - 1e-9))
    if value is None:
        return NEEDS_MORE, max(short, 1)
    if pol.rule == "point":
        if short:
            return NEEDS_MORE, short
        return ("retire" if value < pol.threshold else "keep"), 0
    low, high = anytime if anytime is not None else ci
    if low is None or high is None:
        return NEEDS_MORE, max(short, 1)
    if short == 0 and low >= pol.threshold:
        return "keep", 0
    if short == 0 and high < pol.threshold:
        return "retire", 0
    if low >= pol.threshold or high < pol.threshold:
        return NEEDS_MORE, short                       # the interval decides, the minimum n is not reached yet
    if se is None:                                     # a CI alone: its half-width is about 1.96 errors
        lo, hi = ci
        se = ((hi - lo) / 2 / 1.959964) if lo is not None and hi is not None else math.nan
    needed = ev.ratings_needed(value, se, n_eff, pol.threshold, min_n=pol.min_n)
    return NEEDS_MORE, max(short, needed, 1)


Evidence = tuple[list[float | None], list[float | None], str, int]   # 95% interval, the verdict's, verdict, needed


def judge_evidence(name: str, human: Any, judge: Any, k: int, weights: Any | None, value: float | None, n: int,
                   n_eff: float, pol: RetirementPolicy, *, draws: int = ev.DRAWS, look: str = "anytime",
                   z: float | None = None, reading: bool = True) -> Evidence:
    """(95% interval, the interval the verdict uses, verdict, ratings to settle) of one audit's statistic: the
    audit's own steps, which the simulations that measure its error rates (core.review.simulate) run too. `look`:
    "anytime" (an unplanned audit: the anytime interval at α), "interim" (a planned audit before its final look:
    the anytime interval at ALPHA_INTERIM) or "final" (one of the plan's looks: the estimate plus or minus `z`, its
    group-sequential boundary, or a single look's z at ALPHA_FINAL). `reading=False`: no 95% interval ([None, None];
    a planned look reads only the interval its verdict uses)."""
    import numpy as np

    found = (ev.posterior(name, human, judge, k, weights, draws=draws, n_eff=n_eff) if n >= 2 and value is not None
             else np.array([]))
    se = float(np.std(found)) if found.size >= draws // 4 else math.nan
    if weights is not None and math.isfinite(se) and se > 0:
        # a weighted sample's information is not Kish's n when the weights go with the scores (an uncertain
        # sample's heavy targets are the extremes): the posterior is widened to the jackknife's error where that
        # is larger (1-5 scales, weighted modes: 95% intervals covered 79-86%; bench/bench_audit_desk.py)
        jack = ev.jackknife_se(name, human, judge, k, weights)
        if math.isfinite(jack) and jack > se:
            n_eff = n_eff * (se / jack) ** 2
            found = ev.posterior(name, human, judge, k, weights, draws=draws, n_eff=n_eff)
            se = float(np.std(found)) if found.size >= draws // 4 else math.nan
    ci: list[float | None] = (list(ev.shown_interval(name, human, judge, k, weights, n_eff, n, draws=draws,
                                                     drawn=found))
                              if reading and found.size >= draws // 4 else [None, None])
    if look == "final":
        used = list(ev.final_interval(value, se, z=z))
    else:
        used = list(ev.anytime_interval(value, se, n_eff, min_n=pol.min_n,
                                        alpha=ev.ALPHA_INTERIM if look == "interim" else ev.ALPHA))
    verdict, needed = decide(value, ci, n, pol, anytime=used, n_eff=n_eff, se=se)
    return ci, used, verdict, needed


def agreement(project: Project, judge: Judge, pol: RetirementPolicy | None = None, *,
              breakdowns: bool = True) -> Agreement:
    """The judge's agreement with the humans: every statistic, the deciding one's bootstrap CI, the verdict.
    Values are kept unrounded: the verdict and `--json` see full precision; displays round. Without
    `breakdowns`, the per-slice and per-run values (each with its own bootstrap) are left empty."""
    import numpy as np

    pol = pol or policy(project)
    labels = scale(judge.metric)
    k = len(labels)
    merged, latest = rated_pairs(project, judge, per_reviewer=True)
    merged, design, outside = weighted_pairs(project, judge.metric, merged)
    deciding = pol.deciding(k)
    h = np.asarray(merged["human"], dtype=np.int64)
    j = np.asarray(merged["judge"], dtype=np.int64)
    first = merged.first("run_row_id", "target")
    n = int(first.sum())                                        # targets: each counts once, however many reviewers
    share = np.asarray(merged["share"], dtype=float)
    w = None if design is None and np.allclose(share, 1.0) else (design if design is not None else 1.0) * share
    matrix = st.confusion(h, j, k) if n else None
    weighted = st.confusion(h, j, k, w) if n else None
    stats = {name: (_finite(float(st.from_confusion(name, weighted))) if n else None) for name in STATS}
    value = stats[deciding]
    n_eff = ev.effective_n(None if design is None else design[first], n)    # of targets, by the sample's design
    if design is not None:
        n_eff = ev.stratified_n(n_eff, n, strata_used(project, judge.metric))
    looks = planned_looks(project, judge.metric)
    planned = _planned(deciding, merged, k, looks, pol)
    chosen = next((x for x in planned if x["verdict"] in ("keep", "retire")), None)
    look = looks.look
    ci, anytime, verdict, needed = judge_evidence(deciding, h, j, k, w, value, n, n_eff, pol,
                                                  look="interim" if look != "anytime" else "anytime")
    if chosen is None and look == "final" and planned and planned[-1]["n"] == looks.sizes[-1]:
        chosen = planned[-1]          # every look taken, none crossed: the last one's interval is the one to show
    if chosen is not None:            # the first planned look that crossed its boundary decides (a stopped design)
        anytime = chosen["interval"]
        if chosen["verdict"] in ("keep", "retire"):
            verdict = chosen["verdict"]
    if look == "interim" and verdict == NEEDS_MORE and looks.left:
        needed = looks.left           # the planned path: rate the rest of the sample; its next look may decide
    confusion: dict[str, Any] = {"labels": labels, "rows": "human", "columns": "judge",
                                 "matrix": matrix.astype(int).tolist() if matrix is not None else []}
    span = (max(labels) - min(labels)) or 1.0
    gaps = (np.asarray(merged["judge_score"], dtype=float) - np.asarray(merged["human_score"], dtype=float)
            ) / span * 100

    def breakdown(column: str) -> dict[str, Any]:
        out = {}
        for name, idx in merged.groups(column).items():
            wi = None if w is None else w[idx]
            count = int(first[idx].sum())
            ni = ev.effective_n(None if design is None else design[idx][first[idx]], count)
            v = _finite(st.statistic(deciding, h[idx], j[idx], k, wi))
            low, high = (ev.shown_interval(deciding, h[idx], j[idx], k, wi, ni, count)
                         if v is not None and count >= 2 else (None, None))
            out[name] = {"n": count, "value": v, "ci": [low, high],
                         "bias": ev.bias(gaps[idx], wi, ni, margin=pol.bias_margin)}
        return out

    reviewers = len({p for p in latest["reviewer"].tolist() if p is not None})
    multi = int(((merged["reviewers"] > 1) & first).sum()) if n else 0
    compared = ("each row's only reviewer" if multi == 0 else
                f"each reviewer of the {multi} target(s) rated more than once (each target counts once; a lead's "
                "score where one settled it)")
    return Agreement(judge=judge.name, metric=judge.metric, n=n, statistic=deciding, value=value, ci=ci,
                     verdict=verdict, judge_status=judge.status, threshold=pol.threshold, min_n=pol.min_n,
                     needed=needed, stats=stats, confusion=confusion,
                     per_slice=breakdown("slice") if breakdowns else {},
                     per_run=breakdown("run") if breakdowns else {}, reviewers=reviewers, compared_with=compared,
                     human_ceiling=human_ceiling(latest, labels), rule=pol.rule,
                     weighting=_weighting(None if design is None else design[first], n_eff), anytime_ci=anytime,
                     effective_n=n_eff, outside_sample=outside, look=look, looks=planned,
                     deciding_look=None if chosen is None else chosen["n"], plan_looks=list(looks.sizes),
                     bias=ev.bias(gaps, w, n_eff, margin=pol.bias_margin) if n else {})


def _planned(name: str, merged: Columns, k: int, looks: Looks, pol: RetirementPolicy) -> list[dict[str, Any]]:
    """Each planned look the ratings have reached, on exactly its prefix's targets weighed at that size: n, the
    statistic, its interval at the look's group-sequential boundary z, and what it decides."""
    import numpy as np

    if not looks.reached or merged.empty:
        return []
    total = looks.sizes[-1]
    bounds = ev.look_boundaries(tuple(m / total for m in looks.sizes))
    keys = merged.targets()
    share = np.asarray(merged["share"], dtype=float)
    out = []
    for m, found, strata, z in zip(looks.sizes, looks.reached, looks.strata, bounds, strict=False):
        idx = np.array([i for i, key in enumerate(keys) if key in found], dtype=np.int64)
        if idx.size == 0:
            continue
        sub = merged.take(idx)
        first = sub.first("run_row_id", "target")
        p = np.array([found[keys[i]] for i in idx])
        h, j = np.asarray(sub["human"], dtype=np.int64), np.asarray(sub["judge"], dtype=np.int64)
        w = (1.0 / p) * share[idx]
        count = int(first.sum())
        n_eff = ev.stratified_n(ev.effective_n(1.0 / p[first], count), count, strata)
        value = _finite(float(st.statistic(name, h, j, k, w)))
        _, used, verdict, _ = judge_evidence(name, h, j, k, w, value, count, n_eff, pol, look="final", z=z,
                                             reading=False)
        out.append({"n": m, "rated": count, "effective_n": n_eff, "value": value, "z": z, "interval": used,
                    "verdict": verdict})
    return out


def _weighting(w: Any, n_eff: float) -> str:
    """What the audit says about its sample's design (empty when every rating weighs the same)."""
    if w is None:
        return ""
    import numpy as np

    if np.allclose(w, w[0]):
        return ""
    return (f"weighted as drawn: the ratings come from samples that gave targets unequal probabilities (stratified by "
            f"slice x judge score, or disagreement or uncertain first); each counts 1/its inclusion probability, so "
            f"the statistics speak for the whole run (effective n {n_eff:.1f} of {len(w)})")


def planned_text(result: dict[str, Any]) -> str:
    """A planned audit's looks in words (an Agreement's `as_dict`; the CLI and the Audit page): the looks reached,
    each with its interval at its group-sequential boundary, and which decided."""
    looks = result.get("looks") or []
    if not result.get("plan_looks"):
        return "the sample's plan is spent (extended after its last look): the anytime interval at 1% decides"
    said = "; ".join(f"{x['n']} targets: {_fmt(x['value'])} [{_fmt(x['interval'][0])}, {_fmt(x['interval'][1])}] "
                     f"at ±{x['z']:.2f} errors" + (f" → {x['verdict']}" if x["verdict"] != NEEDS_MORE else "")
                     for x in looks)
    head = ("a planned sample, every look taken" if result.get("look") == "final" else
            "a planned sample, not all rated")
    return f"{head}: " + (f"looks {said}" if said else "no planned look reached yet (the first is a quarter of "
                          "it, rated in the order shown)") + "; between looks the anytime interval at 1% applies"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def describe(result: Agreement) -> str:
    """One line for people: the estimate with its interval, n and the threshold (rounded for display only)."""
    left = (f"; {result.outside_sample} rated target(s) left out: rated outside any sample while the others were "
            "drawn with recorded probabilities (import them with the sample they were rated on), or ahead of "
            "targets still to rate in their sample's order (they count once those are rated), or in a sample of rows "
            "someone chose (triage) or a judge abstained on, which speaks only for those rows"
            if result.outside_sample else "")
    if result.value is None:
        return f"{result.statistic}: no value on n={result.n}{left}"
    text = (f"{result.statistic} {_fmt(result.value)} (95% CI {_fmt(result.ci[0])} to {_fmt(result.ci[1])}) on "
            f"n={result.n} against the threshold {result.threshold:g}")
    if result.verdict == NEEDS_MORE:
        text += f"; about {result.needed} more ratings would settle it (80% power)"
    bias = ev.bias_text(result.bias)
    return text + left + (f"; {bias}" if bias else "")


def audit_all(project: Project, judge_name: str | None = None) -> list[Agreement]:
    judges = [get_judge(project, judge_name)] if judge_name else list_judges(project)
    return [agreement(project, j) for j in judges]


def apply(project: Project, result: Agreement, reason: str | None = None, *, selective_level: float | None = None
          ) -> str:
    """Record the audit and act on it: retire a judge under the threshold (with n >= the minimum), reinstate a
    retired judge whose new audit passes. Returns what happened. A judge the audit would retire but that selective
    judging shows safe on the rows it is sure of (`selective_level`, core.review.licence.record_audit reads it) stays
    active: it decides those rows, the desk the rest."""
    judge = get_judge(project, result.judge)
    audited = fingerprint(project, judge)   # what the audit vouches for: a licence holds while it is unchanged
    action = "recorded"
    with project.write("judge audit", changed=(Area.JUDGES, Area.AUDIT)) as conn:
        conn.execute(
            "INSERT INTO agreement_reports (judge_id, metric, n, statistic, value, ci_low, ci_high, verdict, details, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (judge.id, judge.metric, result.n, result.statistic, result.value, result.ci[0], result.ci[1],
             DB_VERDICT[result.verdict], json.dumps({**result.as_dict(), "fingerprint": audited}), utcnow()))
        why = describe(result)
        if result.verdict == "retire" and judge.status == "active" and selective_level is not None:
            action = "kept selective"
        elif result.verdict == "retire" and judge.status == "active":
            conn.execute("UPDATE judges SET status = 'retired', status_at = ?, status_reason = ? WHERE id = ?",
                         (utcnow(), reason or f"agreement with humans too low: {why}", judge.id))
            action = "retired"
        elif result.verdict == "keep" and judge.status == "retired":
            conn.execute("UPDATE judges SET status = 'active', status_at = ?, status_reason = ? WHERE id = ?",
                         (utcnow(), reason or f"reinstated after a passing audit: {why}", judge.id))
            action = "reinstated"
        project.audit(conn, f"audit: {action}", "judge", judge.name, verdict=result.verdict, statistic=result.statistic,
                      value=result.value, ci=result.ci, n=result.n, threshold=result.threshold, reason=reason,
                      selective_level=selective_level)
    return action


def withdraw_audit(project: Project, before: dict[str, object]) -> None:
    """Undo a recorded audit (core.ops' "record audit"): its report is taken off the record and the judge's status
    is as it was before it — the audit no longer counts for the licence, the retirement or the reinstatement it
    decided. `before`: the operation's inverse (name, status, status_at, status_reason, report)."""
    judge = get_judge(project, str(before["name"]))
    with project.write("undo judge audit", changed=(Area.JUDGES, Area.AUDIT)) as conn:
        if before.get("report") is not None:
            conn.execute("DELETE FROM agreement_reports WHERE id = ? AND judge_id = ?", (before["report"], judge.id))
        conn.execute("UPDATE judges SET status = ?, status_at = ?, status_reason = ? WHERE id = ?",
                     (before["status"], before.get("status_at"), before.get("status_reason"), judge.id))
        project.audit(conn, "audit undone", "judge", judge.name, report=before.get("report"),
                      status=before["status"])


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
                               f"{result.verdict}: {describe(result)})")
    with project.write("set judge status", changed=(Area.JUDGES, Area.AUDIT)) as conn:
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
