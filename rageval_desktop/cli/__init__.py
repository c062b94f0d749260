"""`rageval`: the headless twin of the app. A thin shell: parse arguments, call core, print.

Exit codes: 0 success; 1 an operation failed (bad input, refused file) — for a command that gives a verdict (gate,
decisions --verify, check), the verdict is negative; 2 usage error or an impossible request (a run, judge, sample or
job that does not exist); 3 only `gate`: not decision-grade; 4 a verdict's command that failed before its verdict.
The first line on stderr always says what went wrong in plain words.
"""

from __future__ import annotations

import argparse
import functools
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence

from rageval_desktop import __version__, api
from rageval_desktop.cli import (
    checks_cmds,
    gate_cmds,
    gold_free_cmds,
    golden_cmds,
    judging_cmds,
    metrics_cmds,
    project_cmds,
    review_cmds,
    team_cmds,
)
from rageval_desktop.cli.base import (
    EXIT_CODES,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TOOL_FAILED,
    EXIT_USAGE,
    HelpFormatter,
    InertStream,
    UsageError,
    _Parser,
    describe,
    parse_command,
)
from rageval_desktop.core.base.errors import NotFound, RagevalError, crash_log
from rageval_desktop.core.base.text import inert_text

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "build_parser", "command_paths", "main"]


ADDERS = [   # the commands in the order --help lists them; each module keeps a command's arguments beside its handler
    project_cmds.add_new,
    project_cmds.add_import,
    project_cmds.add_info,
    project_cmds.add_check,
    project_cmds.add_undo,
    project_cmds.add_demo,
    judging_cmds.add_judges,
    gold_free_cmds.add_models,
    gold_free_cmds.add_nuggets,
    judging_cmds.add_judge,
    judging_cmds.add_prices,
    judging_cmds.add_jobs,
    metrics_cmds.add_metrics,
    metrics_cmds.add_compare,
    gate_cmds.add_gate,
    gate_cmds.add_gate_plan,
    gate_cmds.add_decisions,
    gate_cmds.add_keys,
    metrics_cmds.add_failures,
    metrics_cmds.add_report,
    review_cmds.add_sample,
    review_cmds.add_ratings,
    team_cmds.add_pack,
    team_cmds.add_team,
    team_cmds.add_reviewers,
    judging_cmds.add_align,
    team_cmds.add_adjudicate,
    review_cmds.add_guidelines,
    review_cmds.add_agreement,
    review_cmds.add_transport,
    review_cmds.add_selective,
    review_cmds.add_pairs,
    checks_cmds.add_stability_probe,
    review_cmds.add_retire_reinstate,
    review_cmds.add_settings,
    golden_cmds.add_golden,
    golden_cmds.add_synth,
    golden_cmds.add_lab,
    golden_cmds.add_corpus,
    project_cmds.add_migrate,
    project_cmds.add_backup,
    project_cmds.add_backups,
    project_cmds.add_restore,
]


# --- parser --------------------------------------------------------------------------------------
def _translations_once() -> None:
    """argparse asks gettext for the same three strings for each of the parser's ~70 subparsers, and gettext looks
    for translation files on disk at every ask (880 stat calls, 10 ms of every command): asked once each. The answers
    cannot change while a command runs (nothing here binds another text domain)."""
    if not hasattr(argparse._, "cache_info"):  # type: ignore[attr-defined]
        argparse._ = functools.lru_cache(maxsize=None)(argparse._)  # type: ignore[attr-defined]


def build_parser() -> argparse.ArgumentParser:
    _translations_once()
    parser = _Parser(prog="rageval", description="Headless RAGEval Desktop: evaluate RAG runs in a project file.")
    parser.add_argument("--version", action="version", version=f"rageval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, func: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        # argparse %-formats help strings (not descriptions): a bare % ("95% CIs") would crash --help
        p = sub.add_parser(name, help=help_.replace("%", "%%"), description=help_, formatter_class=HelpFormatter)
        p.set_defaults(func=func)
        return p

    for add in ADDERS:
        add(command)
    describe(parser)
    for p in sub.choices.values():      # each command's help ends with its exit codes (a verdict's are its own)
        if p.get_default("verdict") is None and (not p.epilog or "exit codes" not in p.epilog):
            p.epilog = ((p.epilog + "\n\n") if p.epilog else "") + EXIT_CODES
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:   # the process's own command line: what a large import makes lives until it exits
        from rageval_desktop.core.base.imports import freeze_after

        freeze_after()
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(out), InertStream(err)    # names from data cannot reorder what we print
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["gate", "plan"]:      # `rageval gate plan`: project files end in .rageval, so never "plan"
        argv[:2] = ["gate-plan"]
    args = parse_command(parser, argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("error: interrupted; nothing was half-written (each operation is one transaction)", file=sys.stderr)
        return _failed(args)


def _failed(args: argparse.Namespace) -> int:
    """The code of a command that could not finish: a verdict's command (gate, decisions, check) has its own, so
    that no verdict's code ever doubles as "the tool failed"."""
    return EXIT_TOOL_FAILED if getattr(args, "verdict", False) else EXIT_FAILED


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args.func(args)         # each command's handler says its exit code
        return code
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except api.UsageError as exc:  # an impossible request, found by the API the commands call
        print(f"error: {inert_text(exc.for_cli())}", file=sys.stderr)
        return EXIT_USAGE
    except NotFound as exc:       # a run, judge, sample or job that does not exist: a request that cannot be made
        print(f"error: {inert_text(exc.for_cli())}", file=sys.stderr)
        return EXIT_USAGE
    except RagevalError as exc:
        print(f"error: {inert_text(exc.for_cli())}", file=sys.stderr)
        return _failed(args)
    except BrokenPipeError:  # `rageval ... | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK
    except sqlite3.Error as exc:  # a write lane error is translated in core; this is a read or an open
        from rageval_desktop.core.store import integrity

        project = getattr(args, "project", None)
        damage = integrity.read_damage(project, exc) if project else None
        print(f"error: {inert_text(damage or f'the project could not be read ({exc})')}", file=sys.stderr)
        return _failed(args)
    except MemoryError:
        print("error: out of memory; the input is too large for this machine", file=sys.stderr)
        return _failed(args)
    except OSError as exc:
        print(f"error: {exc.strerror or exc}{f' ({exc.filename})' if exc.filename else ''}", file=sys.stderr)
        return _failed(args)
    except Exception as exc:  # a bug of ours: one plain line, the traceback in a file, never on the terminal
        from rageval_desktop.core.store import integrity

        project = getattr(args, "project", None)        # ... unless the file's values break its rules: damage
        if isinstance(project, str) and project.endswith(".rageval") and (damage := integrity.damage_behind(project)):
            print(f"error: {damage}", file=sys.stderr)
            return _failed(args)
        log = crash_log(exc)
        print(f"error: internal error ({type(exc).__name__}: {str(exc)[:200]}); please report it with {log}",
              file=sys.stderr)
        return _failed(args)


if __name__ == "__main__":
    raise SystemExit(main())


def command_paths(parser: argparse.ArgumentParser | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command, as the words that name it (("judges", "add"), ...): what `--help` covers."""
    parser = parser or build_parser()
    out = [prefix]
    for action in parser._actions:   # argparse lists its sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += command_paths(sub, (*prefix, name))
    return out
