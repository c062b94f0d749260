"""Help that teaches: every argument of every command says what it is; each command's help ends with its exit codes,
the main ones with examples — and every example is a command the parser accepts (`project`, `--run`, `--json`,
`--baseline` and `--candidate` said nothing)."""

from __future__ import annotations

import argparse
import shlex

import pytest

from rageval_desktop.cli import build_parser

MAIN = ("new", "import", "info", "demo", "judge", "metrics", "compare", "failures", "report", "sample", "agreement",
        "gate")


def _walk(parser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))
        else:
            yield path, parser, action


def test_every_argument_says_what_it_is():
    silent = [(" ".join(path), action.option_strings or action.dest) for path, _, action in _walk(build_parser())
              if action.help is None and not isinstance(action, argparse._HelpAction)]
    assert silent == []


def test_each_command_ends_with_its_exit_codes_and_the_main_ones_with_examples():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        epilog = parser.epilog or ""
        verdict = parser.get_default("verdict")
        assert "exit codes" in epilog or (verdict and "exit 0" in (parser.description or "")), name
        if name in MAIN:
            assert "examples:" in epilog, name


def test_every_example_is_a_command_the_parser_accepts():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    seen = 0
    for parser in sub.choices.values():
        for line in (parser.epilog or "").splitlines():
            line = line.strip()
            if not line.startswith("rageval "):
                continue
            argv = shlex.split(line.split("   #")[0])[1:]
            if argv[:2] == ["gate", "plan"]:
                argv[:2] = ["gate-plan"]
            try:
                build_parser().parse_args(argv)
            except SystemExit as exc:
                pytest.fail(f"{line!r} does not parse ({exc})")
            seen += 1
    assert seen >= 25


def test_progress_is_one_live_line_on_a_terminal_ended_before_the_summary(monkeypatch, capsys):
    """The final summary ran onto the progress line; piped, nothing was printed until the end."""
    import sys

    from rageval_desktop.cli.judging_cmds import _Progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    live = _Progress(argparse.Namespace(json=False))
    live(1, 10, "judging: 1/10")
    live(2, 10, "judging: 2/10")
    live.end()
    err = capsys.readouterr().err
    assert err == "\rjudging: 1/10   \rjudging: 2/10   \n"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    piped = _Progress(argparse.Namespace(json=False))
    piped(0, 0, "0/0")                  # nothing to do (or refused at once): the error is the first line said
    piped(1, 10, "judging: 1/10")       # within PIPED_EVERY_S of the start: not yet
    monkeypatch.setattr(_Progress, "PIPED_EVERY_S", 0.0)
    piped(2, 10, "judging: 2/10")       # a period gone: said
    monkeypatch.setattr(_Progress, "PIPED_EVERY_S", 10.0)
    piped(3, 10, "judging: 3/10")
    piped(10, 10, "judging: 10/10")     # the last always
    piped.end()
    assert capsys.readouterr().err == "judging: 2/10\njudging: 10/10\n"
    quiet = _Progress(argparse.Namespace(json=True))
    quiet(1, 10, "judging: 1/10")
    assert capsys.readouterr().err == ""
