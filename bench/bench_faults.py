"""Judge jobs under faults (issue 10's figures), against the loopback server in its own process.

(a) fault mix: 10% random 429s (Retry-After 1 s) and 2% calls that hang 30 s, timeout 120 s, 16 in flight —
    the job's time against the same job fault-free (goal: within 3x the fault-free time plus one timeout; the
    hung calls themselves take 30 s, so the floor is ~30 s).
(b) kills: SIGKILL a `rageval judge` process N times at random moments (concurrency 16), resuming each time;
    extra calls per kill = calls the server received minus judgments saved (goal: <= the concurrency), and
    at the end every row judged exactly once.

    .venv/bin/python bench/bench_faults.py [--rows 1200] [--kills 20] [--kill-rows 2500]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rageval_desktop.core.jobs.judge_job import run_judge_job  # noqa: E402
from rageval_desktop.core.jobs.spec import JobSpec  # noqa: E402
from rageval_desktop.core.judges.registry import add_judge  # noqa: E402
from tests.core.test_judging import make_project  # noqa: E402
from tests.support.fake_openai import FakeOpenAI  # noqa: E402


def _server(*extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.fake_openai", *extra], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def fault_job(rows: int, latency: float, faults: bool) -> dict:
    extra = ["--latency", str(latency)]
    if faults:
        extra += ["--rate-429", "0.10", "--hang-rate", "0.02", "--hang-seconds", "30", "--retry-after", "1"]
    server, url = _server(*extra)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            project = make_project(Path(tmp) / "bench.rageval", n=rows)
            add_judge(project, "bench", "correctness", "llm", model="gpt-4o-mini", base_url=url,
                      params={"concurrency": 16, "timeout": 120, "max_retries": 8})
            t0 = time.perf_counter()
            stats = run_judge_job(project, JobSpec(run="v1", use_cache=False))
            seconds = time.perf_counter() - t0
            project.close()
    finally:
        server.kill()
        server.wait()
    return {"seconds": seconds, "ok": stats.ok, "errors": stats.errors, "retries": stats.retries}


KILL_SCRIPT = """
import sys
from rageval_desktop.cli import main
sys.exit(main(["judge", sys.argv[1], "--run", "v1", "--concurrency", "16", "--json"]))
"""


def kills(n_kills: int, rows: int) -> dict:
    os.environ["JUDGE_KEY"] = "sk-bench-not-a-real-key-123456"
    extra_calls, rng = [], random.Random(1)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(latency=0.03) as server:
        path = Path(tmp) / "kills.rageval"
        project = make_project(path, n=rows)
        add_judge(project, "j", "correctness", "llm", model="gpt-4o-mini", base_url=server.url,
                  api_key_ref="JUDGE_KEY", params={"concurrency": 16, "timeout": 30})
        project.close()
        for _ in range(n_kills):
            saved_before = sqlite3.connect(path).execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
            calls_before = server.calls
            proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(path)], cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            target = calls_before + rng.randint(10, max(11, rows // (n_kills + 2)))
            while server.calls < target and proc.poll() is None:
                time.sleep(0.002)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            time.sleep(0.1)  # let calls the dead process started reach the server's counter
            saved = sqlite3.connect(path).execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
            extra_calls.append((server.calls - calls_before) - (saved - saved_before))
        calls_before = server.calls
        subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(path)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        conn = sqlite3.connect(path)
        total, distinct = conn.execute("SELECT COUNT(*), COUNT(DISTINCT run_row_id) FROM judgments").fetchone()
        ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
    return {"kills": n_kills, "extra_calls": extra_calls, "max_extra": max(extra_calls),
            "mean_extra": sum(extra_calls) / len(extra_calls), "final_rows": total, "distinct": distinct,
            "integrity": ok, "calls_total": server.calls, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1200)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--kill-rows", type=int, default=2500)
    parser.add_argument("--skip", choices=["faults", "kills"])
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.skip != "faults":
        clean = fault_job(args.rows, args.latency, faults=False)
        mixed = fault_job(args.rows, args.latency, faults=True)
        print(json.dumps({"fault_free": clean, "fault_mix": mixed,
                          "ratio": mixed["seconds"] / clean["seconds"],
                          "goal_s": 3 * clean["seconds"] + 120}, indent=2))
    if args.skip != "kills":
        print(json.dumps(kills(args.kills, args.kill_rows), indent=2))


if __name__ == "__main__":
    main()
