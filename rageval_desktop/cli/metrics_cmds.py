"""Metrics, comparisons, the CI gate, failures, reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rageval_desktop.cli.base import EXIT_FAILED, EXIT_OK, UsageError, _cell, _open, _print


def _ks(text: str | None) -> tuple[int, ...]:
    if not text:
        return (5, 10, 50)
    try:
        ks = tuple(sorted({int(k) for k in text.split(",")}))
    except ValueError:
        raise UsageError(f"--k takes whole numbers separated by commas, e.g. 5,10,50 (got '{text}')") from None
    if not ks or min(ks) < 1:
        raise UsageError("--k values must be at least 1")
    return ks


def cmd_metrics(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.dashboard import dashboard, dashboard_table

    with _open(args.project, read_only=True) as project:
        summary = dashboard(project, args.run, _ks(args.k))
    headers, rows = dashboard_table(summary)
    lines = ["  ".join(f"{h:>14}" for h in headers)]
    lines += ["  ".join(f"{_cell(v):>14}" for v in row) for row in rows]
    if summary["retired_judges"]:
        lines.append("retired judges left out: " + ", ".join(r["judge"] for r in summary["retired_judges"]))
    _print(args, summary, "\n".join(lines))
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.compare import GateUsageError, compare

    with _open(args.project, read_only=True) as project:
        try:
            result = compare(project, args.baseline, args.candidate, args.metrics)
        except GateUsageError as exc:
            raise UsageError(str(exc)) from None
    lines = []
    for name, entry in result["slices"].items():
        cells = [f"{m} {c['delta']:+.1f} [{c['ci'][0]:+.1f}, {c['ci'][1]:+.1f}]" for m in result["metrics"]
                 if (c := entry.get(m))]
        lines.append(f"{name:<16} n={entry['n']:<5} " + "  ".join(cells))
    _print(args, result, "\n".join(lines))
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.compare import GateUsageError, gate, gate_markdown

    with _open(args.project, read_only=True) as project:
        try:
            result = gate(project, args.baseline, args.candidate, max_slice_drop=args.max_slice_drop,
                          max_aggregate_drop=args.max_aggregate_drop, metrics=args.metrics)
        except GateUsageError as exc:
            raise UsageError(str(exc)) from None
    if args.markdown:
        Path(args.markdown).write_text(gate_markdown(result), encoding="utf-8")
    data = {"passed": result.passed, "regressions": result.regressions, "max_slice_drop": result.max_slice_drop,
            "max_aggregate_drop": result.max_aggregate_drop, "comparison": result.comparison}
    if result.passed:
        text = (f"gate passed: no slice of '{args.candidate}' dropped more than {args.max_slice_drop:g} points "
                f"against '{args.baseline}' ({result.comparison['shared_questions']} shared questions)")
    else:
        text = "\n".join(f"REGRESSION {r['slice']:<16} {r['metric']:<20} {r['baseline']:6.1f} -> {r['candidate']:6.1f}"
                         f"  (-{r['drop']:.1f} points, allowed {r['allowed']:g})" for r in result.regressions)
        print(f"error: {len(result.regressions)} regression(s) of '{args.candidate}' against '{args.baseline}'",
              file=sys.stderr)
    _print(args, data, text)
    return EXIT_OK if result.passed else EXIT_FAILED


def cmd_failures(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.failures import failure_counts, failure_rows

    with _open(args.project, read_only=True) as project:
        counts = failure_counts(project, args.run)
        rows = failure_rows(project, args.run, failure=args.failure_class, slice_tag=args.slice, metric=args.metric,
                            sample=args.sample)
    lines = [f"{name:<16} n={c['n']:<5} retrieval {c['retrieval']:<4} reranker {c['reranker']:<4} "
             f"generation {c['generation']}" for name, c in counts.items()]
    lines += [""] + [f"[{r['failure']}] {r['external_id']} ({r['slice']}): {r['question'][:90]}" for r in rows]
    _print(args, {"counts": counts, "rows": rows}, "\n".join(lines))
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.compare import GateUsageError
    from rageval_desktop.core.reports import write_report

    with _open(args.project, read_only=True) as project:
        try:
            out = write_report(project, args.run, args.out, baseline=args.baseline)
        except GateUsageError as exc:
            raise UsageError(str(exc)) from None
    _print(args, {"report": str(out)}, f"report written to {out}")
    return EXIT_OK
