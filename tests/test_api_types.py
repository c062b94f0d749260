"""Issue 76.7: the public API as a user's type checker and runtime introspection see it — `mypy --strict` refused
`rv.open` and `rv.Decision` in a user's script (nothing was explicitly exported), and `typing.get_type_hints(rv.Gate)`
raised NameError."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

import rageval_desktop as rv

SCRIPT = '''\
import rageval_desktop as rv


def gate_v2(path: str) -> rv.Decision:
    with rv.open(path) as project:
        found: rv.Gate = project.gate("v1", "v2")
        return found.decision


def refused(exc: rv.RagevalError) -> str:
    return str(exc)
'''


def test_the_exports_are_written_out_and_every_class_resolves_its_hints():
    assert rv.__all__ == ["__version__", *rv._API]
    for name in rv.__all__:
        found = getattr(rv, name)
        if isinstance(found, type):
            typing.get_type_hints(found)          # a NameError here is what a user met


@pytest.mark.slow      # mypy over the package, as a user's script imports it (about 20 s)
def test_a_users_script_passes_mypy_strict(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
