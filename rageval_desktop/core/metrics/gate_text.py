"""A gate's decision in words: one line, the rule, each cell, and the pull-request comment (every name from data
escaped). The CLI, the Compare page, decision records and reports all say it this way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.text import md_escape as md
from rageval_desktop.core.base.verdicts import Decision

if TYPE_CHECKING:
    from rageval_desktop.core.metrics.gate import GateResult

SAID = {Decision.PASS: "gate passed", Decision.REGRESSION: "regression shown",
        Decision.NOT_DECISION_GRADE: "not decision-grade"}
# the Compare page's banner, in a release manager's words ("not decision-grade" is the CLI's and the record's term)
BADGE = {Decision.PASS: "PASS", Decision.REGRESSION: "REGRESSION", Decision.NOT_DECISION_GRADE: "CANNOT DECIDE YET"}
SHORT_FIXES = (("judging", "judge both runs with the same judges"),      # what the Compare page says, by kind
               ("licence", "audit the unlicensed judges (Audit page)"),
               ("ratings", "rate a sample of each run (Review page)"),
               ("config", "plan the gate again"),
               ("empty", "link the runs' rows to golden rows with gold ids"),
               ("unplanned", "plan the gate again for the metrics judged"),
               ("new slice", "plan the gate again for the new slices"))
ICON = {Decision.PASS: "✅", Decision.REGRESSION: "❌", Decision.NOT_DECISION_GRADE: "⚠️"}


def rule_text(result: GateResult) -> str:
    """The rule a gate applied, in words (for the CLI, the GUI and reports)."""
    small = f"slices with fewer than {result.min_slice_n} questions are reported, not gated"
    config = result.config
    if config is not None:
        text = (f"the gate's configuration ({config.source or 'given'}): {len(config.cells)} cell(s), each failing "
                f"when its drop is shown to exceed its allowed drop and passing when a drop of its tolerance would "
                f"have been caught with {config.power:.0%} power (or the drop is shown within it); one-sided t tests "
                f"adjusted ({result.adjustment or 'Holm'}) across the {result.gated} gated cells, family-wise error "
                f"at most {result.alpha:.3g}")
    else:
        limits = f"{result.max_slice_drop:g} points per slice, {result.max_aggregate_drop:g} for 'all'"
        if result.rule == "point":
            text = f"point rule: a drop larger than the limit fails ({limits}), evidence or not"
            if result.require_significant:
                text += " (only drops whose 95% CI lies below zero)"
        else:
            text = (f"a cell fails when its drop is shown to exceed the limit ({limits}): one-sided t tests adjusted "
                    f"({result.adjustment or 'Holm'}) across the {result.gated} gated cells, family-wise error at "
                    f"most {result.alpha:.3g}")
        text += (f"; it passes only when shown within the limit (one-sided, {result.alpha:.3g}); any other cell is "
                 f"undecided and the gate not decision-grade; {small}")
    text += retries_text(result)
    if result.comparison.get("estimator") == "ppi":
        text += "; judge metrics rated per row are compared as PPI estimates (judge mean corrected by ratings)"
    if result.comparison.get("estimator") == "selective":
        text += ("; judge metrics with a pass mark are compared as pass rates: a selective judge's verdicts on the "
                 "rows it decides (its net error corrected by the audit's ratings there) and the reviewers' on a "
                 "sample of the rest")
    return text


def covers_text(result: GateResult) -> str:
    """What the decision covered and what it left out, in one sentence (every output says it beside the verdict,
    whose `headline` names each cell not gated whose own 95% interval lies wholly below zero): each gated slice's
    metrics at their tolerances, the slices and metrics not gated, and the questions the candidate did not answer."""
    gated: dict[str, list[str]] = {}
    for r in [*result.regressions, *result.undecided, *result.safe]:
        gated.setdefault(r["slice"], []).append(f"{r['metric']} {r.get('tolerance', r['allowed']):g}")
    parts = []
    if gated:
        parts.append("gated within tolerances (points): " + "; ".join(f"'{name}' {', '.join(cells)}"
                                                                     for name, cells in gated.items()))
    slices = [name for name in result.comparison.get("slices", {}) if name not in gated]
    if slices:
        parts.append(f"not gated: {len(slices)} slice(s) — " + ", ".join(f"'{name}'" for name in slices))
    metrics = [f"{m['metric']} ({m['why']})" for m in result.not_gated_metrics]
    if metrics:
        parts.append("metrics not gated: " + ", ".join(metrics))
    if result.new_slices:
        parts.append("slices only the candidate has: " + ", ".join(result.new_slices))
    p = result.comparison.get("perimeter") or {}
    if p.get("unanswered"):
        how = "counted as failures" if result.comparison.get("missing_rule", "fail") == "fail" else "left out"
        parts.append(f"{p['unanswered']} of the baseline's {p['baseline_questions']} questions unanswered by the "
                     f"candidate ({how})")
    return "; ".join(parts)


def hidden_drops_text(result: GateResult) -> str:
    """'time-sensitive correctness −33.3 [−64.6, −2.0], …': cells not gated whose 95% interval lies below zero."""
    return ", ".join(f"{h['slice']} {h['metric']} {h['delta']:+.1f} [{h['ci'][0]:+.1f}, {h['ci'][1]:+.1f}]"
                     for h in result.hidden_drops)


def retries_text(result: GateResult) -> str:
    """How this attempt's errors are spent (core.metrics.attempts), or that they are not."""
    config, attempt = result.config, result.attempt
    if config is not None and config.retries == "each":
        return (f"; retries are not spent: this configuration (before 0.9) holds its {config.power:.0%} power per "
                f"attempt, so a pull request retried until green passes a drop of its tolerance more often (59% "
                "after 4 tries at 80%): plan again (rageval gate plan) to spend them")
    if result.alpha == result.alpha_budget:
        return ""
    said = (f"; {attempt.describe()}: alpha {result.alpha:.4f} of {result.alpha_budget:g} over every attempt")
    if config is not None and result.power_now is not None:
        said += (f"; a cell passes when shown within its tolerance at {result.within_level:.4f}, or when no drop is "
                 f"shown by a test with {result.power_now:.1%} power at it (a drop of the tolerance passes at most "
                 f"{1 - config.power:.0%} of the time however often it is retried)")
    return said


def drop_text(r: dict[str, Any]) -> str:
    """'-12.5 points, 95% CI of delta [-20.1, -4.9], n=8 questions with gold ids, adjusted p 0.003' (display);
    the sign is the delta's (an improvement reads +3.2)."""
    text = (f"{-r['drop']:+.1f} points, 95% CI of delta [{r['ci'][0]:+.1f}, {r['ci'][1]:+.1f}], "
            f"n={r['n']} {r['n_counts']}")
    if r.get("p_adjusted") is not None:
        text += f", adjusted p {r['p_adjusted']:.2g}"
    return text + (", within noise" if r["within_noise"] else "")


def headline(result: GateResult) -> str:
    """One line: what the gate decided (CLI, Compare page, Markdown and reports say the same); a pass names the cells
    not gated whose interval lies below zero — a slice or a metric the decision left out."""
    decision = result.decision
    if decision is Decision.REGRESSION:
        return f"{len(result.regressions)} regression(s) shown"
    if decision is Decision.NOT_DECISION_GRADE:
        parts = [f"{len(result.undecided)} cell(s) undecided"] if result.undecided else []
        named = sorted({f"{u['metric'] or 'new slice'}" + (f" ({u['slice']})" if u["slice"] else "")
                        for u in result.not_evaluated if u["metric"] or u["kind"] == "new slice"})
        if named:
            parts.append("not evaluated: " + ", ".join(named))
        elif result.not_evaluated:
            parts.append(result.not_evaluated[0]["why"])
        return "; ".join(parts)
    powered = sum(c["status"] == "powered" for c in result.safe)
    said = (f"every gated cell shown safe ({result.gated} cell(s)" +
            (f", {powered} by the configured power" if powered else "") + ")")
    if result.hidden_drops:
        said += f"; not gated, shown to drop: {hidden_drops_text(result)}"
    return said


def badge(result: GateResult) -> tuple[str, str]:
    """The Compare page's banner: its words and its look ("pass", "pass_with_drops" — a pass beside a cell not
    gated whose own interval lies below zero: amber, never green —, "regression", "not_decision_grade")."""
    decision = result.decision
    counts = [f"{len(result.regressions)} regression(s) shown" if result.regressions else "",
              f"{len(result.undecided)} undecided" if result.undecided else "",
              f"{len(result.not_evaluated)} not evaluated" if result.not_evaluated else "",
              f"{len(result.safe)} of {result.gated} shown safe"]
    look = decision.value
    if decision is Decision.PASS:
        tolerances = sorted({float(r["tolerance"] if "tolerance" in r else r["allowed"]) for r in result.safe})
        if tolerances:
            counts.append(f"within {tolerances[0]:g} points" if len(tolerances) == 1 else
                          f"within {tolerances[0]:g}–{tolerances[-1]:g} points")
        gated = {r["slice"] for r in result.safe}
        left = [s for s in result.comparison.get("slices", {}) if s not in gated]
        if left:
            counts.append(f"{len(left)} slice(s) not gated")
        if result.hidden_drops:
            look = "pass_with_drops"
            counts.append(f"{len({h['slice'] for h in result.hidden_drops})} of them shown to drop")
    return f"{BADGE[decision]}  ·  " + " · ".join(c for c in counts if c), look


def settle_hint(result: GateResult, *, short: bool = False) -> str:
    """What would settle a decision that is not decision-grade, in one sentence (CLI, Markdown; `short`: the
    Compare page, which shows each reason in its badge's tooltip)."""
    if result.decision is not Decision.NOT_DECISION_GRADE:
        return ""
    parts = []
    if result.undecided:
        worst = max((u["detectable_drop"] or 0) for u in result.undecided)
        parts.append(f"plan tolerances the data can detect (rageval gate plan; these cells detect drops of up to "
                     f"{worst:.0f} points)" if short else
                     "plan tolerances the data can detect (rageval gate plan: the drop each cell detects, the "
                     f"questions a tolerance needs; the undecided cells detect drops of up to {worst:.0f} points)")
    kinds = {u["kind"] for u in result.not_evaluated}
    if short:
        parts += [text for kind, text in SHORT_FIXES if kind in kinds]
    else:
        parts += list(dict.fromkeys(u["fix"] for u in result.not_evaluated if u.get("fix")))
    return "; ".join(parts)


def gate_markdown(result: GateResult) -> str:
    """For a pull-request comment: every name from data is escaped (core.base.text.md_escape)."""
    c = result.comparison
    decision = result.decision
    lines = [f"### RAG evaluation gate: {md(c['candidate'])} vs {md(c['baseline'])}", "",
             f"{ICON[decision]} **{md(SAID[decision])}: {md(headline(result))}** — {c['shared_questions']} shared "
             f"questions; {md(rule_text(result))}.", ""]
    covers = covers_text(result)
    if covers:
        lines += [f"What it covered: {md(covers)}.", ""]
    hint = settle_hint(result)
    if hint:
        lines += [f"What would settle it: {md(hint)}.", ""]
    table = ["| slice | metric | baseline | candidate | drop | 95% CI of delta | n | |",
             "|---|---|---:|---:|---:|---|---:|---|"]

    def row(r: dict[str, Any], note: str) -> str:
        return (f"| {md(r['slice'])} | {md(r['metric'])} | {r['baseline']:.1f} | {r['candidate']:.1f} | "
                f"**{r['drop']:.1f}** | [{r['ci'][0]:+.1f}, {r['ci'][1]:+.1f}] | {r['n']} | {md(note)} |")

    if result.regressions:
        lines += table + [row(r, "" if r.get("p_adjusted") is None else f"adjusted p {r['p_adjusted']:.2g}")
                          for r in result.regressions] + [""]
    if result.not_evaluated:
        lines += ["**Not evaluated** (asked to gate, could not be):", ""]
        lines += [f"- {md(u['metric'] or 'the gate')}" + (f" ({md(u['slice'])})" if u["slice"] else "")
                  + f": {md(u['why'])}" for u in result.not_evaluated]
        lines += [""]
    if result.undecided:
        lines += [f"<details><summary>{len(result.undecided)} undecided cell(s): the evidence neither shows a drop "
                  "over the allowed one nor rules out one of the tolerance</summary>", ""]
        lines += table + [row(r, f"detects ≥ {r['detectable_drop']:.1f}" if r["detectable_drop"] is not None else "")
                          for r in result.undecided] + ["", "</details>", ""]
    if result.safe:
        lines += [f"<details><summary>{len(result.safe)} cell(s) shown safe</summary>", ""]
        lines += table + [row(r, r["why"]) for r in result.safe] + ["", "</details>", ""]
    if result.uncovered:
        lines += [f"_Not gated by this configuration, on their own: {', '.join(map(md, result.uncovered))} (their "
                  "drops count only through the cells that hold them; `rageval gate plan` says what each could "
                  "detect)._", ""]
    if result.ungated:
        lines += ["Drops over the limit that do not fail the gate:", ""]
        lines += table + [row(r, r["why"]) for r in result.ungated] + [""]
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
    slices_short = [u for u in c.get("unavailable", []) if u["slice"] != "all"]
    if slices_short:
        lines += ["Not gated, too few ratings for a corrected (PPI) estimate:", ""]
        lines += [f"- {md(u['slice'])} {md(u['metric'])}: {md(u['why'])}" for u in slices_short] + [""]
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
