"""A judge job beside the bare openai client, over the same loopback server: rows per second and CPU per call.

The server (tests.support.fake_openai, its own process) answers every call after `--latency` seconds, so the floor is
the bare client: AsyncOpenAI with a semaphore of `--concurrency`, the same number of calls, nothing stored. The job
judges a fresh project's run with one LLM judge at the same concurrency, everything committed as it goes. Each side
runs in a process of its own (the job as `python -m rageval_desktop.cli judge --json`), the sides take turns
(`--repeat`), and `--load N` keeps N busy processes spinning on the machine's cores for the whole run (CPU
contention). Two clocks: each side's own, from its first call to its last ("rows/s"), and the whole command — the
process timed from outside, from its start (the interpreter and every import) to its exit, and its CPU the child's
own (it was timed inside the process, after the interpreter had started). "job, preloaded" is the job as the window
runs it: a project with an active model judge has the client library imported on a thread soon after it opens
(`judges.registry.preload_client`), so a job started from the window does not pay the import the command line does;
its "whole command" is the job inside its process (no window starts for it).

With `--ragas-python PY` a fourth side runs ragas (0.4.3: `evaluate` with one AspectCritic over the same number of
rows, `max_workers` = the concurrency, langchain's ChatOpenAI on the same server) in the interpreter PY, which has ragas
installed (it is not one of the app's dependencies): its clock, like the bare client's, starts after its imports.

    .venv/bin/python bench/bench_judge_floor.py [--rows 320] [--latency 0.5] [--concurrency 16] [--load 0] [--repeat 3]
                                                 [--ragas-python /path/to/venv/bin/python]

A venv for the ragas side: `python3.11 -m venv V && V/bin/pip install ragas==0.4.3 "langchain-community<0.4"
"langchain-core<1" "langchain-openai<1" "langchain<1"` (ragas 0.4.3 imports a module langchain-community 0.4 dropped).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BARE = textwrap.dedent("""
    import asyncio, json, resource, sys, time
    url, rows, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    t0 = time.perf_counter()
    import openai
    PROMPT = ("Grade the answer against the reference. Question: Question number {i}? Reference: The answer is {i}. "
              "Answer: The answer is {i}, I think. Reply with JSON: {{\\"score\\": 1-5, \\"reason\\": \\"...\\"}}")

    async def main():
        client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=30)
        gate = asyncio.Semaphore(concurrency)
        async def one(i):
            async with gate:
                r = await client.chat.completions.create(model="gpt-4o-mini", temperature=0,
                                                         messages=[{"role": "user", "content": PROMPT.format(i=i)}])
                return r.choices[0].message.content
        t = time.perf_counter()
        out = await asyncio.gather(*(one(i) for i in range(rows)))
        return len(out), time.perf_counter() - t
    ok, calls = asyncio.run(main())
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"ok": ok, "job_s": calls, "command_s": time.perf_counter() - t0,
                      "cpu_s": cpu.ru_utime + cpu.ru_stime}))
""")

PREPARE = textwrap.dedent("""
    import os, sys
    url, rows, concurrency, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    sys.path.insert(0, os.getcwd())
    from tests.core.test_judging import make_project
    project = make_project(__import__("pathlib").Path(path), n=rows)
    from rageval_desktop.core.judges.registry import add_judge
    add_judge(project, "bench", "correctness", "llm", model="gpt-4o-mini", base_url=url,
              params={"concurrency": concurrency, "timeout": 30})
    project.close()
""")

# the job as the window runs it: the client library imported already, the job timed inside the process
PRELOADED = textwrap.dedent("""
    import contextlib, io, json, resource, sys, time
    path = sys.argv[4]
    import openai  # noqa: F401
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    from rageval_desktop.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["judge", path, "--run", "v1", "--no-cache", "--json"])
    command = time.perf_counter() - t0
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    stats = json.loads(out.getvalue())
    print(json.dumps({"ok": stats["ok"], "job_s": stats["judging_seconds"], "command_s": command,
                      "cpu_s": cpu.ru_utime + cpu.ru_stime - before.ru_utime - before.ru_stime}))
""")

RAGAS = textwrap.dedent("""
    import json, resource, sys, time, warnings
    warnings.filterwarnings("ignore")
    url, rows, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    t0 = time.perf_counter()
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, SingleTurnSample, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import AspectCritic
    from ragas.run_config import RunConfig
    llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini", base_url=url, api_key="sk-bench", temperature=0,
                                         max_retries=0, timeout=30))
    metric = AspectCritic(name="correct", definition="Does the answer agree with the reference?", llm=llm)
    data = EvaluationDataset([SingleTurnSample(user_input=f"Question number {i}?", reference=f"The answer is {i}.",
                                               response=f"The answer is {i}, I think.") for i in range(rows)])
    t = time.perf_counter()
    result = evaluate(data, metrics=[metric], llm=llm, show_progress=False, raise_exceptions=False,
                      run_config=RunConfig(max_workers=concurrency, timeout=30, max_retries=0))
    took = time.perf_counter() - t
    ok = int(result.to_pandas()["correct"].notna().sum())
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"ok": ok, "job_s": took, "command_s": time.perf_counter() - t0,
                      "cpu_s": cpu.ru_utime + cpu.ru_stime}))
""")


def whole_process(argv: list[str], env: dict[str, str], inside: bool = False) -> dict:
    """Run a side's process: its rate on its own clock (first call to last), and the whole process timed from
    here — wall seconds from start to exit and the CPU seconds the child used, interpreter start and imports
    included. `inside`: the side times itself (the preloaded job: no process start belongs to it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    text = out.stdout.strip()
    if '"judging_seconds"' in text:         # `rageval judge --json`: the job's own stats
        stats = json.loads(text)
        return {"ok": stats["ok"], "job_s": stats["judging_seconds"], "command_s": wall, "cpu_s": cpu}
    reported = json.loads(text.splitlines()[-1])
    return reported if inside else {**reported, "command_s": wall, "cpu_s": cpu}


def spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=320)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--load", type=int, default=0, help="busy processes kept spinning during the run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ragas-python", help="an interpreter with ragas installed: adds ragas as a side")
    args = parser.parse_args()
    # (ragas sends usage analytics unless told not to: offline, each run waited 10 s for it)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "sk-bench", "RAGAS_DO_NOT_TRACK": "true"}
    server = subprocess.Popen([sys.executable, "-m", "tests.support.fake_openai", "--latency", str(args.latency)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.load)]
    for p in spinners:
        p.start()
    sides: tuple[tuple[str, str, str], ...] = (("bare client", BARE, ""), ("judge job", "", "cold"),
                                                ("job, preloaded", PRELOADED, "preloaded"))
    if args.ragas_python:
        sides += (("ragas", RAGAS, "ragas"),)
    results: dict[str, list[dict]] = {side: [] for side, _, _ in sides}
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(args.repeat):
                for side, script, mode in sides:
                    python = args.ragas_python if mode == "ragas" else sys.executable
                    path = str(Path(tmp) / f"{k}-{mode}.rageval")
                    values = [url, str(args.rows), str(args.concurrency), path]
                    if mode in ("cold", "preloaded"):
                        subprocess.run([sys.executable, "-c", PREPARE, *values], cwd=ROOT, env=env, check=True)
                    argv = ([sys.executable, "-m", "rageval_desktop.cli", "judge", path, "--run", "v1", "--no-cache",
                             "--json"] if mode == "cold" else [python, "-c", script, *values])
                    results[side].append(whole_process(argv, env, inside=mode == "preloaded"))
    finally:
        for p in spinners:
            p.kill()
        server.kill()
        server.wait()
    ideal = args.concurrency / args.latency
    print(f"{args.rows} rows, {args.latency} s per call, {args.concurrency} in flight (ideal {ideal:.0f} rows/s), "
          f"{args.load} busy processes on {os.cpu_count()} cores; min/median/max of {args.repeat}")
    median = {}
    for side, runs in results.items():
        rates = sorted(r["ok"] / r["job_s"] for r in runs)
        whole = statistics.median(r["ok"] / r["command_s"] for r in runs)
        cpu_ms = statistics.median(1000 * r["cpu_s"] / max(1, r["ok"]) for r in runs)
        median[side] = (statistics.median(rates), whole, cpu_ms)
        print(f"{side:12s} {rates[0]:6.2f} / {median[side][0]:6.2f} / {rates[-1]:6.2f} rows/s "
              f"(whole command {whole:6.2f})   CPU {cpu_ms:5.2f} ms per call")
    bare, bare_whole, bare_cpu = median["bare client"]
    for side in ("judge job", "job, preloaded", *(["ragas"] if args.ragas_python else [])):
        ours, ours_whole, ours_cpu = median[side]
        print(f"{side} / bare client: {ours / bare:.3f} of the floor (whole command {ours_whole / bare_whole:.3f}); "
              f"CPU per call {ours_cpu / bare_cpu:.2f}x")
    if args.ragas_python:
        ragas, ragas_whole, _ = median["ragas"]
        for side in ("judge job", "job, preloaded"):
            ours, ours_whole, _ = median[side]
            print(f"{side} / ragas: {ours / ragas:.3f} (each on its own clock), "
                  f"whole command {ours_whole / ragas_whole:.3f}")


if __name__ == "__main__":
    main()
