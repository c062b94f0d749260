"""`rageval stability` and `rageval probe` beside the bare openai client making the same number of calls over the
same loopback server (issue 50: 1.41x and 1.94x; goal <= 1.2x).

The server (tests.support.fake_openai, its own process) answers every call after `--latency` seconds. The floor is
the bare client: AsyncOpenAI with a semaphore of `--concurrency`, as many calls as the check makes, nothing stored —
timed as a whole process, from its start to its exit, as the two commands are (each on a fresh copy of a project
whose run was judged once, so the check's sample exists). Sides take turns (`--repeat`); min/median/max of wall
seconds and the ratio of the medians.

    .venv/bin/python bench/bench_checks_floor.py [--rows 60] [--latency 0.3] [--concurrency 16] [--repeats 3]
                                                 [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_judge_floor import BARE  # noqa: E402  (the bare client, as the judge floor runs it)

PREPARE = textwrap.dedent("""
    import os, sys
    url, rows, concurrency, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    sys.path.insert(0, os.getcwd())
    from pathlib import Path
    from tests.core.test_judging import make_project
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge
    project = make_project(Path(path), n=rows)
    add_judge(project, "bench", "correctness", "llm", model="gpt-4o-mini", base_url=url,
              params={"concurrency": concurrency, "timeout": 30})
    stats = run_judge_job(project, JobSpec(run="v1"))
    assert stats.ok == rows, stats
    project.close()
""")


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - t0, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=60)
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3, help="stability: times each row is asked")
    ap.add_argument("--repeat", type=int, default=3, help="turns each side takes")
    args = ap.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "sk-bench"}
    server = subprocess.Popen([sys.executable, "-m", "tests.support.fake_openai", "--latency", str(args.latency)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
    times: dict[str, list[float]] = {}
    calls: dict[str, int] = {}
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp) / "base.rageval"
            subprocess.run([sys.executable, "-c", PREPARE, url, str(args.rows), str(args.concurrency), str(base)],
                           cwd=ROOT, env=env, check=True)
            commands = {
                "stability": ["stability", "--judge", "bench", "--run", "v1", "--sample", str(args.rows),
                              "--repeats", str(args.repeats), "--json"],
                "probe": ["probe", "--judge", "bench", "--run", "v1", "--sample", str(args.rows), "--json"],
            }
            for k in range(args.repeat):
                for name, command in commands.items():
                    path = Path(tmp) / f"{name}-{k}.rageval"
                    shutil.copy(base, path)
                    took, out = timed([sys.executable, "-m", "rageval_desktop.cli", command[0], str(path),
                                       *command[1:]], env)
                    made = subprocess.run([sys.executable, "-c", "import sqlite3, sys; print(sqlite3.connect("
                                           "sys.argv[1]).execute(\"SELECT COUNT(*) FROM judgments j JOIN run_rows rr "
                                           "ON rr.id = j.run_row_id JOIN runs r ON r.id = rr.run_id WHERE r.purpose "
                                           "!= 'run'\").fetchone()[0])", str(path)],
                                          capture_output=True, text=True, check=True)
                    calls[name] = int(made.stdout)
                    times.setdefault(name, []).append(took)
                    took, out = timed([sys.executable, "-c", BARE, url, str(calls[name]), str(args.concurrency)], env)
                    assert json.loads(out.strip().splitlines()[-1])["ok"] == calls[name]
                    times.setdefault(f"bare client ({name})", []).append(took)
    finally:
        server.kill()
        server.wait()
    print(f"{args.rows} rows, {args.latency} s a call, {args.concurrency} in flight; whole processes, "
          f"min/median/max of {args.repeat} (s)")
    for name, values in times.items():
        print(f"{name:<26} {min(values):7.2f} {statistics.median(values):7.2f} {max(values):7.2f}")
    for name in ("stability", "probe"):
        ratio = statistics.median(times[name]) / statistics.median(times[f"bare client ({name})"])
        print(f"{name} ({calls[name]} calls) / bare client: {ratio:.2f}x")
    print(json.dumps({"calls": calls}))


if __name__ == "__main__":
    main()
