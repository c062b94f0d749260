"""Judge checks (issue 30): stability (a judge asked again) and sensitivity probes (perturbed copies)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rageval_desktop.cli.base import EXIT_FAILED, EXIT_OK, Command, UsageError, open_project, say


def _ci(ci: list[float | None]) -> str:
    return "—" if ci[0] is None or ci[1] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _money(value: float | None) -> str:
    return "no price" if value is None else f"${value:.4f}"


def _delete(args: argparse.Namespace, kind: str) -> int:
    from rageval_desktop.core.jobs.checks import delete_check_runs

    with open_project(args.project) as project:
        gone = delete_check_runs(project, kind, args.judge, args.run)
    say(args, {"deleted": gone}, f"deleted {len(gone)} {kind} run(s)" + (": " + ", ".join(gone) if gone else "")
           + ("; their summaries stay on record" if gone else ""))
    return EXIT_OK


def _run(args: argparse.Namespace, kind: str) -> int:
    from rageval_desktop.cli.judging_cmds import _progress
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.jobs import checks

    if not args.judge or not args.run:
        name = "probe --battery" if kind == "bias" else kind
        raise UsageError(f"rageval {name} needs --judge and --run (or --delete)")
    with open_project(args.project, read_only=args.dry_run) as project:
        try:
            if kind == "stability":
                check = checks.plan_stability(project, args.judge, args.run, sample=args.sample,
                                              repeats=args.repeats, seed=args.seed)
            else:
                kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] if args.kinds else None
                check = checks.plan_probe(project, args.judge, args.run, sample=args.sample, kinds=kinds,
                                          seed=args.seed, battery=kind == "bias")
        except checks.CheckUsageError as exc:
            raise UsageError(exc.for_cli()) from None
        est = checks.estimate(project, check)
        if args.dry_run:
            text = (f"dry run, nothing sent: {kind} of {check.judge.name} on {args.run}: {est['rows']} rows × "
                    f"{len(check.variants)} = {est['copies']} copies, {est['already_judged']} already judged; "
                    f"{est['calls']} calls, ~{est['prompt_tokens']:,} prompt + ~{est['completion_tokens']:,} "
                    f"completion tokens, {_money(est['cost_usd'])}. {est['note']}")
            if kind == "stability":
                est["settings"] = checks.sampling_settings(check.judge)
                text += f"\n{_settings(est['settings'])}"
            say(args, est, text)
            return EXIT_OK
        ctx = TaskContext(on_progress=_progress(args), min_interval_s=0.5)
        try:
            stats = checks.run_check(project, check, ctx, budget_usd=args.budget)
        except KeyboardInterrupt:
            print("error: interrupted; every judgment already saved is kept — run the same command to resume",
                  file=sys.stderr)
            return EXIT_FAILED
        summary = (checks.stability_summary if kind == "stability" else checks.probe_summary)(project, check)
        summary["job"] = stats.as_dict()
        summary["estimate"] = {k: est[k] for k in ("calls", "prompt_tokens", "completion_tokens", "cost_usd")}
        failed = stats.stopped in ("fatal", "write_failed")
        if not failed and stats.stopped is None:
            summary["id"] = checks.record_summary(project, check, summary)
    if failed:
        print(f"error: the {kind} job stopped: {stats.message}; run the same command to resume", file=sys.stderr)
    elif stats.stopped:
        print(f"warning: the {kind} job stopped ({stats.stopped}): {stats.message or ''}; the summary covers what "
              "was judged and is not recorded — run the same command to finish", file=sys.stderr)
    money = (f"{stats.calls} calls now ({stats.skipped} copies judged before), {_money(stats.cost_usd)} "
             f"(estimated {_money(est['cost_usd'])})")
    text = _stability_text(summary) if kind == "stability" else _probe_text(summary)
    say(args, summary, text + "\n" + money)
    return EXIT_FAILED if failed else EXIT_OK


def _settings(s: dict[str, Any]) -> str:
    if s["deterministic"]:
        return f"sampling: {s['note']}"
    return f"sampling: temperature {s['temperature']}, seed {s['seed']} ({s['note']})"


def _stability_text(s: dict[str, Any]) -> str:
    lines = [f"stability of {s['judge']} ({s['metric']}) on {s['run']}: {s['sample']} rows asked {s['repeats']} "
             f"times each ({s['judgments']} of {s['expected_judgments']} verdicts)", _settings(s["settings"])]
    for name, e in s["slices"].items():
        flip = ("no pass mark" if e["pass_mark_missing"] else "no row answered every repeat"
                if e["flip_rate"] is None else
                f"flip rate {e['flip_rate']:.1%} {_ci(e['flip_rate_ci'])} ({e['flipped']} of {e['flip_rows']} rows)")
        sd = "—" if e["mean_sd_points"] is None else f"{e['mean_sd_points']:.1f}"
        alpha = "—" if e["alpha"] is None else f"{e['alpha']:.2f}"
        lines.append(f"  {name:<16} n={e['rows']:<4} {flip}; mean within-row SD {sd} points; α across repeats "
                     f"{alpha}")
    if s.get("incomplete_rows"):
        lines.append(f"{s['incomplete_rows']} row(s) with a repeat that failed are left out of the flip rate (fewer "
                     "answers, fewer chances to flip); run the same command to ask them again")
    sure = s.get("confidence") or {}
    if sure.get("rows"):
        lines.append(f"confidence stored with {sure['rows']} of the judge's verdicts ({sure['unanimous']} unanimous, "
                     f"mean {sure['mean']:.2f}): the share of each row's asks agreeing with its verdict — selective "
                     "judging reads it (rageval selective)")
    lines.append("flip: the row's pass/fail changed between repeats, over the rows answered every repeat (95% "
                 f"Wilson CI); α: Krippendorff's ({s['alpha_level']}), the judge's agreement with itself")
    return "\n".join(lines)


def _probe_text(s: dict[str, Any]) -> str:
    said = {True: "passed", False: "FAILED", None: "needs more data"}[s["passed"]]
    what = "bias battery" if s["check"] == "bias" else "probe"
    lines = [f"{what} of {s['judge']} ({s['metric']}) on {s['run']}: {said}"
             + (f" ({', '.join(s['failed'])})" if s["failed"] else "")]
    for k in s["kinds"].values():
        share = "—" if k["share"] is None else f"{k['share']:.0%}"
        lines.append(f"  {k['kind']:<12} {k['verdict']:<16} moved {k['expect']:<6} in {k['moved_right']:>3} of "
                     f"{k['rows']:<3} rows ({share}, 95% CI {_ci(k['ci'])})"
                     + (f"; {k['not_applicable']} rows it does not apply to" if k["not_applicable"] else ""))
    lines.append(f"rule: {s['rule']}")
    return "\n".join(lines)


def add_stability_probe(command: Command) -> None:
    """The arguments of `rageval stability / probe` (its handler follows)."""
    for name, func, help_ in (
            ("stability", cmd_stability, "ask a judge again on a sample of the rows it judged: flip rate, score SD, "
                                         "its agreement with itself, and each asked verdict's confidence (the "
                                         "share of asks agreeing) for selective judging"),
            ("probe", cmd_probe, "judge perturbed copies of sampled rows: does the judge notice a dropped fact, a "
                                 "negation, padding, an injected instruction?")):
        p = command(name, func, help_)
        p.add_argument("project")
        p.add_argument("--judge")
        p.add_argument("--run", help="the run whose judged rows are sampled")
        p.add_argument("--sample", type=int, default=50, help="rows (default 50)")
        if name == "stability":
            p.add_argument("--repeats", type=int, default=5, help="times each row is asked (default 5)")
        else:
            p.add_argument("--kinds", help="comma-separated, of drop_fact, negate, swap_entity, truncate, empty, pad, "
                                           "inject (default all); with --battery, of passage_order, fake_citation, "
                                           "lengthen, self_author")
            p.add_argument("--battery", action="store_true",
                           help="the RAG bias battery instead, a check of its own: the passages in reverse order "
                                "(the verdict should not move), a citation to no passage, the answer lengthened "
                                "without new facts, a line naming the judge's own model family as the author (none "
                                "should raise it); a failure bars the gate licence as a failed probe does")
        p.add_argument("--seed", type=int, default=0, help="which rows are sampled (default 0)")
        p.add_argument("--budget", type=float, metavar="USD", help="stop before spending more")
        p.add_argument("--dry-run", action="store_true", help="estimate the calls and the cost; send nothing")
        p.add_argument("--delete", action="store_true",
                       help=f"delete the {name} runs (of --judge, on --run) with their copies; summaries stay")
        p.add_argument("--json", action="store_true")


def cmd_stability(args: argparse.Namespace) -> int:
    return _delete(args, "stability") if args.delete else _run(args, "stability")


def cmd_probe(args: argparse.Namespace) -> int:
    kind = "bias" if args.battery else "probe"
    return _delete(args, kind) if args.delete else _run(args, kind)
