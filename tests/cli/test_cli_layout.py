"""Each command lives in one file: its arguments (`add_*`) beside its handler (`cmd_*`); the parser's module only
lists them in order. (The arguments were in a 519-line build_parser, the handlers elsewhere.)"""

from __future__ import annotations

import argparse
import ast
import inspect

from rageval_desktop import cli
from rageval_desktop.cli import ADDERS, build_parser


def test_the_parser_module_adds_no_command_arguments():
    tree = ast.parse(inspect.getsource(cli))
    added = [n.args[0].value for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "add_argument" and n.args and isinstance(n.args[0], ast.Constant)]
    assert added == ["--version"]


def test_every_command_is_added_in_the_module_of_its_handler():
    made: dict[str, object] = {}

    def command(name, func, help_):
        made[name] = func
        return argparse.ArgumentParser(prog=name)

    for add in ADDERS:
        before = set(made)
        add(command)
        for name in set(made) - before:
            assert inspect.getmodule(made[name]) is inspect.getmodule(add), name
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(made) == set(sub.choices) and len(made) > 40
