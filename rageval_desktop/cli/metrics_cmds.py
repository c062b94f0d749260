"""Metrics, comparisons, the CI gate, failures, reports."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rageval_desktop.cli.base import (
    EXIT_OK,
    Command,
    UsageError,
    cell,
    examples,
    open_api,
    open_project,
    say,
)
from rageval_desktop.core.metrics.retrieval import named, spelled

if TYPE_CHECKING:
    from rageval_desktop import api


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


def _metric_names(names: list[str] | None) -> list[str] | None:
    """--metrics as typed, with a word on the renamed retrieval metrics (stderr; the output stays clean)."""
    if not names:
        return names
    from rageval_desktop.core.metrics.retrieval import canonical_name

    for name in names:
        if canonical_name(name) != name:
            print(f"note: '{name}' is now called '{canonical_name(name)}' (the old name works for a while)",
                  file=sys.stderr)
        elif name.startswith("recall@"):
            print(f"note: {name} is the share of a question's gold chunks in the top k; 'any gold chunk in the top "
                  f"k' (called recall@k before 0.2) is {name.replace('recall@', 'hit@')}", file=sys.stderr)
    return names


def _unsettled_lines(items: list[dict]) -> list[str]:
    from rageval_desktop.core.review.agreement import NEEDS_MORE

    def line(u: dict) -> str:
        head = f"flag: judge {u['judge']} ({u['metric']}) is counted but {u['verdict']}"
        if not u["n"]:
            return head + "; rate a sample (rageval sample) and run rageval agreement"
        head += (f": {u['statistic']} {cell(u['value'], 3)} [{cell(u['ci'][0], 3)}, {cell(u['ci'][1], 3)}] "
                 f"on n={u['n']}")
        if u["verdict"] == NEEDS_MORE:
            return head + f", about {u['needed']} more rated rows"
        if u.get("selective"):
            return head + ("; kept for the rows it decides (a selective licence): its means here count every row — "
                           "compare and gate with --estimator selective")
        return head + "; record it with rageval agreement --apply"
    return [line(u) for u in items]


def selective_lines(found: dict[str, Any]) -> list[str]:
    """Each judge metric from a judge with a selective licence: what it gates and the share of each slice it decides."""
    out = []
    for metric, f in found.items():
        shares = ", ".join(f"{name} {v['decided']:.0%}" for name, v in f["slices"].items())
        out.append(f"selective: {metric} from {f['judge']} {f['said']}; it decides {shares} of the rows (the means "
                   "above count every row: gate with --estimator selective)")
    return out


def add_metrics(command: Command) -> None:
    """The arguments of `rageval metrics` (its handler follows)."""
    p = command("metrics", cmd_metrics, "the dashboard of one run: every slice and 'all' (0-100 scale)")
    p.epilog = examples('rageval metrics eval.rageval --run v2', 'rageval metrics eval.rageval --run v2 --json')
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--k", help="cut-offs for recall/precision/nDCG (default 5,10,50)")
    p.add_argument("--estimator", choices=["mean", "ppi"], default="mean",
                   help="judge metrics as the judges' mean (default) or corrected by the human ratings (ppi: "
                        "prediction-powered inference; needs 10 rated questions per slice)")
    p.add_argument("--json", action="store_true")


def cmd_metrics(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.dashboard import dashboard_table, ppi_lines

    with open_api(args.project, read_only=True) as project:
        _say_not_kept(project, args.project, [args.run])
        summary = project.metrics(args.run, k=_ks(args.k), estimator=args.estimator).data
    headers, rows = dashboard_table(summary, args.estimator)
    lines = ["  ".join(f"{h:>14}" for h in headers)]
    lines += ["  ".join(f"{cell(v):>14}" for v in row) for row in rows]
    lines += ["n: questions (a question answered more than once counts once); with gold: those with gold ids, "
              "which retrieval metrics use.",
              "hit@k: share of questions with any gold chunk in the top k; recall@k: mean share of gold chunks in "
              "the top k. Scores 0-100; --json has every column at full precision."]
    if args.estimator == "ppi":
        lines.append("(ppi): the judge mean corrected by the human ratings of the slice's questions (prediction-"
                     "powered inference; — where a slice has too few ratings). Per slice:")
        lines += ["  " + line for line in ppi_lines(summary)] or [
            "  no judge metric of this run is rated by humans yet: draw a sample (rageval sample) and rate it in the "
            "app or with rageval ratings import"]
    if summary["repeated_questions"]:
        c = summary["slices"]["all"]["consistency"]
        lines.append(f"{summary['repeated_questions']} question(s) were answered more than once in this run (up to "
                     f"{c['max_repeats']} times): their numbers are averaged over the repeats.")
        moves = [f"{m} ±{v['mean_std']:.1f}" for m, v in c["metrics"].items() if v["mean_std"] is not None]
        if moves:
            lines.append("consistency across repeats (mean std, points): " + ", ".join(moves))
    if summary["retired_judges"]:
        lines.append("retired judges left out: " + ", ".join(r["judge"] for r in summary["retired_judges"]))
    for metric, noise in summary.get("judge_noise", {}).items():
        whole = noise["slices"].get("all")
        if whole:
            lines.append(f"judge noise: {metric} — {whole['ci_width_share'] * 100:.0f}% of the CI's width on all is "
                         f"{noise['judge']}'s own (within-row SD {whole['within_sd_points']:.1f} points, asked "
                         f"{noise['repeats']} times on {noise['sample']} rows); per slice in --json")
    lines += _unsettled_lines(summary["unsettled_judges"])
    lines += selective_lines(summary.get("selective", {}))
    for judge, u in summary.get("unscored", {}).items():
        why = ", ".join(f"{n} {reason}" for reason, n in u["reasons"].items())
        named = ", ".join(r["row"] for r in u["listed"]) + (" …" if u["rows"] > len(u["listed"]) else "")
        lines.append(f"not scored by {judge} ({u['metric']}): {u['rows']} rows ({why}): {named}")
    say(args, summary, "\n".join(lines))
    return EXIT_OK


def add_compare(command: Command) -> None:
    """The arguments of `rageval compare` (its handler follows)."""
    p = command("compare", cmd_compare, "per-slice deltas of a candidate run against a baseline (paired 95% CIs)")
    p.epilog = examples('rageval compare eval.rageval --baseline v1 --candidate v2',
                        'rageval compare eval.rageval --baseline v1 --candidate v2 --metrics hit@5 mrr --json')
    p.add_argument("project")
    p.add_argument("--baseline", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--metrics", nargs="+", help=f"default: {' '.join(named('headline'))} + judged metrics; also "
                   f"{spelled()} for any k (recall@k: share of gold chunks in the top k)")
    p.add_argument("--estimator", choices=["mean", "ppi", "selective"], default="mean",
                   help="judge metrics as the judges' mean (default), corrected by the human ratings (ppi: "
                        "prediction-powered inference; needs 10 rated questions per slice), or as pass rates from "
                        "a selective judge's decided rows and the desk's ratings of the rest (selective: needs a "
                        "rated sample of its abstentions on each run, rageval sample --abstained)")
    p.add_argument("--json", action="store_true")


def _say_not_kept(project: api.Project, path: str, runs: list[str]) -> None:
    """A note on stderr when a large run read here has no kept values (core.metrics.values.not_kept): the read takes
    several times the CPU, every time, until `rageval migrate` keeps them (a read never writes)."""
    from rageval_desktop.core.metrics.values import not_kept

    slow = [f"{name} ({rows:,} rows)" for _, name, rows in not_kept(project.core.reader()) if name in runs]
    if slow:
        print(f"note: the values of {', '.join(slow)} are not kept, so this reads the tables (several times the CPU); "
              f"keep them once with: rageval migrate {path}", file=sys.stderr)


def cmd_compare(args: argparse.Namespace) -> int:
    with open_api(args.project, read_only=True) as project:
        _say_not_kept(project, args.project, [args.baseline, args.candidate])
        result = project.compare(args.baseline, args.candidate, metrics=_metric_names(args.metrics),
                                 estimator=args.estimator).data
    lines = []
    for name, entry in result["slices"].items():
        cells = [f"{m} {c['delta']:+.1f} [{c['ci'][0]:+.1f}, {c['ci'][1]:+.1f}]" for m in result["metrics"]
                 if (c := entry.get(m))]
        lines.append(f"{name:<16} n={entry['n']:<4} ({entry['n_with_gold']:>4} with gold ids)  " + "  ".join(cells))
    lines.append("delta in points (candidate - baseline) [paired 95% CI]; n: questions both runs answered, repeats "
                 "averaged; retrieval metrics use those with gold ids")
    lines += [f"not compared: {m['metric']} — {m['why']}" for m in result["missing"]]
    if args.estimator == "ppi":
        lines.append("judge metrics rated per row: PPI estimates (each run's judge mean corrected by its ratings)")
        lines += [f"no corrected estimate: {u['slice']} {u['metric']}: {u['why']}" for u in result["unavailable"]]
    lines += _unsettled_lines(result["unsettled_judges"])
    say(args, result, "\n".join(lines))
    return EXIT_OK


def add_failures(command: Command) -> None:
    """The arguments of `rageval failures` (its handler follows)."""
    p = command("failures", cmd_failures, "failing rows by class (retrieval, reranker, generation) and slice")
    p.epilog = examples('rageval failures eval.rageval --run v2', 'rageval failures eval.rageval --run v2 --json')
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--class", dest="failure_class", choices=["retrieval", "reranker", "generation"])
    p.add_argument("--slice")
    p.add_argument("--metric", help="only rows this judged metric failed")
    p.add_argument("--sample", type=int, help="read N failures at random (e.g. 10)")
    p.add_argument("--json", action="store_true")


def cmd_failures(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.failures import failure_listing

    with open_project(args.project, read_only=True) as project:
        found = failure_listing(project, args.run, failure=args.failure_class, slice_tag=args.slice,
                                metric=args.metric, sample=args.sample)
    counts, rows = found["counts"], found["rows"]
    lines = [f"{name:<16} n={c['n']:<5} retrieval {c['retrieval']:<4} reranker {c['reranker']:<4} "
             f"generation {c['generation']}" for name, c in counts.items()]
    lines.append("a judge metric fails under its pass mark: " + ("; ".join(
        f"{m} < {v['pass_mark']:g} ({', '.join(v['judges']) or 'no active judge'})"
        for m, v in found["pass_marks"].items()) or "no judged metric with a pass mark"))
    if args.metric:
        lines.append(f"{found['metric_failures']} row(s) fail {args.metric}" + (f" in {args.slice}" if args.slice
                                                                                 else ""))
    lines += [""] + [f"[{r['failure'] or 'no class'}] row {r['row_id']} {r['external_id']} ({r['slice']}): "
                     f"{r['question'][:90]}"
                     + (f"  — failed by {', '.join(r['failed_judges'])}" if r["failed_judges"] else "")
                     for r in rows]
    say(args, found, "\n".join(lines))
    return EXIT_OK


def add_report(command: Command) -> None:
    """The arguments of `rageval report` (its handler follows)."""
    p = command("report", cmd_report, "write a report: .html .pdf .xlsx .csv .jsonl .parquet or .md (by extension)")
    p.epilog = examples('rageval report eval.rageval --run v2 --baseline v1 --out report.html',
                        'rageval report eval.rageval --run v2 --out rows.parquet   # every row with its scores')
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--baseline", help="compare against this run (the report then says what the gate says)")
    p.add_argument("--max-slice-drop", type=float, default=2.0, help="the gate's limit in the report (default 2)")
    p.add_argument("--out", required=True, help="file to write; its extension picks the format")
    p.add_argument("--json", action="store_true")


def cmd_report(args: argparse.Namespace) -> int:
    with open_api(args.project, read_only=True) as project:
        out = project.report(args.run, args.out, baseline=args.baseline, max_slice_drop=args.max_slice_drop)
    say(args, {"report": str(out)}, f"report written to {out}")
    return EXIT_OK
