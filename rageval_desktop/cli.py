"""`rageval`: the headless twin of the app. A thin shell: parse arguments, call core, print.

Exit codes: 0 success; 1 an operation failed (bad input, refused file); 2 usage error.
The first line on stderr always says what went wrong in plain words.
"""

from __future__ import annotations

import argparse
import json
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


if __name__ == "__main__":
    raise SystemExit(main())
