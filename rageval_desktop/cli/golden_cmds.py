"""The golden set as code, corpus import, synthetic questions, the retrieval lab."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rageval_desktop.cli.base import EXIT_FAILED, EXIT_OK, UsageError, _print, open_project


def cmd_golden(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden import edits, versions

    with open_project(args.project) as project:
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
            from rageval_desktop.core.golden.dedupe import check_new, golden_duplicates

            model = embedding_model(args)
            if args.new:
                found = check_new(project, threshold=args.threshold, model_id=model)
                data = found.as_dict()
                text = "\n".join([found.summary()] + [
                    f"{p['cosine']:.3f}  {p['a']}  {p['b']}  {found.questions[p['a']][:60]!r} ~ "
                    f"{found.questions[p['b']][:60]!r}" for p in found.pairs])
            else:
                data = golden_duplicates(project, args.threshold, model_id=model)
                text = "\n".join(f"{p['cosine']:.3f}  {p['a']}  {p['b']}" for p in data) or "no near-duplicates"
        elif args.action == "balance":
            data = edits.balance(project)
            text = "\n".join(f"{k:<16} {v['rows']:>4}" + (f" / {v['target']}" if v["target"] else "")
                             for k, v in data["slices"].items())
            share = data["production_failure_share"] * 100
            text += f"\nfrom production failures: {share:.0f}%, drafts: {data['drafts']}"
        elif args.action == "target":
            edits.set_target(project, args.slice, args.rows)
            data = edits.balance(project)
            text = f"slice '{args.slice}' target: {args.rows} approved rows"
        else:  # promote
            data = edits.promote_failure(project, args.row_id, args.slice, args.reason)
            text = f"added draft golden row {data['id']} from a production failure"
    _print(args, data, text)
    return EXIT_OK


def cmd_corpus(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden.corpus import import_folder

    with open_project(args.project) as project:
        data = import_folder(project, args.dir, size=args.chunk_size, overlap=args.overlap)
    _print(args, data, f"{data['files']} files -> {data['chunks']} chunks ({data['new_chunks']} new), "
                       f"{data['chunk_size']} tokens with {data['overlap']} overlap")
    return EXIT_OK


def cmd_synth(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden.synth import SynthSpec, run_synth

    spec = SynthSpec(n=args.n, judge=args.judge, style=args.style, seed=args.seed, slice_tag=args.slice,
                     thresholds={"groundedness": args.min_groundedness, "relevance": args.min_relevance,
                                 "standalone": args.min_standalone})
    with open_project(args.project) as project:
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
    from rageval_desktop.core.base.context import TaskContext

    def step(done: int, total: int, message: str) -> None:
        # a line per configuration on stderr, --json or not (stdout stays the result): a lab takes minutes
        if done < total:
            print(f"lab: configuration {done + 1} of {total}: {message}", file=sys.stderr, flush=True)

    with open_project(args.project) as project:
        data = run_lab(project, sizes, overlap=args.overlap, models=args.model or None,
                       ctx=TaskContext(on_progress=step))
    lines = []
    for c in data["configs"]:
        a = c["slices"]["all"]
        lines.append(f"{c['config']:<14} {c['model']:<18} {c['chunks']:>6} chunks  hit@5 {a['hit@5']:6.1f}  "
                     f"hit@10 {a['hit@10']:6.1f}  hit@50 {a['hit@50']:6.1f}  MRR {a['mrr']:6.1f}")
    _print(args, data, "\n".join(lines))
    return EXIT_OK


def embedding_model(args: argparse.Namespace) -> str:
    """The model id of --model / --embeddings-url (default: the bundled MiniLM)."""
    from rageval_desktop.core.judges.embedded import MINILM_ID

    url, model = getattr(args, "embeddings_url", None), getattr(args, "model", None)
    if url:
        from rageval_desktop.core.judges.embed_endpoint import model_id

        if not model:
            raise UsageError("--embeddings-url needs --model NAME (the model the server serves)")
        return model_id(url, model, args.api_key_env)
    if getattr(args, "api_key_env", None):
        raise UsageError("--api-key-env goes with --embeddings-url")
    return model or MINILM_ID
