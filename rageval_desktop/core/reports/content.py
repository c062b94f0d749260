"""Everything a report says, gathered once: dashboard, comparison, judge health, failures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from rageval_desktop._version import __version__
from rageval_desktop.core.base.vocab import gold_free
from rageval_desktop.core.judges.registry import list_judges
from rageval_desktop.core.metrics import gate_config
from rageval_desktop.core.metrics.dashboard import summarise
from rageval_desktop.core.metrics.failures import CLASSES, classify, failure_rows
from rageval_desktop.core.metrics.gate import apply_licences, evaluate_gate, gated_comparison
from rageval_desktop.core.metrics.gate_config import GateConfig
from rageval_desktop.core.metrics.gate_text import SAID, headline, settle_hint
from rageval_desktop.core.metrics.retrieval import definition, named
from rageval_desktop.core.metrics.rowdata import load_run, per_question
from rageval_desktop.core.review import pairwise
from rageval_desktop.core.review.licence import last_check, licence
from rageval_desktop.core.review.system import system_agreement
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.project import Project


def judge_health(project: Project, run_id: int, n_rows: int) -> list[dict[str, Any]]:
    conn = project.reader()
    counts: dict[tuple[int, str], int] = {}
    for judge_id, status, n in conn.execute(
            "SELECT x.judge_id, x.status, COUNT(DISTINCT x.run_row_id) FROM judgments x JOIN run_rows rr "
            "ON rr.id = x.run_row_id WHERE rr.run_id = ? GROUP BY x.judge_id, x.status", (run_id,)):
        counts[(judge_id, status)] = n
    out = []
    for j in list_judges(project):
        audit = conn.execute("SELECT statistic, value, ci_low, ci_high, n, verdict, created_at, details "
                             "FROM agreement_reports "
                             "WHERE judge_id = ? ORDER BY id DESC LIMIT 1", (j.id,)).fetchone()
        ok, unparsed, error = (counts.get((j.id, s), 0) for s in ("ok", "unparsed", "error"))
        out.append({
            "judge": j.name, "metric": j.metric, "kind": j.kind, "model": j.model or j.params.get("model") or
            j.params.get("measure"), "status": j.status,
            "coverage": ok / n_rows if n_rows else None,
            "unparsed_rate": unparsed / n_rows if n_rows else None,
            "error_rate": error / n_rows if n_rows else None,
            "agreement": None if audit is None else {
                "statistic": audit[0], "value": audit[1], "ci": [audit[2], audit[3]], "n": audit[4],
                "verdict": audit[5], "at": audit[6],
                "compared_with": json.loads(audit[7]).get("compared_with")},
            **judge_assurance(project, j),
        })
    return out


def judge_assurance(project: Project, judge: Any) -> dict[str, Any]:
    """What a reader needs to trust a judge's numbers (issue 30): its licence, its run order against the
    reviewers', and its newest stability and probe checks (of the judge as it is now). Full precision."""
    stability, probe = last_check(project, judge, "stability"), last_check(project, judge, "probe")
    system = system_agreement(project, judge)
    return {
        "licence": licence(project, judge).as_dict(),
        "run_order": {k: system.get(k) for k in ("tau", "ci", "ordered_same", "runs", "questions", "reason")},
        "stability": None if stability is None else {
            k: stability.get(k) for k in ("flip_rate", "flip_rate_ci", "sample", "repeats", "run", "at")},
        "probe": None if probe is None else {
            "passed": probe.get("passed"), "failed": probe.get("failed", []), "run": probe.get("run"),
            "at": probe.get("at"),
            "kinds": {k: {"share": v["share"], "ci": v["ci"], "rows": v["rows"], "verdict": v["verdict"]}
                      for k, v in probe.get("kinds", {}).items()}},
    }


def _gate(comparison: dict[str, Any] | None, max_slice_drop: float,
          config: GateConfig | None = None) -> dict[str, Any] | None:
    """The gate's verdict on the comparison, by core's one rule (as `rageval gate` and the Compare page), under
    the project's saved configuration when it has one."""
    if comparison is None:
        return None
    result = evaluate_gate(comparison, max_slice_drop=max_slice_drop, config=config)
    found = result.as_dict()
    found.pop("comparison")
    return {**found, "rule": found.pop("rule_text"), "headline": headline(result), "said": SAID[result.decision],
            "settle": settle_hint(result)}


def build_report(project: Project, run: str, baseline: str | None = None, failures: int = 10,
                 max_slice_drop: float = 2.0) -> dict[str, Any]:
    with reads.shared(project):          # the judges' pairs and the ratings, read once for every section
        return _build_report(project, run, baseline, failures, max_slice_drop)


def _build_report(project: Project, run: str, baseline: str | None, failures: int,
                  max_slice_drop: float) -> dict[str, Any]:
    data = load_run(project, run)
    summary = summarise(data)
    frame = classify(data)
    counts = {}
    for name in summary["slices"]:
        part = frame if name == "all" else frame[frame["slice"] == name]
        counts[name] = {"n": len(part), **{c: int((part["failure"] == c).sum()) for c in CLASSES}}
    config = gate_config.resolve(project, None)
    comparison = gated_comparison(project, baseline, run, config) if baseline else None
    if comparison is not None:
        apply_licences(project, comparison)      # the report's gate counts only licensed judges, as `rageval gate`
    notes = project.reader().execute("SELECT notes, created_at, source_file FROM runs WHERE id = ?",
                                     (data.run_id,)).fetchone()
    return {
        "title": f"RAG evaluation: {run}" + (f" vs {baseline}" if baseline else ""),
        "project": project.meta("name") or project.path.stem,
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "generator": f"RAGEval Desktop {__version__}",
        "run": {"name": run, "notes": notes[0], "imported_at": notes[1], "source_file": notes[2]},
        "baseline": baseline,
        "dashboard": summary,
        "comparison": comparison,
        "gate": _gate(comparison, max_slice_drop, config),
        # what reviewers said of the two runs' answers side by side (the Pairwise page), when they were asked
        "pairwise": _side_by_side(project, baseline, run),
        "definitions": {m: definition(m) for m in named("shown")},
        "judge_health": judge_health(project, data.run_id, len(data.frame)),
        "corrected": corrected_rows(summary),
        "failure_counts": counts,
        "failures": failure_rows(project, run, sample=failures, classified=frame),
        "distributions": distributions(project, [run] if not baseline else [baseline, run], data),
    }


def _side_by_side(project: Project, baseline: str | None, run: str) -> str | None:
    preferred = pairwise.between(project, baseline, run) if baseline else None
    return None if preferred is None else preferred.words()


def corrected_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per judge metric rated by humans and slice: the judges' mean beside its PPI estimate (core.metrics.ppi),
    or why there is none. Full precision; the writers round."""
    out = []
    for metric in summary.get("rated_metrics", {}):
        for name, s in summary["slices"].items():
            p = s.get(f"{metric}_ppi")
            if p is not None:
                out.append({"metric": metric, "slice": name, "judge_mean": p["judge_mean"], "estimate": p["estimate"],
                            "ci": p["ci"], "n_rated": p["n_rated"], "effective_n": p["effective_n"],
                            "weighted": p["weighted"], "lambda": p.get("lambda", 1.0), "why": p["why"]})
    return out


def distributions(project: Project, runs: list[str], loaded: Any = None) -> dict[str, dict[str, list[float]]]:
    """Per run, per gold-free metric, the per-question values (repeats averaged; unscored left out) — what the
    box plots draw, open-rag-eval style."""

    out: dict[str, dict[str, list[float]]] = {}
    for name in runs:
        data = loaded if loaded is not None and loaded.run == name else load_run(project, name)
        frame = per_question(data.frame)
        metrics = [m for m in data.metrics if gold_free(m)]
        out[name] = {m: [float(v) for v in frame[m].dropna()] for m in metrics if m in frame}
    return out
