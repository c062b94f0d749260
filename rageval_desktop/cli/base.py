"""What every command shares: exit codes, the usage error, printing, opening a project.

Exit codes: 0 success; 1 an operation failed (bad input, refused file) — or, for a command that gives a verdict
(gate, decisions --verify, check), the verdict is negative (a regression shown, a record that does not hold,
damage found); 2 usage error or an impossible request (a run, judge, sample or job that does not exist); 3 only
`gate`: not decision-grade; 4 a verdict's command failed before reaching its verdict (so its 1 never means "the
tool failed").
The first line on stderr always says what went wrong in plain words.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.text import inert_text, json_inert

if TYPE_CHECKING:
    from rageval_desktop import api
    from rageval_desktop.core.store.project import Project as CoreProject

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_TOOL_FAILED = 4          # a verdict's command (gate, decisions, check) that could not reach its verdict


Command = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]
"""What `build_parser` hands each command's `add_*` function (kept beside the command's handler): `command(name,
handler, help)` makes the subparser `rageval NAME`, to which the function adds its arguments."""


# What an argument means wherever a command takes it without saying more (`describe`): one wording everywhere.
COMMON_HELP = {
    "project": "the project file (.rageval)",
    "json": "print the result as JSON, at full precision (for scripts; the text is rounded for reading)",
    "run": "the run's name (rageval info lists them)",
    "baseline": "the run compared against, by name",
    "candidate": "the run that would replace it, by name",
    "judge": "the judge's name (rageval judges list)",
    "metric": "the metric (rageval judges add --help lists them)",
    "slice": "a slice tag (easy, edge, adversarial, ...)",
    "seed": "the random seed: the same seed draws the same rows (default %(default)s)",
    "reason": "why, in words kept with the change",
    "name": "its name",
    "id": "its id",
    "model": "the model's name at the endpoint",
    "temperature": "sampling temperature of each call",
    "max_tokens": "the most tokens a reply may have",
    "concurrency": "calls in flight at once",
    "timeout": "seconds a call may take",
    "rpm": "requests per minute, at most",
    "threshold": "the agreement a judge must reach to be kept",
    "failure_class": "retrieval, reranker or generation",
}

EXIT_CODES = """exit codes:
  0  done
  1  it failed: bad input, a refused file (the first line on stderr says why)
  2  usage error, or a request that cannot be made (a run, judge, sample or job that does not exist)"""


class HelpFormatter(argparse.HelpFormatter):
    """Descriptions wrapped to the terminal; an epilog's lines (examples, exit codes) kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def examples(*lines: str) -> str:
    """An epilog's examples: `rageval ...` lines, each with an optional '   # comment'."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def describe(parser: argparse.ArgumentParser) -> None:
    """Every argument of every command says what it is: those without a help of their own get COMMON_HELP's."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                describe(sub)
        elif action.help is None and action.dest in COMMON_HELP:
            action.help = COMMON_HELP[action.dest]


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    entered: list[_Parser] = []     # the parsers one parse went through, outermost first (a command's is last)

    def error(self, message: str) -> NoReturn:  # plain words first, the usage after
        sys.stderr.write(f"error: {message}\n")
        self.print_usage(sys.stderr)
        raise SystemExit(EXIT_USAGE)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        _Parser.entered.append(self)
        return super().parse_known_args(args, namespace)

    def _check_value(self, action: argparse.Action, value: object) -> None:
        """A value that is not one of the choices names the choice it most likely meant, first (a command spelt
        `metric`: did you mean 'metrics'?), before the list of every choice."""
        import difflib

        choices = action.choices
        if choices is not None and value not in choices:
            near = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.6)
            if near:
                raise argparse.ArgumentError(action, f"invalid choice: {value!r} (did you mean {near[0]!r}?)")
        super()._check_value(action, value)


def parse_command(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`parser.parse_args(argv)`, except that an option the command does not take is refused by the command's own
    parser — its usage, not the list of every command — with the option it most likely meant."""
    import difflib

    _Parser.entered = []
    args, extras = parser.parse_known_args(argv)
    if extras:
        command = _Parser.entered[-1] if _Parser.entered else parser
        options = [o for action in command._actions for o in action.option_strings if o.startswith("--")]
        near = [m for e in extras if e.startswith("--")
                for m in difflib.get_close_matches(e.split("=", 1)[0], options, n=1, cutoff=0.6)]
        command.error(f"unrecognized arguments: {' '.join(extras)}"
                      + (f" (did you mean {', '.join(dict.fromkeys(near))}?)" if near else ""))
    return args


def say(args: argparse.Namespace, data: Any, text: str) -> None:
    """--json: the data at full fidelity; else the text, with bidirectional controls from data shown as code points
    (an RTL override in a run's name would reorder the line in a terminal or a CI log)."""

    def not_json(value: object) -> object:
        # every value we read from a project is text or a number: bytes are what a flipped bit in a record's header
        # makes of a text (nothing is printed: no half-written JSON)
        if isinstance(value, (bytes, bytearray, memoryview)):
            from rageval_desktop.core.store.integrity import bytes_damage

            raise RagevalError(bytes_damage(getattr(args, "project", None) or "the project"))
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    print(json_inert(json.dumps(data, indent=2, ensure_ascii=False, default=not_json)) if getattr(args, "json", False)
          else inert_text(text))


class InertStream:
    """A text stream that shows bidirectional and control characters as code points (core.text.inert_text): every
    message the CLI prints — results, warnings, errors — may quote names and text from data."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if text.startswith("\r"):       # a progress line's own return to the line's start: kept, the rest inert
            return int(self._stream.write("\r" + inert_text(text[1:])))
        return int(self._stream.write(inert_text(text)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def open_project(path: str, *, read_only: bool = False) -> CoreProject:
    """Core's project, opened as the API opens it (`api.open`): commands that only read open read-only (nothing
    written, no sidecar files made, never migrated: an older file is read through a migrated temporary copy, and
    the command says so)."""
    return open_api(path, read_only=read_only).core


class Opened(Protocol):
    @property
    def opening_notes(self) -> list[str]: ...


def open_api(path: str, *, read_only: bool = False) -> api.Project:
    """`api.open`, saying on stderr when an older file is read through a migrated copy (the file is unchanged)."""
    from rageval_desktop import api

    project = api.open(path, read_only=read_only)
    project.initiator = "cli"
    if project.read_copy_of is not None:
        print(f"note: {path} is schema {project.core.copy_from_version}; read through a migrated temporary copy, "
              f"the file is unchanged (upgrade it with: rageval migrate {path})", file=sys.stderr)
    say_opening_notes(project)
    return project


def say_opening_notes(project: Opened) -> None:
    """What opening the project did (or found) that the person running the command must hear, on stderr."""
    for note in project.opening_notes:
        print(f"note: {note}", file=sys.stderr)


def cell(value: Any, places: int = 2) -> str:
    """A number for people: `places` decimals (more for small non-zero values), the same for negatives."""
    if value is None:
        return "—"
    if isinstance(value, float):
        if value != value:
            return "—"
        return f"{value:.6f}" if 0 < abs(value) < 0.01 and places < 6 else f"{value:.{places}f}"
    return str(value)
