"""Selective judging's guarantee, by simulation (issue 47): does a judge that decides only rows with confidence ≥ λ̂
(core.review.selective.select: fixed-sequence testing on the audit's ratings) agree with the reviewers on at least
1 − α of the rows it decides, in at least 1 − δ of audits? And how many rows does it decide?

Populations are drawn here, independently of the code under test: 20,000 rows, each with the judge's confidence and
whether the judge's pass/fail is wrong, from a stated relation between the two (error probability e0·(1 − c)^k, and
a flat one where confidence says nothing). Each audit rates a sample of n rows — uniform, or drawn with probability
growing as confidence falls (a defensive mixture, as the desk's `uncertain` mode draws, weighted back by 1/p) — and
the realised disagreement on the population's rows at or above λ̂ is compared with α. The first table reads the
licence after every rating of each audit (issue 75: the desk reads it that often) under four confidence models.

    .venv/bin/python bench/bench_selective.py              # 1,000 audits a line, looks at every rating (12 minutes)
    .venv/bin/python bench/bench_selective.py --looks-only --look-step 5   # the repeated-look table alone, coarser
    .venv/bin/python bench/bench_selective.py --runs 200   # quicker, coarser
    .venv/bin/python bench/bench_selective.py --demo-only  # the demo's table alone (seconds)

The last table takes the demo's own rated rows (144 ratings of correctness, both runs) as the population: an audit
rates a random half of them, λ̂ is chosen there by the project's functions, and the agreement is realised on every
row of the population it decides — for the demo's similarity judge, the README's token-F1 judge and a cascade of
them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rageval_desktop.core.review.selective import cascade_levels, combine, select  # noqa: E402

ROWS = 20_000
RELATIONS = {            # name: (e0, k): error probability e0 * (1 - c) ** k
    "steep (errors where unsure)": (0.6, 3.0),
    "gentle": (0.35, 1.0),
    "flat at 8% (confidence says nothing)": (0.08, 0.0),
    "flat at 15%": (0.15, 0.0),
}


def population(e0: float, k: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    conf = rng.beta(2.0, 1.2, ROWS)                 # most rows fairly confident, a tail near the pass mark
    wrong = rng.random(ROWS) < e0 * (1.0 - conf) ** k
    return conf, wrong


def audit(conf: np.ndarray, wrong: np.ndarray, n: int, mode: str, alpha: float, delta: float,
          rng: np.random.Generator) -> tuple[float | None, float, float]:
    """(realised disagreement on decided population rows or None, population coverage, the sample's effective n)."""
    if mode == "uniform":
        idx = rng.choice(ROWS, n, replace=False)
        weights = None
    else:                                            # more likely where unsure: 0.5 + (1 - c), at most 3x
        p = 0.5 + (1.0 - conf)
        p = p / p.sum() * n
        keys = rng.random(ROWS) / p                  # sequential Poisson: the n smallest u / p
        idx = np.argsort(keys)[:n]
        weights = 1.0 / p[idx]
    found = select(conf[idx], ~wrong[idx], weights, pool=conf, alpha=alpha, delta=delta)
    if found.level is None:
        return None, 0.0, float(n)
    decided = conf >= found.level
    return float(wrong[decided].mean()), float(decided.mean()), float(n)


def held_line(conf: np.ndarray, wrong: np.ndarray, n: int, mode: str, args: argparse.Namespace,
              rng: np.random.Generator) -> str:
    """One line of the guarantee's table: population error, sample, n, held, decides, coverage."""
    held = decides = 0
    covered = []
    for _ in range(args.runs):
        realised, coverage, _ = audit(conf, wrong, n, mode, args.alpha, args.delta, rng)
        if realised is None:
            held += 1                    # deciding nothing breaks no guarantee
            continue
        decides += 1
        held += realised <= args.alpha
        covered.append(coverage)
    cov = f"{np.mean(covered):.1%}" if covered else "—"
    return f"{wrong.mean():>10.1%} {mode:>8} {n:>4} {held / args.runs:>7.1%} {decides / args.runs:>8.1%} {cov:>9}"


LOOK_MODELS = {           # issue 75's four confidence models: error probability as a function of confidence c
    "informative (errors where unsure)": lambda c: 0.6 * (1.0 - c) ** 3,
    "uninformative (12% everywhere)": lambda c: np.full_like(c, 0.12),
    "overconfident (errors where sure)": lambda c: 0.04 + 0.16 * c ** 2,
    "borderline (near α at most levels)": lambda c: 0.35 * (1.0 - c),
}


def fixed_n_rule(conf: np.ndarray, agree: np.ndarray, alpha: float, delta: float) -> float | None:
    """The selection as it was before issue 75, for the comparison only: levels at quantiles of the rated rows'
    confidences, each tested by the exact binomial tail at δ (valid at one planned n)."""
    from scipy.special import betainc

    first = int(np.ceil(np.log(delta) / np.log(1 - alpha)))
    if conf.size < first:
        return None
    levels = np.unique(conf)[::-1]
    if levels.size > 20:
        levels = np.unique(np.quantile(conf, np.linspace(1.0, 0.0, 20), method="lower"))[::-1]
    found = None
    for level in levels:
        inside = conf >= level
        n = int(inside.sum())
        if n < first:
            continue
        errors = int((~agree[inside]).sum())
        p = 1.0 if errors >= n else float(betainc(n - errors, errors + 1.0, 1.0 - alpha))
        if p > delta:
            break
        found = float(level)
    return found


def looks_line(name: str, args: argparse.Namespace, rng: np.random.Generator) -> str:
    """Audits whose reviewers rate a uniform stream of rows, the licence read after every rating from 20 to 400:
    how often some look licenses a level whose rows disagree with people more than α in the population, by the
    rule now (`select`) and the fixed-n rule before it; and the share of the population decided at 400 ratings."""
    conf = rng.beta(2.0, 1.2, ROWS)
    wrong = rng.random(ROWS) < LOOK_MODELS[name](conf)
    order = np.argsort(conf)[::-1]
    cum = np.cumsum(wrong[order]) / np.arange(1, ROWS + 1)          # disagreement of the rows at or above each conf
    sorted_conf = conf[order]

    def true_rate(level: float) -> float:
        k = int(np.searchsorted(-sorted_conf, -level, side="right"))
        return float(cum[k - 1]) if k else 0.0

    beyond = {"now": 0, "before": 0}
    covered = {"now": [], "before": []}
    for _ in range(args.look_runs):
        idx = rng.choice(ROWS, 400, replace=False)
        c, agree = conf[idx], ~wrong[idx]
        seen = {"now": False, "before": False}
        last: dict[str, float | None] = {}
        for t in range(20, 401, args.look_step):
            last = {"now": select(c[:t], agree[:t], pool=conf, alpha=args.alpha, delta=args.delta).level,
                    "before": fixed_n_rule(c[:t], agree[:t], args.alpha, args.delta)}
            for rule, level in last.items():
                if level is not None and true_rate(level) > args.alpha:
                    seen[rule] = True
        for rule in beyond:
            beyond[rule] += seen[rule]
            level = last[rule]
            covered[rule].append(0.0 if level is None else float((conf >= level).mean()))
    n = args.look_runs
    return (f"{name:<38} {wrong.mean():>6.1%} {beyond['now'] / n:>10.1%} {beyond['before'] / n:>10.1%} "
            f"{np.mean(covered['now']):>10.1%} {np.mean(covered['before']):>10.1%}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--look-runs", type=int, default=300, help="audits a line of the repeated-look table")
    parser.add_argument("--look-step", type=int, default=1, help="ratings between two looks (1: every rating)")
    parser.add_argument("--looks-only", action="store_true", help="only the repeated-look table")
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--demo-only", action="store_true", help="only the demo's table")
    args = parser.parse_args()
    started = time.perf_counter()
    rng = np.random.default_rng(47)
    if args.demo_only:
        demo_table(args, rng)
        print(f"\n{time.perf_counter() - started:.0f} s")
        return
    print(f"Read at every look (issue 75): a licence read after every {args.look_step} rating(s) from 20 to 400, "
          f"{args.look_runs} audits a line; beyond α: audits in which SOME look licensed a level whose population "
          f"rows disagree more than α (goal ≤ δ = {args.delta:g}); decided: the population share decided at 400.")
    print(f"{'confidence model':<38} {'error':>6} {'beyond α':>10} {'before':>10} {'decided':>10} {'before':>10}")
    for name in LOOK_MODELS:
        print(looks_line(name, args, rng), flush=True)
    if args.looks_only:
        print(f"\n{time.perf_counter() - started:.0f} s")
        return
    print()
    mc = 100 * ((1 - args.delta) * args.delta / args.runs) ** 0.5
    print(f"α {args.alpha:g}, δ {args.delta:g}; {args.runs} audits a line (Monte Carlo error of the guarantee's rate "
          f"±{mc:.1f} points). held: audits whose decided rows agree ≥ 1 − α in the population (goal ≥ "
          f"{1 - args.delta:.0%}); decides: audits that decide any row; coverage: mean share of the population decided "
          "when it decides.")
    print(f"{'relation':<38} {'pop. error':>10} {'sample':>8} {'n':>4} {'held':>7} {'decides':>8} {'coverage':>9}")
    for name, (e0, k) in RELATIONS.items():
        conf, wrong = population(e0, k, rng)
        for mode in ("uniform", "uncertain"):
            for n in (50, 100, 200, 400):
                print(f"{name:<38} {held_line(conf, wrong, n, mode, args, rng)}", flush=True)
    print("\nThe run's pass rate from the judge and the desk (core.review.selective.combine): the judge decides rows "
          "at "
          "or above λ̂, reviewers rate a uniform m of its abstentions; covered: the interval holds the population's "
          f"true pass rate (goal ≥ {1 - args.delta - 0.05:.0%}: 1 − δ − 5%, by a union bound).")
    print(f"{'relation':<38} {'calibration n':>13} {'m':>4} {'covered':>8} {'decides':>8} {'mean width':>11}")
    for name, (e0, k) in RELATIONS.items():
        conf, wrong = population(e0, k, rng)
        human = rng.random(ROWS) < 0.55 + 0.4 * (conf - 0.5)        # people pass more where the judge is sure
        judge = np.where(wrong, ~human, human)
        truth = human.mean()
        for n, m in ((100, 30), (200, 60), (400, 100)):
            covered = decides = 0
            widths = []
            for _ in range(args.runs):
                idx = rng.choice(ROWS, n, replace=False)
                found = select(conf[idx], ~wrong[idx], pool=conf, alpha=args.alpha, delta=args.delta)
                if found.level is None:
                    continue
                decides += 1
                sure = conf >= found.level
                left = np.flatnonzero(~sure)
                if left.size == 0:
                    r = combine(int(judge[sure].sum()), int(sure.sum()), ROWS, 0, 1, 0, args.alpha)
                else:
                    rated = rng.choice(left, min(m, left.size), replace=False)
                    r = combine(int(judge[sure].sum()), int(sure.sum()), ROWS, int(human[rated].sum()), rated.size,
                                left.size, args.alpha)
                covered += r["ci"][0] <= truth <= r["ci"][1]
                widths.append(r["ci"][1] - r["ci"][0])
            rate = f"{covered / decides:.1%}" if decides else "—"
            width = f"{100 * np.mean(widths):.1f} pts" if widths else "—"
            print(f"{name:<38} {n:>13} {m:>4} {rate:>8} {decides / args.runs:>8.1%} {width:>11}", flush=True)
    asks_table(args, rng)
    cascade_table(args, rng)
    demo_table(args, rng)
    print(f"\n{time.perf_counter() - started:.0f} s")


def asks_population(asks: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A judge asked `asks` times (core.jobs.checks.row_confidences): each row has the judge's chance of saying
    pass — near 0 or 1 on the 70% of rows it is sure of, uniform in [0.2, 0.8] on the rest; the reviewers follow the
    sure rows' lean 97% of the time and pass an unsure row with that same chance, independently of the judge. The
    stored verdict is one ask; its confidence the share of all asks agreeing with it."""
    sure = rng.random(ROWS) < 0.7
    lean = rng.random(ROWS) < 0.6
    q = np.where(sure, np.where(lean, 0.98, 0.02), rng.uniform(0.2, 0.8, ROWS))
    human = np.where(sure, rng.random(ROWS) < np.where(lean, 0.97, 0.03), rng.random(ROWS) < q)
    verdict = rng.random(ROWS) < q
    more = rng.random((ROWS, asks - 1)) < q[:, None]
    conf = (1 + (more == verdict[:, None]).sum(axis=1)) / asks
    return conf, verdict != human


def asks_table(args: argparse.Namespace, rng: np.random.Generator) -> None:
    print("\nConfidence from repeated asks (the share of K asks agreeing with the stored verdict: few distinct "
          "levels, many ties), populations as in asks_population:")
    print(f"{'asks':<38} {'pop. error':>10} {'sample':>8} {'n':>4} {'held':>7} {'decides':>8} {'coverage':>9}")
    for asks in (3, 5):
        conf, wrong = asks_population(asks, rng)
        for mode in ("uniform", "uncertain"):
            for n in (50, 100, 200, 400):
                print(f"{f'K = {asks} (70% of rows sure)':<38} {held_line(conf, wrong, n, mode, args, rng)}",
                      flush=True)


def cascade_table(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """A cascade of two (core.review.selective.cascade_levels): a cheap judge sure of fewer rows, a strong one whose
    confidence is independent of the cheap one's; held: both stages' decided rows agree ≥ 1 − α in the population."""
    print("\nA cascade of two: cheap (steep relation, confident on fewer rows) then strong (gentle relation, "
          "independent confidence); δ split between them. held: every stage's decided rows agree ≥ 1 − α in the "
          "population; shares: cheap / strong / desk, mean over audits.")
    print(f"{'calibration n':>13} {'held':>7} {'cheap':>7} {'strong':>7} {'desk':>7}")
    c1 = rng.beta(1.2, 1.6, ROWS)
    w1 = rng.random(ROWS) < 0.6 * (1 - c1) ** 3
    c2 = rng.beta(2.0, 1.2, ROWS)
    w2 = rng.random(ROWS) < 0.3 * (1 - c2) ** 2
    for n in (100, 200, 400):
        held = 0
        shares = []
        for _ in range(args.runs):
            idx = rng.choice(ROWS, n, replace=False)
            found = cascade_levels([c1[idx], c2[idx]], [~w1[idx], ~w2[idx]], pools=[c1, c2], alpha=args.alpha,
                                   delta=args.delta)
            first = c1 >= found[0].level if found[0].level is not None else np.zeros(ROWS, bool)
            second = ~first & (c2 >= found[1].level) if found[1].level is not None else np.zeros(ROWS, bool)
            ok = all(w[d].mean() <= args.alpha for w, d in ((w1, first), (w2, second)) if d.any())
            held += ok
            shares.append((first.mean(), second.mean(), 1 - first.mean() - second.mean()))
        s = np.mean(shares, axis=0)
        print(f"{n:>13} {held / args.runs:>7.1%} {s[0]:>7.1%} {s[1]:>7.1%} {s[2]:>7.1%}", flush=True)


def demo_rows(tmp: Path) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The demo's rated rows of correctness: per judge (minilm-similarity, and a token-F1 judge added as the README's
    walk-through adds it) the run rows, each row's confidence and whether its pass/fail agrees with the reviewers'."""
    from rageval_desktop.core.demo import write_demo_project
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge, get_judge
    from rageval_desktop.core.review import selective
    from rageval_desktop.core.store.project import Project

    path = write_demo_project(tmp / "demo.rageval")
    out = {}
    with Project.open(path) as p:
        add_judge(p, "token-f1", "correctness", "lexical", params={"measure": "f1"})
        for run in ("v1", "v2"):
            run_judge_job(p, JobSpec(run=run, judges=["token-f1"]))
        for name in ("token-f1", "minilm-similarity"):
            judge = get_judge(p, name)
            cal = selective.calibration(p, judge)
            conf = selective.confidences(p, judge, cal["rows"], cal["judge"])
            out[name] = (cal["rows"], np.asarray(conf, float), (cal["judge"] >= 4) == (cal["human"] >= 4))
    return out


def demo_table(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """The demo's rated rows as the population: λ̂ from an audit of a random half, the agreement realised on every row
    of the population it decides (see the module)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = demo_rows(Path(tmp))
    rows = found["token-f1"][0]
    assert np.array_equal(rows, found["minilm-similarity"][0])
    print(f"\nThe demo's {rows.size} rated rows as the population, {args.runs} audits of a random half a line "
          f"(δ {args.delta:g}; held: audits whose decided rows of the population agree ≥ 1 − α, goal ≥ "
          f"{1 - args.delta:.0%}; coverage and agreement: means over the audits that decide)")
    print(f"{'judge':<40} {'decides':>8} {'held':>7} {'coverage':>9} {'agreement':>10}")
    for alpha in (args.alpha, args.alpha / 2):
        for name in ("token-f1", "minilm-similarity", "token-f1 → minilm-similarity"):
            held = decides = 0
            coverage, agreement = [], []
            for _ in range(args.runs):
                audit = rng.permutation(rows.size)[: rows.size // 2]
                if " → " in name:
                    a, b = found["token-f1"], found["minilm-similarity"]
                    levels = [f.level for f in cascade_levels([a[1][audit], b[1][audit]], [a[2][audit], b[2][audit]],
                                                              pools=[a[1], b[1]], alpha=alpha, delta=args.delta)]
                    first = a[1] >= levels[0] if levels[0] is not None else np.zeros(rows.size, bool)
                    second = ~first & (b[1] >= levels[1]) if levels[1] is not None else np.zeros(rows.size, bool)
                    decided = first | second
                    agree = np.where(first, a[2], b[2])
                else:
                    _, conf, agree = found[name]
                    level = select(conf[audit], agree[audit], pool=conf, alpha=alpha, delta=args.delta).level
                    decided = conf >= level if level is not None else np.zeros(rows.size, bool)
                if not decided.any():
                    held += 1                    # deciding nothing breaks no guarantee (as in the tables above)
                    continue
                decides += 1
                realised = float(agree[decided].mean())
                held += realised >= 1 - alpha
                coverage.append(decided.mean())
                agreement.append(realised)
            label = f"{name} (α {alpha:g})"
            if decides:
                print(f"{label:<40} {decides / args.runs:>8.1%} {held / args.runs:>7.1%} {np.mean(coverage):>9.1%} "
                      f"{np.mean(agreement):>10.1%}", flush=True)
            else:
                print(f"{label:<40} {0:>8.1%} {held / args.runs:>7.1%} {'—':>9} {'—':>10}", flush=True)

if __name__ == "__main__":
    main()
