"""A judge's licence (issue 30): what its evidence lets it do, decided here once for the CLI, the app, reports and
the gate.

- **gate**: a recorded audit of the judge as it is now, whose agreement with the reviewers clears the retirement
  threshold on the interval the verdict uses (the anytime-valid one), with at least the minimum of ratings, and no
  failed sensitivity probe of the judge as it is now (core.jobs.checks);
- **selective**: not a gate licence for the whole run, but selective judging (core.review.selective) shows a
  confidence level above which its pass/fail agrees with the reviewers' at ≥ 1 − α with probability ≥ 1 − δ, and no
  probe or bias battery of it failed: it gates the rows it decides, the desk the rest (the gate's `selective`
  estimator, core.metrics.selective_cells);
- **monitor**: that interval's lower bound reaches the monitor floor (0.4 by default) — its numbers are shown,
  flagged, and do not gate;
- **explore**: anything else, including a judge never audited, retired, or changed since its audit.

A licence is bound to what was audited (`core.judges.fingerprint`): change the model, the rubric, the sampling, the
examples or the HHEM model and it expires — the judge is back to *explore* with the reason "changed since audit:
model" until an audit of it as it is now is recorded (the ratings are reused: judge the rated rows again)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.judges.fingerprint import changed, fingerprint
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import get_judge, list_judges
from rageval_desktop.core.review import selective
from rageval_desktop.core.review.agreement import Agreement, agreement, apply, ratings
from rageval_desktop.core.review.audit_plan import plan_audit
from rageval_desktop.core.review.settings import policy
from rageval_desktop.core.review.transport import Plan, Transport, describe, describe_plan, draw, plan, transport
from rageval_desktop.core.review.weights import weighted_pairs
from rageval_desktop.core.store.project import Project

TIERS = ("gate", "selective", "monitor", "explore")


@dataclass(frozen=True)
class Licence:
    judge: str
    tier: str                                    # gate | monitor | explore
    reasons: tuple[str, ...] = ()                # why not a higher tier (empty for gate)
    granted_at: str | None = None                # the recorded audit it rests on
    changed: tuple[str, ...] = ()                # the parts changed since that audit
    evidence: dict[str, Any] = field(default_factory=dict)   # statistic, value, interval, n the tier was read from

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reasons"], out["changed"] = list(self.reasons), list(self.changed)
        out["said"] = self.describe()
        return out

    def short(self) -> str:
        """The licence in a table cell: a selective licence by the share it decides, its whole text in `describe`."""
        if self.tier == "selective":
            s = self.evidence["selective"]
            return f"selective · decides {s['coverage']:.0%} of rated rows (confidence ≥ {s['level']:.2f})"
        if (self.evidence.get("selective") or {}).get("whole_run"):
            return f"{self.tier} · decides (nearly) every row: held to the whole-run bar"
        return self.describe()

    def describe(self) -> str:
        head = self.tier
        if self.tier == "selective":
            head += f": {selective_scope(self.evidence['selective'])}"
        return head + (f" ({'; '.join(self.reasons)})" if self.reasons else "")


def selective_scope(s: dict[str, Any]) -> str:
    """A selective licence's reach in words (display rounding)."""
    return (f"gates only the rows it decides — confidence ≥ {s['level']:.2f}, {s['coverage']:.0%} of the rated rows, "
            f"agreeing with people on ≥ {1 - s['alpha']:.0%} of them with probability ≥ {1 - s['delta']:.0%}")


def _restoring(project: Project, judge: Judge, run: str) -> int | None:
    """The ratings of `run` the planner asks for to audit the judge there alone (None: it cannot say)."""
    try:
        found = plan_audit(project, run, judge.metric, judge=judge.name).get("ratings")
    except RagevalError:
        return None
    return int(found) if found else None


def last_audit(project: Project, judge: Judge) -> tuple[str, dict[str, Any]] | None:
    """(when, details) of the judge's newest recorded audit."""
    row = project.reader().execute("SELECT created_at, details FROM agreement_reports WHERE judge_id = ? "
                                   "ORDER BY id DESC LIMIT 1", (judge.id,)).fetchone()
    return (row[0], json.loads(row[1])) if row else None


def last_check(project: Project, judge: Judge, kind: str) -> dict[str, Any] | None:
    """The judge's newest stability, probe or bias-battery summary made on the judge as it is now (None: none, or
    the judge has changed since), with its id and time. The battery is kept as a probe (judge_checks.kind) whose
    summary says `check: bias`."""
    stored = "probe" if kind == "bias" else kind
    for cid, fp, summary, at in project.reader().execute(
            "SELECT id, fingerprint, summary, created_at FROM judge_checks WHERE judge_id = ? AND kind = ? "
            "ORDER BY id DESC", (judge.id, stored)):
        found = json.loads(summary)
        if found.get("check", stored) != kind:
            continue
        if changed(json.loads(fp), fingerprint(project, judge)):
            return None
        return {"id": cid, "at": at, **found}
    return None


def record_audit(project: Project, result: Agreement, reason: str | None = None) -> str:
    """Record an audit and act on it (core.review.agreement.apply): a judge the audit would retire stays active
    when selective judging shows it safe on the rows it is sure of — it then holds a selective licence, not a
    retirement. Returns what happened."""
    judge = get_judge(project, result.judge)
    level = None
    if result.verdict == "retire" and judge.status == "active" and not selective.decidable(judge.metric):
        found = selective.select_for(project, judge)
        # a level that decides every rated row keeps nothing back for people: the retirement stands (`licence`)
        level = None if selective.decides_every_row(found) else found.level
    return apply(project, result, reason, selective_level=level)


def _selective_ok(few: list[str]) -> bool:
    """No failed probe or bias battery stands in the way of a selective licence."""
    return not any(reason.startswith("failed") for reason in few)


def _selective(project: Project, judge: Judge) -> dict[str, Any] | None:
    """The judge's overall selective level (core.review.selective) as licence evidence; None where selective
    judging cannot decide its metric."""
    if selective.decidable(judge.metric):
        return None
    found = selective.select_for(project, judge)
    return {"level": found.level, "alpha": found.alpha, "delta": found.delta, "coverage": found.coverage,
            "decided": found.decided, "rated": found.rated, "bound": found.bound, "needed": found.needed,
            "source": selective.source(project, judge), "whole_run": selective.decides_every_row(found),
            "start": found.start}


def _suspended(project: Project, judge: Judge, run: str, evidence: dict[str, Any], when: str,
               level: float | None = None) -> Licence | None:
    """The licence suspended on `run` (monitor) when the judge errs there more than where audited — on every rated
    row for a gate licence, on the rows it decides (confidence ≥ `level`) for a selective one; None when it holds.
    The check is kept in `evidence` either way."""
    moved = transport(project, judge, run, level=level)
    evidence["transport"] = moved.as_dict()
    if not moved.suspended:
        return None
    plan = _restoring(project, judge, run)
    where = "" if level is None else f" on the rows it decides (confidence ≥ {level:.2f})"
    return Licence(judge.name, "monitor", (
        f"suspended on {run}: errors {moved.errors_run:.0%} there{where}, {moved.errors_audit:.0%} where audited "
        f"(p = {moved.p_value:.3f})" + (f"; about {plan} ratings of {run} would audit it there" if plan else ""),),
        when, (), evidence)


def licence(project: Project, judge: Judge, result: Agreement | None = None, *, run: str | None = None) -> Licence:
    """The judge's tier now, with the reasons it is not higher. With `run`, its tier on that run: a gate licence is
    suspended there (monitor) when the ratings made on the run show the judge erring more than on the audited rows
    (core.review.transport)."""
    if judge.status == "retired":
        return Licence(judge.name, "explore", ("retired",))
    audit = last_audit(project, judge)
    if audit is None:
        return Licence(judge.name, "explore", ("no recorded audit",))
    when, details = audit
    audited = details.get("fingerprint")
    if not isinstance(audited, dict):
        return Licence(judge.name, "explore", ("the recorded audit predates licences: record it again",), when)
    moved = changed(audited, fingerprint(project, judge))
    if moved:
        return Licence(judge.name, "explore", (f"changed since audit: {', '.join(moved)}",), when, tuple(moved))
    result = result or agreement(project, judge, breakdowns=False)
    pol = policy(project)
    low = result.anytime_ci[0]
    evidence: dict[str, Any] = {
        "statistic": result.statistic, "value": result.value, "anytime_ci": list(result.anytime_ci), "n": result.n,
        "threshold": pol.threshold, "min_n": pol.min_n, "monitor_floor": pol.monitor_floor}
    few = [f"n = {result.n} < {pol.min_n}"] if result.n < pol.min_n else []
    few += _probe_failures(project, judge, evidence)
    if low is not None and low >= pol.threshold and not few:
        suspended = _suspended(project, judge, run, evidence, when) if run is not None else None
        return suspended or Licence(judge.name, "gate", (), when, (), evidence)
    if _selective_ok(few) and (selective := _selective_licence(project, judge, run, evidence, when, few, low)):
        return selective
    if low is not None and low >= pol.monitor_floor:
        below = [f"lower bound {low:.2f} < {pol.threshold:g}"] if low < pol.threshold else []
        return Licence(judge.name, "monitor", tuple(below + few), when, (), evidence)
    weak = ["no interval yet"] if low is None else [f"lower bound {low:.2f} < {pol.monitor_floor:g} (monitor floor)"]
    return Licence(judge.name, "explore", tuple(weak + few), when, (), evidence)


def _probe_failures(project: Project, judge: Judge, evidence: dict[str, object]) -> list[str]:
    """The judge's last probe and bias battery, in `evidence`; the ones that failed, in words."""
    failed = []
    for kind, said in (("probe", "failed probe"), ("bias", "failed bias battery")):
        probe = last_check(project, judge, kind)
        if probe is not None:
            evidence[kind] = {"id": probe["id"], "passed": probe.get("passed"), "failed": probe.get("failed", [])}
            if probe.get("passed") is False:
                failed.append(f"{said}: {', '.join(probe.get('failed', []))}")
    return failed


def _selective_licence(project: Project, judge: Judge, run: str | None, evidence: dict[str, object], when: str,
                       few: list[str], low: float | None) -> Licence | None:
    """A selective licence (the rows it decides at its level), or None (then `few` may say why not, a level that
    decides the whole run)."""
    found = _selective(project, judge)
    if found is None:
        return None
    evidence["selective"] = found
    if found["whole_run"]:
        # a level that decides every rated row is a licence for the whole run by another door: held to the whole
        # run's bar, which the interval did not clear (issue 75: a token-F1 judge at lower bound 0.54 gated every
        # row as "selective" at confidence >= 0.07)
        few.append(f"its selective level (confidence ≥ {found['level']:.2f}) decides {found['coverage']:.0%} "
                   "of the rated rows: that is a licence for the whole run, held to the whole run's bar")
        return None
    if found["level"] is None:
        return None
    suspended = _suspended(project, judge, run, evidence, when, level=found["level"]) if run is not None else None
    if suspended is not None:
        return suspended
    threshold = policy(project).threshold
    below = ([f"lower bound {low:.2f} < {threshold:g}"] if low is not None and low < threshold
             else ["no interval yet"] if low is None else [])
    return Licence(judge.name, "selective", tuple(below + few), when, (), evidence)


@dataclass(frozen=True)
class Standing:
    """What a change of ratings is measured against (`moved`): every active judge's licence, and per metric they
    judge how many rated targets an audit leaves out (core.review.weights.weighted_pairs)."""

    licences: dict[str, Licence]
    left_out: dict[str, int]


def standing(project: Project) -> Standing:
    """The judges' licences and the ratings their audits leave out, now."""
    judges = [j for j in list_judges(project) if j.status == "active"]
    return Standing({j.name: licence(project, j) for j in judges},
                    {m: weighted_pairs(project, m, ratings(project, m))[2] for m in sorted({j.metric for j in judges})})


def moved(before: Standing, after: Standing, what: str) -> list[str]:
    """What `what` (ratings imported, a pack, a rating) changed, in words: each judge whose tier or selective reach
    moved, with why it stands where it does now, and the earlier ratings an audit stopped counting, with why (issue
    75: 33 ratings of the demo's waiting sample took a judge from selective to explore — the 144 ratings outside any
    sample stopped counting — and nothing said so)."""
    out = []
    for name, now in after.licences.items():
        was = before.licences.get(name)
        if was is None or was.short() == now.short():
            continue
        shown = now.short()
        untold = [r for r in now.reasons if r not in shown]      # a cell that names its reasons says them once
        why = f", because {'; '.join(untold)}" if untold else ""
        out.append(f"{what} changed {name}'s licence: {was.short()} → {shown}{why}")
    for metric, now_out in after.left_out.items():
        dropped = now_out - before.left_out.get(metric, now_out)
        if dropped > 0:
            out.append(f"{dropped} earlier rating(s) of {metric} stopped counting in its audits: made outside any "
                       "sample (or ahead of its rated order), they cannot be weighed as the sample now read was drawn")
    return out


def held(project: Project, tiers: tuple[str, ...]) -> dict[str, Licence]:
    """The active judges whose licence now is one of `tiers`, by name (an agreement each)."""
    found = {j.name: licence(project, j) for j in list_judges(project) if j.status == "active"}
    return {name: lic for name, lic in found.items() if lic.tier in tiers}


def selective_held(project: Project) -> dict[str, Licence]:
    """The active judges holding a selective licence now, by name (what `row_calls` reads)."""
    return held(project, ("selective",))


def row_calls(project: Project, row_id: int, held: dict[str, Licence]) -> dict[str, str]:
    """For one run row, what each selectively licensed judge in `held` does with it: decides it alone (its
    confidence on the row at or above its licence's level) or leaves it to people — in words, by judge name. A judge
    with no usable verdict on the row is left out."""
    out: dict[str, str] = {}
    for name, lic in held.items():
        level = (lic.evidence.get("selective") or {}).get("level")
        if level is None:
            continue
        judge = get_judge(project, name)
        found = project.reader().execute(
            "SELECT score FROM judgments WHERE judge_id = ? AND run_row_id = ? AND status = 'ok' AND passage_rank = 0 "
            "ORDER BY id DESC LIMIT 1", (judge.id, row_id)).fetchone()
        if found is None or found[0] is None:
            continue
        conf = float(selective.confidences(project, judge, [row_id], [float(found[0])],
                                           lic.evidence["selective"].get("source"))[0])
        if conf >= level:
            out[name] = f"decides this row alone: confidence {conf:.2f} ≥ {level:.2f} (selective licence)"
        else:
            out[name] = (f"leaves this row to people: confidence {conf:.2f} < {level:.2f} — the desk's share "
                         "(Review: the rows it leaves)")
    return out


TRUSTED = ("gate", "selective", "monitor")    # tiers whose verdicts a screen shows as the project's own


@dataclass(frozen=True)
class TransportCheck:
    """Does a judge's audit travel to a run (`transport_check`): the check, the licence there, what a check can see."""

    check: Transport
    held: Licence
    sized: Plan | None       # the ratings of the run that catch the drift asked about (None: no audit to plan on)
    text: str
    plan_text: str

    def as_dict(self) -> dict[str, object]:
        """As `rageval transport --json` gives it."""
        return {**self.check.as_dict(), "licence": self.held.as_dict(), "text": self.text,
                "plan": None if self.sized is None else self.sized.as_dict(), "plan_text": self.plan_text}


def transport_check(project: Project, judge: Judge, run: str, *, drift: float = 0.05) -> TransportCheck:
    """Does `judge`'s audit travel to `run`? The check its licence there made (on the rows a selective licence
    decides), in words; the licence on the run; and what a check can see — how many ratings of the run catch a rise
    of `drift` in its errors (core.review.transport.plan). One reading for `rageval transport`, the Audit page and
    reports."""
    held = licence(project, judge, run=run)
    checked = held.evidence.get("transport")          # the check the licence made (its decided rows)
    t = Transport(**checked) if checked else transport(project, judge, run)
    sized = plan(t.n_audit, t.errors_audit, drift) if t.n_audit and t.errors_audit is not None else None
    return TransportCheck(t, held, sized, describe(t),
                          describe_plan(sized, judge.name, run) if sized is not None else
                          f"{judge.name}: no ratings where it was audited to plan a check against")


@dataclass(frozen=True)
class DrawnCheck:
    """A transport check put on the desk (`draw_transport`): its sample, and the judges it checks."""

    sample_id: int
    run: str
    metric: str
    targets: int
    judges: list[str]


def travelling(project: Project) -> list[Judge]:
    """The active judges whose licence would travel to another run (gate or selective): the ones a transport check
    is for."""
    return [j for j in list_judges(project)
            if j.status == "active" and licence(project, j).tier in ("gate", "selective")]


def draw_transport(project: Project, judges: list[Judge], run: str, size: int) -> list[DrawnCheck]:
    """A transport check on the desk before anyone rates: one sample of `size` rows of `run` per metric of `judges`
    (core.review.transport.draw). What each holds: its id, run, metric, targets and the judges it checks."""
    made = []
    for metric in dict.fromkeys(j.metric for j in judges):
        sample = draw(project, next(j for j in judges if j.metric == metric), run, size=size)
        made.append(DrawnCheck(sample.id, run, metric, len(sample.targets),
                               [j.name for j in judges if j.metric == metric]))
    return made


def licensed_judges(project: Project, tiers: tuple[str, ...] = TRUSTED) -> list[str]:
    """The active judges whose licence is one of `tiers` (by default any but explore: audited, not retired, not
    changed since): what the Failures page counts by default (an agreement each)."""
    return list(held(project, tiers))
