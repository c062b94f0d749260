"""Fuzz the importers by hand, beyond the suite's bounded fuzz test: every generated hostile file in every format
through `rageval import`, in-process. Counts cases, tracebacks / internal errors, partial imports (a refusal that
changed a table) and slow cases (> 10 s).

    .venv/bin/python bench/fuzz_importers.py [--seeds 0 1 2] [--mutations 4]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rageval_desktop.cli import main as cli  # noqa: E402
from rageval_desktop.core.store.project import Project  # noqa: E402
from tests.conftest import table_dump  # noqa: E402
from tests.support.hostile_files import cases, write_case  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--mutations", type=int, default=4)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    project = tmp / "fuzz.rageval"
    Project.create(project).close()
    total = refused = tracebacks = partial = slow = 0
    worst = 0.0
    for seed in args.seeds:
        for n, (name, kind, file_name, data) in enumerate(cases(seed=seed, mutations_per_format=args.mutations)):
            path = write_case(tmp, file_name, data)
            before = table_dump(project)
            argv = ["import", kind, str(project), str(path)] + (["--run", f"r{seed}-{n}"] if kind == "run" else [])
            argv += ["--no-dedupe-check"] if kind == "golden" else []
            err = io.StringIO()
            started = time.perf_counter()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    code = cli(argv)
            except BaseException as exc:  # noqa: BLE001 - counting what escapes is the point
                code = f"{type(exc).__name__}"
            took = time.perf_counter() - started
            worst = max(worst, took)
            total += 1
            text = err.getvalue()
            if not isinstance(code, int) or "internal error" in text or "Traceback" in text:
                tracebacks += 1
                print(f"TRACEBACK {name} {file_name}: {text.splitlines()[0] if text else code}")
            elif code != 0:
                refused += 1
                if table_dump(project) != before:
                    partial += 1
                    print(f"PARTIAL {name} {file_name}")
            slow += took > 10
    print(f"cases {total}, refused {refused}, tracebacks {tracebacks}, partial imports {partial}, "
          f"slower than 10 s {slow}, slowest {worst:.2f} s")


if __name__ == "__main__":
    main()
