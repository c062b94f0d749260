"""Reviewing as a team: review packs out and back, the team's agreement, and adjudication."""

from __future__ import annotations

import argparse

from rageval_desktop.cli.base import EXIT_OK, Command, UsageError, _Parser, open_project, say


def add_pack(command: Command) -> None:
    """The arguments of `rageval pack` (its handler follows)."""
    p = command("pack", cmd_pack, "review packs: a sample's rows as files for reviewers, and their ratings back")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("export", help="one .ragevalpack per reviewer: the rows to rate, blind (no judge verdicts)")
    q.add_argument("project")
    q.add_argument("--sample", type=int, required=True, metavar="SAMPLE_ID",
                   help="the review sample to hand out (its id: rageval info lists the samples)")
    q.add_argument("--reviewer", action="append", required=True, metavar="NAME",
                   help="a reviewer (repeat for a team)")
    q.add_argument("--overlap", type=int, default=1, metavar="K",
                   help="each row goes to K of the reviewers, assigned evenly (default 1)")
    q.add_argument("--out", required=True,
                   help="NAME.ragevalpack for one reviewer; a folder for several (sample<S>-<name>.ragevalpack)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("import", help="merge the ratings of returned packs (again adds nothing)")
    q.add_argument("project")
    q.add_argument("files", nargs="+", metavar="FILE", help="the returned .ragevalpack files")
    q.add_argument("--json", action="store_true")


def cmd_pack(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import packs

    if args.action == "export":
        with open_project(args.project) as project:
            made = packs.export_packs(project, args.sample, args.reviewer, args.out, args.overlap)
        lines = [f"{m.reviewer:<16} {m.targets:>4} to rate in {m.rows:>4} rows  {m.path}"
                 + (f"  ({m.hidden()})" if m.checks else "") for m in made]
        say(args, [m.as_dict() for m in made], "\n".join(lines) + "\nsend each reviewer their file; import "
               "it back with: rageval pack import PROJECT FILE (checks answered come back as checks, never ratings: "
               "rageval reviewers)")
    else:
        from rageval_desktop.core.review.licence import moved, standing
        from rageval_desktop.core.review.pair_packs import import_review_packs

        with open_project(args.project) as project:
            before = standing(project)
            results = import_review_packs(project, args.files)   # all the files or none, pairwise packs too
            changed = moved(before, standing(project), "the pack's ratings" if len(results) == 1 else
                            "the packs' ratings")
        for r in results:
            r["licences_changed"] = changed
        lines = [f"{r['file']}: {r['added']} rating(s) added from {r['reviewer']}"
                 + (f", {r['already_imported']} already imported" if r["already_imported"] else "")
                 + (f", {r['withdrawn_since']} withdrawn since" if r["withdrawn_since"] else "")
                 + (f"; {r['checks']} hidden check(s) answered" if r["checks"] else "") for r in results]
        say(args, results if len(results) > 1 else results[0], "\n".join([*lines, *changed]))
    return EXIT_OK


def _est(e: dict) -> str:
    if e["value"] is None:
        return f"—  (n={e['n']})"
    low, high = e["ci"]
    ci = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    return f"{e['value']:.2f}{ci}  (n={e['n']})"


def add_team(command: Command) -> None:
    """The arguments of `rageval team` (its handler follows)."""
    p = command("team", cmd_team, "reviewers' agreement with each other and the judges, and what to adjudicate")
    p.add_argument("project")
    p.add_argument("--metric", required=True)
    p.add_argument("--sample", type=int, metavar="SAMPLE_ID", help="only the targets of this sample")
    p.add_argument("--json", action="store_true")


def cmd_team(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import team

    with open_project(args.project, read_only=True) as project:
        report = team.team_report(project, args.metric, args.sample).as_dict()
    lines = [f"{args.metric}: {len(report['reviewers'])} reviewer(s), {report['shared_targets']} target(s) rated "
             f"by two or more; statistic {report['statistic']}"]
    for r in report["reviewers"]:
        secs = "—" if r["median_seconds"] is None else f"{r['median_seconds']:.1f}s"
        lines.append(f"  {r['reviewer']:<16} rated {r['rated']:>4}  median {secs:>6}  with the others "
                     f"{_est(r['with_consensus'])}")
        for judge, e in r["with_judges"].items():
            lines.append(f"  {'':<16} with {judge}: {_est(e)}")
    for p in report["pairwise"]:
        lines.append(f"  {p['a']} × {p['b']}: {_est(p)}")
    alpha = "—" if report["alpha"] is None else f"{report['alpha']:.3f}"
    lines.append(f"Krippendorff's alpha over all reviewers: {alpha}")
    lines.append(f"to adjudicate: {len(report['queue'])} (settled: {report['settled']})")
    for q in report["queue"][:20]:
        said = ", ".join(f"{who} {score:g}" for who, score in q["ratings"].items())
        lines.append(f"  row {q['row_id']} ({q['run']} · {q['external_id']}, {q['what']}): {said}")
    say(args, report, "\n".join(lines))
    return EXIT_OK


def add_adjudicate(command: Command) -> None:
    """The arguments of `rageval adjudicate` (its handler follows)."""
    p = command("adjudicate", cmd_adjudicate, "set the consensus score of a target reviewers disagree on (a lead)")
    p.add_argument("project")
    p.add_argument("--row", type=int, required=True, metavar="ROW_ID",
                   help="the run row reviewers disagree on (rageval team lists them)")
    p.add_argument("--metric", required=True)
    p.add_argument("--score", type=float, required=True, help="the consensus score, on the metric's scale")
    p.add_argument("--reason", required=True)
    p.add_argument("--lead", required=True, help="your name, recorded with the decision")
    p.add_argument("--item", type=int, default=0, help="a passage's rank, or a nugget's or citation's number")
    p.add_argument("--item-key", help="a nugget's or citation's text (as `team --json` lists it)")
    p.add_argument("--json", action="store_true")


def cmd_adjudicate(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import team

    with open_project(args.project) as project:
        aid = team.adjudicate(project, args.row, args.metric, args.score, args.reason, args.lead, item=args.item,
                              item_key=args.item_key)
    say(args, {"adjudication_id": aid, "row_id": args.row, "metric": args.metric, "score": args.score},
           f"row {args.row}: the consensus for {args.metric} is now {args.score:g} (adjudication {aid})")
    return EXIT_OK


def add_reviewers(command: Command) -> None:
    """The arguments of `rageval reviewers` (its handler follows)."""
    p = command("reviewers", cmd_reviewers, "reviewers checked: accuracy on hidden gold items (with a verdict), "
                                            "test-retest, speed; set a failing reviewer's ratings aside or back")
    p.add_argument("project")
    p.add_argument("--metric", required=True)
    p.add_argument("--set-aside", metavar="NAME", help="withdraw NAME's ratings of the metric from every audit "
                                                       "(with --reason and --lead; `rageval undo` takes it back)")
    p.add_argument("--bring-back", metavar="NAME", help="count NAME's ratings set aside again")
    p.add_argument("--reason", help="why the reviewer is set aside (recorded)")
    p.add_argument("--lead", help="your name, recorded with the decision")
    p.add_argument("--gold-rate", type=float, metavar="R",
                   help="share of a reviewer's queue that is hidden gold items (default 0.1; 0 turns them off)")
    p.add_argument("--retest-rate", type=float, metavar="R",
                   help="share of a reviewer's queue that repeats their own earlier targets (default 0.05)")
    p.add_argument("--speed-floor", type=float, metavar="SECONDS", help="ratings faster than this are flagged "
                                                                        "(default 2)")
    p.add_argument("--floor", type=float, metavar="ACCURACY",
                   help="accuracy on gold below which a reviewer fails (default 0.7)")
    p.add_argument("--json", action="store_true")


def cmd_reviewers(args: argparse.Namespace) -> int:
    """Reviewers checked: gold accuracy with its verdict, test-retest, speed and holds; set aside, bring back, and
    the checks' settings (each a logged operation `rageval undo` takes back)."""
    from rageval_desktop.core import ops
    from rageval_desktop.core.review import quality

    changes = {name: getattr(args, name) for name in ("gold_rate", "retest_rate", "speed_floor", "floor")
               if getattr(args, name) is not None}
    writes = bool(changes or args.set_aside or args.bring_back)
    said = []
    with open_project(args.project, read_only=not writes) as project:
        if changes:
            quality.set_settings(project, **changes)
            said.append("checks set: " + ", ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in changes.items()))
        if args.set_aside:
            if not args.reason or not args.lead:
                raise UsageError("setting a reviewer aside needs --reason and --lead")
            ops.run(project, ops.SetReviewerAside(args.set_aside, args.metric, args.reason, args.lead), initiator="cli")
            held = quality.hold_of(project, args.set_aside, args.metric) or {}
            said.append(f"{args.set_aside}'s {held.get('ratings', 0)} rating(s) of {args.metric} set aside; "
                        "`rageval undo` or --bring-back counts them again")
        if args.bring_back:
            ops.run(project, ops.BringReviewerBack(args.bring_back, args.metric), initiator="cli")
            said.append(f"{args.bring_back}'s ratings of {args.metric} count again")
        report = quality.quality_report(project, args.metric)
    found = report.as_dict()
    conf = report.settings
    lines = [*said, f"{args.metric}: {len(report.reviewers)} reviewer(s); {report.gold_items} gold item(s) settled; "
             f"one target in {round(1 / conf['gold_rate']) if conf['gold_rate'] else '—'} is a gold check, one in "
             f"{round(1 / conf['retest_rate']) if conf['retest_rate'] else '—'} a retest; a reviewer fails below "
             f"{conf['floor']:.0%} (error rate {conf['alpha']:g} across reviewers, valid however often you look)"]
    for r in report.reviewers:
        secs = "—" if r.median_seconds is None else f"{r.median_seconds:.1f}s"
        lines.append(f"  {r.reviewer:<16} rated {r.rated:>4}  median {secs:>6}  {quality.describe(r, conf['floor'])}")
    say(args, found, "\n".join(lines))
    return EXIT_OK
