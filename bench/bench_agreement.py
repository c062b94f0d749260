"""Agreement fast enough to use: the audit of many judges, and one judge's bootstrap CI at n = 200.

(a) `agreement.audit_all` over 200 judges x 30 ratings each (a 5-point scale), end to end from the project file
    (the issue measured 10 min 50 s before confusion-matrix statistics).
(b) One judge's deciding statistic with its 1,000-resample paired bootstrap CI at n = 200 (goal <= 50 ms), with
    the old loop over scikit-learn for comparison (--old).

    .venv/bin/python bench/bench_agreement.py [--judges 200] [--ratings 30] [--old]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rageval_desktop.core.judges.registry import add_judge  # noqa: E402
from rageval_desktop.core.review import agreement, agreement_stats  # noqa: E402
from rageval_desktop.core.store.project import utcnow  # noqa: E402
from tests.core.test_judging import make_project  # noqa: E402


def audit_many(judges: int, ratings: int) -> dict:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp) / "bench.rageval", n=max(ratings, 40))
        rows = [r for r, in project.reader().execute("SELECT id FROM run_rows ORDER BY id")][:ratings]
        human = rng.integers(1, 6, len(rows))
        ids = [add_judge(project, f"judge-{k}", "correctness", "lexical").id for k in range(judges)]
        with project.write("bench data") as w:
            w.executemany("INSERT INTO human_ratings (run_row_id, metric, reviewer, score, created_at) "
                          "VALUES (?, 'correctness', 'ann', ?, ?)", [(r, float(h), utcnow())
                                                                     for r, h in zip(rows, human, strict=True)])
            for k, jid in enumerate(ids):
                noise = rng.integers(-(k % 3), k % 3 + 1, len(rows))  # judges from exact to loose
                scores = np.clip(human + noise, 1, 5)
                w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                              "VALUES (?, ?, ?, 'ok', ?, ?)", [(jid, r, f"{jid}-{r}", float(s), utcnow())
                                                               for r, s in zip(rows, scores, strict=True)])
        start = time.perf_counter()
        results = agreement.audit_all(project)
        elapsed = time.perf_counter() - start
        verdicts = {v: sum(r.verdict == v for r in results) for v in ("keep", "retire", agreement.NEEDS_MORE)}
        project.close()
    return {"judges": judges, "ratings": ratings, "seconds": elapsed, "per_judge_ms": 1000 * elapsed / judges,
            "verdicts": verdicts}


def one_ci(n: int, repeats: int, old: bool) -> dict:
    rng = np.random.default_rng(1)
    h = rng.integers(0, 5, n)
    j = np.clip(h + rng.integers(-1, 2, n), 0, 4)
    start = time.perf_counter()
    agreement_stats.bootstrap_ci("quadratic_kappa", h, j, 5)  # the first call also imports scipy.stats
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        agreement_stats.statistic("quadratic_kappa", h, j, 5)
        ci = agreement_stats.bootstrap_ci("quadratic_kappa", h, j, 5)
        times.append(time.perf_counter() - start)
    out = {"n": n, "median_ms": 1000 * statistics.median(times), "max_ms": 1000 * max(times), "ci": ci,
           "first_ms": 1000 * first}
    if old:
        from tests.core.test_agreement_stats import old_bootstrap

        start = time.perf_counter()
        old_ci = old_bootstrap("quadratic_kappa", h, j, 5)
        out["old_ms"] = 1000 * (time.perf_counter() - start)
        out["same_ci"] = bool(np.allclose(old_ci, ci, atol=1e-12))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judges", type=int, default=200)
    parser.add_argument("--ratings", type=int, default=30)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--old", action="store_true", help="also time the old loop over scikit-learn (slow)")
    args = parser.parse_args()
    ci = one_ci(args.n, 20, args.old)
    print(f"(b) one judge, n={ci['n']}: statistic + 1,000-resample CI in {ci['median_ms']:.1f} ms median "
          f"(max {ci['max_ms']:.1f} ms; goal <= 50 ms; the first call, importing scipy.stats, {ci['first_ms']:.0f} ms)"
          + (f"; the old loop took {ci['old_ms']:.0f} ms, same CI: {ci['same_ci']}" if args.old else ""))
    many = audit_many(args.judges, args.ratings)
    print(f"(a) audit of {many['judges']} judges x {many['ratings']} ratings: {many['seconds']:.2f} s "
          f"({many['per_judge_ms']:.1f} ms per judge); verdicts {many['verdicts']}")


if __name__ == "__main__":
    main()
