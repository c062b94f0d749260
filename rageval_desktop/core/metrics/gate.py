"""The CI gate: whether a candidate run may replace a baseline, decided on evidence with both error rates stated.

Three outcomes, each with its own exit code, and never one for another:

- **pass** (0): every gated cell — a slice, a merged group of slices, or 'all', times a metric — is shown safe:
  its drop is shown to stay within its tolerance (one-sided lower bound at `alpha` at or above minus the
  tolerance), or, under a gate configuration (core.metrics.gate_config), no drop beyond the allowed one is shown
  and the test would have caught a drop of the tolerance with the configured power (80%) on this pull request's
  own spread;
- **regression** (1): some cell's drop is shown to exceed its allowed drop: a one-sided t test of the paired
  per-question differences, adjusted across every gated cell by step-down max-T (the cells' correlation comes
  from the comparison; Holm where it is unknown), so an unchanged pull request fails at most `alpha` of the time;
- **not decision-grade** (3): neither — a cell the evidence cannot settle (it says the smallest drop it could have
  detected), or a metric asked to gate that could not be evaluated (no gate licence, not judged on a run, judged
  on only some questions, too few ratings for a corrected estimate, a configured cell with no data), or no cell
  at all. Its reasons are listed, with what would settle them (`rageval gate plan`).

A regression shown anywhere outranks the rest. Usage errors are 2 and a tool that failed is 4 (the CLI's).
The CLI, the Compare page and the reports all decide here; `--rule point` (a drop larger than the limit fails,
evidence or not) stays as a named policy for comparison and passes only what the test rule shows safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.stats import detectable_drop_bounded, drop_p_value, holm, lower_bound, max_t
from rageval_desktop.core.base.verdicts import Decision
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.metrics.attempts import Attempt, levels
from rageval_desktop.core.metrics.compare import (
    COVERAGE,
    MIN_SLICE_N,
    GateUsageError,
    compare,
    family_matrix,
    selective_metric,
)
from rageval_desktop.core.metrics.dashboard import ALL
from rageval_desktop.core.metrics.gate_config import ALPHA, POWER, CellRule, GateConfig
from rageval_desktop.core.metrics.gate_text import covers_text, rule_text
from rageval_desktop.core.metrics.retrieval import canonical_name, is_retrieval
from rageval_desktop.core.review import transport
from rageval_desktop.core.review.accepts import pass_fail
from rageval_desktop.core.review.licence import licence
from rageval_desktop.core.store.project import Project

Listed = list[dict[str, Any]]        # cells, metrics or reasons, each as its JSON says it

RULES = {"test": "a drop fails when it is shown to exceed the limit, family-wise error at most alpha (default)",
         "point": "a drop larger than the limit fails, evidence or not (the rule before 0.3)"}


@dataclass
class GateResult:
    comparison: dict[str, Any] = field(default_factory=dict)
    regressions: Listed = field(default_factory=list)   # drops shown: the gate fails
    undecided: Listed = field(default_factory=list)     # cells the evidence cannot settle
    safe: Listed = field(default_factory=list)          # cells shown safe, and how
    ungated: Listed = field(default_factory=list)       # drops over the limit reported, not gated
    not_evaluated: Listed = field(default_factory=list)  # asked to gate, could not be: why
    max_slice_drop: float = 2.0
    max_aggregate_drop: float = 2.0
    require_significant: bool = False
    min_slice_n: int = MIN_SLICE_N
    rule: str = "test"
    alpha: float = ALPHA
    gated: int = 0                                                    # cells in the family
    adjustment: str = ""                                              # max-T, or Holm when correlations are unknown
    unlicensed: Listed = field(default_factory=list)    # judge metrics without a gate licence
    waivers: Listed = field(default_factory=list)       # judge metrics gated without one, and why
    config: GateConfig | None = None
    uncovered: list[str] = field(default_factory=list)                # slices a configuration gates no cell of
    not_gated_metrics: Listed = field(default_factory=list)  # judged on both runs, not gated: why
    new_slices: list[str] = field(default_factory=list)               # slices only the candidate has
    hidden_drops: Listed = field(default_factory=list)  # cells not gated whose 95% CI lies below 0
    attempt: Attempt = field(default_factory=lambda: Attempt(None))   # this pull request's attempt
    alpha_budget: float = ALPHA                                       # alpha over every attempt (alpha: this one's)
    power_now: float | None = None                                    # the power this attempt needs at a tolerance
    within_level: float | None = None                                 # the "shown within" bound's level (None: alpha)

    @property
    def decision(self) -> Decision:
        if self.regressions:
            return Decision.REGRESSION
        if self.undecided or self.not_evaluated or not self.gated:   # no cell gated is never a pass
            return Decision.NOT_DECISION_GRADE
        return Decision.PASS

    @property
    def passed(self) -> bool:
        """True only for a pass: 'no regression shown' with cells undecided is not one."""
        return self.decision is Decision.PASS

    def __bool__(self) -> bool:
        return self.passed

    @property
    def exit_code(self) -> int:
        return self.decision.exit_code

    def as_dict(self) -> dict[str, Any]:
        return {"decision": self.decision.value, "passed": self.passed, "exit_code": self.exit_code,
                "rule": self.rule, "rule_text": rule_text(self), "alpha": self.alpha, "gated_cells": self.gated,
                "adjustment": self.adjustment, "regressions": self.regressions, "undecided": self.undecided,
                "safe": self.safe, "not_evaluated": self.not_evaluated, "ungated": self.ungated,
                "max_slice_drop": self.max_slice_drop, "max_aggregate_drop": self.max_aggregate_drop,
                "require_significant": self.require_significant, "min_slice_n": self.min_slice_n,
                "unlicensed": self.unlicensed, "waivers": self.waivers,
                "config": None if self.config is None else {**self.config.as_dict(), "source": self.config.source},
                "uncovered": self.uncovered, "not_gated_metrics": self.not_gated_metrics,
                "attempt": {"pr": self.attempt.pr, "number": self.attempt.number, "earlier": self.attempt.earlier,
                            "share": self.attempt.share, "said": self.attempt.describe()},
                "alpha_budget": self.alpha_budget, "power_now": self.power_now, "within_level": self.within_level,
                "new_slices": self.new_slices, "hidden_drops": self.hidden_drops, "covers": covers_text(self),
                "perimeter": self.comparison.get("perimeter", {}),
                "warnings": self.comparison.get("warnings", []), "comparison": self.comparison}


def gate(project: Project, baseline: str, candidate: str, *, max_slice_drop: float = 2.0,
         max_aggregate_drop: float | None = None, metrics: list[str] | None = None,
         require_significant: bool = False, min_slice_n: int = MIN_SLICE_N, estimator: str = "mean",
         rule: str = "test", alpha: float = ALPHA, allow_unlicensed: str | None = None,
         config: GateConfig | None = None, attempt: Attempt | None = None) -> GateResult:
    """Compare and decide. With a `config`, its cells and rules decide (the limits here are not used; `metrics`
    keeps only its cells of those metrics). Judge metrics gate only when their judges hold a gate licence
    (`apply_licences`) or under a waiver (`allow_unlicensed`, its reason)."""
    check_limits(max_slice_drop, max_aggregate_drop, min_slice_n, rule=rule, alpha=alpha)  # before loading runs
    if config is not None:
        if rule != "test":
            raise GateUsageError("the point rule has no configuration: it fails any drop over one limit",
                                 cli_hint="drop --rule point, or pass --no-config")
        config = only_metrics(config, metrics)
    comparison = gated_comparison(project, baseline, candidate, config, metrics, estimator)
    apply_licences(project, comparison, waiver=allow_unlicensed)
    return evaluate_gate(comparison, max_slice_drop=max_slice_drop, max_aggregate_drop=max_aggregate_drop,
                         require_significant=require_significant, min_slice_n=min_slice_n, rule=rule, alpha=alpha,
                         config=config, attempt=attempt)


def gated_comparison(project: Project, baseline: str, candidate: str, config: GateConfig | None,
                     metrics: list[str] | None = None, estimator: str = "mean") -> dict[str, Any]:
    """The comparison a gate decides on: under a configuration, its metrics, merged slices and rule for unanswered
    questions (the CLI, the Compare page and the reports all compare this way)."""
    if config is None:
        return compare(project, baseline, candidate, metrics, estimator)
    return compare(project, baseline, candidate, config.metrics, estimator, groups=config.groups,
                   missing=config.missing, judged=True)


def only_metrics(config: GateConfig, metrics: list[str] | None) -> GateConfig:
    """The configuration's cells of `metrics` (all of them when None); a metric it does not gate is refused."""
    if not metrics:
        return config
    wanted = [canonical_name(m) for m in metrics]
    unknown = [m for m in wanted if m not in config.metrics]
    if unknown:
        raise GateUsageError(f"the gate's configuration ({config.source or 'given'}) has no cell of "
                             f"{', '.join(unknown)}; it gates {', '.join(config.metrics)}",
                             cli_hint="plan a configuration that includes it (rageval gate plan), or pass "
                                      "--no-config")
    wanted.append(COVERAGE)                  # (what was left unanswered counts whatever metrics are asked for)
    left = {m: "left out of this gate by --metrics" for m in config.metrics if m not in wanted}
    return replace(config, cells={k: r for k, r in config.cells.items() if k[1] in wanted},
                   not_gated={**config.not_gated, **left})


def apply_licences(project: Project, comparison: dict[str, Any], *, waiver: str | None = None) -> dict[str, Any]:
    """Which of the comparison's judge metrics may gate, kept in `comparison["licensing"]` (which `evaluate_gate`
    reads): a metric gates when every judge that scored it holds a *gate* licence; with a `waiver` (its reason) it
    gates and the waiver is listed; otherwise it is listed as unlicensed, and the gate cannot pass without it
    (not decision-grade). Retrieval metrics against gold ids need no judge."""
    if waiver is not None and not waiver.strip():
        raise GateUsageError("a waiver needs a reason: say why unlicensed judges may gate this time")
    found: dict[str, Any] = {"unlicensed": [], "waivers": []}
    comparison.setdefault("warnings", [])
    held: dict[str, Any] = {}
    for metric in comparison["metrics"]:
        names = comparison.get("judges", {}).get(metric, [])
        for name in names:
            if name not in held:      # its licence on the candidate: suspended where its errors moved
                held[name] = licence(project, get_judge(project, name), run=comparison["candidate"])
        tiers = {"gate", "selective"} if selective_estimated(comparison, metric) else {"gate"}
        short = [{"judge": n, "tier": held[n].tier, "reasons": list(held[n].reasons)} for n in names
                 if held[n].tier not in tiers]
        for n in names:          # a licence that travels unchecked still gates, and the gate says so
            moved = held[n].evidence.get("transport")
            said = transport.describe(transport.Transport(**moved)) if moved else ""
            if moved and moved["status"] in ("not checked", "cannot tell") and said not in comparison["warnings"]:
                comparison["warnings"].append(said)
        if not short:
            continue
        why = "; ".join(f"{s['judge']}: {held[s['judge']].describe()}" for s in short)
        if waiver is not None:
            found["waivers"].append({"metric": metric, "judges": short, "reason": waiver.strip(),
                                     "who": project.actor, "when": utcnow(), "why_unlicensed": why})
        else:
            found["unlicensed"].append({"metric": metric, "judges": short, "why": f"not licensed to gate: {why}"})
    comparison["licensing"] = found
    return found


def selective_estimated(comparison: dict[str, Any], metric: str) -> bool:
    """Whether the comparison reads `metric` with the selective estimator (a selective licence then lets it gate)."""
    return comparison.get("estimator") == "selective" and selective_metric(metric)


def would_ship(project: Project, comparison: dict[str, Any]) -> Listed:
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


def unlicensed_metrics(comparison: dict[str, Any]) -> set[str]:
    return {u["metric"] for u in comparison.get("licensing", {}).get("unlicensed", [])}


def licensed_metrics(comparison: dict[str, Any]) -> list[str]:
    """The comparison's metrics that gate (all of them when licences were not applied)."""
    out = unlicensed_metrics(comparison) | {m["metric"] for m in comparison.get("missing", [])}
    return [m for m in comparison["metrics"] if m not in out]


def not_evaluated(comparison: dict[str, Any]) -> Listed:
    """Every metric the comparison was asked to gate that cannot be: not judged (or partly) on a run, judged by
    different judges, no gate licence, no corrected estimate for 'all'. Each says why and what would mend it
    (`slice` None: the whole metric)."""
    out = [{"metric": m["metric"], "slice": None, "kind": "judging", "why": m["why"], "fix": m.get("fix", "")}
           for m in comparison.get("missing", [])]
    missing = {m["metric"] for m in comparison.get("missing", [])}
    out += [{"metric": u["metric"], "slice": None, "kind": "licence", "why": u["why"],
             "fix": "audit its judges (rageval agreement --apply), gate a selective judge with --estimator selective, "
                    "or waive with --allow-unlicensed REASON"}
            for u in comparison.get("licensing", {}).get("unlicensed", []) if u["metric"] not in missing]
    gated = set(licensed_metrics(comparison))
    selective = comparison.get("estimator") == "selective"
    out += [{"metric": u["metric"], "slice": ALL, "kind": "ratings",
             "why": f"no {'selective' if selective else 'corrected (PPI)'} estimate: {u['why']}",
             "fix": ("draw the desk's sample of each run's abstentions and rate it (rageval sample --abstained "
                     "JUDGE --run RUN, the Review page), or gate on the judges' mean" if selective else
                     "rate a sample of each run (rageval sample, the Review page), or gate on the judges' mean")}
            for u in comparison.get("unavailable", []) if u["slice"] == ALL and u["metric"] in gated]
    return out


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


def _drop(name: str, m: str, cell: dict[str, Any], rule: CellRule) -> dict[str, Any]:
    low, high = cell["ci"]
    drop = {"slice": name, "metric": m, "baseline": cell["baseline"], "candidate": cell["candidate"],
            "drop": -cell["delta"] or 0.0, "allowed": rule.allowed, "tolerance": rule.tolerance, "ci": cell["ci"],
            "n": cell["n"], "n_counts": "questions with gold ids" if is_retrieval(m) else "questions scored",
            "within_noise": low <= 0 <= high, "significant": high < 0}
    if cell.get("estimator") == "ppi":
        drop["n_counts"] = f"questions scored, corrected by {cell['n_rated'][0]} + {cell['n_rated'][1]} rated (PPI)"
    if cell.get("estimator") == "selective":
        cov = cell["coverage"]
        drop["n_counts"] = (f"questions; pass rate from {cell['guarantee']['judge']} on the {cov[0]:.0%} / "
                            f"{cov[1]:.0%} it decides and {cell['n_rated'][0]} + {cell['n_rated'][1]} rated rows of "
                            "the rest (selective)")
        drop["guarantee"], drop["coverage"] = cell["guarantee"], cov
    return drop


Family = list[tuple[str, str, Any, CellRule]]


def _cells(comparison: dict[str, Any], result: GateResult) -> Family:
    """The cells to decide, each with its rule: the configuration's, or every slice and 'all' of every gated
    metric at the command's limits."""
    gated = set(licensed_metrics(comparison))
    slices = comparison["slices"]
    unanswered = comparison.get("perimeter", {}).get("unanswered", 0)
    if result.config is None:     # coverage on 'all', where the candidate left a question unanswered (else it is 100%)
        return [(name, m, entry[m], CellRule(result.max_aggregate_drop if name == ALL else result.max_slice_drop,
                                             result.max_aggregate_drop if name == ALL else result.max_slice_drop))
                for name, entry in slices.items() for m in comparison["metrics"] if m in gated and entry.get(m)
                and (m != COVERAGE or (name == ALL and unanswered))]
    if unanswered and not any(m == COVERAGE for _, m in result.config.cells):
        result.not_evaluated.append({"metric": COVERAGE, "slice": ALL, "kind": "config",
                                     "why": f"the candidate did not answer {unanswered} of the baseline's questions "
                                            "and the configuration has no coverage cell",
                                     "fix": "gate plan again: a plan gates coverage"})
    covered = {name for name, _ in result.config.cells} | {s for name, _ in result.config.cells
                                                            for s in result.config.groups.get(name, ())}
    result.uncovered = [name for name in slices if name != ALL and name not in result.config.groups
                        and name not in covered]
    out: Family = []
    for (name, m), cell_rule in result.config.cells.items():
        if m not in gated:
            continue                                    # listed once, as a metric not evaluated
        cell = (slices.get(name) or {}).get(m)
        if cell:
            out.append((name, m, cell, cell_rule))
        else:
            why = (f"no question of '{name}' was answered by both runs" if name not in slices else
                   f"no question of '{name}' has {m} on both runs")
            result.not_evaluated.append({"metric": m, "slice": name, "kind": "config", "why": why,
                                         "fix": "gate plan again for the golden set as it is now"})
    return out


def evaluate_gate(comparison: dict[str, Any], *, max_slice_drop: float = 2.0, max_aggregate_drop: float | None = None,
                  require_significant: bool = False, min_slice_n: int = MIN_SLICE_N, rule: str = "test",
                  alpha: float = ALPHA, config: GateConfig | None = None,
                  attempt: Attempt | None = None) -> GateResult:
    """The gate's rule, once: used by `rageval gate`, the GUI's Compare page and the reports. Decided on
    unrounded values; see the module's note. Without a configuration 'all' is always gated and a slice with
    fewer than `min_slice_n` questions for a metric is reported, not gated."""
    check_limits(max_slice_drop, max_aggregate_drop, min_slice_n, rule=rule, alpha=alpha)
    aggregate = max_slice_drop if max_aggregate_drop is None else max_aggregate_drop
    if config is not None:
        alpha, min_slice_n = config.alpha, config.min_slice_n
    attempt = attempt or Attempt(None)
    # retries are spent (core.metrics.attempts): a configuration planned for it always spends (attempt 1 when no pull
    # request is named), the limits alone when a pull request is named; an older configuration does not
    spends = config.retries == "spent" if config is not None else attempt.pr is not None
    level, within, power = levels(alpha, None if config is None else config.power, attempt.number, spends)
    result = GateResult(comparison=comparison, max_slice_drop=max_slice_drop, max_aggregate_drop=aggregate,
                        require_significant=require_significant, min_slice_n=min_slice_n, rule=rule,
                        alpha=level, config=config, attempt=attempt, alpha_budget=alpha, power_now=power,
                        within_level=within)
    licensing = comparison.get("licensing", {})
    result.unlicensed, result.waivers = list(licensing.get("unlicensed", [])), list(licensing.get("waivers", []))
    # under a configuration only its cells are asked to gate: the other metrics compared beside them are named
    result.not_evaluated = [u for u in not_evaluated(comparison)
                            if config is None or u["metric"] is None or u["metric"] in config.metrics]
    _perimeter(result)
    small = f"fewer than {min_slice_n} questions: reported, not gated"
    family: Family = []
    for name, m, cell, cell_rule in _cells(comparison, result):
        if name == ALL or cell["n"] >= min_slice_n:
            family.append((name, m, cell, cell_rule))
        elif config is not None:         # a cell the configuration asks to gate is gated, or says why it is not
            result.not_evaluated.append({"metric": m, "slice": name, "kind": "config", "why": f"{cell['n']} "
                                         f"questions, fewer than the configuration's {min_slice_n}",
                                         "fix": "gate plan again for the golden set as it is now"})
        elif -cell["delta"] > cell_rule.allowed + 1e-9:
            result.ungated.append({**_drop(name, m, cell, cell_rule), "why": small})
    _test(result, family)
    if rule == "point":
        _point(result, family)
    result.hidden_drops = _hidden_drops(comparison, {(name, m) for name, m, _, _ in family})
    if not family and not result.not_evaluated:
        result.not_evaluated.append({"metric": None, "slice": None, "kind": "empty",
                                     "why": "no cell could be gated (no slice has "
                                     f"{min_slice_n} questions with data on both runs)",
                                     "fix": "link the runs' rows to golden rows with gold chunk ids, or lower "
                                            "--min-slice-n"})
    return result


def _perimeter(result: GateResult) -> None:
    """What the decision leaves out, named; what it must not leave out unsaid, made "cannot tell": a judge metric
    scored on both runs that a configuration neither gates nor lists as not gated, and a slice only the candidate
    has questions of (until the configuration says to name it and go on)."""
    comparison, config = result.comparison, result.config
    both = comparison.get("judged_on_both", [])
    if config is None:
        result.not_gated_metrics = [{"metric": m, "why": "left out of this gate by --metrics"} for m in both
                                    if m not in comparison["metrics"]]
    else:
        result.not_gated_metrics = [{"metric": m, "why": config.not_gated[m]} for m in both if m in config.not_gated]
        result.not_evaluated += [{"metric": m, "slice": None, "kind": "unplanned",
                                  "why": f"{m} is scored on both runs, and the configuration neither gates it nor "
                                         "lists it as not gated",
                                  "fix": "gate plan again (it plans every metric judged), or list it under "
                                         "\"not_gated\" in the configuration with why"}
                                 for m in both if m not in config.metrics and m not in config.not_gated]
    result.new_slices = list(comparison.get("perimeter", {}).get("new_slices", []))
    if result.new_slices and (config is None or config.new_slices == "cannot tell"):
        extra = comparison["perimeter"]["extra_by_slice"]
        result.not_evaluated += [{"metric": None, "slice": s, "kind": "new slice",
                                  "why": f"only the candidate has questions of '{s}' ({extra.get(s, 0)}): no baseline "
                                         "to compare with",
                                  "fix": "gate plan again, or set \"new_slices\": \"named\" in the configuration to "
                                         "name new slices and decide without them"}
                                 for s in result.new_slices]


def _hidden_drops(comparison: dict[str, Any], family: set[tuple[str, str]]) -> Listed:
    """Cells compared but not gated (a slice too small, or one a configuration gates only through a group or
    'all') whose own 95% interval lies wholly below zero: a pass says them, and is not shown green."""
    out = []
    for name, entry in comparison["slices"].items():
        for m in comparison["metrics"]:
            cell = entry.get(m)
            if not cell or (name, m) in family or cell.get("ci") is None or cell["ci"][1] is None:
                continue
            if cell["ci"][1] < 0:
                out.append({"slice": name, "metric": m, "delta": cell["delta"], "ci": cell["ci"], "n": cell["n"]})
    return out


def _df(cell: dict[str, Any]) -> float:
    return float(cell.get("df", cell["n"] - 1))


def _test(result: GateResult, family: Family) -> None:
    """Step-down max-T across the family (Holm when the cells' correlation is unknown); a cell not failed is safe
    when shown within its tolerance or, under a configuration, when the test had the configured power at it."""
    from scipy.special import ndtr

    result.gated = len(family)
    p_values = [drop_p_value(cell["delta"], cell.get("se", math.nan), _df(cell), r.allowed)
                for _, _, cell, r in family]
    corr = family_matrix(result.comparison.get("cell_correlation"), [(name, m) for name, m, _, _ in family])
    if corr is not None:
        rejected, adjusted, critical = max_t(p_values, corr, result.alpha)
        level = float(1 - ndtr(critical))        # the single-step level: what a lone regression must clear
        result.adjustment = "max-T"
    else:
        rejected, adjusted = holm(p_values, result.alpha)
        level = result.alpha / max(1, len(family))
        result.adjustment = "Holm"
    for (name, m, cell, r), p, p_adj, reject in zip(family, p_values, adjusted, rejected, strict=True):
        se, df = cell.get("se", math.nan), _df(cell)
        known = se == se
        power = result.power_now or r.power or POWER
        mde = detectable_drop_bounded(se, cell["n"], df, r.allowed, level, power) if known else None
        drop = {**_drop(name, m, cell, r), "p_value": p, "p_adjusted": p_adj, "level": level,
                "detectable_drop": mde, "power": power,
                "drop_upper": None if not known else -lower_bound(cell["delta"], se, df,
                                                                  result.within_level or result.alpha)}
        if reject and result.rule == "test":
            result.regressions.append({**drop, "status": "regression"})
        elif known and drop["drop_upper"] <= r.tolerance + 1e-9:
            bound = drop["drop_upper"]
            said = (f"shown to drop at most {bound:.1f} points" if bound >= 0 else
                    f"shown to improve by at least {-bound:.1f} points")
            result.safe.append({**drop, "status": "within", "why": f"{said} (tolerance {r.tolerance:g})"})
        elif r.power is not None and mde is not None and mde <= r.tolerance + 1e-9:
            result.safe.append({**drop, "status": "powered",
                                "why": f"no drop over {r.allowed:g} shown, and a drop of {r.tolerance:g} would be "
                                       f"caught with {power:.0%} power (detects {mde:.1f}+)"})
        else:
            result.undecided.append({**drop, "status": "undecided", "why": _undecided_why(drop, r)})


def _undecided_why(drop: dict[str, Any], rule: CellRule) -> str:
    mde = drop["detectable_drop"]
    if mde is None:
        return "no spread to test"
    return (f"not shown within {rule.tolerance:g} points (up to {drop['drop_upper']:.1f} is possible); detects a "
            f"drop of {mde:.1f}+ points ({drop['power']:.0%} power)")


def _point(result: GateResult, family: Family) -> None:
    """The old rule: a drop larger than the limit fails (with `require_significant`, only when its 95% CI lies
    wholly below zero). No error control across cells: kept as a named policy. What it does not fail is decided
    as the test rule decides it (safe or undecided): a point estimate under the limit is not proof."""
    for name, m, cell, r in family:
        if not -cell["delta"] > r.allowed + 1e-9:
            continue
        drop = _drop(name, m, cell, r)
        if result.require_significant and not drop["significant"]:
            result.ungated.append({**drop, "why": "the 95% CI does not lie below zero (--require-significant)"})
            continue
        result.regressions.append({**drop, "status": "regression"})
        for found in (result.safe, result.undecided):
            found[:] = [c for c in found if (c["slice"], c["metric"]) != (name, m)]
