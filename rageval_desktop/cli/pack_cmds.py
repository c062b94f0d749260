"""Review packs: export a sample to reviewers as files, import their ratings back."""

from __future__ import annotations

import argparse

from rageval_desktop.cli.base import EXIT_OK, _open, _print


def cmd_pack(args: argparse.Namespace) -> int:
    from rageval_desktop.core.review import packs

    if args.action == "export":
        with _open(args.project) as project:
            made = packs.export_packs(project, args.sample, args.reviewer, args.out, args.overlap)
        lines = [f"{m.reviewer:<16} {m.targets:>4} to rate in {m.rows:>4} rows  {m.path}" for m in made]
        _print(args, [m.as_dict() for m in made], "\n".join(lines) + "\nsend each reviewer their file; import "
               "it back with: rageval pack import PROJECT FILE")
    else:
        results = []
        with _open(args.project) as project:
            for path in args.files:
                results.append(packs.import_pack(project, path))
        lines = [f"{r['file']}: {r['added']} rating(s) added from {r['reviewer']}"
                 + (f", {r['already_imported']} already imported" if r["already_imported"] else "")
                 + (f", {r['withdrawn_since']} withdrawn since" if r["withdrawn_since"] else "") for r in results]
        _print(args, results if len(results) > 1 else results[0], "\n".join(lines))
    return EXIT_OK
