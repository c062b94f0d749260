"""Review samples, human ratings, agreement and retirement."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

from rageval_desktop import api
from rageval_desktop.cli.base import (
    EXIT_OK,
    Command,
    UsageError,
    _Parser,
    cell,
    examples,
    open_api,
    open_project,
    say,
)

DEFAULT_SIZE = 40      # a new sample's size when the plan proposes none


def add_sample(command: Command) -> None:
    """The arguments of `rageval sample` (its handler follows)."""
    p = command("sample", cmd_sample, "draw (or extend) a stratified review sample of a run for one metric")
    p.epilog = examples('rageval sample eval.rageval --run v2 --metric correctness   # sized to reach a verdict',
                        'rageval sample eval.rageval --run v2 --metric correctness --size 60 --mode uncertain')
    p.add_argument("project")
    p.add_argument("--run")
    p.add_argument("--metric", help="what to rate: rows, or per item for passage_relevance (passages), nuggets "
                                    "(nuggets), citation_support (citations)")
    p.add_argument("--size", type=int, help="how many rows (or passages, nuggets, citations); default: what the "
                   "plan proposes (see --plan), 40 when it proposes none; with --extend, 10 more")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mode", choices=["stratified", "disagreement", "uncertain"], default="stratified",
                   help="stratified: representative (default); disagreement: where judges disagree or sit near the "
                        "pass mark first; uncertain: nearest the pass mark first (both drawn with unequal "
                        "probabilities, which agreement and PPI weight back)")
    p.add_argument("--extend", type=int, metavar="SAMPLE_ID", help="add --size more targets to this sample")
    p.add_argument("--plan", action="store_true",
                   help="draw nothing: say how many ratings reach a verdict 80%% of the time for a judge at a "
                        "plausible agreement (the judge's last audit, else 0.85, or --kappa), in this mode, and "
                        "what --size can decide")
    p.add_argument("--kappa", type=float, help="the agreement to plan for (with --plan; default: the last audit)")
    p.add_argument("--abstained", metavar="JUDGE[,JUDGE...]",
                   help="a sample of the rows JUDGE (or a cascade, cheapest first) leaves to people in --run: those "
                        "under its selective level (see rageval selective); all of them, or a uniform --size of them")
    p.add_argument("--json", action="store_true")


def cmd_sample(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import audit_plan, sampling

    if args.abstained:
        return _abstained_sample(args)
    if not args.extend and (not args.run or not args.metric):
        raise UsageError("a new sample needs --run and --metric (or --extend SAMPLE_ID)")
    if args.plan:
        if args.extend:
            raise UsageError("--plan is for a new sample (give --run and --metric)")
        with open_api(args.project, read_only=True) as project:
            found = audit_plan.plan_audit(project.core, args.run, args.metric, mode=args.mode, kappa=args.kappa,
                                          size=args.size)
        say(args, found, audit_plan.describe(found))
        return EXIT_OK
    proposed = ""
    if not args.extend:      # size it, or warn before drawing a size that cannot decide (the plan draws nothing)
        with open_api(args.project, read_only=True) as project:
            found = audit_plan.plan_audit(project.core, args.run, args.metric, mode=args.mode, kappa=args.kappa,
                                          size=args.size)
        if args.size is None:
            args.size = found["ratings"] or DEFAULT_SIZE
            proposed = (f"; {args.size} as planned ({found['power']:.0%} chance of a verdict for a judge at "
                        f"{found['statistic']} {found['kappa']:.2f})" if found["ratings"] else
                        f"; {DEFAULT_SIZE}: the plan proposes no size ({found['why']})")
        elif found.get("warning"):
            print(f"warning: {found['warning']}", file=sys.stderr)
    with api.open(args.project) as project:
        sample = (project.extend_sample(args.extend, args.size or 10) if args.extend else
                  project.sample(args.run, args.metric, args.size, seed=args.seed, mode=args.mode))
    data = {"sample_id": sample.id, "run": sample.run, "metric": sample.metric, "seed": sample.seed,
            "unit": sample.unit, "mode": sample.mode, "row_ids": sample.row_ids,
            "size_from": "plan" if proposed.startswith("; ") and "as planned" in proposed else
            "default" if proposed else "given"}
    what = "rows"
    if sample.unit != "row":   # what a ratings file names: the row, and the passage's rank or the item's number/text
        data["targets"] = [{"row_id": r, "passage_rank": i, "item": k}
                           for r, i, k in zip(sample.row_ids, sample.items, sample.keys, strict=True)]
        what = f"{sample.unit}s (in {len(set(sample.row_ids))} rows)"
    text = f"sample {sample.id}: {len(sample.row_ids)} {what} of {sample.run} to rate for {sample.metric}{proposed}"
    if sample.mode in sampling.WEIGHTED:
        text += (f" ({sample.mode} first; drawn with unequal probabilities, recorded: agreement and corrected "
                 f"estimates weight each rating by 1/probability)")
    say(args, data, text)
    return EXIT_OK


def add_ratings(command: Command) -> None:
    """The arguments of `rageval ratings` (its handler follows)."""
    p = command("ratings", cmd_ratings, "import or export human ratings (for reviewers who rate outside the app)")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("import", help="CSV/JSONL: row_id or question [+ run], metric, reviewer, score "
                        "[, passage_rank (per-passage metrics, 1 = first passage; or a nugget's or citation's "
                        "number), item (a nugget's or citation's text, as `sample --json` lists it), comment, "
                        "sample_id]")
    q.add_argument("project")
    q.add_argument("file", help="the ratings: .csv or .jsonl")
    q.add_argument("--sample", type=int, metavar="ID",
                   help="the review sample the ratings were made on (each must be one of its targets); default: the "
                        "newest sample holding every target the file rates, else none (said)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("export")
    q.add_argument("project")
    q.add_argument("--out", required=True, help=".csv or .jsonl")
    q.add_argument("--json", action="store_true")


def cmd_ratings(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import ratings

    with open_api(args.project, read_only=args.action != "import") as project:
        if args.action == "import":
            from rageval_desktop.core.review.licence import moved, standing

            before = standing(project.core)
            report = project.import_ratings(args.file, sample_id=args.sample)
            if report.unused_columns:
                print(f"warning: {report.file}: column(s) not used: {', '.join(report.unused_columns)} (used: "
                      f"{', '.join(ratings.RATING_COLUMNS)})", file=sys.stderr)
            changed = moved(before, standing(project.core), f"these {report.imported} rating(s)")
            say(args, {**report.as_dict(), "licences_changed": changed},
                   "\n".join([report.summary(), *changed]))
        else:
            n = ratings.export_ratings(project.core, args.out)
            say(args, {"exported": n, "out": args.out}, f"exported {n} ratings to {args.out}")
    return EXIT_OK


def add_agreement(command: Command) -> None:
    """The arguments of `rageval agreement` (its handler follows)."""
    p = command("agreement", cmd_agreement, "judge-human agreement with CIs; --apply retires judges under the bar")
    p.epilog = examples('rageval agreement eval.rageval',
                        'rageval agreement eval.rageval --apply   # record the audit: keep or retire')
    p.add_argument("project")
    p.add_argument("--judge")
    p.add_argument("--apply", action="store_true", help="record the audit; retire or reinstate accordingly")
    p.add_argument("--json", action="store_true")


def cmd_agreement(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review.agreement import NEEDS_MORE, planned_text
    from rageval_desktop.core.review.evidence import bias_text
    from rageval_desktop.core.review.settings import RULES

    with open_api(args.project, read_only=not args.apply) as project:   # without --apply: a read
        out = project.agreement(args.judge, apply=args.apply)
    lines = []
    for r in out:
        value = "—" if r["value"] is None else f"{r['value']:.3f} [{cell(r['ci'][0], 3)}, {cell(r['ci'][1], 3)}]"
        more = ("" if r["verdict"] != NEEDS_MORE else
                f" (rate the {r['needed']} target(s) left in the planned sample: its next looks may decide)"
                if r.get("look") == "interim" and r["needed"] else
                f" (about {r['needed']} more ratings would settle it, 80% power)")
        lines.append(f"{r['judge']:<22} {r['metric']:<18} n={r['n']:<4} {r['statistic']} {value}  {r['verdict']}{more}"
                     + (f"  -> {r['action']}" if args.apply else ""))
        if r["n"]:
            lines.append(f"{'':<22} {r['stopping']}")
        if r["weighting"]:
            lines.append(f"{'':<22} {r['weighting']}")
        if r.get("look") in ("interim", "final"):
            lines.append(f"{'':<22} {planned_text(r)}")
        held = r["licence"]
        lines.append(f"{'':<22} licence: {held['said']}")
        found = r["pass_fail"]
        if found and found["slices"].get("all", {}).get("n"):
            whole = found["slices"]["all"]
            far = whole["false_accept_rate"]
            rate = ("" if far["value"] is None else
                    f" — {far['value'] * 100:.1f}% of what the reviewers failed [95% CI {far['ci'][0] * 100:.1f}, "
                    f"{far['ci'][1] * 100:.1f}]")
            lines.append(f"{'':<22} false accepts: {whole['false_accepts']} (judge passes, reviewers fail){rate}; "
                         f"false rejects: {whole['false_rejects']}")
        system = r["system"]
        if system["tau"] is not None:
            lines.append(f"{'':<22} run order: Kendall τ {system['tau']:.2f} [95% CI {system['ci'][0]:.2f}, "
                         f"{system['ci'][1]:.2f}] over {len(system['runs'])} runs and {system['questions']} shared "
                         f"questions; {system['ordered_same'] * 100:.0f}% of run pairs ordered as the reviewers do")
        bias = bias_text(r["bias"])
        if bias:
            lines.append(f"{'':<22} {bias}" + (" (compare with --estimator ppi)" if r["bias"]["flagged"] else ""))
    if out:
        lines.append(f"rule: {RULES[out[0]['rule']]} ({out[0]['threshold']:g}; at least {out[0]['min_n']} "
                     "rated rows)")
    say(args, out, "\n".join(lines) or "no judges")
    return EXIT_OK


def add_retire_reinstate(command: Command) -> None:
    """The arguments of `rageval retire / reinstate` (its handler follows)."""
    for name, help_ in (("retire", "retire a judge by hand, with a reason"),
                        ("reinstate", "reinstate a retired judge (only after a passing audit)")):
        p = command(name, cmd_judge_status, help_)
        p.set_defaults(action=name)
        p.add_argument("project")
        p.add_argument("name")
        p.add_argument("--reason", required=True)
        p.add_argument("--json", action="store_true")


def cmd_judge_status(args: argparse.Namespace) -> int:
    from rageval_desktop.core import ops

    with open_project(args.project) as project:   # an operation: `rageval undo` (or the app's Ctrl+Z) takes it back
        status = "retired" if args.action == "retire" else "active"
        ops.run(project, ops.SetJudgeStatus(args.name, status, args.reason), initiator="cli")
    say(args, {"judge": args.name, "status": args.action}, f"{args.name}: {args.action}d")
    return EXIT_OK


def add_settings(command: Command) -> None:
    """The arguments of `rageval settings` (its handler follows)."""
    p = command("settings", cmd_settings, "the retirement policy: statistic, threshold, minimum n, rule; selective "
                "judging's alpha and delta")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("show")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("set")
    q.add_argument("project")
    q.add_argument("--statistic", choices=["auto", "quadratic_kappa", "cohen_kappa", "krippendorff_alpha",
                                           "spearman", "exact"],
                   help="how agreement is measured (auto: quadratic kappa on a 1-5 scale, Cohen's kappa on yes/no)")
    q.add_argument("--threshold", type=float)
    q.add_argument("--min-n", type=int, help="the fewest ratings (effective n) a verdict is read from")
    q.add_argument("--rule", choices=["interval", "point"],
                   help="interval (default): keep or retire only when the anytime-valid interval (valid however "
                        "often you look) lies wholly above or below the threshold, else 'needs more ratings'; "
                        "point: the estimate alone (the old rule)")
    q.add_argument("--bias-margin", type=float, metavar="POINTS",
                   help="flag a judge whose mean bias against the reviewers is shown to exceed this many points "
                        "(0-100 scale; default 5)")
    q.add_argument("--selective-alpha", type=float, metavar="A",
                   help="selective judging: the disagreement with the reviewers allowed on the rows a judge decides "
                        "alone (default 0.1); selective licences, the cascade and the gate's selective estimator "
                        "use it")
    q.add_argument("--selective-delta", type=float, metavar="D",
                   help="selective judging: the chance that guarantee fails (default 0.1)")
    q.add_argument("--json", action="store_true")


def cmd_settings(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import settings

    with open_project(args.project, read_only=args.action != "set") as project:
        if args.action == "set":
            pol = settings.set_policy(project, statistic=args.statistic, threshold=args.threshold, min_n=args.min_n,
                                      rule=args.rule, bias_margin=args.bias_margin,
                                      selective_alpha=args.selective_alpha, selective_delta=args.selective_delta)
        else:
            pol = settings.policy(project)
    data = {"statistic": pol.statistic, "threshold": pol.threshold, "min_n": pol.min_n, "rule": pol.rule,
            "bias_margin": pol.bias_margin, "selective_alpha": pol.selective_alpha,
            "selective_delta": pol.selective_delta}
    say(args, data, f"statistic {pol.statistic}, threshold {pol.threshold:g}, at least {pol.min_n} rated rows; "
                       f"rule '{pol.rule}': {settings.RULES[pol.rule]}; a judge whose mean bias is shown to exceed "
                       f"{pol.bias_margin:g} points is flagged; a selective judge decides rows where it agrees with "
                       f"the reviewers on ≥ {1 - pol.selective_alpha:.0%} of them with probability ≥ "
                       f"{1 - pol.selective_delta:.0%}")
    return EXIT_OK


def add_guidelines(command: Command) -> None:
    """The arguments of `rageval guidelines` (its handler follows)."""
    p = command("guidelines", cmd_guidelines, "the scale reviewers rate on and the project's guidelines per metric")
    p.add_argument("project")
    p.add_argument("--metric", required=True)
    p.add_argument("--set", metavar="FILE", help="replace the guidelines with this markdown file ('-' reads stdin)")
    p.add_argument("--json", action="store_true")


def cmd_guidelines(args: argparse.Namespace) -> int:
    """The scale a reviewer rates on (an anchor per score) and the project's guidelines for one metric."""
    from rageval_desktop.core.review import guidelines

    scale = guidelines.human_rubric(args.metric)
    with open_project(args.project, read_only=args.set is None) as project:
        if args.set is not None:
            try:
                text = sys.stdin.read() if args.set == "-" else Path(args.set).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"cannot read guidelines from {args.set}: {exc}") from None
            guidelines.set_guidelines(project, args.metric, text)
        text = guidelines.guidelines(project, args.metric)
    data = {"metric": args.metric, "criterion": scale.criterion, "guidelines": text,
            "scale": [{"score": p.score, "key": p.key, "label": p.label, "anchor": p.anchor} for p in scale.points]}
    lines = [f"{args.metric}: {scale.criterion}"]
    lines += [f"  {p.label}" + (f" [{p.key}]" if p.label != p.key else "") + f"  {p.anchor}" for p in scale.points]
    lines += ["", text or "(no guidelines yet: --set FILE.md)"]
    say(args, data, "\n".join(lines))
    return EXIT_OK


def _abstained_sample(args: argparse.Namespace) -> int:
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review import selective

    if not args.run or args.extend or args.plan:
        raise UsageError("--abstained needs --run (and takes no --extend or --plan)")
    with api.open(args.project) as project:
        chain = [get_judge(project.core, name.strip()) for name in args.abstained.split(",") if name.strip()]
        sample = selective.abstained_sample(project.core, chain, args.run, size=args.size, seed=args.seed)
    params = sample.params
    data = {"sample_id": sample.id, "run": sample.run, "metric": sample.metric, "mode": "abstained",
            "row_ids": sample.row_ids, **{k: params[k] for k in ("judge", "level", "abstained", "rows_in_run",
                                                                   "inclusion", "alpha", "delta")}}
    where = (f"confidence under {params['level']:.2f}" if len(params["judges"]) == 1 else
             "left by every judge of the cascade")
    say(args, data, f"sample {sample.id}: {len(sample.row_ids)} of the {params['abstained']} rows of {sample.run} "
                       f"that {params['judge']} leaves to people ({where}; it decides "
                       f"the other {params['rows_in_run'] - params['abstained']} with agreement ≥ "
                       f"{1 - params['alpha']:.0%}, probability {1 - params['delta']:.0%}); rate them, then "
                       f"rageval selective --run {sample.run}")
    return EXIT_OK


def _draw_transport(args: argparse.Namespace) -> int:
    """`transport --draw N`: a transport check on the desk before anyone rates — one sample of the run per
    metric of the judges whose licence would travel there (gate or selective), or of --judge's."""
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review import transport
    from rageval_desktop.core.review.licence import draw_transport, travelling

    if args.draw < transport.MIN_RUN:
        raise UsageError(f"--draw: a transport check reads at least {transport.MIN_RUN} ratings (40 are the default)")
    with open_project(args.project) as project:
        judges = [get_judge(project, args.judge)] if args.judge else travelling(project)
        if not judges:
            raise UsageError("no judge holds a licence that would travel to another run (gate or selective): name "
                             "one with --judge")
        made = [asdict(m) for m in draw_transport(project, judges, args.run, args.draw)]
    lines = [f"sample {m['sample_id']}: {m['targets']} rows of {args.run} for {m['metric']} "
             f"({', '.join(m['judges'])}): rate them on the desk, then rageval transport {args.project} --run "
             f"{args.run}" for m in made]
    say(args, made, "\n".join(lines))
    return EXIT_OK


def add_selective(command: Command) -> None:
    """The arguments of `rageval selective` (its handler follows)."""
    p = command("selective", cmd_selective, "where a judge may decide alone: the confidence level above which its "
                "pass/fail agrees with the reviewers' at least 1 - alpha of the time, with probability 1 - delta "
                "(fixed-sequence testing on the audit's ratings), per slice, and the share of each run it decides")
    p.add_argument("project")
    p.add_argument("--judge", help="one judge (default: every judge whose metric has a pass mark)")
    p.add_argument("--alpha", type=float, help="disagreement allowed on decided rows (default: the project's, "
                   "settings set --selective-alpha; 0.1 unless set)")
    p.add_argument("--delta", type=float, help="chance the guarantee fails (default: the project's, settings set "
                   "--selective-delta; 0.1 unless set)")
    p.add_argument("--cascade", metavar="J1,J2,...",
                   help="judges in order, cheapest first: each decides where it is sure among the rows the ones "
                        "before it left; the rest go to the desk (δ is split between them)")
    p.add_argument("--run", help="also the run's pass rate from the judge's decided rows and the reviewers' ratings "
                                 "of its abstentions (rageval sample --abstained)")
    p.add_argument("--json", action="store_true")


def cmd_selective(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import selective

    if not all(v is None or 0 < v < 1 for v in (args.alpha, args.delta)):
        raise UsageError("--alpha and --delta must lie between 0 and 1 (for example 0.1)")
    with open_api(args.project, read_only=True) as project:
        if args.cascade:
            if args.judge:
                raise UsageError("give --judge or --cascade, not both")
            chain = project.cascade(args.cascade.split(","), alpha=args.alpha, delta=args.delta, run=args.run)
            say(args, chain, selective.describe_cascade(chain))
            return EXIT_OK
        found = project.selective(args.judge, alpha=args.alpha, delta=args.delta, run=args.run)
    say(args, found, "\n".join(selective.describe(f) for f in found) or "no judge with a pass mark")
    return EXIT_OK


def _plan_transport(args: argparse.Namespace) -> int:
    """`transport --plan`: what a check of the run can see, against each judge's audit (issue 75)."""
    from rageval_desktop.core.judges.registry import get_judge, list_judges
    from rageval_desktop.core.review import transport

    if not 0 < args.drift < 100:
        raise UsageError("--drift is a rise in points, between 0 and 100 (for example 5)")
    with open_project(args.project, read_only=True) as project:
        judges = [get_judge(project, args.judge)] if args.judge else list_judges(project)
        found, lines = [], []
        for judge in judges:
            t = transport.transport(project, judge, args.run)
            if not t.n_audit or t.errors_audit is None:
                lines.append(f"{judge.name}: no ratings where it was audited to plan a check against")
                continue
            p = transport.plan(t.n_audit, t.errors_audit, args.drift / 100)
            found.append({"judge": judge.name, **p.as_dict()})
            lines.append(transport.describe_plan(p, judge.name, args.run))
    say(args, found, "\n".join(lines))
    return EXIT_OK


def add_transport(command: Command) -> None:
    """The arguments of `rageval transport` (its handler follows)."""
    p = command("transport", cmd_transport, "does a judge's audit travel to a run? its errors on the run's ratings "
                "against where it was audited (Fisher's exact test); a shift suspends its gate licence there")
    p.add_argument("project")
    p.add_argument("--run", required=True, help="the run the audit would be reused on (a gate's candidate)")
    p.add_argument("--judge", help="one judge (default: every judge)")
    p.add_argument("--draw", nargs="?", type=int, const=40, metavar="N",
                   help="before anyone rates: put a sample of N rows of the run on the desk (stratified, weighed "
                        "as drawn; default 40, which catch a 25-point rise in a judge's errors 83-95%% of the "
                        "time), one per metric of the licensed judges (or --judge's); rate it, then run transport "
                        "again")
    p.add_argument("--plan", action="store_true",
                   help="how many ratings on the run catch a rise of --drift points in each judge's errors with 80%% "
                        "power, against the audit it has (or, when that audit is too small to show it, how many on "
                        "each side)")
    p.add_argument("--drift", type=float, default=5.0, metavar="POINTS",
                   help="with --plan: the rise in the judge's error rate to catch, in points (default 5)")
    p.add_argument("--json", action="store_true")


def cmd_transport(args: argparse.Namespace) -> int:
    """Does a judge's audit travel to this run? Its errors on the run's ratings against those where it was audited,
    and its licence there."""
    from rageval_desktop.core.judges.registry import get_judge, list_judges
    from rageval_desktop.core.review.licence import transport_check

    if args.draw is not None:
        return _draw_transport(args)
    if args.plan:
        return _plan_transport(args)
    with open_project(args.project, read_only=True) as project:
        judges = [get_judge(project, args.judge)] if args.judge else list_judges(project)
        found = [transport_check(project, judge, args.run) for judge in judges]
    lines = [f"{f.text}\n  licence on {args.run}: {f.held.tier}"
             + (f" ({'; '.join(f.held.reasons)})" if f.held.reasons else "") for f in found]
    say(args, [f.as_dict() for f in found], "\n".join(lines) or "no judges")
    return EXIT_OK


def add_pairs(command: Command) -> None:
    """The arguments of `rageval pairs` (its handler follows)."""
    p = command("pairs", cmd_pairs, "pairwise review: which of two runs' answers is better, by reviewers (blind to "
                "run and judge) and by a pairwise judge asked in both orders; the win rate and the judge's audit")
    p.epilog = examples("rageval pairs sample eval.rageval --runs v1 v2 --size 40   # rate it on the Pairwise page",
                        "rageval pairs judge eval.rageval --sample 1 --judge gpt-correct",
                        "rageval pairs report eval.rageval --sample 1")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("sample", help="draw questions both runs answered, each pair's sides shuffled")
    q.add_argument("project")
    q.add_argument("--runs", nargs=2, required=True, metavar=("A", "B"), help="the two runs: the win rate is B's")
    q.add_argument("--size", type=int, default=DEFAULT_SIZE, help=f"pairs to draw (default {DEFAULT_SIZE})")
    q.add_argument("--seed", type=int, default=0, help="the draw's seed: the same seed draws the same pairs")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("list", help="the pair samples, and how many pairs of each are rated")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("judge", help="an LLM judge's endpoint asked which answer is better, in both orders")
    q.add_argument("project")
    q.add_argument("--sample", type=int, required=True, metavar="SAMPLE_ID",
                   help="the pair sample (its id: rageval pairs list)")
    q.add_argument("--judge", required=True, help="an LLM judge: its endpoint, model and key are used")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("export-packs", help="one pairwise pack per reviewer, every pair of the sample in each, "
                        "blind (the sides' runs stay in the project); bring them back with: rageval pack import")
    q.add_argument("project")
    q.add_argument("--sample", type=int, required=True, metavar="SAMPLE_ID",
                   help="the pair sample (its id: rageval pairs list)")
    q.add_argument("--reviewer", action="append", required=True, metavar="NAME", help="a reviewer (repeat for more)")
    q.add_argument("--out", required=True,
                   help="NAME.ragevalpack for one reviewer; a folder for several (pairs<S>-<name>.ragevalpack)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("report", help="the reviewers' win rate and each pairwise judge's agreement and licence")
    q.add_argument("project")
    q.add_argument("--sample", type=int, required=True, metavar="SAMPLE_ID",
                   help="the pair sample (its id: rageval pairs list)")
    q.add_argument("--judge", action="append", help="only this judge (repeat for more)")
    q.add_argument("--json", action="store_true")


def cmd_pairs(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import pairwise

    read_only = args.action in ("list", "report")
    with open_project(args.project, read_only=read_only) as project:
        if args.action == "sample":
            sample = pairwise.draw_pairs(project, args.runs[0], args.runs[1], args.size, args.seed)
            drawn = next(s for s in pairwise.pair_samples(project) if s.id == sample)
            say(args, asdict(drawn), f"pairwise sample #{sample}: {drawn.pairs} pairs of {drawn.run_a} and "
                f"{drawn.run_b}; rate them on the Pairwise page, then: rageval pairs report PROJECT --sample {sample}")
        elif args.action == "list":
            found = pairwise.pair_samples(project)
            say(args, [asdict(s) for s in found], "\n".join(s.label() for s in found) or "no pairwise samples")
        elif args.action == "export-packs":
            from rageval_desktop.core.review.pair_packs import export_pair_packs

            made = export_pair_packs(project, args.sample, args.reviewer, args.out)
            say(args, [m.as_dict() for m in made], "\n".join(f"{m.reviewer:<16} {m.pairs:>4} pairs  {m.path}"
                                                              for m in made)
                + "\nsend each reviewer their file; import it back with: rageval pack import PROJECT FILE")
        elif args.action == "judge":
            done = pairwise.judge_pairs(project, args.sample, args.judge)
            say(args, done.as_dict(), f"{done.judge}: {done.judged} pair(s) judged in both orders ({done.already} "
                f"judged before, {done.unparsed} order(s) unparsed); {done.calls} calls, {done.cache_hits} from the "
                "cache")
        else:
            report = pairwise.pair_report(project, args.sample, args.judge)
            say(args, report.as_dict(), "\n".join(report.lines()))
    return EXIT_OK
