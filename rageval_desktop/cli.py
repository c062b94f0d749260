"""`rageval`: the headless twin of the app. A thin shell: parse arguments, call core, print.

Exit codes: 0 success; 1 an operation failed (bad input, refused file); 2 usage error.
The first line on stderr always says what went wrong in plain words.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rageval_desktop import __version__
from rageval_desktop.core.errors import RagevalError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # plain words first, the usage after
        sys.stderr.write(f"error: {message}\n")
        self.print_usage(sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if getattr(args, "json", False) else text)


def _open(path: str):
    from rageval_desktop.core.store.project import Project

    return Project.open(path)


# --- commands ------------------------------------------------------------------------------------
def cmd_new(args: argparse.Namespace) -> int:
    from rageval_desktop.core.store.project import Project

    path = Path(args.project)
    if path.suffix != ".rageval":
        raise UsageError(f"project files end in .rageval (got '{path.name}')")
    Project.create(path, name=args.name).close()
    _print(args, {"created": str(path)}, f"created {path}")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from rageval_desktop.core import importers

    mapping = importers.parse_mapping(getattr(args, "map", None))
    with _open(args.project) as project:
        if args.what == "golden":
            report = importers.import_golden(project, args.file, fmt=args.format, mapping=mapping,
                                             default_slice=args.slice)
        elif args.what == "run":
            report = importers.import_run(project, args.file, args.run, fmt=args.format, mapping=mapping,
                                          replace=args.replace, notes=args.notes)
        else:
            report = importers.import_corpus(project, args.file)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if report.unlinked_examples and not args.json:
        print("unlinked, for example: " + " | ".join(report.unlinked_examples), file=sys.stderr)
    _print(args, report.as_dict(), report.summary())
    return EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    from rageval_desktop.core.store.queries import project_info

    with _open(args.project) as project:
        info = project_info(project)
    runs = ", ".join(f"{r['name']} ({r['rows']} rows)" for r in info["runs"]) or "none"
    slices = ", ".join(f"{k} {v}" for k, v in info["slices"].items())
    text = (f"{info['name']} — {info['path']} (schema {info['schema_version']})\n"
            f"golden rows: {info['golden_rows']} ({slices})\ncorpus chunks: {info['corpus_chunks']}\n"
            f"runs: {runs}\njudges: {info['judges']}, judgments: {info['judgments']}, "
            f"human ratings: {info['human_ratings']}")
    _print(args, info, text)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from rageval_desktop.core.demo import write_demo_project

    path = Path(args.path)
    if path.is_dir():
        path = path / "demo.rageval"
    if path.exists() and args.force:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    write_demo_project(path)
    _print(args, {"created": str(path)}, f"wrote the demo project to {path}")
    return EXIT_OK


def cmd_backup(args: argparse.Namespace) -> int:
    with _open(args.project) as project:
        out = project.backup("manual")
    _print(args, {"backup": str(out)}, f"backup written to {out}")
    return EXIT_OK


def cmd_judges(args: argparse.Namespace) -> int:
    from rageval_desktop.core.judges import registry

    with _open(args.project) as project:
        if args.action == "list":
            judges = [registry.judge_summary(j) for j in registry.list_judges(project)]
            text = "\n".join(f"{j['name']:<24} {j['metric']:<20} {j['kind']:<10} {j['model'] or '':<24} {j['status']}"
                             for j in judges) or "no judges yet"
            _print(args, judges, text)
            return EXIT_OK
        params: dict[str, Any] = {}
        for key in ("concurrency", "max_tokens", "timeout", "seed", "temperature", "rpm", "passages_k", "measure",
                    "threshold"):
            value = getattr(args, key, None)
            if value is not None:
                params[key] = value
        judge = registry.add_judge(project, args.name, args.metric, args.kind, rubric=args.rubric, model=args.model,
                                   base_url=args.base_url, api_key_ref=args.api_key_env or args.api_key_keyring,
                                   params=params)
        _print(args, registry.judge_summary(judge), f"added judge '{judge.name}' ({judge.metric}, {judge.kind})")
    return EXIT_OK


def cmd_judge(args: argparse.Namespace) -> int:
    from rageval_desktop.core.jobs.judge_job import JobSpec

    spec = JobSpec(run=args.run, judges=args.judge or None, slice_tag=args.slice, sample_id=args.sample,
                   rated_only=args.rated_only,
                   only_failed=args.only_failed,
                   redo_failed=args.redo_unparsed, concurrency=args.concurrency, rpm=args.rpm,
                   budget_usd=args.budget, timeout=args.timeout, use_cache=not args.no_cache)
    return _run_job(args, spec)


def _run_job(args: argparse.Namespace, spec: Any) -> int:
    from rageval_desktop.core.jobs.context import TaskContext
    from rageval_desktop.core.jobs.judge_job import run_judge_job

    def progress(done: int, total: int, message: str) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r{message}   ", end="", file=sys.stderr, flush=True)

    with _open(args.project) as project:
        ctx = TaskContext(on_progress=progress, min_interval_s=0.5)
        try:
            stats = run_judge_job(project, spec, ctx)
        except KeyboardInterrupt:
            print("error: interrupted; every judgment already saved is kept — run the same command to resume",
                  file=sys.stderr)
            return EXIT_FAILED
    out = stats.as_dict()
    if stats.stopped == "fatal":
        print(f"error: the job stopped: {stats.message}", file=sys.stderr)
    elif stats.stopped == "budget":
        print(f"warning: {stats.message}", file=sys.stderr)
    text = (f"{stats.rows} to judge ({stats.skipped} already judged): {stats.ok} ok, {stats.unparsed} unparsed, "
            f"{stats.errors} errors{' ' + str(stats.errors_by_kind) if stats.errors else ''}; {stats.calls} calls, "
            f"{stats.cache_hits} from cache, ${stats.cost_usd:.4f}, {stats.seconds:.1f} s")
    _print(args, out, text)
    return EXIT_FAILED if stats.stopped == "fatal" else EXIT_OK


def cmd_prices(args: argparse.Namespace) -> int:
    from rageval_desktop.core.judges import prices

    with _open(args.project) as project:
        if args.action == "set":
            prices.set_price(project, args.model, args.input, args.output)
        table = prices.all_prices(project)
    _print(args, {m: {"input_per_mtok": i, "output_per_mtok": o} for m, (i, o) in table.items()},
           "\n".join(f"{m:<28} ${i:g} in / ${o:g} out per million tokens" for m, (i, o) in sorted(table.items())))
    return EXIT_OK


def cmd_jobs(args: argparse.Namespace) -> int:
    from rageval_desktop.core.jobs import records
    from rageval_desktop.core.jobs.judge_job import JobSpec

    with _open(args.project) as project:
        records.mark_interrupted(project)
        if args.action == "list":
            jobs = records.list_jobs(project)
            _print(args, jobs, "\n".join(f"#{j['id']:<4} {j['kind']:<8} {j['status']:<12} {j['done']}/{j['total']} "
                                         f"{j['message'] or ''}" for j in jobs) or "no jobs yet")
            return EXIT_OK
        job = records.get(project, args.id)
    if job["kind"] != "judge":
        raise UsageError(f"job {args.id} is a {job['kind']} job; only judge jobs resume")
    known = set(JobSpec.__dataclass_fields__)
    return _run_job(args, JobSpec(**{k: v for k, v in job["params"].items() if k in known}))


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

    with _open(args.project) as project:
        summary = dashboard(project, args.run, _ks(args.k))
    headers, rows = dashboard_table(summary)
    lines = ["  ".join(f"{h:>14}" for h in headers)]
    lines += ["  ".join(f"{_cell(v):>14}" for v in row) for row in rows]
    if summary["retired_judges"]:
        lines.append("retired judges left out: " + ", ".join(r["judge"] for r in summary["retired_judges"]))
    _print(args, summary, "\n".join(lines))
    return EXIT_OK


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6f}" if value < 0.01 and value != 0 else f"{value:.2f}"
    return str(value)


def cmd_compare(args: argparse.Namespace) -> int:
    from rageval_desktop.core.metrics.compare import GateUsageError, compare

    with _open(args.project) as project:
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

    with _open(args.project) as project:
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

    with _open(args.project) as project:
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

    with _open(args.project) as project:
        try:
            out = write_report(project, args.run, args.out, baseline=args.baseline)
        except GateUsageError as exc:
            raise UsageError(str(exc)) from None
    _print(args, {"report": str(out)}, f"report written to {out}")
    return EXIT_OK


def cmd_sample(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import sampling

    with _open(args.project) as project:
        if args.extend:
            sample = sampling.extend_sample(project, args.extend, args.size)
        else:
            if not args.run or not args.metric:
                raise UsageError("a new sample needs --run and --metric (or --extend SAMPLE_ID)")
            sample = sampling.create_sample(project, args.run, args.metric, args.size, args.seed)
    data = {"sample_id": sample.id, "run": sample.run, "metric": sample.metric, "seed": sample.seed,
            "row_ids": sample.row_ids}
    _print(args, data, f"sample {sample.id}: {len(sample.row_ids)} rows of {sample.run} to rate for {sample.metric}")
    return EXIT_OK


def cmd_ratings(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import ratings

    with _open(args.project) as project:
        if args.action == "import":
            n = ratings.import_ratings(project, args.file)
            _print(args, {"imported": n}, f"imported {n} ratings")
        else:
            n = ratings.export_ratings(project, args.out)
            _print(args, {"exported": n, "out": args.out}, f"exported {n} ratings to {args.out}")
    return EXIT_OK


def cmd_agreement(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import agreement

    with _open(args.project) as project:
        results = agreement.audit_all(project, args.judge)
        actions = {}
        if args.apply:
            for result in results:
                actions[result.judge] = agreement.apply(project, result)
    out = []
    lines = []
    for r in results:
        item = {"judge": r.judge, "metric": r.metric, "n": r.n, "statistic": r.statistic, "value": r.value,
                "ci": r.ci, "verdict": r.verdict, "needed": r.needed, "judge_status": r.judge_status,
                "stats": r.stats, "human_ceiling": r.human_ceiling, "compared_with": r.compared_with,
                "per_slice": r.per_slice, "per_run": r.per_run, "confusion": r.confusion}
        if args.apply:
            item["action"] = actions[r.judge]
        out.append(item)
        value = "—" if r.value is None else f"{r.value:.3f} [{_cell(r.ci[0])}, {_cell(r.ci[1])}]"
        more = f" (needs {r.needed} more rated rows)" if r.needed else ""
        lines.append(f"{r.judge:<22} {r.metric:<18} n={r.n:<4} {r.statistic} {value}  {r.verdict}{more}"
                     + (f"  -> {actions[r.judge]}" if args.apply else ""))
    _print(args, out, "\n".join(lines) or "no judges")
    return EXIT_OK


def cmd_judge_status(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import agreement

    with _open(args.project) as project:
        agreement.set_status(project, args.name, "retired" if args.action == "retire" else "active", args.reason)
    _print(args, {"judge": args.name, "status": args.action}, f"{args.name}: {args.action}d")
    return EXIT_OK


def cmd_settings(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import settings

    with _open(args.project) as project:
        if args.action == "set":
            pol = settings.set_policy(project, statistic=args.statistic, threshold=args.threshold, min_n=args.min_n)
        else:
            pol = settings.policy(project)
    data = {"statistic": pol.statistic, "threshold": pol.threshold, "min_n": pol.min_n}
    _print(args, data, f"retire a judge when {pol.statistic} < {pol.threshold:g} with n >= {pol.min_n}")
    return EXIT_OK


def cmd_golden(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden import edits, versions

    with _open(args.project) as project:
        if args.action == "version":
            data: Any = versions.create_version(project, args.name, args.note)
            text = f"version '{data['name']}': {data['rows']} rows"
        elif args.action == "versions":
            data = versions.list_versions(project)
            text = "\n".join(f"{v['name']:<12} {v['rows']:>5} rows  {v['created_at'][:16]}  {v['note'] or ''}"
                             for v in data) or "no versions yet"
        elif args.action == "diff":
            data = versions.diff(project, args.old, args.new)
            text = "\n".join([f"{data['from']} -> {data['to']}: {len(data['added'])} added, "
                              f"{len(data['removed'])} removed, {len(data['changed'])} changed"]
                             + [f"+ {g}" for g in data["added"]] + [f"- {g}" for g in data["removed"]]
                             + [f"~ {c['id']}: " + ", ".join(c["fields"]) for c in data["changed"]])
        elif args.action == "export":
            n = versions.export_version(project, args.version, args.out)
            data, text = {"rows": n, "out": args.out}, f"exported {n} rows of '{args.version}' to {args.out}"
        elif args.action == "dedupe":
            from rageval_desktop.core.golden.dedupe import golden_duplicates

            data = golden_duplicates(project, args.threshold)
            text = "\n".join(f"{p['cosine']:.3f}  {p['a']}  {p['b']}" for p in data) or "no near-duplicates"
        elif args.action == "balance":
            data = edits.balance(project)
            text = "\n".join(f"{k:<16} {v['rows']:>4}" + (f" / {v['target']}" if v["target"] else "")
                             for k, v in data["slices"].items())
            share = data["production_failure_share"] * 100
            text += f"\nfrom production failures: {share:.0f}%, drafts: {data['drafts']}"
        else:  # promote
            data = edits.promote_failure(project, args.row_id, args.slice, args.reason)
            text = f"added draft golden row {data['id']} from a production failure"
    _print(args, data, text)
    return EXIT_OK


def cmd_corpus(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden.corpus import import_folder

    with _open(args.project) as project:
        data = import_folder(project, args.dir, size=args.chunk_size, overlap=args.overlap)
    _print(args, data, f"{data['files']} files -> {data['chunks']} chunks ({data['new_chunks']} new), "
                       f"{data['chunk_size']} tokens with {data['overlap']} overlap")
    return EXIT_OK


def cmd_synth(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden.synth import SynthSpec, run_synth

    spec = SynthSpec(n=args.n, judge=args.judge, style=args.style, seed=args.seed, slice_tag=args.slice,
                     thresholds={"groundedness": args.min_groundedness, "relevance": args.min_relevance,
                                 "standalone": args.min_standalone})
    with _open(args.project) as project:
        stats = run_synth(project, spec)
    if stats.stopped == "fatal":
        print(f"error: synthesis stopped: {stats.message}", file=sys.stderr)
    text = (f"{stats.chunks} chunks -> {stats.candidates} candidates -> {stats.kept} draft golden rows "
            f"(rejected: {stats.rejected}); {stats.calls} calls, {stats.cache_hits} cached, ${stats.cost_usd:.4f}")
    _print(args, stats.as_dict(), text)
    return EXIT_FAILED if stats.stopped == "fatal" else EXIT_OK


def cmd_lab(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden.lab import run_lab

    try:
        sizes = [int(x) for x in args.chunk_sizes.split(",") if x.strip()]
    except ValueError:
        raise UsageError("--chunk-sizes takes token counts separated by commas, e.g. 200,500") from None
    with _open(args.project) as project:
        data = run_lab(project, sizes, overlap=args.overlap, models=args.model or None)
    lines = []
    for c in data["configs"]:
        a = c["slices"]["all"]
        lines.append(f"{c['config']:<14} {c['model']:<18} {c['chunks']:>6} chunks  recall@5 {a['recall@5']:6.1f}  "
                     f"recall@10 {a['recall@10']:6.1f}  recall@50 {a['recall@50']:6.1f}  MRR {a['mrr']:6.1f}")
    _print(args, data, "\n".join(lines))
    return EXIT_OK


# --- parser --------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rageval", description="Headless RAGEval Desktop: evaluate RAG runs in a project file.")
    parser.add_argument("--version", action="version", version=f"rageval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, func: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(func=func)
        return p

    p = command("new", cmd_new, "create an empty project file")
    p.add_argument("project", help="path of the new .rageval file")
    p.add_argument("--name", help="display name (default: the file name)")

    p = command("import", cmd_import, "import a golden set, a run or corpus chunks (all-or-nothing)")
    what = p.add_subparsers(dest="what", required=True, parser_class=_Parser)
    for kind, help_ in (("golden", "golden rows: question, gold_answer, gold_chunk_ids, slice_tag"),
                        ("run", "outputs of one RAG run: question, answer, retrieved"),
                        ("corpus", "corpus chunks: chunk_id, doc_id, text")):
        q = what.add_parser(kind, help=help_, description=help_)
        q.add_argument("project")
        q.add_argument("file", help=".csv, .jsonl, .json, .parquet or .xlsx")
        q.add_argument("--json", action="store_true", help="print the import report as JSON")
        if kind != "corpus":
            q.add_argument("--format", help="layout: native, ragas, hf-cookbook" +
                           (", open-rag-eval" if kind == "run" else "") + " (default: detected)")
            q.add_argument("--map", metavar="TARGET=SOURCE,...",
                           help="rename the file's columns first, e.g. question=query,answer=response")
        if kind == "golden":
            q.add_argument("--slice", help="slice tag for rows that have none")
        if kind == "run":
            q.add_argument("--run", required=True, help="name of the run, e.g. v2")
            q.add_argument("--replace", action="store_true", help="replace a run of the same name (backup first)")
            q.add_argument("--notes", help="free text kept with the run")

    p = command("info", cmd_info, "summarise a project")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")

    p = command("demo", cmd_demo, "write the bundled demo project")
    p.add_argument("path", help="file to create (or a folder, to create demo.rageval in it)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.add_argument("--json", action="store_true")

    p = command("judges", cmd_judges, "add and list judges")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list", help="list the project's judges")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("add", help="add a judge: an LLM endpoint + rubric, or an embedded scorer")
    q.add_argument("project")
    q.add_argument("--name", required=True)
    q.add_argument("--metric", required=True,
                   help="correctness, correctness_binary, faithfulness, answer_relevance, passage_relevance")
    q.add_argument("--kind", required=True, choices=["llm", "embedding", "lexical"])
    q.add_argument("--rubric", help="bundled rubric name (default: the metric's)")
    q.add_argument("--model", help="model name at the endpoint (LLM judges)")
    q.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default: OpenAI)")
    q.add_argument("--api-key-env", help="NAME of the environment variable holding the key (never the key)")
    q.add_argument("--api-key-keyring", metavar="keyring:SERVICE:USER", help="or a keyring entry")
    q.add_argument("--concurrency", type=int)
    q.add_argument("--rpm", type=float, help="requests-per-minute cap")
    q.add_argument("--max-tokens", type=int)
    q.add_argument("--timeout", type=float, help="seconds per call (default 120)")
    q.add_argument("--seed", type=int)
    q.add_argument("--temperature", type=float)
    q.add_argument("--passages-k", type=int, help="passages judged per row (passage_relevance)")
    q.add_argument("--measure", choices=["f1", "rougeL"], help="lexical judges")
    q.add_argument("--threshold", type=float, help="similarity counted as correct (binary metrics)")
    q.add_argument("--json", action="store_true")

    p = command("judge", cmd_judge, "run judges over a run's rows (resumable: judged rows are skipped)")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--judge", action="append", help="judge name (repeatable; default: every active judge)")
    p.add_argument("--slice", help="only rows of this slice")
    p.add_argument("--sample", type=int, metavar="SAMPLE_ID", help="only the rows of this review sample")
    p.add_argument("--rated-only", action="store_true",
                   help="only rows humans rated (audit a rewritten rubric without new ratings)")
    p.add_argument("--concurrency", type=int, help="calls in flight (default: the judge's, 16)")
    p.add_argument("--rpm", type=float, help="requests-per-minute cap")
    p.add_argument("--budget", type=float, metavar="USD", help="stop before the estimated cost exceeds this")
    p.add_argument("--timeout", type=float, help="seconds per call")
    p.add_argument("--only-missing", action="store_true",
                   help="only rows without a final judgment (the default behaviour; kept for scripts)")
    p.add_argument("--only-failed", action="store_true", help="only rows whose judgment is an error or unparsed")
    p.add_argument("--redo-unparsed", action="store_true", help="also redo rows whose reply did not parse")
    p.add_argument("--no-cache", action="store_true", help="do not use or fill the request cache")
    p.add_argument("--json", action="store_true")

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
    q.add_argument("--json", action="store_true")

    p = command("jobs", cmd_jobs, "list jobs, resume an interrupted one")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("resume")
    q.add_argument("project")
    q.add_argument("id", type=int)
    q.add_argument("--json", action="store_true")

    p = command("metrics", cmd_metrics, "the dashboard of one run: every slice and 'all' (0-100 scale)")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--k", help="cut-offs for recall/precision/nDCG (default 5,10,50)")
    p.add_argument("--json", action="store_true")

    p = command("compare", cmd_compare, "per-slice deltas of a candidate run against a baseline (paired 95% CIs)")
    p.add_argument("project")
    p.add_argument("--baseline", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--metrics", nargs="+", help="default: recall@5 recall@10 mrr ndcg@10 + judged metrics")
    p.add_argument("--json", action="store_true")

    p = command("gate", cmd_gate, "exit 1 when any slice regresses by more than N points (for CI)")
    p.add_argument("project")
    p.add_argument("--baseline", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--max-slice-drop", type=float, default=2.0, help="points a slice may drop (default 2)")
    p.add_argument("--max-aggregate-drop", type=float, default=0.0, help="points 'all' may drop (default 0)")
    p.add_argument("--metrics", nargs="+")
    p.add_argument("--markdown", metavar="FILE", help="also write a pull-request comment")
    p.add_argument("--json", action="store_true")

    p = command("failures", cmd_failures, "failing rows by class (retrieval, reranker, generation) and slice")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--class", dest="failure_class", choices=["retrieval", "reranker", "generation"])
    p.add_argument("--slice")
    p.add_argument("--metric", help="only rows this judged metric failed")
    p.add_argument("--sample", type=int, help="read N failures at random (e.g. 10)")
    p.add_argument("--json", action="store_true")

    p = command("report", cmd_report, "write a report: .html .pdf .xlsx .csv .jsonl .parquet or .md (by extension)")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--baseline", help="compare against this run")
    p.add_argument("--out", required=True, help="file to write; its extension picks the format")
    p.add_argument("--json", action="store_true")

    p = command("sample", cmd_sample, "draw (or extend) a stratified review sample of a run for one metric")
    p.add_argument("project")
    p.add_argument("--run")
    p.add_argument("--metric")
    p.add_argument("--size", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--extend", type=int, metavar="SAMPLE_ID", help="add --size more rows to this sample")
    p.add_argument("--json", action="store_true")

    p = command("ratings", cmd_ratings, "import or export human ratings (for reviewers who rate outside the app)")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("import", help="CSV/JSONL: row_id or question, metric, reviewer, score [, comment]")
    q.add_argument("project")
    q.add_argument("file")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("export")
    q.add_argument("project")
    q.add_argument("--out", required=True, help=".csv or .jsonl")
    q.add_argument("--json", action="store_true")

    p = command("agreement", cmd_agreement, "judge-human agreement with CIs; --apply retires judges under the bar")
    p.add_argument("project")
    p.add_argument("--judge")
    p.add_argument("--apply", action="store_true", help="record the audit; retire or reinstate accordingly")
    p.add_argument("--json", action="store_true")

    for name, help_ in (("retire", "retire a judge by hand, with a reason"),
                        ("reinstate", "reinstate a retired judge (only after a passing audit)")):
        p = command(name, cmd_judge_status, help_)
        p.set_defaults(action=name)
        p.add_argument("project")
        p.add_argument("name")
        p.add_argument("--reason", required=True)
        p.add_argument("--json", action="store_true")

    p = command("settings", cmd_settings, "the retirement policy: statistic, threshold, minimum n")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("show")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("set")
    q.add_argument("project")
    q.add_argument("--statistic", choices=["auto", "quadratic_kappa", "cohen_kappa", "krippendorff_alpha",
                                           "spearman", "exact"])
    q.add_argument("--threshold", type=float)
    q.add_argument("--min-n", type=int)
    q.add_argument("--json", action="store_true")

    p = command("golden", cmd_golden, "the golden set as code: versions, diffs, exports, dedupe, balance, promote")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("version", help="name a snapshot of the golden set")
    q.add_argument("project")
    q.add_argument("name")
    q.add_argument("--note")
    q = acts.add_parser("versions", help="list the snapshots")
    q.add_argument("project")
    q = acts.add_parser("diff", help="rows added, removed and changed between two versions ('current' = now)")
    q.add_argument("project")
    q.add_argument("old")
    q.add_argument("new", nargs="?", default="current")
    q = acts.add_parser("export", help="write a version to .jsonl or .csv (re-import with `import golden`)")
    q.add_argument("project")
    q.add_argument("version", help="a version name or 'current'")
    q.add_argument("--out", required=True)
    q = acts.add_parser("dedupe", help="near-duplicate questions (MiniLM + FAISS)")
    q.add_argument("project")
    q.add_argument("--threshold", type=float, default=0.9)
    q = acts.add_parser("balance", help="rows per slice against targets; share from production failures")
    q.add_argument("project")
    q = acts.add_parser("promote", help="add a failing run row to the golden set as a draft")
    q.add_argument("project")
    q.add_argument("--row-id", type=int, required=True)
    q.add_argument("--slice", required=True)
    q.add_argument("--reason")
    for q in acts.choices.values():
        q.add_argument("--json", action="store_true")

    p = command("synth", cmd_synth, "generate draft golden rows from corpus chunks, filtered by critique agents")
    p.add_argument("project")
    p.add_argument("--n", type=int, required=True, help="chunks to sample")
    p.add_argument("--judge", required=True, help="an LLM judge whose endpoint and model write and critique")
    p.add_argument("--style", choices=["factoid", "snippets"], default="factoid")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slice", help="slice tag of the drafts")
    for name in ("groundedness", "relevance", "standalone"):
        p.add_argument(f"--min-{name}", type=float, default=4.0, help=f"keep when {name} >= this (default 4)")
    p.add_argument("--json", action="store_true")

    p = command("lab", cmd_lab, "retrieval lab: recall per chunk size and embedding model, per slice")
    p.add_argument("project")
    p.add_argument("--chunk-sizes", default="200,500", help="token counts, e.g. 200,500")
    p.add_argument("--overlap", type=float, default=0.2, help="share of a chunk repeated in the next (default 0.2)")
    p.add_argument("--model", action="append", help="embedding model (default: the bundled all-MiniLM-L6-v2)")
    p.add_argument("--json", action="store_true")

    p = command("corpus", cmd_corpus, "import a folder of .txt/.md/.rst/.pdf as chunks")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("import")
    q.add_argument("project")
    q.add_argument("dir")
    q.add_argument("--chunk-size", type=int, default=200, help="tokens per chunk (default 200)")
    q.add_argument("--overlap", type=int, default=40, help="tokens shared by neighbouring chunks (default 40)")
    q.add_argument("--json", action="store_true")

    p = command("backup", cmd_backup, "write a backup of a project now (kept beside it, rotated)")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RagevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("error: interrupted; nothing was half-written (each operation is one transaction)", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `rageval ... | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
