"""The CI gate: whether a candidate run may replace a baseline, decided on evidence with a stated error rate.

The default rule ("test") treats every gated cell — a slice, or 'all', times a metric — as a hypothesis: "this cell
drops by at most the limit". A cell fails only when the evidence says its drop exceeds the limit: a one-sided t test
of the paired per-question differences, with a step-down max-T adjustment across every gated cell (the cells'
correlation comes from the comparison: four retrieval metrics of a slice move together, and 'all' shares each
slice's questions; Holm's adjustment, valid under any dependence, when it is unknown), so that the chance of failing
a pull request that changed nothing is at most `alpha` (0.05) however many cells are gated. A cell the evidence
cannot settle either way — its drop is not shown to exceed the limit, nor shown to stay within it (its one-sided
lower bound at `alpha` is below minus the limit) — is *undecided*, and says the smallest drop it could have detected
with 80% power. Undecided cells are warnings; with `strict` they are a verdict of their own (exit code 3) for teams
that want proof of no regression: then every cell must be shown within its limit (an intersection-union test, valid
at `alpha` without adjustment).

Only judges that hold a *gate* licence (core.review.licence) gate: a judge metric asked for by name whose judges do
not is refused (exit 2), one chosen by default is left out with its reasons listed, unless a waiver is given — then
it is gated and the waiver (who, when, why, the licences waived) is part of the result and of a decision record.

The old rule ("point": a drop larger than the limit fails, optionally only when its 95% CI excludes zero) stays
as a named policy. It fails most unchanged pull requests on slices of tens of questions; bench/bench_gate.py
measures both. The CLI, the Compare page and the reports all decide here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.stats import detectable_drop, drop_p_value, holm, lower_bound, max_t
from rageval_desktop.core.base.text import md_escape as md
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.metrics.compare import MIN_SLICE_N, GateUsageError, compare, is_retrieval
from rageval_desktop.core.metrics.dashboard import ALL
from rageval_desktop.core.review.accepts import pass_fail
from rageval_desktop.core.review.licence import licence
from rageval_desktop.core.store.project import Project

RULES = {"test": "a drop fails when it is shown to exceed the limit, family-wise error at most alpha (default)",
         "point": "a drop larger than the limit fails, evidence or not (the rule before 0.3)"}
ALPHA = 0.05
POWER = 0.8
EXIT_UNDECIDED = 3          # `strict`: no regression shown, but some cell could not be shown within its limit


@dataclass
class GateResult:
    passed: bool                                                      # no regression shown
    regressions: list[dict[str, Any]] = field(default_factory=list)   # drops that fail the gate
    ungated: list[dict[str, Any]] = field(default_factory=list)       # drops over the limit reported, not gated
    comparison: dict[str, Any] = field(default_factory=dict)
    max_slice_drop: float = 2.0
    max_aggregate_drop: float = 2.0
    require_significant: bool = False
    min_slice_n: int = MIN_SLICE_N
    rule: str = "test"
    alpha: float = ALPHA
    strict: bool = False
    undecided: list[dict[str, Any]] = field(default_factory=list)     # test rule: cells the evidence cannot settle
    gated: int = 0                                                    # cells in the family
    adjustment: str = ""                                              # max-T, or Holm when correlations are unknown
    unlicensed: list[dict[str, Any]] = field(default_factory=list)    # judge metrics left out: no gate licence
    waivers: list[dict[str, Any]] = field(default_factory=list)       # judge metrics gated without one, and why

    @property
    def decision(self) -> str:
        """'fail' (a regression shown), 'undecided' (strict, and some cell not shown within its limit), 'pass'."""
        if not self.passed:
            return "fail"
        return "undecided" if self.strict and self.undecided else "pass"

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "undecided": EXIT_UNDECIDED}[self.decision]

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "decision": self.decision, "exit_code": self.exit_code, "rule": self.rule,
                "rule_text": rule_text(self), "alpha": self.alpha, "strict": self.strict, "gated_cells": self.gated,
                "adjustment": self.adjustment,
                "regressions": self.regressions, "undecided": self.undecided, "ungated": self.ungated,
                "max_slice_drop": self.max_slice_drop, "max_aggregate_drop": self.max_aggregate_drop,
                "require_significant": self.require_significant, "min_slice_n": self.min_slice_n,
                "unlicensed": self.unlicensed, "waivers": self.waivers,
                "warnings": self.comparison.get("warnings", []), "comparison": self.comparison}


def gate(project: Project, baseline: str, candidate: str, *, max_slice_drop: float = 2.0,
         max_aggregate_drop: float | None = None, metrics: list[str] | None = None,
         require_significant: bool = False, min_slice_n: int = MIN_SLICE_N, estimator: str = "mean",
         rule: str = "test", alpha: float = ALPHA, strict: bool = False,
         allow_unlicensed: str | None = None) -> GateResult:
    """With `estimator="ppi"` a judge metric is gated on its corrected estimates: a slice with too few ratings is
    reported, not gated; 'all' without enough ratings is a usage error (exit 2), never a silent pass. Judge metrics
    gate only when their judges hold a gate licence (`apply_licences`); `allow_unlicensed` is the waiver's reason."""
    check_limits(max_slice_drop, max_aggregate_drop, min_slice_n, rule=rule, alpha=alpha)  # before loading runs
    comparison = compare(project, baseline, candidate, metrics, estimator)
    apply_licences(project, comparison, named=bool(metrics), waiver=allow_unlicensed)
    blind = undecidable(comparison)
    if blind:
        raise GateUsageError("the PPI estimator cannot gate " + "; ".join(
            f"{u['metric']} ({u['why']})" for u in blind) + ": rate a sample of each run, or gate those metrics on "
            "the judges' mean",
            cli_hint="draw a sample with rageval sample and rate it (the app's Review page, or rageval ratings "
                     "import), or use --estimator mean",
            gui_hint="rate a sample of each run in Review, or clear 'Corrected by ratings'")
    return evaluate_gate(comparison, max_slice_drop=max_slice_drop, max_aggregate_drop=max_aggregate_drop,
                         require_significant=require_significant, min_slice_n=min_slice_n, rule=rule, alpha=alpha,
                         strict=strict)


def apply_licences(project: Project, comparison: dict[str, Any], *, named: bool = False,
                   waiver: str | None = None) -> dict[str, Any]:
    """Which of the comparison's judge metrics may gate, kept in `comparison["licensing"]` (which `evaluate_gate`
    reads): a metric gates when every judge that scored it holds a *gate* licence. Otherwise, with a `waiver` (its
    reason) it gates and the waiver is listed; asked for by name (`named`) it is refused; chosen by default it is
    left out with the judges' tiers and reasons. Retrieval metrics against gold ids need no judge."""
    if waiver is not None and not waiver.strip():
        raise GateUsageError("a waiver needs a reason: say why unlicensed judges may gate this time")
    found: dict[str, Any] = {"unlicensed": [], "waivers": []}
    held: dict[str, Any] = {}
    for metric in comparison["metrics"]:
        names = comparison.get("judges", {}).get(metric, [])
        for name in names:
            if name not in held:
                held[name] = licence(project, get_judge(project, name))
        short = [{"judge": n, "tier": held[n].tier, "reasons": list(held[n].reasons)} for n in names
                 if held[n].tier != "gate"]
        if not short:
            continue
        why = "; ".join(f"{s['judge']}: {s['tier']}" + (f" ({', '.join(s['reasons'])})" if s["reasons"] else "")
                        for s in short)
        if waiver is not None:
            found["waivers"].append({"metric": metric, "judges": short, "reason": waiver.strip(),
                                     "who": project.actor, "when": utcnow(), "why_unlicensed": why})
        else:
            found["unlicensed"].append({"metric": metric, "judges": short, "why": f"not licensed to gate: {why}"})
    if named and found["unlicensed"]:
        raise GateUsageError("not licensed to gate: " + "; ".join(
            f"{u['metric']} ({u['why'].removeprefix('not licensed to gate: ')})" for u in found["unlicensed"])
            + ". A judge gates once an audit of it as it is now clears the threshold",
            cli_hint="audit the judge with rageval agreement --apply, or waive with --allow-unlicensed REASON",
            gui_hint="audit the judge on the Audit page")
    comparison["licensing"] = found
    return found


def would_ship(project: Project, comparison: dict[str, Any]) -> list[dict[str, Any]]:
    """What the gate would have shipped: per judge of the comparison's judge metrics (with a pass mark), among the
    candidate's rated rows, those the judge passes and the reviewers fail, per slice, with the false-accept rate
    (core.review.accepts)."""
    out = []
    seen: set[str] = set()
    for metric in comparison["metrics"]:
        for name in comparison.get("judges", {}).get(metric, []):
            if name in seen:
                continue
            seen.add(name)
            found = pass_fail(project, get_judge(project, name), run=comparison["candidate"])
            if found is None or not found["slices"]:
                continue
            out.append({"judge": name, "metric": metric, "run": comparison["candidate"],
                        "slices": {s: {"rated": v["n"], "false_accepts": v["false_accepts"],
                                       "false_accept_rate": v["false_accept_rate"]}
                                   for s, v in found["slices"].items()},
                        "rows": [a["run_row_id"] for a in found["false_accepts"]]})
    return out


def licensed_metrics(comparison: dict[str, Any]) -> list[str]:
    """The comparison's metrics that gate (all of them when licences were not applied)."""
    out = {u["metric"] for u in comparison.get("licensing", {}).get("unlicensed", [])}
    return [m for m in comparison["metrics"] if m not in out]


def undecidable(comparison: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics a PPI comparison cannot gate at all: too few ratings for 'all' (slices short of ratings are
    only reported). `gate` refuses them (exit 2); the Compare page says the gate cannot decide."""
    gated = licensed_metrics(comparison)
    return [u for u in comparison.get("unavailable", []) if u["slice"] == ALL and u["metric"] in gated]


def check_limits(max_slice_drop: float, max_aggregate_drop: float | None, min_slice_n: int, *, rule: str = "test",
                 alpha: float = ALPHA) -> None:
    for name, flag, value in (("a slice's", "--max-slice-drop", max_slice_drop),
                              ("the aggregate's", "--max-aggregate-drop", max_aggregate_drop)):
        if value is not None and (not math.isfinite(value) or value < 0):
            raise GateUsageError(f"the largest drop allowed in {name} score is a number of points, 0 or more (got "
                                 f"{value:g})", cli_hint=f"check {flag}")
    if min_slice_n < 1:
        raise GateUsageError(f"the smallest slice the gate decides on is a number of questions, 1 or more (got "
                             f"{min_slice_n})", cli_hint="check --min-slice-n")
    if rule not in RULES:
        raise GateUsageError(f"unknown gate rule '{rule}'; choose one of {', '.join(RULES)}")
    if not (math.isfinite(alpha) and 0 < alpha < 0.5):
        raise GateUsageError(f"the family-wise error rate is between 0 and 0.5 (got {alpha:g})",
                             cli_hint="check --alpha")


def _drop(name: str, m: str, cell: dict[str, Any], limit: float) -> dict[str, Any]:
    low, high = cell["ci"]
    drop = {"slice": name, "metric": m, "baseline": cell["baseline"], "candidate": cell["candidate"],
            "drop": -cell["delta"], "allowed": limit, "ci": cell["ci"], "n": cell["n"],
            "n_counts": "questions with gold ids" if is_retrieval(m) else "questions scored",
            "within_noise": low <= 0 <= high, "significant": high < 0}
    if cell.get("estimator") == "ppi":
        drop["n_counts"] = f"questions scored, corrected by {cell['n_rated'][0]} + {cell['n_rated'][1]} rated (PPI)"
    return drop


def _cells(comparison: dict[str, Any], slice_limit: float, aggregate: float) -> list[tuple[str, str, Any, float]]:
    gated = licensed_metrics(comparison)
    return [(name, m, entry[m], aggregate if name == ALL else slice_limit)
            for name, entry in comparison["slices"].items() for m in gated if entry.get(m)]


def evaluate_gate(comparison: dict[str, Any], *, max_slice_drop: float = 2.0, max_aggregate_drop: float | None = None,
                  require_significant: bool = False, min_slice_n: int = MIN_SLICE_N, rule: str = "test",
                  alpha: float = ALPHA, strict: bool = False) -> GateResult:
    """The gate's rule, once: used by `rageval gate`, the GUI's Compare page and the reports. Decided on
    unrounded values; see the module's note for the rules. 'all' is always gated; a slice with fewer than
    `min_slice_n` questions for a metric is reported, not gated."""
    check_limits(max_slice_drop, max_aggregate_drop, min_slice_n, rule=rule, alpha=alpha)
    aggregate = max_slice_drop if max_aggregate_drop is None else max_aggregate_drop
    cells = _cells(comparison, max_slice_drop, aggregate)
    result = GateResult(True, comparison=comparison, max_slice_drop=max_slice_drop, max_aggregate_drop=aggregate,
                        require_significant=require_significant, min_slice_n=min_slice_n, rule=rule, alpha=alpha,
                        strict=strict)
    licensing = comparison.get("licensing", {})
    result.unlicensed, result.waivers = list(licensing.get("unlicensed", [])), list(licensing.get("waivers", []))
    small = f"fewer than {min_slice_n} questions: reported, not gated"
    family = []
    for name, m, cell, limit in cells:
        if name != ALL and cell["n"] < min_slice_n:
            if -cell["delta"] > limit + 1e-9:
                result.ungated.append({**_drop(name, m, cell, limit), "why": small})
        else:
            family.append((name, m, cell, limit))
    if rule == "point":
        _point(result, family)
    else:
        _test(result, family)
    result.passed = not result.regressions
    return result


def _df(cell: dict[str, Any]) -> float:
    return float(cell.get("df", cell["n"] - 1))


def _correlation(comparison: dict[str, Any], family: list[tuple[str, str, Any, float]]) -> Any | None:
    """The family's correlation matrix from the comparison (None when a cell has none: a PPI cell, or a
    comparison made before 0.3)."""
    import numpy as np

    found = comparison.get("cell_correlation") or {}
    where = {(s, m): i for i, (s, m) in enumerate(found.get("cells", []))}
    picked = [where.get((name, m)) for name, m, _, _ in family]
    if not family or any(i is None for i in picked):
        return None
    return np.asarray(found["matrix"], dtype=float)[np.ix_(picked, picked)]


def _test(result: GateResult, family: list[tuple[str, str, Any, float]]) -> None:
    """Step-down max-T across the family (Holm when the cells' correlation is unknown); the cells not failed are
    within their limit (shown) or undecided."""
    from scipy.special import ndtr

    result.gated = len(family)
    p_values = [drop_p_value(cell["delta"], cell.get("se", math.nan), _df(cell), limit)
                for _, _, cell, limit in family]
    corr = _correlation(result.comparison, family)
    if corr is not None:
        rejected, adjusted, critical = max_t(p_values, corr, result.alpha)
        level = float(1 - ndtr(critical))        # the single-step level: what a lone regression must clear
        result.adjustment = "max-T"
    else:
        rejected, adjusted = holm(p_values, result.alpha)
        level = result.alpha / max(1, len(family))
        result.adjustment = "Holm"
    for (name, m, cell, limit), p, p_adj, reject in zip(family, p_values, adjusted, rejected, strict=True):
        se = cell.get("se", math.nan)
        drop = {**_drop(name, m, cell, limit), "p_value": p, "p_adjusted": p_adj,
                "detectable_drop": detectable_drop(se, _df(cell), limit, level, POWER) if se == se else None}
        if reject:
            result.regressions.append(drop)
        elif not (se == se and lower_bound(cell["delta"], se, _df(cell), result.alpha) >= -limit - 1e-9):
            result.undecided.append({**drop, "why": _undecided_why(drop)})


def _undecided_why(drop: dict[str, Any]) -> str:
    mde = drop["detectable_drop"]
    return (f"detects a drop of {mde:.1f}+ points (80% power)" if mde is not None else
            "no spread to test")


def _point(result: GateResult, family: list[tuple[str, str, Any, float]]) -> None:
    """The old rule: a drop larger than the limit fails (with `require_significant`, only when its 95% CI lies
    wholly below zero). No error control across cells: kept as a named policy, not as the default."""
    for name, m, cell, limit in family:
        if not -cell["delta"] > limit + 1e-9:
            continue
        result.gated += 1
        drop = _drop(name, m, cell, limit)
        if result.require_significant and not drop["significant"]:
            result.ungated.append({**drop, "why": "the 95% CI does not lie below zero (--require-significant)"})
        else:
            result.regressions.append(drop)


def rule_text(result: GateResult) -> str:
    """The rule a gate applied, in words (for the CLI, the GUI and reports)."""
    limits = f"{result.max_slice_drop:g} points per slice, {result.max_aggregate_drop:g} for 'all'"
    small = f"slices with fewer than {result.min_slice_n} questions are reported, not gated"
    if result.rule == "point":
        text = f"point rule: a drop larger than the limit fails ({limits}), evidence or not; {small}"
        if result.require_significant:
            text += "; only drops whose 95% CI lies below zero fail"
    else:
        text = (f"a cell fails when its drop is shown to exceed the limit ({limits}): one-sided t tests adjusted "
                f"({result.adjustment or 'Holm'}) across the {result.gated} gated cells, family-wise error at most "
                f"{result.alpha:g}; a cell the evidence cannot settle is undecided and says the drop it could detect "
                f"(80% power); {small}")
        if result.strict:
            text += "; strict: every cell must be shown within its limit, else the gate cannot decide (exit 3)"
    if result.comparison.get("estimator") == "ppi":
        text += "; judge metrics rated per row are compared as PPI estimates (judge mean corrected by ratings)"
    return text


def drop_text(r: dict[str, Any]) -> str:
    """'-12.5 points, 95% CI of delta [-20.1, -4.9], n=8 questions with gold ids, adjusted p 0.003' (display);
    the sign is the delta's (an improvement reads +3.2)."""
    text = (f"{-r['drop']:+.1f} points, 95% CI of delta [{r['ci'][0]:+.1f}, {r['ci'][1]:+.1f}], "
            f"n={r['n']} {r['n_counts']}")
    if r.get("p_adjusted") is not None:
        text += f", adjusted p {r['p_adjusted']:.2g}"
    return text + (", within noise" if r["within_noise"] else "")


def headline(result: GateResult) -> str:
    """One line: what the gate decided (CLI, Compare page, Markdown and reports say the same)."""
    if result.decision == "fail":
        return f"{len(result.regressions)} regression(s) shown"
    if result.undecided:
        return (("cannot decide" if result.strict else "no regression shown") +
                f"; {len(result.undecided)} cell(s) undecided")
    return "no regression; every gated cell shown within its limit" if result.rule == "test" else "no regression"


def gate_markdown(result: GateResult) -> str:
    """For a pull-request comment: every name from data is escaped (core.text.md_escape)."""

    c = result.comparison
    icon = {"fail": "❌", "undecided": "⚠️", "pass": "✅"}[result.decision]
    lines = [f"### RAG evaluation gate: {md(c['candidate'])} vs {md(c['baseline'])}", "",
             f"{icon} **{md(headline(result))}** — {c['shared_questions']} shared questions; {rule_text(result)}.",
             ""]
    table = ["| slice | metric | baseline | candidate | drop | 95% CI of delta | n | |",
             "|---|---|---:|---:|---:|---|---:|---|"]

    def row(r: dict[str, Any], note: str) -> str:
        return (f"| {md(r['slice'])} | {md(r['metric'])} | {r['baseline']:.1f} | {r['candidate']:.1f} | "
                f"**{r['drop']:.1f}** | [{r['ci'][0]:+.1f}, {r['ci'][1]:+.1f}] | {r['n']} | {note} |")

    def shown(r: dict[str, Any]) -> str:
        return "" if r.get("p_adjusted") is None else f"adjusted p {r['p_adjusted']:.2g}"

    if result.regressions:
        lines += table + [row(r, shown(r)) for r in result.regressions] + [""]
    if result.undecided:
        lines += [f"<details><summary>{len(result.undecided)} undecided cell(s): the evidence neither shows a drop "
                  "over the limit nor rules one out</summary>", ""]
        lines += table + [row(r, f"detects ≥ {r['detectable_drop']:.1f}" if r["detectable_drop"] is not None else "")
                          for r in result.undecided] + ["", "</details>", ""]
    if result.ungated:
        lines += ["Drops over the limit that do not fail the gate:", ""]
        lines += table + [row(r, md(r["why"])) for r in result.ungated] + [""]
    metrics = c["metrics"]
    lines += ["<details><summary>All slices</summary>", "",
              "| slice | n | with gold ids | " + " | ".join(map(md, metrics)) + " |",
              "|---|---:|---:|" + "---:|" * len(metrics)]
    for name, entry in c["slices"].items():
        cells = []
        for m in metrics:
            cell = entry.get(m)
            cells.append("—" if not cell else f"{cell['candidate']:.1f} ({cell['delta']:+.1f})")
        lines.append(f"| {md(name)} | {entry['n']} | {entry.get('n_with_gold', '—')} | " + " | ".join(cells) + " |")
    lines += ["", "</details>", ""]
    lines += [f"- ⚠️ {md(w)}" for w in c.get("warnings", [])]
    if c.get("unavailable"):
        lines += ["Not gated, too few ratings for a corrected (PPI) estimate:", ""]
        lines += [f"- {md(u['slice'])} {md(u['metric'])}: {md(u['why'])}" for u in c["unavailable"]] + [""]
    if result.unlicensed:
        lines += ["Not gated, their judges hold no gate licence:", ""]
        lines += [f"- {md(u['metric'])}: {md(u['why'])}" for u in result.unlicensed] + [""]
    if result.waivers:
        lines += ["**Gated under a waiver** (judges without a gate licence):", ""]
        lines += [f"- {md(w['metric'])}: {md(w['why_unlicensed'])} — waived by {md(str(w['who']))} at {md(w['when'])}: "
                  f"{md(w['reason'])}" for w in result.waivers] + [""]
    if c.get("retired_judges"):
        names = ", ".join(md(r["judge"]) for r in c["retired_judges"])
        lines.append(f"_Retired judges left out: {names}._")
    if c.get("unsettled_judges"):
        names = ", ".join(f"{md(r['judge'])} ({md(r['verdict'])}, n={r['n']})" for r in c["unsettled_judges"])
        lines.append(f"_Counted, but not yet confirmed by human ratings: {names}._")
    return "\n".join(lines) + "\n"
