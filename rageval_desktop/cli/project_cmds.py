"""Project files: create, import, summarise, demo, back up."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rageval_desktop import api
from rageval_desktop.cli.base import EXIT_FAILED, EXIT_OK, UsageError, _print, open_project
from rageval_desktop.core.base.errors import RagevalError


def cmd_new(args: argparse.Namespace) -> int:
    path = Path(args.project)
    api.create(path, name=args.name).close()
    _print(args, {"created": str(path)}, f"created {path}")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from rageval_desktop.core import importers

    mapping = importers.parse_mapping(getattr(args, "map", None))
    with api.open(args.project) as project:
        if args.what == "golden":
            report = project.import_golden(args.file, fmt=args.format, mapping=mapping, default_slice=args.slice,
                                           check_duplicates=args.dedupe_check,
                                           allow_clearing=args.allow_clearing)
            if report.fresh_ids and not args.dedupe_check:
                print(f"note: {len(report.fresh_ids)} new question(s) not yet checked for near-duplicates; check "
                      f"them with: rageval golden dedupe {args.project} --new", file=sys.stderr)
        elif args.what == "run":
            report = project.import_run(args.file, args.run, fmt=args.format, mapping=mapping,
                                        replace=args.replace, notes=args.notes, rank_by=args.rank_by)
        else:
            report = importers.import_corpus(project.core, args.file)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if report.unlinked_examples and not args.json:
        print("unlinked, for example: " + " | ".join(report.unlinked_examples), file=sys.stderr)
    _print(args, report.as_dict(), report.summary())
    return EXIT_OK


def cmd_migrate(args: argparse.Namespace) -> int:
    from rageval_desktop.core.base.errors import NeedsMigration
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.schema import SCHEMA_VERSION

    try:
        Project.open(args.project, read_only=True).close()
    except NeedsMigration as exc:
        Project.open(args.project).close()       # opened for writing: a backup, then the migration
        _print(args, {"path": args.project, "from": exc.version, "to": SCHEMA_VERSION, "migrated": True},
               f"migrated {args.project} from schema {exc.version} to {SCHEMA_VERSION} (a backup was taken first: "
               f"rageval backups {args.project} lists it)")
        return EXIT_OK
    _print(args, {"path": args.project, "from": SCHEMA_VERSION, "to": SCHEMA_VERSION, "migrated": False},
           f"{args.project} is already at schema {SCHEMA_VERSION}: nothing to do")
    return EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    from rageval_desktop.core.base.errors import NeedsMigration
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.queries import project_info
    from rageval_desktop.core.store.schema import SCHEMA_VERSION

    try:  # inspecting never writes: not even a migration, a journal-mode change or a sidecar file
        project = Project.open(args.project, read_only=True)
    except NeedsMigration as exc:
        info: dict[str, Any] = {"path": str(args.project), "schema_version": exc.version,
                                "needs_migration_to": SCHEMA_VERSION}
        _print(args, info, f"{args.project}: schema {exc.version}; upgrade it to {SCHEMA_VERSION} with: rageval "
                           f"migrate {args.project} (a backup is taken first; commands that change it migrate it too)")
        return EXIT_OK
    with project:
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
    path = api.write_demo(args.path, force=args.force)
    out: dict[str, Any] = {"created": str(path)}
    text = f"wrote the demo project to {path}"
    if args.files:
        from rageval_desktop.core.demo import write_demo_files

        try:
            files = write_demo_files(args.files)
        except OSError as exc:
            raise UsageError(f"cannot write the demo's files to {args.files}: {exc.strerror or exc}") from None
        out["files"] = [str(f) for f in files]
        text += f", and the files it is made from to {args.files}: " + ", ".join(f.name for f in files)
    _print(args, out, text)
    return EXIT_OK


def cmd_backup(args: argparse.Namespace) -> int:
    with open_project(args.project) as project:
        out = project.backup("manual")
    _print(args, {"backup": str(out)}, f"backup written to {out}")
    return EXIT_OK


def cmd_restore(args: argparse.Namespace) -> int:
    from rageval_desktop.core.store.restore import restore

    report = restore(args.project, args.backup)
    saved = ", ".join(report.saved_current_as) or "nothing (there was no project file)"
    _print(args, report.as_dict(), f"restored {report.project} from {report.restored_from}; the state before "
                                   f"the restore is saved as {saved}")
    return EXIT_OK


def cmd_backups(args: argparse.Namespace) -> int:
    from rageval_desktop.core.store.backup import backup_dir, list_backups

    found: list[dict[str, Any]] = [{"path": str(b), "bytes": b.stat().st_size}
                                   for b in list_backups(Path(args.project))]
    lines = [f"{b['path']}  ({b['bytes'] / 1e6:.1f} MB)" for b in found] or [
        f"no backups in {backup_dir(Path(args.project))}"]
    _print(args, found, "\n".join(lines))
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Every page and every index of the file (integrity_check; `--quick`: quick_check), read-only: exit 0 when
    sound, 1 when damaged (with how to restore)."""
    from rageval_desktop.core.store import integrity
    from rageval_desktop.core.store.files import restore_hint
    from rageval_desktop.core.store.project import Project

    report = integrity.check(args.project, full=not args.quick)
    if not report.ok:
        if args.json:
            _print(args, report.as_dict(), "")
        print(f"error: {integrity.damaged_message(report, restore_hint(Path(args.project)))}", file=sys.stderr)
        return EXIT_FAILED
    try:  # a passing check clears the marks an unclean shutdown left (the next open need not check again)
        with Project.open(args.project, check="defer", migrate=False) as project:
            integrity.record(project, report)
    except RagevalError:
        pass  # an older schema or a read-only file: the report stands
    _print(args, report.as_dict(), report.summary())
    return EXIT_OK


def cmd_undo(args: argparse.Namespace) -> int:
    """The app's undo list from the command line: what will be undone is shown first; --yes (or a y at a
    terminal) undoes it, logged as an undo (the app's Redo can take it back)."""
    from rageval_desktop.core import ops
    from rageval_desktop.core.store import oplog

    with open_project(args.project) as project:
        if args.list:
            found = oplog.recent(project, args.limit)
            lines = [ops.describe(o) + (f" (undone by {o.undone_by})" if o.undone_at else "") for o in found]
            _print(args, [o.as_dict() for o in found], "\n".join(lines) or "no operations yet")
            return EXIT_OK
        op = oplog.get(project, args.operation) if args.operation else oplog.last_undoable(project)
        if op is None:
            raise UsageError("nothing to undo" if not args.operation else f"no operation {args.operation}")
        print(f"will undo {ops.describe(op)}", file=sys.stderr)
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError("add --yes to undo it (not at a terminal, so not asked)")
            if input("Undo it? [y/N] ").strip().lower() not in ("y", "yes"):
                print("nothing undone", file=sys.stderr)
                return EXIT_OK
        result = ops.undo(project, op.id, initiator="cli")
    _print(args, result.as_dict(), f"undone: {op.label} (operation {result.operation})")
    return EXIT_OK
