"""Judges, judging jobs, prices, the jobs table."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rageval_desktop import api
from rageval_desktop.cli.base import (
    EXIT_FAILED,
    EXIT_OK,
    Command,
    UsageError,
    _Parser,
    examples,
    open_project,
    say,
)
from rageval_desktop.core.base.vocab import LLM_DEFAULTS, metric_choices

if TYPE_CHECKING:
    from rageval_desktop.core.jobs.shards import ImportStats
    from rageval_desktop.core.jobs.spec import JobSpec


def add_judges(command: Command) -> None:
    """The arguments of `rageval judges` (its handler follows)."""
    p = command("judges", cmd_judges, "add, list (with licences) and edit judges; the kinds installed")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list", help="list the project's judges")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("edit", help="change a judge: how it is reached, or its model, rubric or sampling (which "
                                     "expires its licence until it is audited again); undo with rageval undo")
    q.add_argument("project")
    q.add_argument("--name", required=True)
    q.add_argument("--model", help="another model at the same endpoint")
    q.add_argument("--rubric", metavar="FILE", help="a file with the rubric's new text (stored as a new version)")
    q.add_argument("--temperature", type=float)
    q.add_argument("--max-tokens", type=int)
    q.add_argument("--seed", type=int, help="the seed each call sends (endpoints that honour it repeat their replies)")
    q.add_argument("--base-url", help="another OpenAI-compatible endpoint")
    q.add_argument("--api-key-env", help="NAME of the environment variable holding the key")
    q.add_argument("--concurrency", type=int)
    q.add_argument("--timeout", type=float)
    q.add_argument("--rpm", type=float)
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("test", help="one tiny call through a judge's endpoint (5 tokens at most, nothing stored): "
                                     "do its address, model and key work? exit 1 with the server's reason if not")
    q.add_argument("project")
    q.add_argument("--name", required=True)
    q.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the reply (default 30)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("kinds", help="the judge kinds installed (built-in and plug-ins) and what each needs")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("add", help="add a judge: an LLM endpoint + rubric, or an embedded scorer")
    q.add_argument("project")
    q.add_argument("--name", required=True)
    q.add_argument("--metric", required=True, help=metric_choices())
    q.add_argument("--kind", required=True, help="how it judges: llm, embedding, lexical, hhem, peer (another "
                                                 "tool's scores), or a plug-in's kind (rageval judges kinds lists "
                                                 "them)")
    q.add_argument("--rubric", help="bundled rubric name (default: the metric's)")
    q.add_argument("--model", help="model name at the endpoint (LLM judges)")
    q.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default: OpenAI)")
    q.add_argument("--api-key-env", help="NAME of the environment variable holding the key (never the key)")
    q.add_argument("--api-key-keyring", metavar="keyring:SERVICE:USER", help="or a keyring entry")
    q.add_argument("--concurrency", type=int)
    q.add_argument("--rpm", type=float, help="requests-per-minute cap")
    q.add_argument("--max-tokens", type=int)
    q.add_argument("--timeout", type=float, help=f"seconds per call (default {LLM_DEFAULTS['timeout']:g})")
    q.add_argument("--seed", type=int, help="the seed each call sends (endpoints that honour it repeat their replies)")
    q.add_argument("--temperature", type=float)
    q.add_argument("--passages-k", type=int, help="passages judged per row (passage_relevance; default: every "
                                                   "retrieved passage, as open-rag-eval grades them)")
    q.add_argument("--measure", help="lexical judges: f1 (token F1), recall (token recall of the reference) or "
                                     "rougeL")
    q.add_argument("--threshold", type=float, help="similarity counted as correct (binary metrics)")
    q.add_argument("--grader", help="nuggets: the passage_relevance (UMBRELA) judge whose grades pick the passages "
                                    "nuggets are made from (default: the active one)")
    q.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a setting of the judge's kind (plug-in kinds; repeatable)")
    q.add_argument("--mode", help="hallucination: whole (the whole answer against the joined passages, open-rag-eval's "
                                  "way, the default) or claims (each sentence against each passage, best passage per "
                                  "sentence)")
    q.add_argument("--json", action="store_true")


def cmd_judges(args: argparse.Namespace) -> int:
    from rageval_desktop.core.judges import registry

    if args.action == "kinds":
        return _kinds(args)
    if args.action == "test":
        from dataclasses import asdict

        from rageval_desktop.core.judges.caller import check_connection

        with open_project(args.project, read_only=True) as project:
            checked = check_connection(project, args.name, args.timeout)
        say(args, asdict(checked), checked.describe())
        return EXIT_OK
    if args.action in ("list", "edit"):
        with open_project(args.project, read_only=args.action == "list") as project:
            if args.action == "edit":
                return _edit(args, project)
            from rageval_desktop.core.review.licence import licence

            judges = [{**registry.judge_summary(j), "licence": licence(project, j).as_dict()}
                      for j in registry.list_judges(project)]
        text = "\n".join(f"{j['name']:<24} {j['metric']:<20} {j['kind']:<10} {j['model'] or '':<24} "
                         f"{j['status']:<8} licence: {j['licence']['said']}"
                         for j in judges) or "no judges yet"
        say(args, judges, text)
        return EXIT_OK
    params: dict[str, Any] = {}
    for key in ("concurrency", "max_tokens", "timeout", "seed", "temperature", "rpm", "passages_k", "measure",
                "threshold", "grader", "mode"):
        value = getattr(args, key, None)
        if value is not None:
            params[key] = value
    for pair in args.param:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--param takes KEY=VALUE, not '{pair}'")
        params[key.strip()] = _param_value(value)
    with api.open(args.project) as project:
        judge = project.add_judge(args.name, args.metric, args.kind, rubric=args.rubric, model=args.model,
                                  base_url=args.base_url, api_key_env=args.api_key_env,
                                  api_key_keyring=args.api_key_keyring, **params)
    say(args, judge, f"added judge '{judge['name']}' ({judge['metric']}, {judge['kind']})")
    return EXIT_OK


def _edit(args: argparse.Namespace, project: Any) -> int:
    """An undoable operation (rageval undo takes it back); what the verdicts depend on expires the licence."""
    from pathlib import Path

    from rageval_desktop.core import ops
    from rageval_desktop.core.judges import registry
    from rageval_desktop.core.review.licence import licence

    changes: dict[str, Any] = {key: getattr(args, key) for key in
                               ("model", "temperature", "max_tokens", "seed", "base_url", "concurrency", "timeout",
                                "rpm") if getattr(args, key) is not None}
    if args.api_key_env:
        changes["api_key_ref"] = args.api_key_env
    if args.rubric:
        try:
            changes["rubric"] = Path(args.rubric).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read the rubric file {args.rubric}: {exc}") from None
    if not changes:
        raise UsageError("say what to change (--model, --rubric, --temperature, --base-url, ...)")
    before = licence(project, registry.get_judge(project, args.name))
    result = ops.run(project, ops.EditJudge(args.name, changes), initiator="cli")
    after = licence(project, registry.get_judge(project, args.name))
    out = {**result.as_dict(), "licence_before": before.as_dict(), "licence": after.as_dict()}
    text = (f"{result.label}: " + ", ".join(sorted(changes)) + f"; licence {before.tier} -> {after.describe()}"
            if result.operation is not None else f"{args.name}: nothing changed")
    say(args, out, text)
    return EXIT_OK


def _param_value(text: str) -> Any:
    """A --param value: a number or true/false when it reads as one, else the text."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def _kinds(args: argparse.Namespace) -> int:
    from rageval_desktop.core.base.vocab import METRICS
    from rageval_desktop.core.judges import kinds

    found: list[dict[str, Any]] = [{"name": name, "label": kind.label, "calls_llm": kind.calls_llm, "needs": kind.needs,
              "metrics": [m for m, spec in METRICS.items() if kind.can_judge(spec) is None],
              "source": kinds.source_of(name)} for name, kind in kinds.kinds().items()]
    lines = [f"{k['name']:<12} {k['label']}\n{'':<12} judges: {', '.join(k['metrics']) or 'none'}"
             + (f"\n{'':<12} needs: {k['needs']}" if k["needs"] else "")
             + (f"\n{'':<12} from: {k['source']}" if k["source"] != "rageval-desktop" else "") for k in found]
    for problem in kinds.PROBLEMS:
        print(f"warning: {problem}", file=sys.stderr)
    say(args, {"kinds": found, "problems": list(kinds.PROBLEMS)}, "\n".join(lines))
    return EXIT_OK


def add_judge(command: Command) -> None:
    """The arguments of `rageval judge` (its handler follows)."""
    p = command("judge", cmd_judge, "run judges over a run's rows (resumable: judged rows are skipped)")
    p.epilog = examples('rageval judge eval.rageval --run v2 --dry-run   # calls and cost, nothing sent',
                        'rageval judge eval.rageval --run v2 --budget 2.00',
                        'rageval judge eval.rageval --run v2 --judge gpt-correct --batch   # Batch API: half price')
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--judge", action="append", help="judge name (repeatable; default: every active judge)")
    p.add_argument("--slice", help="only rows of this slice")
    p.add_argument("--sample", type=int, metavar="SAMPLE_ID", help="only the rows of this review sample")
    p.add_argument("--rated-only", action="store_true",
                   help="only rows humans rated (audit a changed judge without new ratings; a retired judge runs "
                        "only so, and the audit it passes reinstates it)")
    p.add_argument("--concurrency", type=int, help="calls in flight (default: the judge's own setting)")
    p.add_argument("--rpm", type=float, help="requests-per-minute cap")
    p.add_argument("--budget", type=float, metavar="USD", help="stop before the estimated cost exceeds this")
    p.add_argument("--timeout", type=float, help="seconds per call")
    p.add_argument("--only-missing", action="store_true",
                   help="only rows without a final judgment (the default behaviour; kept for scripts)")
    p.add_argument("--only-failed", action="store_true", help="only rows whose judgment is an error or unparsed")
    p.add_argument("--redo-unparsed", action="store_true", help="also redo rows whose reply did not parse")
    p.add_argument("--no-cache", action="store_true", help="do not use or fill the request cache")
    p.add_argument("--dry-run", action="store_true",
                   help="send nothing: print the calls, tokens and cost per judge this would take")
    p.add_argument("--batch", action="store_true",
                   help="send the requests through the provider's Batch API: cheaper (the batch price), slower "
                        "(within 24 h); resumable with rageval jobs resume")
    p.add_argument("--batch-api", choices=["auto", "openai", "anthropic"], default="auto",
                   help="with --batch: the OpenAI-style Batch API (files and /v1/batches: OpenAI, vLLM, Together...) "
                        "or Anthropic's Message Batches; auto (the default) picks Anthropic's for an anthropic.com "
                        "endpoint")
    p.add_argument("--no-wait", action="store_true",
                   help="with --batch: submit and return; collect later with rageval jobs resume PROJECT ID")
    p.add_argument("--poll-seconds", type=float, metavar="S",
                   help="with --batch: how often to ask the provider (default 30)")
    p.add_argument("--export-shards", metavar="DIR",
                   help="write the job's requests (those not answered yet) as JSONL shards in the OpenAI batch "
                        "format, for an outside engine (vLLM run_batch, Ray Data LLM); nothing is sent")
    p.add_argument("--shard-size", type=int, default=10_000, metavar="N",
                   help="with --export-shards: requests per shard (default %(default)s)")
    p.add_argument("--import-results", nargs="+", metavar="FILE",
                   help="bring an outside engine's output files back (batch output format) and judge the rows they "
                        "answer, calling nothing; any order, any subset, twice: nothing is stored twice")
    p.add_argument("--cascade", metavar="J1,J2",
                   help="judges of one metric, cheapest first: each is asked only about the rows the ones before "
                        "it are not sure of (and the rated rows they leave, which calibrate it); the rest go to the "
                        "desk. Prints who decides each row (--json: per row)")
    p.add_argument("--alpha", type=float,
                   help="with --cascade: the disagreement with the reviewers allowed on decided rows (default: the "
                        "project's, settings set --selective-alpha; 0.1 unless set)")
    p.add_argument("--delta", type=float,
                   help="with --cascade: the chance that guarantee fails (default: the project's; 0.1 unless set; "
                        "split between the judges)")
    p.add_argument("--json", action="store_true")


def cmd_judge(args: argparse.Namespace) -> int:
    if args.cascade is not None:
        return _cascade(args)
    if args.batch and args.no_cache:
        raise UsageError("--batch keeps the replies in the request cache: it cannot be used with --no-cache")
    spec = api.job_spec(args.run, args.judge, slice=args.slice, sample=args.sample, rated_only=args.rated_only,
                        only_failed=args.only_failed, redo_unparsed=args.redo_unparsed, concurrency=args.concurrency,
                        rpm=args.rpm, budget=args.budget, timeout=args.timeout, use_cache=not args.no_cache,
                        batch=args.batch, batch_api=args.batch_api)
    if args.no_wait and not args.batch:
        raise UsageError("--no-wait is for --batch jobs")
    if args.batch_api != "auto" and not args.batch:
        raise UsageError("--batch-api is for --batch jobs")
    outside = [flag for flag, on in (("--export-shards", args.export_shards), ("--import-results",
                                                                               args.import_results)) if on]
    if outside:
        clash = [flag for flag, on in (("--batch", args.batch), ("--dry-run", args.dry_run),
                                       ("--no-cache", args.no_cache), ("--budget", args.budget is not None)) if on]
        if len(outside) > 1 or clash:
            raise UsageError(f"{outside[0]} cannot be used with {', '.join(outside[1:] + clash)}")
        if args.shard_size < 1:
            raise UsageError("--shard-size is a number of requests, at least 1")
        return _export_shards(args, spec) if args.export_shards else _import_results(args, spec)
    if args.dry_run:
        return _dry_run(args, spec)
    if args.batch:
        return _run_batch(args, spec, None)
    return _run_job(args, spec)


def _cascade(args: argparse.Namespace) -> int:
    """rageval judge --cascade J1,J2: each judge on what the ones before it leave (core.jobs.cascade)."""
    from rageval_desktop.core.jobs import cascade

    clash = [flag for flag, on in (("--judge", args.judge), ("--slice", args.slice), ("--sample", args.sample),
                                   ("--rated-only", args.rated_only), ("--only-failed", args.only_failed),
                                   ("--batch", args.batch)) if on]
    if clash:
        raise UsageError(f"--cascade chooses each judge's rows itself: drop {', '.join(clash)}")
    for name, value in (("--alpha", args.alpha), ("--delta", args.delta)):
        if value is not None and not 0 < value < 1:
            raise UsageError(f"{name} is a share between 0 and 1 (not {value:g})")
    names = args.cascade.split(",")
    try:
        return _cascade_run(args, names)
    except cascade.CascadeUsageError as exc:
        raise UsageError(str(exc)) from None


def _cascade_run(args: argparse.Namespace, names: list[str]) -> int:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.jobs import cascade

    options: dict[str, Any] = {"concurrency": args.concurrency, "rpm": args.rpm, "timeout": args.timeout,
                               "use_cache": not args.no_cache, "redo_failed": args.redo_unparsed}
    if args.dry_run:
        with open_project(args.project, read_only=True) as project:
            est = cascade.estimate_cascade(project, names, args.run, alpha=args.alpha, delta=args.delta, **options)
        for problem in est["problems"]:
            print(f"warning: the cascade would stop before any work: {problem}", file=sys.stderr)
        say(args, est, cascade.describe_estimate(est))
        return EXIT_OK
    progress = _progress(args)
    with open_project(args.project) as project:
        ctx = TaskContext(on_progress=progress, min_interval_s=0.5)
        try:
            out = cascade.run_cascade(project, names, args.run, ctx, alpha=args.alpha, delta=args.delta,
                                      budget_usd=args.budget, **options)
        except KeyboardInterrupt:
            progress.end()
            print("error: interrupted; every judgment already saved is kept — run the same command to resume",
                  file=sys.stderr)
            return EXIT_FAILED
    progress.end()
    if out["stopped"] in ("fatal", "write_failed"):
        print(f"error: the cascade stopped: {out['message']}", file=sys.stderr)
    elif out["stopped"]:
        print(f"warning: the cascade stopped: {out['message']}", file=sys.stderr)
    say(args, out, cascade.describe(out))
    return EXIT_FAILED if out["stopped"] in ("fatal", "write_failed") else EXIT_OK


class _Progress:
    """A job's progress on stderr: on a terminal one live line, ended (`end`) before the summary prints; into a pipe
    or a CI log a plain line every PIPED_EVERY_S seconds and the last one (none with --json, none for a job that
    has nothing to do or stops at once: its error is the first line said)."""

    PIPED_EVERY_S = 10.0

    def __init__(self, args: argparse.Namespace) -> None:
        import time

        self.quiet = bool(args.json)
        self.live = sys.stderr.isatty()
        self.shown = False
        self.last = time.monotonic()

    def __call__(self, done: int, total: int, message: str) -> None:
        if self.quiet or not message:
            return
        if self.live:
            print(f"\r{message}   ", end="", file=sys.stderr, flush=True)
            self.shown = True
            return
        import time

        now = time.monotonic()
        if total and (now - self.last >= self.PIPED_EVERY_S or done >= total):
            self.last = now
            print(message, file=sys.stderr, flush=True)

    def end(self) -> None:
        """The live line ends: what prints next starts on a line of its own."""
        if self.shown:
            print(file=sys.stderr, flush=True)
            self.shown = False


def _progress(args: argparse.Namespace) -> _Progress:
    return _Progress(args)


def _run_batch(args: argparse.Namespace, spec: Any, job_id: int | None) -> int:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.jobs import batch

    progress = _progress(args)
    with open_project(args.project) as project:
        ctx = TaskContext(on_progress=progress, min_interval_s=0.5)
        try:
            stats = batch.run_batch_job(project, spec, ctx, job_id=job_id, wait=not args.no_wait,
                                        poll_seconds=batch.POLL_SECONDS if args.poll_seconds is None
                                        else args.poll_seconds)
        except KeyboardInterrupt:
            progress.end()
            print("error: interrupted; the batches are recorded and keep running at the provider — collect them "
                  "with: rageval jobs resume PROJECT ID (rageval jobs list shows the id)", file=sys.stderr)
            return EXIT_FAILED
    progress.end()
    out = stats.as_dict()
    lines = [f"batch job {stats.job_id}: {stats.rows} to judge ({stats.skipped} already judged); {stats.sent} "
             f"requests sent in {stats.batches} batch(es) over {stats.rounds} round(s), {stats.cached} from the "
             f"cache, {stats.live} left to the live pass; {stats.merged} replies received, {stats.failed} failed"
             + (f" {stats.failed_by_kind}" if stats.failed else "")]
    if stats.resumed:
        lines.insert(0, f"resumed batch job {stats.resumed}: it was waiting for the provider's replies to these rows "
                        "(its batches are paid for; nothing was submitted again)")
    judged = stats.judged
    if judged:
        lines.append(f"judged: {judged['ok']} ok, {judged['unparsed']} unparsed, {judged['errors']} errors; "
                     f"{judged['batch_replies']} batch replies, {judged['calls']} live calls, "
                     f"{judged['cache_hits']} from the cache; ${judged['cost_usd']:.4f} (batch replies at the "
                     "batch price)")
    if stats.status == "submitted":
        lines.append(f"submitted: collect the results with: rageval jobs resume {args.project} {stats.job_id}")
    if stats.status == "failed":
        print(f"error: the batch job stopped: {stats.message}", file=sys.stderr)
    say(args, out, "\n".join(lines))
    return EXIT_FAILED if stats.status == "failed" else EXIT_OK


def _dry_run(args: argparse.Namespace, spec: Any) -> int:
    from rageval_desktop.core.jobs.estimate import describe, estimate

    with open_project(args.project, read_only=True) as project:
        est = estimate(project, spec)
    for problem in est["problems"]:
        print(f"warning: the job would stop before any work: {problem}", file=sys.stderr)
    say(args, est, describe(est))
    return EXIT_OK


def _export_shards(args: argparse.Namespace, spec: JobSpec) -> int:
    """rageval judge --export-shards DIR: the requests as shards for an outside engine (core.jobs.shards)."""
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.jobs.shards import export_shards

    with open_project(args.project) as project:     # the export's keys are kept: only they may be answered
        stats = export_shards(project, spec, args.export_shards, shard_requests=args.shard_size,
                              ctx=TaskContext(on_progress=_progress(args), min_interval_s=0.5))
    out = stats.as_dict()
    text = (f"wrote {stats.requests:,} requests in {len(stats.shards)} shard(s) to {args.export_shards} "
            f"({stats.cached:,} answered already, {stats.duplicates:,} asked by another row too; {stats.live:,} left "
            f"to a live run: nuggets, citation support, rows with nothing to judge)")
    firsts = {model: shard for shard, model in reversed(list(stats.models.items()))}   # each model's first shard
    for model, shard in firsts.items():
        number = shard.removeprefix("shard-")
        text += (f"\nrun each shard of model {model} (one model a shard; serve it under that name), for example with "
                 f"vLLM: python -m vllm.entrypoints.openai.run_batch -i {args.export_shards}/{shard} -o "
                 f"results-{number} --model {model}")
    if firsts:
        text += f"\nthen: rageval judge {args.project} --run {args.run} --import-results results-*.jsonl"
    say(args, out, text)
    return EXIT_OK


def _nothing_kept(stats: ImportStats) -> str:
    """Why an import kept nothing when every line it read was an error ("" otherwise): not a success (a 404 for a model
    served under another name exited 0 with "kept 0 replies")."""
    if stats.stored or stats.known or not stats.failed:
        return ""
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(stats.failed_by_kind.items()))
    where = "; ".join(f"{kind}: {at}" for kind in sorted(stats.failed_by_kind) for at in stats.lines_of(kind)[:2])
    return (f"error: no reply kept: every one of the {stats.failed:,} line(s) read carries none ({kinds}); {where} — "
            "a 404 usually means the engine served the model under another name than the requests ask for")


def _import_results(args: argparse.Namespace, spec: JobSpec) -> int:
    """rageval judge --import-results FILES: an outside engine's replies kept, and the rows they answer judged."""
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.jobs.shards import import_results

    progress = _progress(args)
    with open_project(args.project) as project:
        try:
            stats = import_results(project, args.import_results, spec,
                                   ctx=TaskContext(on_progress=progress, min_interval_s=0.5))
        except KeyboardInterrupt:
            progress.end()
            print("error: interrupted; every reply and judgment already saved is kept — run the same command to "
                  "resume", file=sys.stderr)
            return EXIT_FAILED
    progress.end()
    nothing = _nothing_kept(stats)
    if nothing:
        print(nothing, file=sys.stderr)
        return EXIT_FAILED
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(stats.failed_by_kind.items()))
    failed = f"; {stats.failed:,} line(s) with no reply ({kinds})" if stats.failed else ""
    lines = [f"kept {stats.stored:,} replies from {stats.files} file(s) ({stats.known:,} kept before){failed}"]
    for kind in sorted(stats.failed_by_kind):
        lines += [f"  no reply ({kind}): {where}" for where in stats.lines_of(kind)]
    if stats.refused:
        print(f"warning: refused {stats.refused:,} repl(ies) to requests no export of run '{args.run}' wrote "
              f"(another run's, or keys never asked); nothing of them was kept:", file=sys.stderr)
        for where in stats.lines_of("refused"):
            print(f"  {where}", file=sys.stderr)
    stopped = []
    for name, found in stats.judged.items():
        job = found.job
        if job is None:
            lines.append(f"{name}: no reply yet for its {found.unanswered:,} rows to judge" if found.unanswered
                         else f"{name}: nothing left to judge")
            continue
        lines.append(f"{name}: {job.rows:,} to judge ({job.skipped:,} already judged): {job.ok:,} ok, "
                     f"{job.unparsed:,} unparsed, {job.errors:,} errors; 0 calls; {found.unanswered:,} "
                     f"rows still waiting for a reply")
        if job.stopped in ("fatal", "write_failed"):
            stopped.append(f"{name}: {job.message}")
    for why in stopped:
        print(f"error: the job stopped: {why}", file=sys.stderr)
    say(args, stats.as_dict(), "\n".join(lines))
    return EXIT_FAILED if stopped else EXIT_OK


def _run_job(args: argparse.Namespace, spec: Any) -> int:
    progress = _progress(args)
    with api.open(args.project) as project:
        try:
            stats = project.run_job(spec, progress=progress, raise_on_stop=False)
        except KeyboardInterrupt:
            progress.end()
            print("error: interrupted; every judgment already saved is kept — run the same command to resume",
                  file=sys.stderr)
            return EXIT_FAILED
    progress.end()
    out = stats.as_dict()
    if stats.stopped in ("fatal", "write_failed"):
        print(f"error: the job stopped: {stats.message}", file=sys.stderr)
    elif stats.stopped == "budget":
        print(f"warning: {stats.message}", file=sys.stderr)
    kept = (f", {stats.skipped_unparsed} of them with a reply that never parsed: redo those with --redo-unparsed"
            if stats.skipped_unparsed else "")
    text = (f"{stats.rows} to judge ({stats.skipped} already judged{kept}): {stats.ok} ok, {stats.unparsed} unparsed, "
            f"{stats.errors} errors{' ' + str(stats.errors_by_kind) if stats.errors else ''}; {stats.calls} calls, "
            f"{stats.cache_hits} from cache, ${stats.cost_usd:.4f}, {stats.seconds:.1f} s")
    if stats.retries:
        why = ", ".join(f"{k} {v}" for k, v in sorted(stats.retries_by_kind.items()))
        text += f"\n{stats.retries} retries ({why})"
    if stats.usage_note():
        text += f"\nnote: {stats.usage_note()}"
    say(args, out, text)
    return EXIT_FAILED if stats.stopped in ("fatal", "write_failed") else EXIT_OK


def add_prices(command: Command) -> None:
    """The arguments of `rageval prices` (its handler follows)."""
    p = command("prices", cmd_prices, "the price table used for cost accounting")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("set")
    q.add_argument("project")
    q.add_argument("model")
    q.add_argument("--input", type=float, required=True, help="USD per million prompt tokens")
    q.add_argument("--output", type=float, required=True, help="USD per million completion tokens")
    q.add_argument("--batch-input", type=float, help="USD per million prompt tokens through the Batch API "
                   "(default: half the live price)")
    q.add_argument("--batch-output", type=float, help="USD per million completion tokens through the Batch API "
                   "(default: half the live price)")
    q.add_argument("--json", action="store_true")


def cmd_prices(args: argparse.Namespace) -> int:
    from rageval_desktop.core.judges import prices

    with open_project(args.project, read_only=args.action != "set") as project:
        if args.action == "set":
            prices.set_price(project, args.model, args.input, args.output, args.batch_input, args.batch_output)
        table = prices.all_prices(project)
    say(args, table, "\n".join(
        f"{m:<28} ${p['input_per_mtok']:g} in / ${p['output_per_mtok']:g} out per million tokens; batch "
        f"${p['batch_input_per_mtok']:g} / ${p['batch_output_per_mtok']:g}" for m, p in sorted(table.items())))
    return EXIT_OK


def add_jobs(command: Command) -> None:
    """The arguments of `rageval jobs` (its handler follows)."""
    p = command("jobs", cmd_jobs, "list jobs, resume an interrupted one, follow or cancel a batch job")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("resume", help="resume an interrupted job; a batch job polls its batches again")
    q.add_argument("project")
    q.add_argument("id", type=int)
    q.add_argument("--no-wait", action="store_true", help="a batch job: poll once and return")
    q.add_argument("--poll-seconds", type=float, metavar="S", help="how often to ask the provider (default 30)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("show", help="one job; a batch job with its batches")
    q.add_argument("project")
    q.add_argument("id", type=int)
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("cancel", help="cancel a batch job and its remote batches")
    q.add_argument("project")
    q.add_argument("id", type=int)
    q.add_argument("--json", action="store_true")


def cmd_jobs(args: argparse.Namespace) -> int:
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.store import records

    with open_project(args.project) as project:  # opening marks jobs whose process died as interrupted
        if args.action == "list":
            jobs = records.list_jobs(project)
            say(args, jobs, "\n".join(f"#{j['id']:<4} {j['kind']:<8} {j['status']:<12} {j['done']}/{j['total']} "
                                         f"{j['message'] or ''}" for j in jobs) or "no jobs yet")
            return EXIT_OK
        job = records.get(project, args.id)
        if args.action in ("show", "cancel"):
            from rageval_desktop.core.jobs import batch

            if args.action == "cancel":
                if not batch.is_batch_job(job):
                    raise UsageError(f"job {args.id} is not a batch job; a running job stops with Ctrl+C (or "
                                     "Cancel in the app)")
                out = batch.cancel(project, args.id)
                say(args, out, f"cancelled job {args.id}: {out['cancelled_batches']} remote batch(es) "
                                  f"cancelled; {out['replies_kept']} replies already in were kept in the cache")
                return EXIT_OK
            job["batches"] = batch.batches(project, args.id)
            text = [f"#{job['id']} {job['kind']} {job['status']} {job['done']}/{job['total']} {job['message'] or ''}"]
            text += [f"  batch {b['remote_id'] or '(not created)'} round {b['round']}: {b['status']}, "
                     f"{b['completed']}/{b['requests']} done, {b['failed']} failed{' (merged)' if b['merged'] else ''}"
                     for b in job["batches"]]
            say(args, job, "\n".join(text))
            return EXIT_OK
    if job["kind"] != "judge":
        raise UsageError(f"job {args.id} is a {job['kind']} job; only judge jobs resume")
    known = set(JobSpec.__dataclass_fields__)
    spec = JobSpec(**{k: v for k, v in job["params"].items() if k in known})
    if spec.batch:
        return _run_batch(args, spec, args.id)
    return _run_job(args, spec)


def add_align(command: Command) -> None:
    """The arguments of `rageval align` (its handler follows)."""
    p = command("align", cmd_align, "few-shot examples from the rows a judge got wrong, checked by k-fold "
                                    "cross-validation on the ratings (--apply creates the aligned judge)")
    p.add_argument("project")
    p.add_argument("--judge", required=True, help="an LLM judge rated per row (correctness, faithfulness, …)")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--examples", type=int, default=6, help="few-shot examples in the prompt, at most (default 6)")
    p.add_argument("--seed", type=int, default=0, help="how rated rows are split into folds")
    p.add_argument("--apply", action="store_true", help="create the aligned judge (a new rubric version)")
    p.add_argument("--name", help="the aligned judge's name (default: <judge>-aligned)")
    p.add_argument("--json", action="store_true")


def cmd_align(args: argparse.Namespace) -> int:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.review.align import align, describe

    if args.folds < 2 or args.examples < 1:
        raise UsageError("--folds is at least 2 and --examples at least 1")

    def progress(done: int, total: int, message: str) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r{message}   ", end="", file=sys.stderr, flush=True)

    with open_project(args.project) as project:     # replies are kept in the request cache
        try:
            report = align(project, args.judge, folds=args.folds, examples=args.examples, seed=args.seed,
                           apply=args.apply, name=args.name, ctx=TaskContext(on_progress=progress, min_interval_s=0.5))
        except KeyboardInterrupt:
            print("error: interrupted; nothing was changed", file=sys.stderr)
            return EXIT_FAILED
    text = describe(report) + ("" if args.apply else "\n  nothing changed: add --apply to create the aligned judge")
    say(args, report.as_dict(), text)
    return EXIT_OK
