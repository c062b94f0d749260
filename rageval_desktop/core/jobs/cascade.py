"""Cascaded judging (issue 47): judges in the order given — cheapest first — each asked only about the rows the ones
before it leave; the last step is the desk.

Stage k's judge is sent the run's rows that stages 1..k−1 do not decide, and the rated rows (of any run) they do not
decide: those calibrate it (core.review.selective.stages, fixed-sequence testing at δ split between the stages). So a
strong, dear judge is paid only where the cheap one is unsure. Each stage is an ordinary judge job — progress, cancel,
budget, one commit per verdict — so running the same command again after a crash resumes and pays for nothing twice;
a stage that stops (cancelled, over budget, failed) stops the cascade, and what was saved stays saved.

A dry run says what each stage would cost: exactly where the stages before it are judged already (their levels and
leftovers are known), else at most the cost of every row.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.jobs.estimate import estimate
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.jobs.work import rated_rows
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import selective
from rageval_desktop.core.review.settings import selective_levels
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

MOST_JUDGES = 5


class CascadeUsageError(RagevalError):
    """A cascade that cannot be run as asked (too few judges, judges of different metrics): exit 2."""


def chain_of(project: Project, names: list[str]) -> list[Judge]:
    """The cascade's judges, checked: two to five, one metric a row's pass or fail decides, each once."""
    names = [n.strip() for n in names if n.strip()]
    if not 2 <= len(names) <= MOST_JUDGES:
        raise CascadeUsageError(f"a cascade names 2 to {MOST_JUDGES} judges, cheapest first (got {len(names)})")
    chain = [get_judge(project, n) for n in names]
    try:
        selective.chain_metric(chain)
    except RagevalError as exc:
        raise CascadeUsageError(str(exc)) from None
    return chain


def _run_rows(project: Project, run: str) -> list[int]:
    return [int(r) for (r,) in project.reader().execute(
        "SELECT id FROM run_rows WHERE run_id = ? ORDER BY position", (find_run(project, run),))]


def _rated_by_run(project: Project, metric: str) -> dict[str, list[int]]:
    """The rated rows of the metric (the calibration rows), by the name of the run they belong to (system runs)."""
    rated = rated_rows(project, {metric})
    out: dict[str, list[int]] = defaultdict(list)
    if not rated:
        return out
    rows = sorted(rated)
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        for row, name in project.reader().execute(
                "SELECT rr.id, r.name FROM run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.purpose = 'run' AND "
                f"rr.id IN ({','.join('?' * len(chunk))})", chunk):
            out[str(name)].append(int(row))
    return out


def _left(project: Project, chain: list[Judge], stages: int, run: str, rated: dict[str, list[int]],
          alpha: float, delta: float) -> dict[str, list[int]]:
    """The rows the first `stages` judges leave, by run: the cascade's run in full, and the rated rows elsewhere."""
    if stages == 0:
        levels: list[float | None] = []
    else:   # δ split as the whole cascade splits it, so these levels are the ones the cascade ends with
        found = selective.stages(project, chain[:stages], alpha=alpha, delta=delta * stages / len(chain))
        levels = [f.level for f in found]
    out: dict[str, list[int]] = {}
    for name in sorted({run, *rated}):
        routed = (selective.route(project, chain[:stages], levels, name) if stages
                  else dict.fromkeys(_run_rows(project, name)))
        wanted = set(routed) if name == run else set(rated[name])
        rows = [r for r, who in routed.items() if who is None and r in wanted]
        if rows:
            out[name] = rows
    return out


def _spec(name: str, judge: Judge, rows: list[int], options: dict[str, Any], budget: float | None,
          whole: bool = False) -> JobSpec:
    """One stage's job on one run: its rows (the whole run: no list kept with the job)."""
    return JobSpec(run=name, judges=[judge.name], row_ids=None if whole else sorted(rows), budget_usd=budget,
                   **options)


def estimate_cascade(project: Project, names: list[str], run: str, *, alpha: float | None = None,
                     delta: float | None = None, **options: Any) -> dict[str, Any]:
    """What each stage would send, before anything is sent or written."""
    alpha, delta = selective_levels(project, alpha, delta)
    chain = chain_of(project, names)
    rated = _rated_by_run(project, chain[0].metric)
    stages: list[dict[str, Any]] = []
    known = True           # every stage before this one is judged already: its leftovers are known
    for k, judge in enumerate(chain):
        left = _left(project, chain, k if known else 0, run, rated, alpha, delta)
        calls = prompt = completion = 0
        cost = 0.0
        problems: list[str] = []
        for name, rows in left.items():
            est = estimate(project, _spec(name, judge, rows, options, None, whole=k == 0 and name == run))
            calls += int(est.get("calls", 0))
            prompt += int(est.get("prompt_tokens", 0))
            completion += int(est.get("completion_tokens", 0))
            cost += float(est.get("cost_usd") or 0.0)
            problems += [p for p in est.get("problems", []) if p not in problems]
        stages.append({"judge": judge.name, "rows": sum(len(v) for v in left.values()),
                       "rows_of_run": len(left.get(run, [])), "calls": calls, "prompt_tokens": prompt,
                       "completion_tokens": completion, "cost_usd": cost, "at_most": not known,
                       "problems": problems})
        known = known and calls == 0
    total = sum(s["cost_usd"] for s in stages)
    return {"cascade": [j.name for j in chain], "metric": chain[0].metric, "run": run, "alpha": alpha,
            "delta": delta, "stages": stages, "cost_usd": total,
            "problems": [p for s in stages for p in s["problems"]],
            "note": "a later stage is sent only the rows the stages before it leave, and the rated rows they leave "
                    "(its calibration); where those stages are not judged yet, its figures are for every row (at "
                    "most)"}


def run_cascade(project: Project, names: list[str], run: str, ctx: TaskContext | None = None, *,
                alpha: float | None = None, delta: float | None = None, budget_usd: float | None = None,
                **options: Any) -> dict[str, Any]:
    """Judge the run with each judge in turn on what the ones before it leave; then each row's decider (a judge, or
    None: the desk) and the cascade's levels. `options`: the job's other settings (concurrency, rpm, use_cache,
    timeout). Stops at the first stage that stops; `stopped` and `message` say why."""
    ctx = ctx or TaskContext()
    alpha, delta = selective_levels(project, alpha, delta)
    chain = chain_of(project, names)
    rated = _rated_by_run(project, chain[0].metric)
    steps: list[dict[str, Any]] = []
    spent = 0.0
    stopped: str | None = None
    message: str | None = None
    for k, judge in enumerate(chain):
        left = _left(project, chain, k, run, rated, alpha, delta)
        step: dict[str, Any] = {"judge": judge.name, "rows": sum(len(v) for v in left.values()),
                                "rows_of_run": len(left.get(run, [])), "jobs": [], "ok": 0, "skipped": 0,
                                "calls": 0, "cost_usd": 0.0}
        steps.append(step)
        for name, rows in left.items():
            budget = None if budget_usd is None else max(0.0, budget_usd - spent)
            stats = run_judge_job(project, _spec(name, judge, rows, options, budget, whole=k == 0 and name == run),
                                  ctx)
            spent += stats.cost_usd
            step["jobs"].append(stats.job_id)
            step["ok"] += stats.ok
            step["skipped"] += stats.skipped
            step["calls"] += stats.calls
            step["cost_usd"] += stats.cost_usd
            if stats.stopped:
                stopped, message = stats.stopped, stats.message
                break
        if stopped:
            break
    out: dict[str, Any] = {"cascade": [j.name for j in chain], "metric": chain[0].metric, "run": run,
                           "alpha": alpha, "delta": delta, "steps": steps, "cost_usd": spent,
                           "stopped": stopped, "message": message}
    if stopped:
        return out
    found = selective.cascade(project, chain, alpha=alpha, delta=delta, runs=[run])
    levels = [s["level"] for s in found["stages"]]
    routed = selective.route(project, chain, levels, run)
    ext = dict(project.reader().execute("SELECT id, external_id FROM run_rows WHERE run_id = ?",
                                        (find_run(project, run),)))
    out.update({"stages": found["stages"], "shares": found["runs"][run],
                "rows": {str(ext[r]): who for r, who in routed.items()},
                "desk": sum(1 for who in routed.values() if who is None)})
    return out


def describe(out: dict[str, Any]) -> str:
    """A cascade's run in words (display rounding)."""
    chain = " → ".join(out["cascade"])
    lines = [f"cascade {chain} → desk on {out['run']} ({out['metric']}): agreement with the reviewers' pass/fail "
             f"≥ {1 - out['alpha']:.0%} on every judge's decided rows, with probability ≥ {1 - out['delta']:.0%}"]
    for s in out["steps"]:
        lines.append(f"  {s['judge']}: asked about {s['rows']} row(s) ({s['rows_of_run']} of {out['run']}, the rest "
                     f"rated rows that calibrate it): {s['ok']} judged now, {s['skipped']} already; {s['calls']} "
                     f"calls, ${s['cost_usd']:.4f}")
    if out.get("stopped"):
        lines.append(f"stopped ({out['stopped']}): {out['message']} — run the same command to go on")
        return "\n".join(lines)
    lines += [selective.stage_line(s) for s in out["stages"]]
    shares = out["shares"]
    parts = ", ".join(f"{name} {shares[name]:.0%}" for name in out["cascade"])
    lines.append(f"  {out['run']} ({shares['rows']} rows): {parts}, desk {shares['desk']:.0%} ({out['desk']} rows)")
    if out["desk"]:
        lines.append(f"  the desk's rows: rageval sample PROJECT --abstained {','.join(out['cascade'])} --run "
                     f"{out['run']} draws them for review")
    return "\n".join(lines)


def describe_estimate(est: dict[str, Any]) -> str:
    lines = [f"cascade {' → '.join(est['cascade'])} on {est['run']}: would send"]
    for s in est["stages"]:
        most = "at most " if s["at_most"] else ""
        lines.append(f"  {s['judge']}: {most}{s['calls']} call(s) on {s['rows']} row(s), {most}${s['cost_usd']:.4f}")
    lines.append(f"  {est['note']}")
    return "\n".join(lines)
