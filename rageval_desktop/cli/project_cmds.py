"""Project files: create, import, summarise, demo, back up."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rageval_desktop.cli.base import EXIT_OK, UsageError, _open, _print


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
                                             default_slice=args.slice, check_duplicates=not args.no_dedupe_check)
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
