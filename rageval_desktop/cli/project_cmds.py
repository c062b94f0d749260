"""Project files: create, import, summarise, demo, back up."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
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
    say_opening_notes,
)

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project as CoreProject


def add_new(command: Command) -> None:
    """The arguments of `rageval new` (its handler follows)."""
    p = command("new", cmd_new, "create an empty project file")
    p.epilog = examples('rageval new eval.rageval --name "Support bot"',
                        'rageval import golden eval.rageval golden.csv   # then its golden set')
    p.add_argument("project", help="path of the new .rageval file")
    p.add_argument("--name", help="display name (default: the file name)")


def cmd_new(args: argparse.Namespace) -> int:
    path = Path(args.project)
    api.create(path, name=args.name).close()
    say(args, {"created": str(path)}, f"created {path}")
    return EXIT_OK


def add_import(command: Command) -> None:
    """The arguments of `rageval import` (its handler follows)."""
    p = command("import", cmd_import, "import a golden set, a run or corpus chunks (all-or-nothing)")
    p.epilog = examples('rageval import golden eval.rageval golden.csv --slice easy',
                        'rageval import run eval.rageval out.jsonl --run v2 --map question=query,answer=response',
                        'rageval import corpus eval.rageval chunks.jsonl')
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
            q.add_argument("--dedupe-check", action="store_true",
                           help="after the rows are saved, check the new questions for near-duplicates in the "
                                "golden set (MiniLM; loads the model, ~5 s). Default: say how many are unchecked "
                                "(rageval golden dedupe PROJECT --new checks them later)")
            q.add_argument("--no-dedupe-check", action="store_true", help=argparse.SUPPRESS)  # the default now
            q.add_argument("--allow-clearing", action="store_true",
                           help="let empty cells clear gold chunk ids, slices or gold answers that rows have (refused "
                                "by default; a column left out of the file always keeps what is stored)")
        if kind == "run":
            q.add_argument("--run", required=True, help="name of the run, e.g. v2")
            q.add_argument("--replace", action="store_true", help="replace a run of the same name (backup first)")
            q.add_argument("--notes", help="free text kept with the run")
            q.add_argument("--rank-by", choices=["position", "score"], default="position",
                           help="rank of a retrieved passage: its position in the file (default), or its score, "
                                "highest first")


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
    say(args, report.as_dict(), report.summary())
    return EXIT_OK


def add_migrate(command: Command) -> None:
    """The arguments of `rageval migrate` (its handler follows)."""
    p = command("migrate", cmd_migrate, "upgrade a project made by an earlier release to this release's schema, in "
                                        "place, after a backup (commands that only read never migrate: they read "
                                        "an older file through a migrated temporary copy), and keep the values of "
                                        "large runs that are not kept (rageval info names them)")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")


def cmd_migrate(args: argparse.Namespace) -> int:
    from rageval_desktop.core.base.errors import NeedsMigration
    from rageval_desktop.core.metrics import values
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.schema import SCHEMA_VERSION

    try:
        with Project.open(args.project, read_only=True) as looked:
            due = values.not_kept(looked.reader())
    except NeedsMigration as exc:
        with Project.open(args.project) as project:      # opened for writing: a backup, then the migration
            say_opening_notes(project)
            kept = _keep(project)
        say(args, {"path": args.project, "from": exc.version, "to": SCHEMA_VERSION, "migrated": True,
                   "values_kept_for": kept},
            f"migrated {args.project} from schema {exc.version} to {SCHEMA_VERSION} (a backup was taken first: "
            f"rageval backups {args.project} lists it)" + _kept_words(kept))
        return EXIT_OK
    kept = []
    if due:
        with Project.open(args.project) as project:
            kept = _keep(project)
    say(args, {"path": args.project, "from": SCHEMA_VERSION, "to": SCHEMA_VERSION, "migrated": False,
               "values_kept_for": kept},
        f"{args.project} is already at schema {SCHEMA_VERSION}" + (_kept_words(kept) if kept else ": nothing to do"))
    return EXIT_OK


def _keep(project: CoreProject) -> list[str]:
    """Keep the values of the large runs that lack them (core.metrics.rowdata.keep_missing_values): their names."""
    from rageval_desktop.core.metrics import values
    from rageval_desktop.core.metrics.rowdata import keep_missing_values

    due = values.not_kept(project.reader())
    kept = keep_missing_values(project)
    return [name for rid, name, _ in due if rid in kept]


def _kept_words(kept: list[str]) -> str:
    return (f"; kept the values of {len(kept)} large run(s) for quick reads ({', '.join(kept)}): metrics and compare "
            "no longer read their tables") if kept else ""


def add_info(command: Command) -> None:
    """The arguments of `rageval info` (its handler follows)."""
    p = command("info", cmd_info, "summarise a project")
    p.epilog = examples('rageval info eval.rageval', 'rageval info eval.rageval --json   # full precision, for scripts')
    p.add_argument("project")
    p.add_argument("--json", action="store_true")


def cmd_info(args: argparse.Namespace) -> int:
    from rageval_desktop.core.base.errors import NeedsMigration
    from rageval_desktop.core.metrics import values
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.queries import project_info
    from rageval_desktop.core.store.schema import SCHEMA_VERSION

    try:  # inspecting never writes: not even a migration, a journal-mode change or a sidecar file
        project = Project.open(args.project, read_only=True)
    except NeedsMigration as exc:
        info: dict[str, Any] = {"path": str(args.project), "schema_version": exc.version,
                                "needs_migration_to": SCHEMA_VERSION}
        say(args, info, f"{args.project}: schema {exc.version}; upgrade it to {SCHEMA_VERSION} with: rageval "
                           f"migrate {args.project} (a backup is taken first; commands that change it migrate it too)")
        return EXIT_OK
    from rageval_desktop.core.review.sampling import list_samples

    with project:
        info = project_info(project)
        info["samples"] = list_samples(project)
        info["values_not_kept"] = [name for _, name, _ in values.not_kept(project.reader())]
    runs = ", ".join(f"{r['name']} ({r['rows']} row{'' if r['rows'] == 1 else 's'})" for r in info["runs"]) or "none"
    slices = ", ".join(f"{k} {v}" for k, v in info["slices"].items())
    text = (f"{info['name']} — {info['path']} (schema {info['schema_version']})\n"
            f"golden rows: {info['golden_rows']}{f' ({slices})' if slices else ''}\n"
            f"corpus chunks: {info['corpus_chunks']}\n"
            f"runs: {runs}\njudges: {info['judges']}, judgments: {info['judgments']}, "
            f"human ratings: {info['human_ratings']}")
    if info["values_not_kept"]:
        text += (f"\nvalues not kept: {', '.join(info['values_not_kept'])} — metrics and compare read these large "
                 f"runs' tables on every call (several times the CPU); keep them with: rageval migrate {args.project}")
    if info["samples"]:      # their ids: pack export --sample, ratings import --sample
        text += "\nreview samples: " + ", ".join(f"#{s['id']} {s['run']} {s['metric']} ({s['rated']}/{s['rows']} rated)"
                                                  for s in info["samples"])
    say(args, info, text)
    return EXIT_OK


def add_demo(command: Command) -> None:
    """The arguments of `rageval demo` (its handler follows)."""
    p = command("demo", cmd_demo, "write the bundled demo project")
    p.epilog = examples('rageval demo demo.rageval',
                        'rageval demo demo.rageval --files demo-files/   # and the files it is made from')
    p.add_argument("path", help="file to create (or a folder, to create demo.rageval in it)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.add_argument("--files", metavar="DIR", help="also write the files the demo is made from to DIR: chunks.jsonl, "
                                                 "golden.csv, outputs-v1.jsonl, outputs-v2.jsonl, ratings.csv, "
                                                 "production.jsonl, open-rag-eval.csv")
    p.add_argument("--json", action="store_true")


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
    say(args, out, text)
    return EXIT_OK


def add_backup(command: Command) -> None:
    """The arguments of `rageval backup` (its handler follows)."""
    p = command("backup", cmd_backup, "write a backup of a project now (kept beside it, rotated)")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")


def cmd_backup(args: argparse.Namespace) -> int:
    with open_project(args.project) as project:
        out = project.backup("manual")
    say(args, {"backup": str(out)}, f"backup written to {out}")
    return EXIT_OK


def add_restore(command: Command) -> None:
    """The arguments of `rageval restore` (its handler follows)."""
    p = command("restore", cmd_restore, "restore a project from a backup (the current state is backed up first)")
    p.add_argument("project")
    p.add_argument("backup", help="a backup file, e.g. from `rageval backups PROJECT`")
    p.add_argument("--json", action="store_true")


def cmd_restore(args: argparse.Namespace) -> int:
    from rageval_desktop.core.store.restore import restore

    report = restore(args.project, args.backup)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    saved = ", ".join(report.saved_current_as) or "nothing (there was no project file)"
    say(args, report.as_dict(), f"restored {report.project} from {report.restored_from}; the state before "
                                   f"the restore is saved as {saved}")
    return EXIT_OK


def add_backups(command: Command) -> None:
    """The arguments of `rageval backups` (its handler follows)."""
    p = command("backups", cmd_backups, "list a project's backups (newest last)")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")


def cmd_backups(args: argparse.Namespace) -> int:
    from rageval_desktop.core.store.backup import backup_dir, list_backups

    found: list[dict[str, Any]] = [{"path": str(b), "bytes": b.stat().st_size}
                                   for b in list_backups(Path(args.project))]
    lines = [f"{b['path']}  ({b['bytes'] / 1e6:.1f} MB)" for b in found] or [
        f"no backups in {backup_dir(Path(args.project))}"]
    say(args, found, "\n".join(lines))
    return EXIT_OK


def add_check(command: Command) -> None:
    """The arguments of `rageval check` (its handler follows)."""
    p = command("check", cmd_check, "read every page of a project file for damage (opening checks only the "
                                    "header and schema; after an unclean shutdown the next open checks all): exit 0 "
                                    "sound, 1 damaged, 4 the check itself could not run")
    p.set_defaults(verdict=True)
    p.add_argument("project")
    p.add_argument("--quick", action="store_true",
                   help="quick_check: every page's structure, not every index against its table nor every row "
                        "against its table's rules (faster on large files; the default is integrity_check with the "
                        "rules — a stored setting still JSON, a rank still ≥ 1 — which found damage quick_check "
                        "called sound)")
    p.add_argument("--full", action="store_true", help=argparse.SUPPRESS)   # the default since 0.3; still accepted
    p.add_argument("--json", action="store_true")


def cmd_check(args: argparse.Namespace) -> int:
    """Every page and every index of the file, and every row against its table's rules (integrity_check; `--quick`:
    quick_check), read-only: exit 0 when sound, 1 when damaged (with how to restore)."""
    from rageval_desktop.core.store import integrity
    from rageval_desktop.core.store.files import restore_hint

    report = integrity.check(args.project, full=not args.quick)
    if not report.ok:
        if args.json:
            say(args, report.as_dict(), "")
        print(f"error: {integrity.damaged_message(report, restore_hint(Path(args.project)))}", file=sys.stderr)
        return EXIT_FAILED
    # a check reads and writes nothing (issue 74: it recorded its pass in the file, 94 bytes a git checkout showed
    # as changed); the next open for writing after an unclean shutdown checks again, which is only slower
    say(args, report.as_dict(), report.summary())
    return EXIT_OK


def add_undo(command: Command) -> None:
    """The arguments of `rageval undo` (its handler follows)."""
    p = command("undo", cmd_undo, "undo the last operation — a golden edit, a judge's edit or status, a rating; the "
                                  "app's undo list")
    p.add_argument("project")
    p.add_argument("--list", action="store_true", help="the recent operations, newest first, and what undid them")
    p.add_argument("--limit", type=int, default=20, help="with --list: how many (default 20)")
    p.add_argument("--operation", type=int, metavar="ID", help="undo this operation (default: the newest in effect)")
    p.add_argument("--yes", action="store_true", help="undo without asking (needed when not at a terminal)")
    p.add_argument("--json", action="store_true")


def cmd_undo(args: argparse.Namespace) -> int:
    """The app's undo list from the command line: what will be undone is shown first; --yes (or a y at a
    terminal) undoes it, logged as an undo (the app's Redo can take it back)."""
    from rageval_desktop.core import ops
    from rageval_desktop.core.importers.common import keep_run_values
    from rageval_desktop.core.store import oplog

    with open_project(args.project) as project:
        if args.list:
            found = oplog.recent(project, args.limit)
            lines = [ops.describe(o) + (f" (undone by {o.undone_by})" if o.undone_at else "") for o in found]
            say(args, [o.as_dict() for o in found], "\n".join(lines) or "no operations yet")
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
        # an undone golden edit takes the linked large runs' kept values away (core.metrics.values): kept again
        for warning in keep_run_values(project):
            print(f"warning: {warning}", file=sys.stderr)
    say(args, result.as_dict(), f"undone: {op.label} (operation {result.operation})")
    return EXIT_OK
