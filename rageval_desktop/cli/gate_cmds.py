"""The CI gate, its plan, and the decisions on record with the keys that sign them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rageval_desktop import api
from rageval_desktop.cli.base import EXIT_FAILED, EXIT_OK, UsageError, _print, open_api, open_project
from rageval_desktop.cli.metrics_cmds import _metric_names, _unsettled_lines


def _gate_config(args: argparse.Namespace, project: api.Project):
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


def cmd_gate(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.gate import Decision
    from rageval_desktop.core.metrics.gate_text import SAID, drop_text, headline, rule_text, settle_hint

    record = None
    with open_api(args.project, read_only=not args.record) as project:
        config = _gate_config(args, project)
        decided = project.gate(args.baseline, args.candidate,
                               max_slice_drop=2.0 if args.max_slice_drop is None else args.max_slice_drop,
                               max_aggregate_drop=args.max_aggregate_drop, metrics=_metric_names(args.metrics),
                               require_significant=args.require_significant, min_slice_n=args.min_slice_n,
                               estimator=args.estimator, rule=args.rule, alpha=args.alpha,
                               allow_unlicensed=args.allow_unlicensed, config=config or False)
        result = decided.result
        if args.record:
            from rageval_desktop.core.reports.decisions import record_gate, write_record

            record = record_gate(project.core, result, args.baseline, args.candidate, estimator=args.estimator,
                                 waivers=result.waivers, key=args.key)
            written = write_record(record, result, args.record)
    if args.markdown:
        Path(args.markdown).write_text(decided.markdown(), encoding="utf-8")
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
        _print(args, data, "\n".join(lines))
    except BrokenPipeError:          # `rageval gate … | head`: the reader left, the verdict stands (never 0 for it)
        import os

        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    return result.exit_code


def cmd_gate_plan(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics import gate_config
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
             f"the drop it catches with {args.power:.0%} power, family-wise error {args.alpha:g}",
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
    _print(args, data, "\n".join(lines))
    return EXIT_OK


def cmd_decisions(args: argparse.Namespace) -> int:
    from rageval_desktop.core.reports import signing
    from rageval_desktop.core.reports.decisions import decisions, verify

    allowed = signing.read_allowed(args.allowed_signers) if args.allowed_signers else None
    if allowed is not None and args.verify is None:
        raise UsageError("--allowed-signers is for --verify")
    with open_project(args.project, read_only=True) as project:
        found = decisions(project)
        checked = verify(project, args.verify, allowed) if args.verify is not None else None
    if checked is not None:
        for problem in checked["problems"]:
            print(f"error: {problem}", file=sys.stderr)
        lines = [f"{r['id']:>4}  {r['decision'] or '?':<19} signed by {r['signer'] or '(nobody)'}: "
                 + ("holds" if not r["problems"] else "; ".join(r["problems"])) for r in checked["records"]]
        lines += [f"file {f['file']}: " + ("is the record it names" if not f["problems"] else "; ".join(f["problems"]))
                  for f in checked["files"]]
        lines.append(f"{len(found)} decision(s), signers trusted from {checked['trusted']}: " +
                     ("every signature, link and input holds" if not checked["problems"] else
                      f"{len(checked['problems'])} problem(s)"))
        _print(args, {"verified": not checked["problems"], **checked}, "\n".join(lines))
        return EXIT_FAILED if checked["problems"] else EXIT_OK
    _print(args, found, "\n".join(f"{d['id']:>4}  {d['when'][:19].replace('T', ' ')}  {d['decision']:<19} "
                                   f"{d['runs']['candidate']['name']} against {d['runs']['baseline']['name']}  "
                                   f"by {d['who']}  {d['hash'][:12]}" for d in found) or "no decisions on record")
    return EXIT_OK


def cmd_keys(args: argparse.Namespace) -> int:
    from rageval_desktop.core.reports import signing
    from rageval_desktop.core.reports.decisions import project_signers, trust

    if args.action == "new":
        signer, path = signing.new_key(args.name, args.signer)
        print(f"made key '{args.name}' for {signer.name}: {path} (private: keep it; readable by you only)\n"
              f"allowed-signers line: {signer.line()}")
    elif args.action == "list":
        keys = signing.list_keys()
        _print(args, keys, "\n".join(f"{k['name']:<16} " + (f"{k['signer']}  {k['public']}" if "public" in k
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
        _print(args, [{"signer": s.name, "public": s.public} for s in listed],
               "\n".join(s.line() for s in listed) or "no signers yet: the first gate --record adds its signer")
    return EXIT_OK
