"""The audit as a reviewer meets it, measured on real project files (issue 46): populations drawn here, independently
of the app (the judge's labels from a confusion model, the population's κ computed by scikit-learn on every row);
the app draws each sample (`core.review.sampling`), the reviewer rates the targets in the order the desk shows them —
all of them, or part of the way — and the app's own audit (`core.review.agreement`, what `rageval agreement --json`
prints) reads the ratings.

Per line: the bias of the estimate, how often the printed 95% CI covers the population's κ, and how often the audit
keeps or retires the judge (threshold 0.7). Repeated looks: rate 30, look, rate 10 more, ..., as the desk invites.

    .venv/bin/python bench/bench_audit_desk.py              # 100 audits a line (about 25 minutes)
    .venv/bin/python bench/bench_audit_desk.py --runs 40    # quicker, coarser
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import cohen_kappa_score

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rageval_desktop.core.base.clock import utcnow  # noqa: E402
from rageval_desktop.core.importers import import_golden, import_run  # noqa: E402
from rageval_desktop.core.judges.registry import add_judge, get_judge  # noqa: E402
from rageval_desktop.core.review import agreement, sampling  # noqa: E402
from rageval_desktop.core.store.project import Project  # noqa: E402

ROWS = 1000
SLICES = (("common", 0.6, 0.05), ("middle", 0.3, -0.05), ("rare", 0.1, -0.25))   # name, share, agreement shift
SCALES = {"yes/no": ("correctness_binary", [0.0, 1.0], [0.35, 0.65]),
          "1-5": ("correctness", [1.0, 2.0, 3.0, 4.0, 5.0], [0.1, 0.15, 0.2, 0.3, 0.25])}


def population(scale: str, kappa: float, rng: np.random.Generator) -> dict:
    """Human labels from the scale's marginal; the judge repeats the human's label with probability a (by slice:
    a + shift), else draws one from the same marginal — Cohen's and the quadratic κ are then about a."""
    _, labels, probs = SCALES[scale]
    names = rng.choice([s[0] for s in SLICES], ROWS, p=[s[1] for s in SLICES])
    shift = {s[0]: s[2] for s in SLICES}
    human = rng.choice(labels, ROWS, p=probs)
    keep = rng.random(ROWS) < np.clip(kappa + np.array([shift[n] for n in names]), 0.0, 1.0)
    judge = np.where(keep, human, rng.choice(labels, ROWS, p=probs))
    weights = None if scale == "yes/no" else "quadratic"
    truth = float(cohen_kappa_score(human, judge, weights=weights))
    return {"scale": scale, "slices": names, "human": human, "judge": judge, "kappa": truth}


def project_of(pop: dict, folder: Path) -> tuple[Project, dict[int, float], str]:
    """A project file holding the population: golden rows with their slices, one run, one judge's scores."""
    metric = SCALES[pop["scale"]][0]
    golden = [{"id": f"g{i}", "question": f"Question {i}?", "gold_answer": f"Answer {i}.",
               "slice_tag": str(pop["slices"][i])} for i in range(ROWS)]
    run = [{"id": f"g{i}", "question": f"Question {i}?", "answer": f"Answer {i}, maybe.", "retrieved": []}
           for i in range(ROWS)]
    (folder / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in golden))
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in run))
    project = Project.create(folder / f"audit-{pop['scale'].replace('/', '')}.rageval", actor="bench")
    import_golden(project, folder / "g.jsonl")
    import_run(project, folder / "r.jsonl", "v1")
    judge = add_judge(project, "j", metric, "lexical")
    rows = [r for (r,) in project.reader().execute("SELECT id FROM run_rows ORDER BY id")]
    with project.write("judgments") as w:
        w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) VALUES "
                      "(?, ?, ?, 'ok', ?, ?)", [(judge.id, r, f"k{r}", float(s), utcnow())
                                                for r, s in zip(rows, pop["judge"], strict=True)])
    return project, dict(zip(rows, pop["human"], strict=True)), metric


def clear(project: Project) -> None:
    with project.write("next audit") as w:
        w.execute("DELETE FROM human_ratings")
        w.execute("DELETE FROM agreement_reports")
        w.execute("DELETE FROM review_sample_rows")
        w.execute("DELETE FROM review_samples")


def rate(project: Project, sample: sampling.Sample, human: dict[int, float], metric: str, upto: int) -> None:
    """The first `upto` targets in the order the desk shows them, as the desk stores a rating."""
    with project.write("rate") as w:
        w.executemany("INSERT INTO human_ratings (run_row_id, metric, passage_rank, reviewer, score, sample_id, "
                      "created_at) VALUES (?, ?, 0, 'r', ?, ?, ?)",
                      [(r, metric, float(human[r]), sample.id, utcnow()) for r in sample.row_ids[:upto]])


def one_look(project: Project, human: dict, metric: str, truth: float, mode: str, n: int, share: float,
             runs: int, seed: int) -> dict:
    judge = get_judge(project, "j")
    errors, covered, keep, retire = [], 0, 0, 0
    for run in range(runs):
        clear(project)
        sample = sampling.create_sample(project, "v1", metric, n, seed=seed * 10_000 + run, mode=mode)
        rate(project, sample, human, metric, int(round(n * share)))
        found = agreement.agreement(project, judge, breakdowns=False)
        if found.value is None:
            continue
        errors.append(found.value - truth)
        low, high = found.ci
        covered += low is not None and low <= truth <= high
        keep += found.verdict == "keep"
        retire += found.verdict == "retire"
    done = max(1, len(errors))
    return {"bias": float(np.mean(errors)) if errors else float("nan"), "coverage": covered / done,
            "keep": keep / done, "retire": retire / done, "audits": len(errors)}


def looks(project: Project, human: dict, metric: str, mode: str, runs: int, seed: int, top: int = 300) -> dict:
    """Rate 30, look; 10 more, look; ... until the audit keeps or retires, or `top` ratings."""
    judge = get_judge(project, "j")
    out = {"keep": 0, "retire": 0, "undecided": 0}
    used = []
    for run in range(runs):
        clear(project)
        sample = sampling.create_sample(project, "v1", metric, top, seed=seed * 10_000 + run, mode=mode)
        verdict, upto = "needs more ratings", 30
        while upto <= top:
            clear_ratings(project)
            rate(project, sample, human, metric, upto)
            verdict = agreement.agreement(project, judge, breakdowns=False).verdict
            if verdict in ("keep", "retire"):
                break
            upto += 10
        out[verdict if verdict in ("keep", "retire") else "undecided"] += 1
        if verdict in ("keep", "retire"):
            used.append(upto)
    return {**{k: v / runs for k, v in out.items()}, "mean_n": float(np.mean(used)) if used else None}


def planned(project: Project, human: dict, metric: str, kappa: float, mode: str, runs: int, seed: int,
            size: int | None = None) -> dict:
    """The default path: the planner sizes the sample for a judge at the population's κ (100 when it plans none;
    `size` overrides), the reviewer rates it in the desk's order and looks after every 10 ratings; the sample's
    plan looks at a quarter, half, three quarters and all of it (core.review.evidence.look_boundaries), and any
    other look uses the anytime interval. Reports how often it keeps, retires or ends undecided, and the ratings
    made when it decided."""
    from rageval_desktop.core.review.audit_plan import plan_audit

    judge = get_judge(project, "j")
    if size is None:
        plan = plan_audit(project, "v1", metric, mode=mode, kappa=max(kappa, 0.01))
        size = plan["ratings"] if plan["ratings"] and plan["ratings"] <= ROWS else 100
    out = {"keep": 0, "retire": 0, "undecided": 0}
    used = []
    for run in range(runs):
        clear(project)
        sample = sampling.create_sample(project, "v1", metric, size, seed=seed * 10_000 + run, mode=mode)
        verdict, upto = "needs more ratings", min(30, len(sample.row_ids))
        while True:
            clear_ratings(project)
            rate(project, sample, human, metric, upto)
            verdict = agreement.agreement(project, judge, breakdowns=False).verdict
            if verdict in ("keep", "retire") or upto >= len(sample.row_ids):
                break
            upto = min(upto + 10, len(sample.row_ids))
        out[verdict if verdict in ("keep", "retire") else "undecided"] += 1
        if verdict in ("keep", "retire"):
            used.append(upto)
    return {**{k: v / runs for k, v in out.items()}, "size": size, "mean_n": float(np.mean(used)) if used else None}


def clear_ratings(project: Project) -> None:
    with project.write("unrate") as w:
        w.execute("DELETE FROM human_ratings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--looks", type=int, default=40, help="audits a line for the repeated looks")
    parser.add_argument("--planned", type=int, default=40, help="audits a line for the planned default path")
    parser.add_argument("--one-look", type=int, default=1, help="0: leave out the one-look lines")
    parser.add_argument("--scale", choices=list(SCALES), help="one scale only")
    parser.add_argument("--mode", choices=["stratified", "uncertain"], help="one sampling mode only")
    parser.add_argument("--target", type=float, choices=[0.6, 0.75, 0.85],
                        help="one population only (by its target κ; the populations drawn are the same)")
    parser.add_argument("--n", type=int, help="one-look lines of this sample size only (30 and 100 by default; 22, "
                        "say, to set a whole sample of 22 beside the first 22 of 30 rated)")
    args = parser.parse_args()
    started = time.perf_counter()
    rng = np.random.default_rng(46)
    mc = 100 * (0.95 * 0.05 / args.runs) ** 0.5
    with tempfile.TemporaryDirectory() as tmp:
        print(f"One look ({args.runs} audits a line; Monte Carlo error of a 95% coverage ±{mc:.1f} points). rated: "
              "the share of the sample rated, in the desk's order.")
        print(f"{'scale':>6} {'mode':>12} {'κ pop':>6} {'n':>4} {'rated':>6} {'bias':>7} {'coverage':>8} "
              f"{'keep':>6} {'retire':>6}")
        modes = [args.mode] if args.mode else ["stratified", "uncertain"]
        for scale in SCALES:
            for target in (0.6, 0.75, 0.85):
                pop = population(scale, target, rng)
                folder = Path(tmp) / f"{scale.replace('/', '')}-{target}"
                folder.mkdir()
                project, human, metric = project_of(pop, folder)
                try:
                    if (args.scale and scale != args.scale) or (args.target and target != args.target):
                        continue
                    for mode in modes if args.one_look else ():
                        for n in [args.n] if args.n else (30, 100):
                            for share in (1.0, 0.75):
                                r = one_look(project, human, metric, pop["kappa"], mode, n, share, args.runs,
                                             seed=int(target * 100) + n)
                                print(f"{scale:>6} {mode:>12} {pop['kappa']:>6.3f} {n:>4} {share:>6.0%} "
                                      f"{r['bias']:>+7.3f} {r['coverage']:>8.1%} {r['keep']:>6.1%} "
                                      f"{r['retire']:>6.1%}", flush=True)
                    if args.planned:
                        sizes: list[int | None] = [None, 300] if target == 0.75 else [None]
                        for mode in modes:
                            for size in sizes:
                                r = planned(project, human, metric, pop["kappa"], mode, args.planned,
                                            seed=int(target * 100) + 7, size=size)
                                mean_n = "—" if r["mean_n"] is None else f"{r['mean_n']:.0f}"
                                err = 100 * (0.25 / args.planned) ** 0.5
                                print(f"{scale:>6} {mode:>12} {pop['kappa']:>6.3f} planned n {r['size']:>4}"
                                      f"{' (set)' if size else ''}, looked at every 10: keep {r['keep']:.1%} "
                                      f"retire {r['retire']:.1%} undecided {r['undecided']:.1%}, mean n when "
                                      f"decided {mean_n} ({args.planned} audits, ±{err:.0f} points at most)",
                                      flush=True)
                    if args.looks:
                        for mode in modes:
                            r = looks(project, human, metric, mode, args.looks, seed=int(target * 100))
                            mean_n = "—" if r["mean_n"] is None else f"{r['mean_n']:.0f}"
                            print(f"{scale:>6} {mode:>12} {pop['kappa']:>6.3f} looks 30,40,…,300: keep "
                                  f"{r['keep']:.1%} retire {r['retire']:.1%} undecided {r['undecided']:.1%}, mean "
                                  f"n when decided {mean_n} ({args.looks} audits)", flush=True)
                finally:
                    project.close()
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
