"""Gold-free evaluation: local models (HHEM) and nugget lists."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rageval_desktop.cli.base import EXIT_OK, UsageError, _print, open_project


def cmd_models(args: argparse.Namespace) -> int:
    from rageval_desktop.core.judges import hhem

    if args.action == "add":
        entry = hhem.register(args.path, args.foundation)
        _print(args, {"hhem": entry}, f"registered HHEM: {entry['model']} (foundation {entry['foundation']}); "
                                      f"add a judge with: rageval judges add PROJECT --name hhem --metric "
                                      f"hallucination --kind hhem")
    elif args.action == "remove":
        removed = hhem.unregister()
        _print(args, {"removed": removed}, "forgot the HHEM model (its files are untouched)" if removed else
               "no HHEM model was registered")
    else:
        found = hhem.registered()
        _print(args, found, "\n".join(f"{name:<8} {e.get('model')} (foundation {e.get('foundation')})"
                                      for name, e in found.items()) or "no local model registered")
    return EXIT_OK


def _describe(listed: dict[str, Any]) -> str:
    where = ("curated (every run)" if listed["scope"] == "golden" else
             f"generated for run {listed['run']}" + (f" by {listed['judge']}" if listed.get("judge") else ""))
    head = f"{where}: {listed['status']}, revision {listed['revision']}"
    if listed.get("author"):
        head += f", by {listed['author']}"
    return head + "\n" + "".join(f"  {i}. [{n['importance']}] {n['text']}\n"
                                 for i, n in enumerate(listed["nuggets"], start=1))


def cmd_nuggets(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden import nuggets

    if args.action == "show":
        with open_project(args.project, read_only=True) as project:
            key, question = nuggets.find_question(project, args.question)
            lists = nuggets.lists_for(project, key)
        text = f"{question}\n" + ("\n".join(_describe(li) for li in lists) if lists else
                                  "no nugget list yet: run a nugget judge, or write one with rageval nuggets edit")
        _print(args, {"question_key": key, "question": question, "lists": lists}, text.rstrip("\n"))
        return EXIT_OK
    with open_project(args.project) as project:
        if args.action == "edit":
            if args.file == "-":
                text = sys.stdin.read()
            else:
                path = Path(args.file)
                if not path.is_file():
                    raise UsageError(f"{args.file}: no such file")
                text = path.read_text(encoding="utf-8")
            listed = nuggets.edit(project, args.question, text, reason=args.reason)
            verb = "saved the curated list"
        else:
            listed = nuggets.approve(project, args.question, run=args.run, reason=args.reason)
            verb = "approved"
    _print(args, listed, f"{verb} ({len(listed['nuggets'])} nuggets, revision {listed['revision']}); every "
                         f"later nugget judgment of this question uses it\n" + _describe({**listed, "run": None}))
    return EXIT_OK
