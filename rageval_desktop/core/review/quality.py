"""Reviewers checked: hidden gold items and retests in a reviewer's queue, their speed, and setting a reviewer aside
(as CVAT's honeypots and Toloka's control tasks do, with an error rate stated for the verdict).

- **Gold items** are targets whose score is settled without this reviewer: a lead's adjudication, or two or more
  other reviewers rating alike. The desk mixes them into a reviewer's queue at `gold_rate` (one in ten by default),
  drawn like any target; the reviewer rates them blind. A check's rating is kept apart (`reviewer_checks`): no
  audit, metric or sample counts it.
- **Retests**: a target the reviewer rated some ratings ago comes back at `retest_rate` (test–retest).
- **Accuracy** on gold is the share of checks that agree with the settled score — the same verdict at the metric's
  pass mark (3 against 4 on correctness is an error; 4 against 5 is not), or within the team's tolerance on a metric
  without a mark (`team.misses`, the errors the decisions fed by ratings count) — with a confidence
  sequence (`evidence.proportion_sequence`: valid however often the Team page is read), its α shared among the
  reviewers checked (Bonferroni). A reviewer whose sequence lies below `floor` fails; above it, passes; else
  "cannot tell yet", with the checks that would tell. bench/bench_reviewer_checks.py measures both error rates.
- **Speed**: ratings made in less than `speed_floor` seconds are flagged (shown, never acted on alone).
- **Set aside**: a lead's hold withdraws a reviewer's ratings of a metric (recorded with its reason, undoable);
  ratings they make or import while held are held too; bringing them back restores exactly what the hold took.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import asdict, dataclass
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.review import evidence
from rageval_desktop.core.review.agreement import human_frame, scale
from rageval_desktop.core.review.ratings import HELD, apply_holds, check_score
from rageval_desktop.core.review.sampling import get_sample
from rageval_desktop.core.review.targets import target_id, unit
from rageval_desktop.core.review.team import misses
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

KINDS = ("gold", "retest")
RETEST_AFTER = 6        # a retest comes back at least this many ratings after the first (not from short memory)


@dataclass(frozen=True)
class CheckSettings:
    gold_rate: float = 0.1       # one target in ten is a gold item (when the metric has any left for the reviewer)
    retest_rate: float = 0.05    # one in twenty is a retest
    speed_floor: float = 2.0     # seconds: ratings made faster are flagged
    floor: float = 0.7           # accuracy on gold below which a reviewer fails
    alpha: float = 0.05          # the verdicts' error rate, shared among the reviewers checked


def settings(project: Project) -> CheckSettings:
    base = CheckSettings()
    return CheckSettings(**{name: float(project.meta(f"checks.{name}", str(getattr(base, name))) or
                                        getattr(base, name)) for name in ("gold_rate", "retest_rate",
                                                                           "speed_floor", "floor", "alpha")})


def set_settings(project: Project, **changes: float | None) -> CheckSettings:
    limits = {"gold_rate": (0.0, 0.5), "retest_rate": (0.0, 0.5), "speed_floor": (0.0, 600.0), "floor": (0.0, 1.0),
              "alpha": (0.001, 0.2)}
    for name, value in changes.items():
        if name not in limits:
            raise RagevalError(f"unknown check setting '{name}'; choose one of {', '.join(limits)}")
        low, high = limits[name]
        if value is not None and not (math.isfinite(value) and low <= value <= high):
            raise RagevalError(f"{name.replace('_', ' ')} is a number from {low:g} to {high:g}, not {value:g}")
    with project.write("set reviewer checks", changed=(Area.SETTINGS,)) as conn:
        for name, value in changes.items():
            if value is not None:
                project.set_meta(conn, f"checks.{name}", repr(float(value)))
        project.audit(conn, "set reviewer checks", "settings", None, **changes)
    return settings(project)


@dataclass(frozen=True)
class Check:
    """A target shown in a reviewer's queue as a check: its settled score (gold) or their own earlier one (retest)."""
    kind: str
    row_id: int
    metric: str
    item: int
    item_key: str | None
    expected: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def agrees(score: float, expected: float, metric: str) -> bool:
    """A check answered right, as the decisions the reviewer's ratings feed count errors (`team.misses`): the same
    verdict at the metric's pass mark, or, on a metric without one, within the team's tolerance. (It counted any
    miss within one point as agreement: a reviewer flipping 3s and 4s passed.)"""
    return not bool(misses(metric, score, expected))


def gold_items(project: Project, metric: str, reviewer: str) -> list[Check]:
    """Targets of `metric` settled without `reviewer`: adjudicated, or rated alike by two or more others — none the
    reviewer has rated or been checked on. In a fixed order (the desk shuffles them per reviewer and sample)."""
    kind = unit(metric)
    conn = project.reader()
    found: dict[tuple[int, str], Check] = {}
    latest = human_frame(project, metric)
    theirs = {(int(r), t) for r, t in zip(latest.loc[latest["reviewer"] == reviewer, "run_row_id"],
                                          latest.loc[latest["reviewer"] == reviewer, "target"], strict=True)}
    others = latest[latest["reviewer"] != reviewer]
    for (row, target), group in others.groupby(["run_row_id", "target"], sort=True):
        if group["reviewer"].nunique() >= 2 and group["score"].nunique() == 1:
            key = group["item_key"].iloc[-1]
            found[(int(row), target)] = Check("gold", int(row), metric, int(group["passage_rank"].iloc[-1]),
                                              key if isinstance(key, str) else None, float(group["score"].iloc[0]))
    for row, item, key, score in conn.execute(   # a lead's decision wins over a unanimous median
            "SELECT run_row_id, item, item_key, score FROM adjudications WHERE metric = ? AND withdrawn_at IS NULL "
            "ORDER BY id", (metric,)):
        found[(int(row), target_id(kind, int(item), key))] = Check("gold", int(row), metric, int(item), key,
                                                                   float(score))
    checked = {(int(r), target_id(kind, int(i), k)) for r, i, k in conn.execute(
        "SELECT run_row_id, item, item_key FROM reviewer_checks WHERE reviewer = ? AND metric = ? AND kind = 'gold' "
        "AND withdrawn_at IS NULL", (reviewer, metric))}
    return [c for t, c in sorted(found.items()) if t not in theirs and t not in checked]


def _slots(rng: random.Random, rate: float, size: int, start: int) -> list[int]:
    """After how many of the reviewer's ratings each check of one kind is due: gaps drawn around 1/rate (from half
    to one and a half times it), so a reviewer cannot count their way to the next check."""
    if rate <= 0:
        return []
    mean, out, at = 1 / rate, [], start
    while at <= size:
        at += rng.randint(max(1, math.ceil(mean / 2)), max(1, math.floor(mean * 1.5)))
        if at <= size:
            out.append(at)
    return out


def due(project: Project, sample_id: int, reviewer: str) -> Check | None:
    """The check due now in `reviewer`'s queue of a sample, if any (the desk shows it before the next target): a
    gold item or a retest whose slot the reviewer's ratings in the sample have reached and that is not done yet.
    Deterministic per sample and reviewer, so reopening the desk shows the same checks."""
    sample = get_sample(project, sample_id)
    reviewer = reviewer.strip()
    if not reviewer:
        return None
    conf = settings(project)
    conn = project.reader()
    mine = conn.execute(
        "SELECT run_row_id, passage_rank, item_key, score FROM human_ratings WHERE sample_id = ? AND reviewer = ? AND "
        f"skipped = 0 AND (withdrawn_at IS NULL OR id IN ({HELD})) ORDER BY id", (sample_id, reviewer)).fetchall()
    done = dict(conn.execute("SELECT kind, COUNT(*) FROM reviewer_checks WHERE sample_id = ? AND reviewer = ? AND "
                             "withdrawn_at IS NULL GROUP BY kind", (sample_id, reviewer)).fetchall())
    rng = random.Random(zlib.crc32(f"{sample_id}/{reviewer}".encode()))
    size = len(sample.targets)
    gold_slots = _slots(rng, conf.gold_rate, size, 1)
    retest_slots = _slots(rng, conf.retest_rate, size, RETEST_AFTER)
    if sum(1 for s in gold_slots if s <= len(mine)) > done.get("gold", 0):
        wanted = set(sample.targets)
        pool = [c for c in gold_items(project, sample.metric, reviewer) if (c.row_id, c.item) not in wanted]
        ids = sorted({c.row_id for c in pool})
        here = {r for (r,) in conn.execute(     # the card's title names the run: the sample's own run hides a check
            f"SELECT id FROM run_rows WHERE run_id = ? AND id IN ({','.join('?' * len(ids))})",
            (find_run(project, sample.run), *ids))} if ids else set()
        pool = [c for c in pool if c.row_id in here] or pool
        if pool:
            return pool[random.Random(zlib.crc32(f"{sample_id}/{reviewer}/{done.get('gold', 0)}".encode()))
                        .randrange(len(pool))]
    if sum(1 for s in retest_slots if s <= len(mine)) > done.get("retest", 0):
        tested = {(int(r), int(i)) for r, i in conn.execute(
            "SELECT run_row_id, item FROM reviewer_checks WHERE sample_id = ? AND reviewer = ? AND kind = 'retest' "
            "AND withdrawn_at IS NULL", (sample_id, reviewer))}
        standing = {(int(r), int(i)): (k, s) for r, i, k, s in mine}      # the latest score of each target
        order = list(dict.fromkeys((int(r), int(i)) for r, i, _, _ in mine))
        for target in order[: max(0, len(order) - RETEST_AFTER)][::-1]:   # the most recent far enough back
            if target not in tested:
                key, score = standing[target]
                return Check("retest", target[0], sample.metric, target[1], key, float(score))
    return None


def record(project: Project, sample_id: int | None, reviewer: str, check: Check, score: float | None, *,
           seconds: float | None = None) -> int:
    """A reviewer's answer to a check (None: skipped — it is done, and counts for nothing)."""
    if not reviewer.strip():
        raise RagevalError("checks need a reviewer name (set it in the preferences)")
    if check.kind not in KINDS:
        raise RagevalError(f"a check is one of {', '.join(KINDS)}, not '{check.kind}'")
    if score is not None:
        score = check_score(check.metric, score)
    with project.write("check reviewer", changed=(Area.RATINGS,)) as conn:
        cur = conn.execute(
            "INSERT INTO reviewer_checks (reviewer, metric, run_row_id, item, item_key, kind, expected, score, "
            "seconds_taken, sample_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (reviewer.strip(), check.metric, check.row_id, check.item, check.item_key, check.kind, check.expected,
             score, seconds, sample_id, utcnow()))
    assert cur.lastrowid is not None
    return int(cur.lastrowid)


def withdraw_check(project: Project, check_id: int) -> None:
    with project.write("undo check", changed=(Area.RATINGS,)) as conn:
        cur = conn.execute("UPDATE reviewer_checks SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL",
                           (utcnow(), check_id))
        if cur.rowcount == 0:
            raise NotFound(f"no check {check_id} to undo")


# --- holds -----------------------------------------------------------------------------------------------------------
def hold_of(project: Project, reviewer: str, metric: str) -> dict[str, Any] | None:
    row = project.reader().execute(
        "SELECT id, reason, lead, created_at, (SELECT COUNT(*) FROM reviewer_hold_ratings WHERE hold_id = h.id) "
        "FROM reviewer_holds h WHERE reviewer = ? AND metric = ? AND withdrawn_at IS NULL ORDER BY id DESC LIMIT 1",
        (reviewer, metric)).fetchone()
    return None if row is None else {"id": row[0], "reason": row[1], "lead": row[2], "at": row[3], "ratings": row[4]}


def set_aside(project: Project, reviewer: str, metric: str, reason: str, lead: str) -> int:
    """Set a reviewer's ratings of `metric` aside: withdrawn from every audit, metric and team figure until they are
    brought back, and so are the ones they make meanwhile. The hold's id."""
    if not reason or not reason.strip():
        raise RagevalError("say why: setting a reviewer aside needs a reason")
    if not lead or not lead.strip():
        raise RagevalError("a hold carries the lead's name (set your reviewer name)")
    reviewer = reviewer.strip()
    scale(metric)
    if hold_of(project, reviewer, metric) is not None:
        raise RagevalError(f"{reviewer}'s ratings of {metric} are set aside already")
    if not project.reader().execute("SELECT 1 FROM human_ratings WHERE reviewer = ? AND metric = ? UNION SELECT 1 "
                                    "FROM reviewer_checks WHERE reviewer = ? AND metric = ?",
                                    (reviewer, metric, reviewer, metric)).fetchone():
        raise NotFound(f"{reviewer} has rated nothing of {metric}")
    with project.write("set reviewer aside", changed=(Area.RATINGS,)) as conn:
        cur = conn.execute("INSERT INTO reviewer_holds (reviewer, metric, reason, lead, created_at) VALUES "
                           "(?, ?, ?, ?, ?)", (reviewer, metric, reason.strip(), lead.strip(), utcnow()))
        held = apply_holds(conn, metric, reviewer)
        project.audit(conn, "set reviewer aside", "reviewer", reviewer, metric=metric, reason=reason.strip(),
                      lead=lead.strip(), ratings=held)
    assert cur.lastrowid is not None
    return int(cur.lastrowid)


def bring_back(project: Project, reviewer: str, metric: str) -> int:
    """Lift the hold: the ratings it set aside count again (not those the reviewer withdrew meanwhile). How many."""
    found = hold_of(project, reviewer.strip(), metric)
    if found is None:
        raise NotFound(f"{reviewer.strip()}'s ratings of {metric} are not set aside")
    with project.write("bring reviewer back", changed=(Area.RATINGS,)) as conn:
        conn.execute("UPDATE reviewer_holds SET withdrawn_at = ? WHERE id = ?", (utcnow(), found["id"]))
        back = conn.execute("UPDATE human_ratings SET withdrawn_at = NULL WHERE id IN (SELECT rating_id FROM "
                            "reviewer_hold_ratings WHERE hold_id = ?)", (found["id"],)).rowcount
        project.audit(conn, "bring reviewer back", "reviewer", reviewer.strip(), metric=metric, ratings=back)
    return int(back)


# --- the report ------------------------------------------------------------------------------------------------------
@dataclass
class Share:
    n: int
    agreed: int
    value: float | None
    ci: list[float]


@dataclass
class ReviewerQuality:
    reviewer: str
    gold: Share
    verdict: str               # fails | passes | cannot tell | no checks
    more: int | None           # gold checks that would tell, at the accuracy seen so far (None: no estimate)
    retest: Share
    rated: int
    fast: int                  # ratings made in less than the speed floor
    median_seconds: float | None
    held: dict[str, Any] | None


@dataclass
class QualityReport:
    metric: str
    settings: dict[str, float]
    alpha_each: float          # each reviewer's share of α
    reviewers: list[ReviewerQuality]
    gold_items: int            # settled targets of the metric (the pool checks are drawn from)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _share(pairs: list[tuple[float, float]], metric: str, alpha: float) -> Share:
    agreed = sum(agrees(score, expected, metric) for score, expected in pairs)
    low, high = evidence.proportion_sequence(agreed, len(pairs), alpha=alpha)
    return Share(len(pairs), agreed, agreed / len(pairs) if pairs else None, [low, high])


def verdict(share: Share, floor: float, alpha: float) -> str:
    """fails | passes | cannot tell | no checks: a one-sided sequential test on each side of the floor at `alpha`
    (evidence.beyond_floor), valid however often it is looked at."""
    if share.n == 0:
        return "no checks"
    side = evidence.beyond_floor(share.agreed, share.n, floor, alpha=alpha)
    return {"below": "fails", "above": "passes"}.get(side or "", "cannot tell")


def checks_needed(share: Share, floor: float, alpha: float, most: int = 400) -> int | None:
    """More gold checks that would settle the verdict if the accuracy stayed as seen (None: it sits on the floor,
    or more than `most` would be needed)."""
    if share.n == 0 or share.value is None or abs(share.value - floor) < 0.02:
        return None
    for more in range(1, most + 1):
        n = share.n + more
        if evidence.beyond_floor(round(share.value * n), n, floor, alpha=alpha) is not None:
            return more
    return None


def quality_report(project: Project, metric: str) -> QualityReport:
    """Every reviewer of `metric`: gold accuracy and its verdict, test–retest, speed, and any hold."""
    import numpy as np

    scale(metric)
    conf = settings(project)
    conn = project.reader()
    checks: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for who, kind, score, expected in conn.execute(
            "SELECT reviewer, kind, score, expected FROM reviewer_checks WHERE metric = ? AND withdrawn_at IS NULL "
            "AND score IS NOT NULL ORDER BY id", (metric,)):
        checks.setdefault(who, {"gold": [], "retest": []})[kind].append((float(score), float(expected)))
    seconds: dict[str, list[float]] = {}
    rated: dict[str, int] = {}
    for who, secs in conn.execute(
            "SELECT reviewer, seconds_taken FROM human_ratings WHERE metric = ? AND skipped = 0 AND (withdrawn_at IS "
            f"NULL OR id IN ({HELD}))", (metric,)):
        rated[who] = rated.get(who, 0) + 1
        if secs is not None:
            seconds.setdefault(who, []).append(float(secs))
    held = {who for (who,) in conn.execute("SELECT reviewer FROM reviewer_holds WHERE metric = ? AND withdrawn_at IS "
                                           "NULL", (metric,))}
    people = sorted(set(rated) | set(checks) | held)
    with_gold = sum(1 for who in people if checks.get(who, {}).get("gold"))
    alpha = conf.alpha / max(1, with_gold)
    out = []
    for who in people:
        mine = checks.get(who, {"gold": [], "retest": []})
        gold = _share(mine["gold"], metric, alpha)
        secs = seconds.get(who, [])
        out.append(ReviewerQuality(who, gold, verdict(gold, conf.floor, alpha), checks_needed(gold, conf.floor, alpha),
                                   _share(mine["retest"], metric, alpha), rated.get(who, 0),
                                   sum(1 for s in secs if s < conf.speed_floor),
                                   float(np.median(secs)) if secs else None, hold_of(project, who, metric)))
    pool = len(gold_items(project, metric, "\0"))     # (a name no one has: every settled target)
    return QualityReport(metric, asdict(conf), alpha, out, pool)


def describe(q: ReviewerQuality, floor: float) -> str:
    """One reviewer's checks in words, the same in the CLI and the app (display rounding)."""
    g = q.gold
    if g.n == 0:
        text = "no gold checks yet"
    else:
        text = (f"gold {g.agreed}/{g.n} = {g.value:.0%} [{g.ci[0]:.0%}, {g.ci[1]:.0%}]: " + {
            "fails": f"below {floor:.0%} — set their ratings aside",
            "passes": f"at or above {floor:.0%}",
            "cannot tell": "cannot tell yet" + (f" (about {q.more} more checks would tell)" if q.more else "")}
            [q.verdict])
    if q.retest.n:
        text += f"; retest {q.retest.agreed}/{q.retest.n} the same"
    if q.fast:
        text += f"; {q.fast} of {q.rated} ratings under the speed floor"
    if q.held:
        text += f"; SET ASIDE ({q.held['reason']}, by {q.held['lead']})"
    return text


__all__ = ["Check", "CheckSettings", "QualityReport", "ReviewerQuality", "agrees", "bring_back", "describe", "due",
           "gold_items", "quality_report", "record", "set_aside", "set_settings", "settings", "withdraw_check"]
