"""The CI gate, its plan, and the decisions on record with the keys that sign them."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rageval_desktop import api
from rageval_desktop.cli.base import (
    EXIT_FAILED,
    EXIT_OK,
    Command,
    UsageError,
    _Parser,
    open_api,
    open_project,
    say,
)
from rageval_desktop.cli.metrics_cmds import _metric_names, _unsettled_lines
from rageval_desktop.core.metrics.retrieval import named

if TYPE_CHECKING:
    from rageval_desktop.core.metrics.gate_config import GateConfig


def _gate_epilog() -> str:
    """`rageval gate --help`'s exit codes, from core's one list of them (core.base.verdicts), and examples."""
    import textwrap

    from rageval_desktop.core.base.verdicts import GATE_EXIT_CODES

    codes = "\n".join(textwrap.fill(text, 116, initial_indent=f"  {code}  ", subsequent_indent="     ")
                      for code, text in GATE_EXIT_CODES.items())
    return "exit codes:\n" + codes + "\n\n" + GATE_EXAMPLES


GATE_EXAMPLES = """examples:
  rageval gate plan eval.rageval --baseline main --like pr-41 --out gate.json   # tolerances the data can detect
  rageval gate eval.rageval --baseline main --candidate pr-42 --config gate.json --markdown gate.md
  rageval gate eval.rageval --baseline main --candidate pr-42 --metrics hit@5 mrr --max-slice-drop 5
  rageval gate eval.rageval --baseline main --candidate pr-42 --record decisions/   # signed, chained record
  rageval gate eval.rageval --baseline main --candidate pr-42 --junit gate.xml --summary   # CI reports
"""


def _gate_config(args: argparse.Namespace, project: api.Project) -> GateConfig | None:
    """The configuration this gate runs under: --config FILE, else the project's saved one (none with --no-config);
    limits given on the command line beside one are refused, not silently ignored."""
    from rageval_desktop.core.metrics import gate_config

    if args.config and args.no_config:
        raise UsageError("--config and --no-config contradict each other; choose one")
    try:
        config = gate_config.resolve(project.core, args.config or (False if args.no_config else None))
    except gate_config.ConfigError as exc:
        raise api.UsageError.of(exc) from None
    limits = (("--max-slice-drop", args.max_slice_drop), ("--max-aggregate-drop", args.max_aggregate_drop),
              ("--min-slice-n", args.min_slice_n), ("--alpha", args.alpha))
    given = [flag for flag, value in limits if value is not None]
    if config is not None and given:
        raise UsageError(f"the gate's configuration ({config.source}) sets each cell's tolerance and the error rate; "
                         f"{', '.join(given)} would be ignored: drop {'it' if len(given) == 1 else 'them'}, or pass "
                         "--no-config to gate on the limits alone")
    return config


def add_gate(command: Command) -> None:
    """The arguments of `rageval gate` (its handler follows)."""
    p = command("gate", cmd_gate, "may the candidate replace the baseline? exit 0 pass (every gated cell shown "
                                  "safe), 1 a regression shown, 3 not decision-grade (cells the evidence cannot "
                                  "settle, metrics that could not be evaluated), 2 a usage error, 4 the tool "
                                  "failed. `rageval gate plan` proposes tolerances the data can detect")
    p.epilog = _gate_epilog()
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("project", help="the project file (.rageval)")
    p.add_argument("--baseline", required=True, help="the run the candidate must not be worse than, e.g. main")
    p.add_argument("--candidate", required=True, help="the run under test, e.g. pr-123")
    p.add_argument("--config", metavar="FILE", help="a gate configuration (rageval gate plan --out FILE): per "
                   "cell, the tolerance to rule out with 80%% power; default: the one saved in the project, if any")
    p.add_argument("--no-config", action="store_true", help="ignore the project's saved configuration: every cell "
                   "must be shown within --max-slice-drop")
    p.add_argument("--max-slice-drop", type=float, help="without a configuration: points a slice may drop, and the "
                   "drop it must be shown to stay within (default 2)")
    p.add_argument("--max-aggregate-drop", type=float,
                   help="points 'all' may drop (default: the same as --max-slice-drop)")
    p.add_argument("--rule", choices=["test", "point"], default="test",
                   help="test (default): a drop fails when the evidence shows it exceeds the limit, with the "
                        "family-wise error across every gated cell at most --alpha; point: any drop larger than "
                        "the limit fails (the rule before 0.3; fails most unchanged PRs on small slices)")
    p.add_argument("--alpha", type=float,
                   help="the chance of failing a PR that changed nothing, across all gated cells (default 0.05)")
    p.add_argument("--strict", action="store_true", help="accepted for old scripts: a cell not shown safe makes the "
                   "gate not decision-grade (exit 3) by default now")
    p.add_argument("--require-significant", action="store_true",
                   help="with --rule point: fail only on drops over the limit whose paired 95%% CI lies wholly "
                        "below zero")
    p.add_argument("--min-slice-n", type=int, metavar="K",
                   help="slices with fewer than K questions are reported, not gated (default 10; 'all' is always "
                        "gated)")
    p.add_argument("--metrics", nargs="+", help=f"default: {' '.join(named('headline'))} + every metric an active "
                   "judge scored on either run; a judge metric without a gate licence, or not judged on both runs, "
                   "makes the gate not decision-grade (exit 3); a name that is no metric: exit 2")
    p.add_argument("--allow-unlicensed", metavar="REASON",
                   help="gate judge metrics whose judges hold no gate licence; the waiver (who, when, REASON) is "
                        "reported and kept in the decision record")
    p.add_argument("--markdown", metavar="FILE", help="also write a pull-request comment")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML for CI test reports: the decision (failing "
                                                  "unless the gate passed), then a test case per gated cell (a "
                                                  "regression fails, a cell not decision-grade is skipped)")
    p.add_argument("--summary", metavar="FILE", nargs="?", const="",
                   help="also append the decision in Markdown to a CI job's summary: FILE, or without one "
                        "$GITHUB_STEP_SUMMARY (GitHub Actions)")
    p.add_argument("--estimator", choices=["mean", "ppi", "selective"], default="mean",
                   help="judge metrics as the judges' mean (default), corrected by the human ratings (ppi: "
                        "prediction-powered inference; needs 10 rated questions per slice), or as pass rates from "
                        "a selective judge's decided rows and the desk's ratings of the rest (selective: needs a "
                        "rated sample of its abstentions on each run, rageval sample --abstained)")
    p.add_argument("--pr", metavar="KEY", help="the pull request this gate is an attempt of (default: the one the CI "
                   "names: GitHub's pull-request number, GitLab's merge request); its attempts spend the error "
                   "budgets (retries are not free: see docs/ci.md)")
    p.add_argument("--attempts", metavar="FILE", help="the ledger of the pull request's earlier attempts (JSONL, kept "
                   "between CI runs, e.g. in the CI's cache); this attempt is added to it")
    p.add_argument("--json", action="store_true", help="print the whole decision as JSON (full precision)")
    p.add_argument("--record", metavar="DIR", help="keep the decision in the project, signed and chained to the "
                                                   "previous one, and write it to DIR as JSON and Markdown")
    p.add_argument("--key", metavar="NAME", help="with --record: sign with this key of yours (rageval keys list; "
                   "default: your default key, made on first use)")
    p.set_defaults(verdict=True)


def cmd_gate(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.gate import Decision
    from rageval_desktop.core.metrics.gate_text import SAID, covers_text, drop_text, headline, rule_text, settle_hint

    if args.summary == "" and not os.environ.get("GITHUB_STEP_SUMMARY"):
        raise UsageError("--summary without a FILE appends to $GITHUB_STEP_SUMMARY, which is not set here: name a "
                         "file (--summary summary.md)")
    record = None
    with open_api(args.project, read_only=not args.record) as project:
        config = _gate_config(args, project)
        decided = project.gate(args.baseline, args.candidate,
                               max_slice_drop=2.0 if args.max_slice_drop is None else args.max_slice_drop,
                               max_aggregate_drop=args.max_aggregate_drop, metrics=_metric_names(args.metrics),
                               require_significant=args.require_significant, min_slice_n=args.min_slice_n,
                               estimator=args.estimator, rule=args.rule, alpha=args.alpha,
                               allow_unlicensed=args.allow_unlicensed, config=config or False, pr=args.pr,
                               attempts=args.attempts)
        result = decided.result
        if args.record:
            from rageval_desktop.core.reports import signing
            from rageval_desktop.core.reports.decisions import record_gate, write_record

            record = record_gate(project.core, result, args.baseline, args.candidate, estimator=args.estimator,
                                 waivers=result.waivers, key=args.key)
            written = write_record(record, result, args.record)
            for note in signing.said():     # a key made on first use, a key file others can read
                print(f"warning: {note}", file=sys.stderr)
    # the chain's head, said where the project cannot reach: a record deleted later is then seen (decisions --head)
    head = None if record is None else f"decision {record['id']}, hash {record['hash']}"
    if args.markdown:
        Path(args.markdown).write_text(decided.markdown() + (f"\nRecorded as {head} (`rageval decisions --verify "
                                                             f"--head {record['hash']}`).\n" if record else ""),
                                       encoding="utf-8")
    if args.junit or args.summary is not None:
        from rageval_desktop.core.reports.ci import junit_xml, step_summary

        if args.junit:
            Path(args.junit).write_text(junit_xml(result, head=None if record is None else str(record["hash"])),
                                        encoding="utf-8")
        if args.summary is not None:
            with Path(args.summary or os.environ["GITHUB_STEP_SUMMARY"]).open("a", encoding="utf-8") as out:
                out.write(step_summary(result) + (f"\nRecorded as {head}.\n" if head else "") + "\n")
    data = dict(decided.data)
    if record is not None:
        data["record"] = {"id": record["id"], "hash": record["hash"], "signer": record["signature"]["signer"],
                          "files": [str(p) for p in written]}
    shared = result.comparison["shared_questions"]
    decision = result.decision
    lines = [f"{SAID[decision]}: '{args.candidate}' against '{args.baseline}' ({shared} shared questions): "
             f"{headline(result)}"]

    def cell(tag: str, r: dict, tail: str) -> str:
        return (f"{tag:<14} {r['slice']:<16} {r['metric']:<20} {r['baseline']:6.1f} -> {r['candidate']:6.1f}  "
                f"({drop_text(r)}){tail}")

    lines += [cell("REGRESSION", r, f"; allowed {r['allowed']:g}") for r in result.regressions]
    lines += [f"{'NOT EVALUATED':<14} {u['slice'] or 'every slice':<16} {u['metric'] or '-':<20} {u['why']}"
              for u in result.not_evaluated]
    lines += [cell("undecided", r, f": {r['why']}") for r in result.undecided]
    lines += [cell("safe", r, f": {r['why']}") for r in result.safe]
    lines += [cell("not gated", r, f": {r['why']}") for r in result.ungated]
    lines += [f"{'not gated':<14} {u['slice']:<16} {u['metric']:<20} {u['why']}"
              for u in result.comparison["unavailable"] if u["slice"] != "all"]
    lines += [f"{'WAIVED':<14} {'every slice':<16} {w['metric']:<20} gated without a licence "
              f"({w['why_unlicensed']}): waived by {w['who']}: {w['reason']}" for w in result.waivers]
    if result.uncovered:
        lines.append(f"{'not gated':<14} {', '.join(result.uncovered)}: no cell of the configuration on their own "
                     "(they count through the cells that hold them; rageval gate plan says what each could detect)")
    lines += [f"warning: {w}" for w in result.comparison.get("warnings", [])]
    covers = covers_text(result)
    if covers:
        lines.append(f"covered: {covers}")
    lines.append(f"rule: {rule_text(result)}")
    hint = settle_hint(result)
    if hint:
        lines.append(f"what would settle it: {hint}")
    if record is not None:
        lines.append(f"recorded as decision {record['id']} ({record['hash'][:12]}…), signed by "
                     f"{record['signature']['signer']}: {written[0]}, {written[1]}")
    if args.require_significant and args.rule == "test":
        lines.append("note: --require-significant is what the test rule does already (a drop must be shown); it "
                     "changes only --rule point")
    if args.strict:
        lines.append("note: --strict is the default now: a cell that is not shown safe makes the gate not "
                     "decision-grade (exit 3)")
    lines += _unsettled_lines(result.comparison["unsettled_judges"])
    if decision is Decision.REGRESSION:
        print(f"gate: {len(result.regressions)} regression(s) of '{args.candidate}' against '{args.baseline}' "
              f"(exit {result.exit_code})", file=sys.stderr)
    elif decision is Decision.NOT_DECISION_GRADE:
        print(f"gate: not decision-grade (exit {result.exit_code}): {headline(result)}", file=sys.stderr)
    try:
        say(args, data, "\n".join(lines))
    except BrokenPipeError:          # `rageval gate … | head`: the reader left, the verdict stands (never 0 for it)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    code: int = result.exit_code
    return code


def add_gate_plan(command: Command) -> None:
    """The arguments of `rageval gate-plan` (its handler follows)."""
    p = command("gate-plan", cmd_gate_plan, "what each cell of a gate can detect, and a configuration that gates "
                                            "only what the data can honour (run as: rageval gate plan)")
    p.prog = "rageval gate plan"
    p.add_argument("project", help="the project file (.rageval)")
    p.add_argument("--baseline", required=True, help="the run future candidates are compared with")
    p.add_argument("--like", metavar="RUN", help="a past candidate: pull requests are assumed to change answers as "
                   "much as it did (default: --churn)")
    p.add_argument("--churn", type=float, default=1.0, help="without --like: the share of questions a pull request "
                   "answers anew (default 1.0: every answer independent — the cautious assumption)")
    p.add_argument("--tolerance", type=float, default=5.0, help="the drop you want each cell to catch, in points "
                   "(default 5); a cell that cannot is given the smallest it can, up to --max-tolerance")
    p.add_argument("--max-tolerance", type=float, default=20.0, help="cells that cannot detect this drop are not "
                   "gated on their own: their slices are merged, or gated through 'all' (default 20)")
    p.add_argument("--allowed", type=float, default=1.0, help="a drop shown beyond this fails (default 1: an "
                   "unchanged pull request then fails under 5%% of the time, measured; 0 sits on the boundary)")
    p.add_argument("--power", type=float, default=0.95, help="the chance each cell catches a drop of its tolerance, "
                   "however often a pull request is retried (default 0.95; its first attempt needs 98.5%%, later "
                   "ones more: rageval gate --attempts)")
    p.add_argument("--alpha", type=float, default=0.05, help="the family-wise error rate (default 0.05)")
    p.add_argument("--metrics", nargs="+", help="the metrics to plan for (default: as rageval gate)")
    p.add_argument("--save", action="store_true", help="keep the configuration in the project: rageval gate uses it")
    p.add_argument("--out", metavar="FILE", help="write the configuration to FILE (keep it in your repository; "
                   "rageval gate --config FILE)")
    p.add_argument("--json", action="store_true")


def cmd_gate_plan(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics import gate_config
    from rageval_desktop.core.metrics.attempts import levels
    from rageval_desktop.core.metrics.compare import GateUsageError
    from rageval_desktop.core.metrics.gate_plan import plan

    with open_api(args.project, read_only=not args.save) as project:
        try:
            found = plan(project.core, args.baseline, like=args.like, churn=args.churn, tolerance=args.tolerance,
                         max_tolerance=args.max_tolerance, allowed=args.allowed, power=args.power, alpha=args.alpha,
                         metrics=_metric_names(args.metrics))
        except GateUsageError as exc:
            raise api.UsageError.of(exc) from None
        config = found["config"]
        if args.save:
            gate_config.save(project.core, config)
    if args.out:
        gate_config.write_file(config, args.out)
    data = {**{k: v for k, v in found.items() if k != "config"}, "config": config.as_dict()}
    lines = [f"gate plan for candidates against '{args.baseline}': {found['assumption']}; each cell's tolerance is "
             f"the drop it catches with {args.power:.0%} power however often a pull request is retried (its first "
             f"attempt {levels(args.alpha, args.power, 1, True)[2]:.1%}), family-wise error {args.alpha:g}",
             f"{'slice':<16} {'metric':<20} {'n':>5} {'sd':>6} {'detects':>8} {'tolerance':>9} "
             f"{f'n for {args.tolerance:g}':>9}  "]
    for r in found["cells"]:
        detects = "—" if r["detectable"] is None else f"{r['detectable']:.1f}"
        tol = "—" if r["tolerance"] is None else f"{r['tolerance']:g}"
        need = "—" if r["needed"] is None else str(r["needed"])
        sd = "—" if r["sd"] != r["sd"] else f"{r['sd']:.1f}"
        name = r["slice"] + (f" ({', '.join(r['merges'])})" if r.get("merges") else "")
        lines.append(f"{name[:16]:<16} {r['metric']:<20} {r['n']:>5} {sd:>6} {detects:>8} {tol:>9} {need:>9}  "
                     f"{'GATE' if r['gated'] else 'not gated'}: {r['why']}")
    lines += [f"not planned: {x['metric']} — {x['why']} (a gate under this plan does not gate it)"
              for x in found["left_out"]]
    merged = [f"slices merged as '{k}': {', '.join(v)}" for k, v in found["groups"].items()]
    lines.append("; ".join([f"{len(config.cells)} cell(s) gated", *merged]))
    if args.save:
        lines.append("saved in the project: rageval gate uses it (--no-config to gate on limits alone)")
    if args.out:
        lines.append(f"written to {args.out}: rageval gate ... --config {args.out}")
    if not args.save and not args.out:
        lines.append("nothing saved: --save keeps it in the project, --out FILE writes it for your repository")
    say(args, data, "\n".join(lines))
    return EXIT_OK


def add_decisions(command: Command) -> None:
    """The arguments of `rageval decisions` (its handler follows)."""
    p = command("decisions", cmd_decisions, "the gate decisions on record; --verify checks each one's signature, "
                                            "chain and inputs: exit 0 all hold, 1 some do not, 4 the tool failed")
    p.add_argument("project")
    p.add_argument("--verify", nargs="*", metavar="FILE", help="check every record's signature (by an allowed "
                   "signer), its hash and link, and that what it used — run rows, passages, judgments, ratings, "
                   "judges — is unchanged; and that each FILE is the record it names (exit 1 if not)")
    p.add_argument("--allowed-signers", metavar="FILE", help="with --verify: trust only the keys this file lists "
                   "(keep it in your repository; `rageval keys export` prints a line for it); default: "
                   "$RAGEVAL_ALLOWED_SIGNERS, else .rageval/allowed_signers in the project's folder or above it (up "
                   "to the repository's root), and your own keys — never the project's own list (rageval keys "
                   "trust), which whoever holds the file can extend")
    p.add_argument("--head", metavar="HASH_OR_FILE", help="with --verify: the newest record as kept outside the "
                   "project — its hash (from the gate's Markdown or JUnit output) or the HEAD file `gate --record "
                   "DIR` writes; default: DIR/HEAD beside the first FILE. A head the chain does not hold means a "
                   "record was deleted (exit 1)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(verdict=True)


def cmd_decisions(args: argparse.Namespace) -> int:
    from rageval_desktop.core.reports import signing
    from rageval_desktop.core.reports.decisions import decisions, verify

    allowed = signing.read_allowed(args.allowed_signers) if args.allowed_signers else None
    if (allowed is not None or args.head) and args.verify is None:
        raise UsageError("--allowed-signers and --head are for --verify")
    with open_project(args.project, read_only=True) as project:
        found = decisions(project)
        checked = verify(project, args.verify, allowed, args.head) if args.verify is not None else None
    if checked is not None:
        for problem in checked["problems"]:
            print(f"error: {problem}", file=sys.stderr)
        lines = [f"{r['id']:>4}  {r['decision'] or '?':<19} signed by {r['signer'] or '(nobody)'}: "
                 + ("holds" if not r["problems"] else "; ".join(r["problems"])) for r in checked["records"]]
        lines += [f"file {f['file']}: " + ("is the record it names" if not f["problems"] else "; ".join(f["problems"]))
                  for f in checked["files"]]
        if checked["head"]["said"]:
            lines.append(f"head: {checked['head']['said']}")
        lines.append(f"{len(found)} decision(s), signers trusted from {checked['trusted']}: " +
                     ("every signature, link and input holds" if not checked["problems"] else
                      f"{len(checked['problems'])} problem(s)"))
        say(args, {"verified": not checked["problems"], **checked}, "\n".join(lines))
        return EXIT_FAILED if checked["problems"] else EXIT_OK
    say(args, found, "\n".join(f"{d['id']:>4}  {d['when'][:19].replace('T', ' ')}  {d['decision']:<19} "
                                   f"{d['runs']['candidate']['name']} against {d['runs']['baseline']['name']}  "
                                   f"by {d['who']}  {d['hash'][:12]}" for d in found) or "no decisions on record")
    return EXIT_OK


def add_keys(command: Command) -> None:
    """The arguments of `rageval keys` (its handler follows)."""
    p = command("keys", cmd_keys, "your keys for signing decision records, and who may sign in a project")
    what = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = what.add_parser("new", help="make a signing key (kept in your data folder, readable by you only)")
    q.add_argument("--name", default="default", help="its name (default: default)")
    q.add_argument("--signer", help="who signs with it (default: your user name)")
    q = what.add_parser("list", help="your keys")
    q.add_argument("--json", action="store_true")
    q = what.add_parser("export", help="a line for an allowed-signers file: signer, key type, public key")
    q.add_argument("--name", default="default")
    q = what.add_parser("trust", help="let a signer's public key sign decisions in a project")
    q.add_argument("project")
    q.add_argument("line", help="an allowed-signers line (rageval keys export), quoted")
    q = what.add_parser("signers", help="the keys a project trusts")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")


def cmd_keys(args: argparse.Namespace) -> int:
    from rageval_desktop.core.reports import signing
    from rageval_desktop.core.reports.decisions import project_signers, trust

    if args.action == "new":
        signer, path = signing.new_key(args.name, args.signer)
        print(f"made key '{args.name}' for {signer.name}: {path} (private: keep it; readable by you only)\n"
              f"allowed-signers line: {signer.line()}")
    elif args.action == "list":
        keys = signing.list_keys()
        say(args, keys, "\n".join(f"{k['name']:<16} " + (f"{k['signer']}  {k['public']}" if "public" in k
                                                           else k["problem"]) for k in keys)
               or "no keys yet: rageval keys new (or the first gate --record makes one)")
    elif args.action == "export":
        _, signer = signing.load_key(args.name, create=False)
        print(signer.line())
    elif args.action == "trust":
        with open_project(args.project) as project:
            signer = trust(project, args.line)
        print(f"{signer.name} may sign decisions in {args.project}")
    else:
        with open_project(args.project, read_only=True) as project:
            listed = project_signers(project)
        say(args, [{"signer": s.name, "public": s.public} for s in listed],
               "\n".join(s.line() for s in listed) or "no signers yet: the first gate --record adds its signer")
    return EXIT_OK
