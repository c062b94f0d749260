"""The numbers the analysis pages show, computed where `chart_process.read` runs them: in the app's helper process
(on the project opened there for reading), or in the asking worker when there is none. Qt-free, and importable
without pandas: what these functions read is imported inside them, in the process that runs them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

T = TypeVar("T")

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.metrics.gate import GateResult
    from rageval_desktop.core.metrics.gate_config import GateConfig
    from rageval_desktop.core.reports.plots import Region
    from rageval_desktop.core.review.agreement import Agreement
    from rageval_desktop.core.review.licence import TransportCheck
    from rageval_desktop.core.review.quality import QualityReport
    from rageval_desktop.core.review.settings import RetirementPolicy
    from rageval_desktop.core.review.team import TeamReport
    from rageval_desktop.core.store.project import Project

    Passes = dict[str, Any] | None     # core.review.accepts.pass_fail


def dashboard(project: Project, run: str, baseline: str | None, kind: str, size: tuple[int, int],
              dark: bool) -> tuple[dict, dict | None, bytes, list[Region]]:
    """The run's dashboard, the baseline run's (overlaid on the chart), and the chart drawn for the pane: `kind`
    "slices" (bars per slice with CIs) or "boxes" (the gold-free metrics per question, open-rag-eval style; the
    per-question values ride along in the summary as `distributions`). The chart as (PNG, clickable regions)."""
    from rageval_desktop.core.base.vocab import gold_free
    from rageval_desktop.core.metrics.dashboard import dashboard as summary_of
    from rageval_desktop.core.reports.content import distributions

    summary = summary_of(project, run)
    base = summary_of(project, baseline) if baseline and baseline != run else None
    if any(gold_free(m) for m in summary["judge_metrics"]):
        summary["distributions"] = distributions(project, [baseline, run] if base and baseline else [run])
    png, regions = dashboard_png(summary, base, kind, size, dark)
    return plain(summary), plain(base), png, regions


def plain(value: T) -> T:
    """`value` with numpy's numbers as Python's and its arrays as lists, at any depth of dicts, lists and tuples: what
    the window unpickles then needs no numpy (20 MB)."""
    if isinstance(value, dict):
        return cast(T, {k: plain(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):      # (not a named tuple)
        items = [plain(v) for v in value]
        return cast(T, items if type(value) is list else tuple(items))
    tolist = getattr(value, "tolist", None)      # a numpy scalar or array (never imported here for the check)
    if tolist is not None and type(value).__module__ == "numpy":
        return cast(T, tolist())
    return value


def dashboard_png(summary: dict, base: dict | None, kind: str, size: tuple[int, int],
                  dark: bool) -> tuple[bytes, list[Region]]:
    from rageval_desktop.gui import chart_process

    if kind == "boxes":
        png, _ = chart_process.draw("boxes", {"distributions": summary.get("distributions") or {}}, size, dark)
        return png, []
    return chart_process.draw("bars", {"dashboard": summary, "baseline_dashboard": base}, size, dark)


def compare(project: Project, baseline: str, candidate: str, size: tuple[int, int], dark: bool,
            estimator: str, limit: float) -> tuple[dict, bytes, list[Region], GateResult]:
    """The comparison under the project's gate (the one `rageval gate` runs), its licences applied, its chart, and
    the gate's verdict at the page's drop `limit` (`gate_verdict`)."""
    from rageval_desktop.core.metrics import gate_config
    from rageval_desktop.core.metrics.gate import apply_licences, gated_comparison, would_ship
    from rageval_desktop.core.review import pairwise
    from rageval_desktop.gui import chart_process

    config = gate_config.resolve(project, None)
    result = gated_comparison(project, baseline, candidate, config, estimator=estimator)
    apply_licences(project, result)              # the gate's verdict below counts only licensed judges, as the CLI
    result["would_ship"] = would_ship(project, result)
    result["gate_config"] = config
    preferred = pairwise.between(project, baseline, candidate)     # what reviewers said of the pairs, if asked
    result["pairwise"] = None if preferred is None else preferred.words()
    order = judged_first(result["shown_metrics"], estimator)      # the plots in the table's order
    png, regions = chart_process.draw("deltas", {**result, "shown_metrics": order}, size, dark)
    return result, png, regions, gate_verdict(result, limit, config)


def judged_first(metrics: list[str], estimator: str) -> list[str]:
    """Compare's metrics, in its table and its plots: under an estimator other than the judges' mean, the judge
    metrics it reads come first — "selective judge + desk" changed only correctness, then past the table's right
    edge at 1280 (issue 77)."""
    from rageval_desktop.core.base.vocab import METRICS

    if estimator == "mean":
        return list(metrics)
    return [m for m in metrics if m in METRICS] + [m for m in metrics if m not in METRICS]


def failures(project: Project, run: str, failure: str | None, slice_tag: str | None, metric: str | None,
             sample: int | None, licensed_only: bool) -> dict:
    """The Failures page's listing (core.metrics.failures.failure_listing), its rows as the page's table shows them
    (`judges`: who failed the row, `judges__tip`: which metrics); `licensed_only`: generation failures by licensed
    judges' verdicts only (a judge never audited, or one the audit retires, does not fill the page), named in
    `judges_counted`."""
    from rageval_desktop.core.metrics import failures as failing
    from rageval_desktop.core.review.licence import licensed_judges

    judges = licensed_judges(project) if licensed_only else None
    found = failing.failure_listing(project, run, judges=judges, failure=failure, slice_tag=slice_tag, metric=metric,
                                    sample=sample, answers=False)
    found["judges_counted"] = judges
    # each row as the page's table shows it, and no more (the detail pane reads the row it shows): 88,888 failing
    # rows of a 200,000-row run held 78 MB in the window with the answers, gold answers and lists of each. The
    # answers are not read, and each row is replaced where it lies (the listing is not held twice)
    rows = found["rows"]
    for i, r in enumerate(rows):
        rows[i] = {"row_id": r["row_id"], "external_id": r["external_id"], "slice": r["slice"],
                   "failure": r["failure"], "first_gold_rank": r["first_gold_rank"], "prompt_k": r["prompt_k"],
                   "question": r["question"], "judges": ", ".join(r["failed_judges"]),
                   "judges__tip": ", ".join(r["failed_metrics"])}
    return found


ABSTAINED = "abstained:"   # the review page's mode box's data for "the rows judge J leaves to people"


def abstainers(project: Project, run: str, metric: str) -> list[dict[str, object]]:
    """The judges of `metric` that may decide alone on part of `run` (core.review.selective), with the rows each
    leaves to people there — what the review desk can draw a sample of."""
    from rageval_desktop.core.judges.registry import list_judges
    from rageval_desktop.core.review import selective

    if selective.decidable(metric):
        return []
    out: list[dict[str, object]] = []
    for judge in list_judges(project):
        if judge.metric != metric:
            continue
        level = selective.select_for(project, judge).level
        if level is None:
            continue
        routed = selective.route(project, [judge], [level], run)
        left = sum(1 for v in routed.values() if v is None)
        if left:
            out.append({"judge": judge.name, "level": level, "left": left, "rows": len(routed)})
    return out


def review_plan(project: Project, run: str, metric: str, mode: str, size: int) -> dict[str, object]:
    """The audit planner's plan for a sample of `size` (empty when it has nothing to say)."""
    from rageval_desktop.core.review.audit_plan import plan_audit

    if mode.startswith(ABSTAINED):
        return {}
    try:
        return plan_audit(project, run, metric, mode=mode, size=size)
    except Exception:      # the plan only informs: a run with nothing judged yet has nothing to plan
        return {}


@dataclass(frozen=True)
class AuditRead:
    """What the Audit page shows, read at once off the GUI thread."""

    results: list[Agreement]                     # every judge's agreement
    licences: dict[str, tuple[str, str]]         # judge -> (its licence's cell, in words)
    accepts: dict[str, Passes]                   # judge -> its pass/fail against the reviewers
    checks: dict[str, dict[str, str]]            # judge -> the cells of its newest checks, run order, selective
    policy: RetirementPolicy                     # the project's retirement rule
    history: dict[str, list[dict[str, Any]]]     # judge -> its recorded audits, newest first


def audit(project: Project) -> AuditRead:
    """The Audit page's reading: every judge's agreement, its licence (core.review.licence: one rule for every
    screen), its pass/fail against the reviewers (core.review.accepts), and per judge the cells of its newest
    stability, probe and bias checks, its run order (core.review.system) and where it may decide alone; the
    retirement rule and each judge's recorded audits."""
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review.accepts import pass_fail
    from rageval_desktop.core.review.agreement import audit_all, audit_history
    from rageval_desktop.core.review.licence import last_check, licence
    from rageval_desktop.core.review.settings import policy
    from rageval_desktop.core.review.system import system_agreement
    from rageval_desktop.core.store import reads

    with reads.shared(project):          # each judge's pairs and the ratings read once for all four readings
        results = audit_all(project)
        judges = {r.judge: get_judge(project, r.judge) for r in results}
        held = {r.judge: licence(project, judges[r.judge], r) for r in results}
        return AuditRead(
            results, {name: (h.short(), h.describe()) for name, h in held.items()},
            {r.judge: pass_fail(project, judges[r.judge]) for r in results},
            {r.judge: {**check_texts(last_check(project, judges[r.judge], "stability"),
                                     last_check(project, judges[r.judge], "probe"),
                                     last_check(project, judges[r.judge], "bias")),
                       **run_order_texts(system_agreement(project, judges[r.judge])),
                       "selective": selective_text(project, judges[r.judge])} for r in results},
            policy(project), {r.judge: audit_history(project, r.judge) for r in results})


def check_texts(stability: dict[str, Any] | None, probe: dict[str, Any] | None,
                bias: dict[str, Any] | None = None) -> dict[str, str]:
    """The Audit table's cells for a judge's newest checks (of the judge as it is now), with their tips; the bias
    battery shares the probe's cell."""
    out = {"stability": "—", "stability__tip": "not asked again yet: Check judge… → Stability",
           "probe": "—", "probe__tip": "not probed yet: Check judge… → Probe"}
    if stability is not None:
        rate, ci = stability.get("flip_rate"), stability.get("flip_rate_ci") or [None, None]
        out["stability"] = ("no pass mark" if rate is None else f"{rate * 100:.0f}%"
                            + (f" [{ci[0] * 100:.0f}, {ci[1] * 100:.0f}]" if ci[0] is not None else ""))
        every = stability.get("slices", {}).get("all", {})
        sd = every.get("mean_sd_points")
        out["stability__tip"] = (f"{stability['sample']} rows asked {stability['repeats']} times on "
                                 f"{stability['run']}: rows whose pass/fail changed, 95% CI"
                                 + (f"; mean within-row SD {sd:.1f} points" if sd is not None else "")
                                 + (f"; α across repeats {every['alpha']:.2f}" if every.get("alpha") is not None
                                    else ""))
    if probe is not None:
        said = {True: "passed", False: "failed", None: "needs more data"}[probe.get("passed")]
        out["probe"] = said + (f": {', '.join(probe.get('failed', []))}" if probe.get("failed") else "")
        out["probe__tip"] = "; ".join(
            f"{k['kind']} {k['verdict']} ({k['moved_right']}/{k['rows']} moved {k['expect']})"
            for k in probe.get("kinds", {}).values())
    if bias is not None:
        said = {True: "passed", False: "failed", None: "needs more data"}[bias.get("passed")]
        cell = "battery " + said + (f": {', '.join(bias.get('failed', []))}" if bias.get("failed") else "")
        out["probe"] = cell if probe is None else f"{out['probe']}; {cell}"
        tip = "bias battery: " + "; ".join(f"{k['kind']} {k['verdict']} ({k['moved_right']}/{k['rows']} stayed "
                                           f"{'the same' if k['expect'] == 'same' else 'not up'})"
                                           for k in bias.get("kinds", {}).values())
        out["probe__tip"] = tip if probe is None else f"{out['probe__tip']}\n{tip}"
    return out


def run_order_texts(system: dict[str, Any]) -> dict[str, str]:
    """The Audit table's run-order cell (Kendall τ of per-run means, core.review.system) and its tip."""
    if system.get("tau") is None:
        return {"run_order": "—", "run_order__tip": f"run order: {system.get('reason', 'not available')}"}
    ci = system["ci"]
    same = system.get("ordered_same")
    return {"run_order": f"{system['tau']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci[0] is not None else ""),
            "run_order__tip": f"Kendall τ between the judge's and the reviewers' per-run means over "
                              f"{len(system['runs'])} runs and {system['questions']} shared questions (bootstrap 95% "
                              "CI)" + (f"; {same * 100:.0f}% of run pairs ordered as the reviewers do"
                                       if same is not None else "")}


@dataclass(frozen=True)
class TransportLine:
    """The Audit page's transport line for a judge on a run (`transport_text`)."""

    judge: str
    run: str
    status: str
    short: str          # the line
    tip: str            # the whole check, as `rageval transport` says it
    ratings: int | None  # the check's size that sees a 5-point rise (None: no size does)


def transport_text(project: Project, judge_name: str, run: str) -> TransportLine:
    """The Audit page's transport line for a judge on a run (core.review.licence.transport_check): the check in
    words, the licence there, and what a check of the run can see of a 5-point rise in its errors."""
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review.licence import transport_check

    found = transport_check(project, get_judge(project, judge_name), run)
    held = found.held
    reasons = f" ({'; '.join(held.reasons)})" if held.reasons else ""
    tip = (f"{found.text}.\n\nIts licence on {run}: {held.tier}{reasons}.\n\nWhat a check can see: "
           f"{found.plan_text}.")
    return TransportLine(judge_name, run, found.check.status, transport_short(found), tip,
                         None if found.sized is None else found.sized.ratings)


def transport_short(found: TransportCheck) -> str:
    """The transport check in one short line for the Audit page (the whole of it goes in the tooltip)."""
    t, run = found.check, found.check.run
    if t.status == "not checked":
        said = f"not checked — no ratings on {run} yet"
    elif t.status == "audited here":
        said = f"its audit is {run}'s own"
    else:
        rates = (f"it errs on {t.errors_run or 0:.0%} of {t.n_run:.0f} rated rows there, "
                 f"{t.errors_audit or 0:.0%} elsewhere")
        said = {"suspended": f"no — {rates}: its metrics on {run} do not gate",
                "holds": f"yes so far — {rates}"}.get(t.status, f"cannot tell yet — {rates}")
    sized = found.sized
    if sized is None:
        see = ""
    elif sized.ratings is not None and sized.power_at is not None:
        see = f" A check of {sized.ratings} rows sees a 5-point rise {sized.power_at:.0%} of the time."
    else:
        see = " A 5-point rise is too small for its audit to show."
    return f"Does its audit hold on {run}? {said[0].upper()}{said[1:]}.{see}"


def selective_text(project: Project, judge: Judge) -> str:
    """Where the judge may decide alone (core.review.selective), in one sentence; empty without a pass mark."""
    from rageval_desktop.core.review.selective import decidable, selective

    if decidable(judge.metric):
        return ""
    found = selective(project, judge)
    whole = found["slices"]["all"]
    if whole["level"] is None:
        return f"Decides alone nowhere yet: {whole['needed']}."
    runs = ", ".join(f"{run} {r['decided']:.0%}" for run, r in found["runs"].items())
    return (f"Decides alone where sure: confidence ≥ {whole['level']:.2f}, {whole['coverage']:.0%} of the rated rows "
            f"(runs: {runs}), agreeing with people on ≥ {1 - found['alpha']:.0%} of them with probability "
            f"{1 - found['delta']:.0%}; the rest need a reviewer (rageval sample --abstained draws them).")


def team(project: Project, metric: str, sample: int | None) -> tuple[TeamReport, QualityReport]:
    """The Team page's reading: the team's report and the reviewers' checks (core.review.quality)."""
    from rageval_desktop.core.review.quality import quality_report
    from rageval_desktop.core.review.team import team_report

    return team_report(project, metric, sample), quality_report(project, metric)


def gate_verdict(comparison: dict, limit: float, config: GateConfig | None) -> GateResult:
    """The gate's verdict on a comparison (core.metrics.gate.evaluate_gate) at the Compare page's drop limit, or under
    the project's configuration: its tests import scipy, which the window need not hold."""
    from rageval_desktop.core.metrics.gate import evaluate_gate

    return evaluate_gate(comparison, max_slice_drop=limit, config=config)


def value_parts(project: Project, rid: int, parts: list[str]) -> list[tuple[str, bytes]]:
    """A large run's value parts read and encoded for keeping (core.metrics.rowdata.read_parts), one after another:
    the window writes them."""
    from rageval_desktop.core.metrics.rowdata import read_parts

    return read_parts(project, rid, parts, parallel=False)
