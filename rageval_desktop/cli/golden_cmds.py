"""The golden set as code, corpus import, synthetic questions, the retrieval lab."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, cast

from rageval_desktop.cli.base import EXIT_FAILED, EXIT_OK, Command, UsageError, _Parser, open_project, say

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project


def add_golden(command: Command) -> None:
    """The arguments of `rageval golden` (its handler follows)."""
    p = command("golden", cmd_golden, "the golden set as code: versions, diffs, exports, dedupe, balance, promote")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("version", help="name a snapshot of the golden set")
    q.add_argument("project")
    q.add_argument("name")
    q.add_argument("--note", help="a line kept with the version (what changed, why)")
    q = acts.add_parser("versions", help="list the snapshots")
    q.add_argument("project")
    q = acts.add_parser("diff", help="rows added, removed and changed between two versions ('current' = now)")
    q.add_argument("project")
    q.add_argument("old", help="the earlier version's name")
    q.add_argument("new", nargs="?", default="current", help="the later version's name (default: current, the set now)")
    q = acts.add_parser("export", help="write a version to .jsonl or .csv (re-import with `import golden`)")
    q.add_argument("project")
    q.add_argument("version", help="a version name or 'current'")
    q.add_argument("--out", required=True, help="the file to write: .jsonl or .csv")
    q = acts.add_parser("dedupe", help="near-duplicate questions (MiniLM + FAISS)")
    q.add_argument("project")
    q.add_argument("--threshold", type=float, default=0.9)
    q.add_argument("--new", action="store_true",
                   help="only the imported rows not yet checked, against the whole set (costs what the new rows "
                        "cost, not the set)")
    q.add_argument("--embeddings-url", metavar="URL",
                   help="embed on a server that speaks /v1/embeddings (TEI, vLLM, Ollama, OpenAI) instead of the "
                        "bundled MiniLM; with --model")
    q.add_argument("--model", help="the embedding model: the server's model name with --embeddings-url")
    q.add_argument("--api-key-env", metavar="VAR", help="the environment variable holding the endpoint's API key")
    q = acts.add_parser("balance", help="rows per slice against targets; share from production failures")
    q.add_argument("project")
    q = acts.add_parser("target", help="set how many approved rows a slice should have (or add a slice)")
    q.add_argument("project")
    q.add_argument("--slice", required=True)
    q.add_argument("--rows", type=int, required=True, help="how many approved rows the slice should have")
    q = acts.add_parser("promote", help="add a failing run row to the golden set as a draft")
    q.add_argument("project")
    q.add_argument("--row-id", type=int, required=True, help="the failing run row (rageval failures lists their ids)")
    q.add_argument("--slice", required=True)
    q.add_argument("--reason")
    for q in acts.choices.values():
        q.add_argument("--json", action="store_true")


def _promote(project: Project, args: argparse.Namespace) -> tuple[dict[str, object], str]:
    """rageval golden promote: an operation of core's — `rageval undo` (the app's Ctrl+Z) retires the draft it made."""
    from rageval_desktop.core import ops

    data = cast("dict[str, object]", ops.run(project, ops.PromoteFailure(
        args.row_id, args.slice, args.reason), initiator="cli").value)
    return data, (f"added draft golden row {data['id']} ({args.slice}) from a production failure: "
                  f"{data['question']!r}; add its gold answer and chunks, then approve it")


def cmd_golden(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden import edits, versions

    # versions, diff, export and balance only read: the file is opened read-only (never written, never migrated)
    with open_project(args.project, read_only=args.action in ("versions", "diff", "export", "balance")) as project:
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
        else:
            data, text = _promote(project, args)
    say(args, data, text)
    return EXIT_OK


def add_corpus(command: Command) -> None:
    """The arguments of `rageval corpus` (its handler follows)."""
    p = command("corpus", cmd_corpus, "import a folder of .txt/.md/.rst/.pdf as chunks")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("import")
    q.add_argument("project")
    q.add_argument("dir", help="the folder whose .txt, .md, .rst and .pdf files become chunks")
    q.add_argument("--chunk-size", type=int, default=200, help="tokens per chunk (default 200)")
    q.add_argument("--overlap", type=int, default=40, help="tokens shared by neighbouring chunks (default 40)")
    q.add_argument("--json", action="store_true")


def cmd_corpus(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden.corpus import import_folder

    with open_project(args.project) as project:
        data = import_folder(project, args.dir, size=args.chunk_size, overlap=args.overlap)
    say(args, data, f"{data['files']} files -> {data['chunks']} chunks ({data['new_chunks']} new), "
                       f"{data['chunk_size']} tokens with {data['overlap']} overlap")
    return EXIT_OK


def add_synth(command: Command) -> None:
    """The arguments of `rageval synth` (its handler follows)."""
    p = command("synth", cmd_synth, "generate draft golden rows from corpus chunks, filtered by critique agents")
    p.add_argument("project")
    p.add_argument("--n", type=int, required=True, help="chunks to sample")
    p.add_argument("--judge", required=True, help="an LLM judge whose endpoint and model write and critique")
    p.add_argument("--style", choices=["factoid", "snippets"], default="factoid",
                   help="questions a person would ask (factoid, default) or search-box snippets")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slice", help="slice tag of the drafts")
    for name in ("groundedness", "relevance", "standalone"):
        p.add_argument(f"--min-{name}", type=float, default=4.0, help=f"keep when {name} >= this (default 4)")
    p.add_argument("--json", action="store_true")


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
    if stats.usage_note():
        text += f"\nnote: {stats.usage_note()}"
    say(args, stats.as_dict(), text)
    return EXIT_FAILED if stats.stopped == "fatal" else EXIT_OK


def add_lab(command: Command) -> None:
    """The arguments of `rageval lab` (its handler follows)."""
    p = command("lab", cmd_lab, "retrieval lab: recall per chunk size and embedding model, per slice")
    p.add_argument("project")
    p.add_argument("--chunk-sizes", default="200,500", help="token counts, e.g. 200,500")
    p.add_argument("--overlap", type=float, default=0.2, help="share of a chunk repeated in the next (default 0.2)")
    p.add_argument("--model", action="append", help="embedding model (default: the bundled all-MiniLM-L6-v2)")
    p.add_argument("--json", action="store_true")


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
    say(args, data, "\n".join(lines))
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
