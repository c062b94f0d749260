"""Judge throughput against the loopback OpenAI-compatible server (the real client over real HTTP).

(a) 0.5 s latency, 16 in flight: rows/s as a share of the ideal 16 / 0.5 = 32 rows/s (goal >= 0.95).
(b) the server admits only 8 calls in flight (429 + Retry-After beyond that), the job asks for 16:
    rows/s against the server's limit of 8 / 0.5 = 16 rows/s (goal >= 14).

    .venv/bin/python bench/judge_throughput.py [--rows 320] [--retry-after 1]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rageval_desktop.core.jobs.judge_job import run_judge_job  # noqa: E402
from rageval_desktop.core.jobs.spec import JobSpec  # noqa: E402
from rageval_desktop.core.judges.registry import add_judge  # noqa: E402
from tests.core.test_judging import make_project  # noqa: E402


def job(url: str, rows: int, concurrency: int) -> tuple[float, Any]:
    """A judge job over `rows` rows of a new project against `url`, asking for `concurrency` calls at once: (seconds,
    its stats)."""
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp) / "bench.rageval", n=rows)
        add_judge(project, "bench", "correctness", "llm", model="gpt-4o-mini", base_url=url,
                  params={"concurrency": concurrency, "timeout": 30})
        t0 = time.perf_counter()
        stats = run_judge_job(project, JobSpec(run="v1", use_cache=False))
        seconds = time.perf_counter() - t0
        project.close()
    return seconds, stats


def scenario(rows: int, latency: float, concurrency: int, max_in_flight: int | None, retry_after: str) -> dict:
    """The server runs in its own process, as a real endpoint would (it must not share the client's GIL)."""
    cmd = [sys.executable, "-m", "tests.support.fake_openai", "--latency", str(latency), "--retry-after", retry_after]
    if max_in_flight:
        cmd += ["--max-in-flight", str(max_in_flight)]
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        seconds, stats = job(url, rows, concurrency)
        time.sleep(1.1)
        counters = {}
        server.send_signal(signal.SIGINT)
        for line in server.stdout:
            if line.startswith("{"):
                counters = json.loads(line)
    finally:
        server.kill()
        server.wait()
    return {"ok": stats.ok, "errors": stats.errors, "seconds": seconds, "rows_per_s": stats.ok / seconds,
            "rejected_429": counters.get("rejected"), "peak_in_flight": counters.get("peak_in_flight")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=320)
    parser.add_argument("--retry-after", default="1", help="seconds the server's 429s ask to wait")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    a = scenario(args.rows, 0.5, 16, None, args.retry_after)
    print(f"(a) 0.5 s latency, 16 in flight, {args.rows} rows: {a['rows_per_s']:.2f} rows/s = "
          f"{a['rows_per_s'] / 32:.3f} of the ideal 32 rows/s ({a['seconds']:.1f} s, {a['errors']} errors, "
          f"peak {a['peak_in_flight']} in flight)")
    b = scenario(args.rows, 0.5, 16, 8, args.retry_after)
    print(f"(b) server admits 8 in flight, job asks 16, Retry-After {args.retry_after} s: {b['rows_per_s']:.2f} rows/s "
          f"(server limit 16 rows/s; {b['rejected_429']} requests got 429, {b['errors']} rows failed, "
          f"{b['seconds']:.1f} s)")


if __name__ == "__main__":
    main()
