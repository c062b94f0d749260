"""The Dashboard's table and note from a run's summary (core.metrics.dashboard): which columns, in which order, with
which header tips; one record per slice with its cells' tips; the note under the table. Qt-free (the import contract
holds it), tested without a window; the page draws what this gives."""

from __future__ import annotations

from typing import Any

from rageval_desktop.core.metrics.ppi import describe as describe_ppi
from rageval_desktop.core.metrics.retrieval import definition, named
from rageval_desktop.core.metrics.retrieval import label as retrieval_label

Fields = dict[str, Any]     # core's plain dicts: a run's summary, a slice's record, a judge's line


class Table:
    """One summary as the Dashboard's table shows it."""

    def __init__(self, summary: Fields) -> None:
        self.summary = summary
        metrics = summary["judge_metrics"]
        rated = [m for m in metrics if m in summary.get("rated_metrics", {})]
        retrieval = [(m, retrieval_label(m)) for m in named("shown")]
        judged = [c for m in metrics for c in [(m, m)] + ([(f"{m}_ppi_value", f"{m}\ncorrected")]
                                                         if m in rated else [])]
        # with human ratings, the judge metrics and their corrected values — what a release is decided on — come
        # first: after five retrieval columns they sat past the right edge at 1024 (issue 77)
        columns = [("slice", "slice"), ("n", "n"), ("n_with_gold", "with gold"),
                   *([*judged, *retrieval] if rated else [*retrieval, *judged]),
                   *[(f"{m}_coverage_pct", f"{m} scored") for m in metrics],
                   ("p95_latency_ms", "p95 latency (ms)"), ("cost_per_query", "cost/query ($)")]
        self.metrics, self.rated = metrics, rated
        self.columns = columns
        self.scored = {*named("shown"), *metrics, *[f"{m}_ppi_value" for m in rated]}
        self.header_tips = {**{key: definition(key) or "" for key, _ in columns if definition(key)},
                            "n": "questions: a question answered more than once counts once (its repeats "
                                 "averaged)",
                            "n_with_gold": "questions with gold chunk ids: the n of the retrieval metrics",
                            **{f"{m}_ppi_value": f"{m} corrected: the judges' mean corrected by the human "
                               "ratings of the slice's questions (prediction-powered inference); — where a "
                               "slice has too few ratings. Hover a cell for its 95% CI." for m in rated}}

    def records(self) -> list[Fields]:
        """One record a slice, with its cells' tips (a score's CI and coverage, a corrected value's interval)."""
        records = []
        for name, s in self.summary["slices"].items():
            rec = {"slice": name, **s}
            for m in self.metrics:
                cov = s.get(f"{m}_coverage")
                rec[f"{m}_coverage_pct"] = None if cov is None else f"{cov * 100:.0f}%"
                ci = s.get(f"{m}_ci")
                if ci:
                    rec[f"{m}__tip"] = (f"{m}: {s[m]:.1f}, 95% CI [{ci[0]:.1f}, {ci[1]:.1f}]; "
                                        f"{cov * 100:.0f}% scored, {s[f'{m}_unparsed_rate'] * 100:.0f}% unparsed, "
                                        f"{s[f'{m}_error_rate'] * 100:.0f}% errors; judges: "
                                        + ", ".join(self.summary["judges"].get(m, [])))
                sel = self.summary.get("selective", {}).get(m)
                share = (sel or {}).get("slices", {}).get(name)
                if sel and share and f"{m}__tip" in rec:
                    rec[f"{m}__tip"] += (f"\n{sel['judge']} decides {share['decided'] * 100:.0f}% of this slice's "
                                         f"rows: it {sel['said']}")
            for m in self.rated:
                p = s.get(f"{m}_ppi") or {}
                rec[f"{m}_ppi_value"] = p.get("estimate")
                rec[f"{m}_ppi_value__tip"] = f"{m} {describe_ppi(p)}" if p else "not rated"
            records.append(rec)
        return records

    def notes(self, baseline: Fields | None) -> str:
        """The note under the table: what the numbers are, what was left out and why, what to do next."""
        summary = self.summary
        notes = ["Scores on 0–100. Judge metrics: mean of active judges; hover a score for its 95% CI."]
        if self.rated:
            notes.append("'corrected': the judges' mean corrected by the human ratings of the slice's questions "
                         "(PPI++, the judge weighed as far as it tracks them), where at least 10 are rated.")
        if baseline is not None:
            notes.append(f"The chart shows {baseline['run']} (grey) beside {summary['run']}, with 95% CIs; "
                         "click a bar to read its failures.")
        if summary["retired_judges"]:
            notes.append("Retired judges left out: " + ", ".join(r["judge"] for r in summary["retired_judges"]) + ".")
        if summary["unsettled_judges"]:
            notes.append("⚑ " + unsettled_text(summary["unsettled_judges"]))
        notes += self._judges_said()
        if summary["repeated_questions"]:
            c = summary["slices"]["all"].get("consistency") or {}
            moves = ", ".join(f"{m} ±{v['mean_std']:.1f}" for m, v in c.get("metrics", {}).items()
                              if v["mean_std"] is not None)
            notes.append(f"{summary['repeated_questions']} question(s) answered more than once (up to "
                         f"{c.get('max_repeats', 2)} times): averaged" + (f"; between repeats scores move by {moves} "
                                                                          "points (mean std)" if moves else "") + ".")
        if summary["golden_set_changed_since_run"]:
            notes.append("The golden set changed since this run was imported.")
        if not self.metrics:
            notes.append("No judge has scored this run yet: run judges from the Judges view.")
        return " ".join(notes)

    def _judges_said(self) -> list[str]:
        """What the note says of the judges behind the means: a selective judge's share, a judge's own noise, rows
        it did not score."""
        summary, notes = self.summary, []
        for metric, sel in summary.get("selective", {}).items():
            whole = sel["slices"].get("all", {}).get("decided")
            notes.append(f"{metric} from {sel['judge']} (selective licence): it decides "
                         + (f"{whole * 100:.0f}% of this run's rows" if whole is not None else "some rows")
                         + f" (hover a cell for the slice's share), agreeing with people on ≥ "
                           f"{(1 - sel['alpha']) * 100:.0f}% of them with probability ≥ "
                           f"{(1 - sel['delta']) * 100:.0f}%; these means count every row.")
        for metric, noise in summary.get("judge_noise", {}).items():
            whole = noise["slices"].get("all")
            if whole:
                notes.append(f"Judge noise: {whole['ci_width_share'] * 100:.0f}% of {metric}'s CI width is "
                             f"{noise['judge']}'s own (asked {noise['repeats']} times on {noise['sample']} rows).")
        if summary.get("unscored"):
            notes.append("Not scored (left out of the means, listed in the run table's status filter): " + "; ".join(
                f"{judge} {u['rows']} rows (" + ", ".join(f"{n} {r}" for r, n in u["reasons"].items()) + ")"
                for judge, u in summary["unscored"].items()) + ".")
        return notes


def unsettled_text(items: list[Fields]) -> str:
    """The judges counted whose audit has not said keep, in words: one the audit would retire says so (it is
    counted until the audit is recorded), the others wait for ratings."""
    kept = [u for u in items if u.get("selective")]
    retire = [u for u in items if str(u["verdict"]).startswith("retire") and not u.get("selective")]
    others = [u for u in items if not str(u["verdict"]).startswith("retire")]
    parts = []
    if kept:
        parts.append("Retired as a whole but kept for the rows it decides (selective): " + ", ".join(
            f"{u['judge']} (n={u['n']})" for u in kept) + ".")
    if retire:
        parts.append("The audit would retire " + ", ".join(f"{u['judge']} (n={u['n']})" for u in retire)
                     + ": still counted until Audit › Record audit and apply.")
    if others:
        parts.append("Counted, not yet confirmed by human ratings: " + ", ".join(
            f"{u['judge']} ({u['verdict']}, n={u['n']})" for u in others) + ".")
    return " ".join(parts)
