"""Issue 79, part 5: judging under a server's requests-per-minute limit, beside the floor a client that knows the
limit reaches, in the same run.

The loopback server (tests/support/fake_openai.py, in a process of its own) admits `--rpm` requests a minute as
providers do: a bucket of a second's worth, refilled continuously, 429 when empty. Two ways of saying it: with
OpenAI's headers (x-ratelimit-limit-requests, -remaining-requests, -reset-requests on every reply, retry-after-ms on a
429), or plain 429s that say nothing more. The anchor is the bare OpenAI client that is told the limit and starts one
request every 60 / rpm seconds (never refused); the app is a judge job over the same number of rows, asking for
`--concurrency` calls at once and knowing nothing. Each side runs `--repeat` times, interleaved; the ratio is the
anchor's time over the app's (1.0: the app as fast as a client that knows the limit).

    .venv/bin/python bench/bench_rate_limit.py [--rows 400] [--rpm 240] [--burst 240] [--latency 0.3] [--repeat 3]

Goal (issue 79): >= 0.9 of the floor with the headers, >= 0.8 with plain 429s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge_throughput import job  # noqa: E402  (bench/ is the script's folder)


def serve(rpm: float, burst: float, latency: float, headers: bool,
          window: float | None) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "tests.support.fake_openai", "--latency", str(latency), "--rpm", str(rpm),
           "--burst", str(burst)]
    if window:
        cmd += ["--window", str(window)]
    if not headers:
        cmd.append("--no-limit-headers")
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def anchor(url: str, rows: int, rpm: float, burst: float, window: float | None) -> float:
    """The bare client, told the limit: `burst` requests at once, then one every 60 / rpm s (with a fixed `window`:
    a window's worth at each window's start), all answered; seconds for `rows`."""
    import openai

    async def run() -> None:
        client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=30)
        gap = 60.0 / rpm
        per = int(rpm * (window or 0) / 60)
        start = time.monotonic()
        refused: list[int] = []

        async def one(i: int) -> None:
            # (one gap later than the bucket could: the server's bucket starts from when the first request lands,
            # a little after `start`, and the burst's requests arrive over a few hundred ms)
            at = (i // per * (window + 0.05) if i >= per else 0.0) if window else (i - int(burst) + 2) * gap
            await asyncio.sleep(max(0.0, start + at - time.monotonic()))
            while True:     # (the emulation's clock and the client's differ by a few ms: a rare 429 waits)
                try:
                    await client.chat.completions.create(model="gpt-4o-mini", messages=[
                        {"role": "user", "content": f"Question {i}. Reply with [RESULT] and a score."}])
                    return
                except openai.RateLimitError:
                    refused.append(i)
                    await asyncio.sleep(gap)

        await asyncio.gather(*(one(i) for i in range(rows)))
        await client.close()

    t0 = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - t0


def app(url: str, rows: int, concurrency: int) -> tuple[float, int]:
    seconds, stats = job(url, rows, concurrency)
    return seconds, stats.ok


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--rpm", type=float, default=240.0)
    parser.add_argument("--burst", type=float, help="requests the server lets through at once (default: a minute's: "
                        "the bucket a per-minute limit keeps)")
    parser.add_argument("--window", type=float, help="a fixed window of this many seconds instead of a bucket")
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    burst = args.burst if args.burst is not None else args.rpm
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["OPENAI_API_KEY"] = os.environ.get("OPENAI_API_KEY", "sk-bench")
    kept = f"in fixed windows of {args.window:g} s" if args.window else f"{burst:g} at once"
    print(f"{args.rows} rows; the server admits {args.rpm:g} requests a minute ({args.rpm / 60:g}/s, {kept}), "
          f"{args.latency:g} s a reply; the app asks for {args.concurrency} at once")
    for headers in (True, False):
        floor, mine = [], []
        for _ in range(args.repeat):
            for side in ("anchor", "app"):
                server, url = serve(args.rpm, burst, args.latency, headers, args.window)
                try:
                    if side == "anchor":
                        floor.append(anchor(url, args.rows, args.rpm, burst, args.window))
                    else:
                        seconds, ok = app(url, args.rows, args.concurrency)
                        assert ok == args.rows, f"{args.rows - ok} rows not judged"
                        mine.append(seconds)
                finally:
                    server.kill()
                    server.wait()
        said = "OpenAI's rate-limit headers" if headers else "plain 429s"
        ratio = statistics.median(floor) / statistics.median(mine)
        print(f"{said:>28}: the client told the limit {min(floor):.2f}/{statistics.median(floor):.2f}/"
              f"{max(floor):.2f} s; the app {min(mine):.2f}/{statistics.median(mine):.2f}/{max(mine):.2f} s "
              f"(min/median/max) -> {ratio:.2f} of the floor", flush=True)


if __name__ == "__main__":
    main()
