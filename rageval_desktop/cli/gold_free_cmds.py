"""Gold-free evaluation: local models (HHEM) and nugget lists."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rageval_desktop.cli.base import EXIT_OK, Command, UsageError, _Parser, open_project, say


def add_models(command: Command) -> None:
    """The arguments of `rageval models` (its handler follows)."""
    p = command("models", cmd_models, "register local models (HHEM) in your user settings")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list", help="the registered local models")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("add", help="register a local model folder")
    q.add_argument("name", choices=["hhem"])
    q.add_argument("path", help="the HHEM-2.1-Open folder (config.json, model.safetensors)")
    q.add_argument("--foundation", help="the flan-t5-base folder (config and tokenizer; default: found beside PATH)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("remove", help="forget a registered model (its files stay)")
    q.add_argument("name", choices=["hhem"])
    q.add_argument("--json", action="store_true")


def cmd_models(args: argparse.Namespace) -> int:
    from rageval_desktop.core.judges import hhem

    if args.action == "add":
        entry = hhem.register(args.path, args.foundation)
        say(args, {"hhem": entry}, f"registered HHEM: {entry['model']} (foundation {entry['foundation']}); "
                                      f"add a judge with: rageval judges add PROJECT --name hhem --metric "
                                      f"hallucination --kind hhem")
    elif args.action == "remove":
        removed = hhem.unregister()
        say(args, {"removed": removed}, "forgot the HHEM model (its files are untouched)" if removed else
               "no HHEM model was registered")
    else:
        found = hhem.registered()
        say(args, found, "\n".join(f"{name:<8} {e.get('model')} (foundation {e.get('foundation')})"
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


def add_nuggets(command: Command) -> None:
    """The arguments of `rageval nuggets` (its handler follows)."""
    p = command("nuggets", cmd_nuggets, "show, edit or approve a question's nugget list (a gold checklist)")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    for action, help_ in (("show", "the question's lists: curated, and generated per run"),
                          ("edit", "write the question's curated list: one nugget per line, 'vital: …' or 'okay: …'"),
                          ("approve", "make a list the question's gold checklist, reused by every later run")):
        q = acts.add_parser(action, help=help_, description=help_)
        q.add_argument("project")
        q.add_argument("--question", required=True, help="a golden row id, a run row's id or query id, or the question")
        if action == "edit":
            q.add_argument("--file", required=True, help="the list as text ('-' reads stdin)")
        if action == "approve":
            q.add_argument("--run", help="approve the list generated for this run (default: the curated list, else "
                                         "the newest generated one)")
        if action != "show":
            q.add_argument("--reason", help="why (kept in the audit log)")
        q.add_argument("--json", action="store_true")


def cmd_nuggets(args: argparse.Namespace) -> int:
    from rageval_desktop.core.golden import nuggets

    if args.action == "show":
        with open_project(args.project, read_only=True) as project:
            key, question = nuggets.find_question(project, args.question)
            lists = nuggets.lists_for(project, key)
        text = f"{question}\n" + ("\n".join(_describe(li) for li in lists) if lists else
                                  "no nugget list yet: run a nugget judge, or write one with rageval nuggets edit")
        say(args, {"question_key": key, "question": question, "lists": lists}, text.rstrip("\n"))
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
    say(args, listed, f"{verb} ({len(listed['nuggets'])} nuggets, revision {listed['revision']}); every "
                         f"later nugget judgment of this question uses it\n" + _describe({**listed, "run": None}))
    return EXIT_OK
