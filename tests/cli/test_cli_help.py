"""`--help` of every command and subcommand prints help and exits 0 (a bare % in a help string crashed it)."""

from __future__ import annotations

import argparse

import pytest

from rageval_desktop.cli import build_parser, command_paths, main


def _paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    return command_paths(parser, prefix)


PATHS = _paths(build_parser())


def test_every_command_is_listed():
    assert len(PATHS) > 40 and ("restore",) in PATHS and ("import", "golden") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "rageval")
def test_help_of_every_command(path, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*path, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: rageval") and "Traceback" not in out
