"""The Python API: RAGEval Desktop from a notebook or a test suite.

    import rageval_desktop as rv

    with rv.demo("demo.rageval") as p:                 # or rv.open("x.rageval"), rv.create("x.rageval")
        p.metrics("v2").frame                           # one row per slice, every number at full precision
        p.compare("v1", "v2").frame                     # paired deltas with their 95% CIs
        p.gate("v1", "v2").decision                     # rv.Decision: PASS, REGRESSION or NOT_DECISION_GRADE
        assert p.gate("v1", "v2"), p.gate("v1", "v2").markdown()    # true only for a pass

A small, typed surface over core, and the CLI's base: `rageval metrics`, `compare`, `gate`, `judge`, `import`,
`sample`, `ratings import`, `agreement` and `report` call these functions, so their `--json` is exactly `.data`
here. Errors are core's typed errors (`rv.RagevalError` and its subclasses: `ProjectRefused`, `ImportFailed`,
`NotFound`, `WriteFailed`, `JudgeConfigError`, ...), the ones the CLI turns into exit codes 1 and 2; a usage
error (an impossible request) is `rv.UsageError`.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from rageval_desktop.core.base.errors import (
    ImportFailed,
    JudgeConfigError,
    NotFound,
    ProjectExists,
    ProjectRefused,
    RagevalError,
    WriteFailed,
)
from rageval_desktop.core.base.verdicts import Decision

if TYPE_CHECKING:
    import pandas as pd

    from rageval_desktop.core.importers.common import ImportReport
    from rageval_desktop.core.importers.ratings_import import RatingsImport
    from rageval_desktop.core.jobs.judge_job import JobStats
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.metrics.gate import GateResult
    from rageval_desktop.core.metrics.gate_config import GateConfig
    from rageval_desktop.core.review.sampling import Sample
    from rageval_desktop.core.store.project import Project as CoreProject
else:   # get_type_hints(rv.Gate) and (rv.GatePlan) find these names without importing the gate (250 ms)
    GateResult = GateConfig = object

__all__ = ["Comparison", "Decision", "Gate", "GatePlan", "ImportFailed", "JobStopped", "JudgeConfigError", "Metrics",
           "NotFound", "Project", "ProjectExists", "ProjectRefused", "RagevalError", "UsageError", "WriteFailed",
           "create", "demo", "demo_files", "open", "write_demo"]

Progress = Callable[[int, int, str], None]


class UsageError(RagevalError):
    """An impossible request: a limit out of range, a metric the runs do not have (the CLI's exit 2)."""

    @classmethod
    def of(cls, exc: RagevalError) -> UsageError:
        return cls(str(exc), cli_hint=exc.cli_hint, gui_hint=exc.gui_hint)


class JobStopped(RagevalError):
    """A judge job stopped before its end (a refused key, a failed write); `.stats` holds what it saved."""

    def __init__(self, message: str, *, stats: JobStats) -> None:
        super().__init__(message)
        self.stats = stats


# ---------------------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Metrics:
    """A run's scores per slice. `data` is `rageval metrics --json`; `frame` one row per slice (index) with every
    scalar (n, retrieval metrics, judge means, latency, cost); `intervals` the metrics that carry a 95% CI, long."""

    data: dict[str, Any]

    @property
    def frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = {name: {k: v for k, v in s.items() if isinstance(v, int | float) and not isinstance(v, bool)}
                for name, s in self.data["slices"].items()}
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("slice")

    @property
    def intervals(self) -> pd.DataFrame:
        import pandas as pd

        out = [{"slice": name, "metric": key[:-3], "value": s.get(key[:-3]), "ci_low": ci[0], "ci_high": ci[1]}
               for name, s in self.data["slices"].items() for key, ci in s.items()
               if key.endswith("_ci") and isinstance(ci, list | tuple) and len(ci) == 2]
        return pd.DataFrame(out, columns=["slice", "metric", "value", "ci_low", "ci_high"])


@dataclass(frozen=True)
class Comparison:
    """Candidate against baseline on shared questions. `data` is `rageval compare --json`; `frame` one row per
    slice and metric: baseline, candidate, delta (points) and its paired 95% CI."""

    data: dict[str, Any]

    @property
    def frame(self) -> pd.DataFrame:
        import pandas as pd

        cols = ["slice", "metric", "n", "baseline", "candidate", "delta", "ci_low", "ci_high", "se", "df"]
        out = [{"slice": name, "metric": m, "n": c.get("n"), "baseline": c.get("baseline"),
                "candidate": c.get("candidate"), "delta": c.get("delta"), "ci_low": c["ci"][0] if c.get("ci") else None,
                "ci_high": c["ci"][1] if c.get("ci") else None, "se": c.get("se"), "df": c.get("df")}
               for name, entry in self.data["slices"].items() for m in self.data["metrics"] if (c := entry.get(m))]
        return pd.DataFrame(out, columns=cols)


@dataclass(frozen=True)
class Gate:
    """The CI gate's decision. `decision` is a `Decision` (PASS, REGRESSION, NOT_DECISION_GRADE); `bool(gate)` is
    true only for PASS, so `assert project.gate(...)` fails on a regression and on a gate that could not decide;
    `exit_code` is `rageval gate`'s (0, 1, 3). `data` is `rageval gate --json`; `result` core's GateResult;
    `frame` every cell, one row each, with its status."""

    result: GateResult
    data: dict[str, Any] = field(repr=False)

    @property
    def decision(self) -> Decision:
        return self.result.decision

    @property
    def passed(self) -> bool:
        return self.result.passed

    def __bool__(self) -> bool:
        return self.result.passed

    @property
    def exit_code(self) -> int:
        return self.result.exit_code

    @property
    def frame(self) -> pd.DataFrame:
        import pandas as pd

        cols = ["status", "slice", "metric", "baseline", "candidate", "delta", "allowed", "tolerance",
                "detectable_drop", "why"]
        out = [{"status": status, **{k: r.get(k) for k in cols[1:]},
                "delta": None if r.get("drop") is None else -r["drop"]}
               for status, found in (("regression", self.result.regressions), ("undecided", self.result.undecided),
                                     ("safe", self.result.safe), ("not gated", self.result.ungated))
               for r in found]
        out += [{"status": "not evaluated", "slice": u["slice"], "metric": u["metric"], "why": u["why"]}
                for u in self.result.not_evaluated]
        return pd.DataFrame(out, columns=cols)

    def markdown(self) -> str:
        """The pull-request comment `rageval gate --markdown` writes (every name from data escaped)."""
        from rageval_desktop.core.metrics.gate_text import gate_markdown

        return gate_markdown(self.result)


@dataclass(frozen=True)
class GatePlan:
    """`rageval gate plan --json`: per cell, what it can detect and the tolerance proposed (`frame`), and the
    configuration (`config`) that gates what the data can honour; `write(path)` keeps it for a repository
    (`gate(..., config=path)`), `Project.save_gate_config(plan.config)` in the project."""

    data: dict[str, Any] = field(repr=False)
    config: GateConfig

    @property
    def frame(self) -> pd.DataFrame:
        import pandas as pd

        cols = ["slice", "metric", "n", "sd", "detectable", "tolerance", "needed", "gated", "why"]
        return pd.DataFrame([{k: c.get(k) for k in cols} for c in self.data["cells"]], columns=cols)

    def write(self, path: str | Path) -> Path:
        from rageval_desktop.core.metrics.gate_config import write_file

        return write_file(self.config, path)


# ---------------------------------------------------------------------------------------------------------- opening
def _metric_list(metrics: Sequence[str] | str | None) -> list[str] | None:
    """Metric names as given: one name alone is a list of one (a bare "hit@5" was read letter by letter)."""
    if metrics is None:
        return None
    if isinstance(metrics, str):
        return [metrics]
    names = list(metrics)
    bad = [m for m in names if not isinstance(m, str)]
    if bad:
        raise UsageError(f"metrics are names such as 'hit@5' (got {bad[0]!r})")
    return names or None


def _count(value: object, name: str, least: int = 1) -> int:
    """A whole number argument, checked where the API takes it (a size of 'x' raised a bare TypeError)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} is a whole number (got {value!r})")
    if value < least:
        raise UsageError(f"{name} is {least} or more (got {value})")
    return value


def open(path: str | Path, *, read_only: bool = False) -> Project:  # noqa: A001 - rv.open, like sqlite3's connect
    """Open a project. `read_only`: nothing is written — not even a migration: a file of an older schema is read
    through a migrated temporary copy (`Project.read_copy_of` names the file; `rageval migrate` upgrades it in
    place, after a backup). Opened for writing, an older file is migrated first (a backup is taken)."""
    from rageval_desktop.core.store.project import Project as CoreProject

    if read_only:
        return Project(CoreProject.open_for_reading(path))
    return Project(CoreProject.open(path))


def create(path: str | Path, *, name: str | None = None) -> Project:
    """A new, empty project file (it must not exist; its name ends in .rageval)."""
    from rageval_desktop.core.store.project import Project as CoreProject

    path = Path(path)
    if path.suffix != ".rageval":
        raise UsageError(f"project files end in .rageval (got '{path.name}')")
    return Project(CoreProject.create(path, name=name))


def demo(path: str | Path, *, force: bool = False) -> Project:
    """Write the demo project (two runs of 72 questions, judges, ratings) to `path` and open it. `force` replaces
    a file that is there; otherwise an existing file is refused (ProjectExists)."""
    return open(write_demo(path, force=force))


def write_demo(path: str | Path, *, force: bool = False) -> Path:
    """`rageval demo`: the demo project at `path` (a folder gets demo.rageval); its path."""
    from rageval_desktop.core.demo import write_demo_project

    path = Path(path)
    if path.is_dir():
        path = path / "demo.rageval"
    elif path.suffix != ".rageval":    # as `rageval new` asks (a project named 'demo' was written, no extension)
        raise UsageError(f"project files end in .rageval (got '{path.name}'): give {path.name}.rageval, or a "
                         "folder that exists to write demo.rageval into")
    if path.exists() and force:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return write_demo_project(path)


def demo_files(folder: str | Path) -> list[Path]:
    """The files the demo is made from (chunks.jsonl, golden.csv, outputs-v1.jsonl, outputs-v2.jsonl, ratings.csv,
    production.jsonl) in `folder`: material to try the imports on."""
    from rageval_desktop.core.demo import write_demo_files

    return write_demo_files(folder)


# ---------------------------------------------------------------------------------------------------------- project
class Project:
    """An open project file. Use it in a `with` block (or call close()). `core` is core's Project, for
    everything the API does not wrap yet."""

    def __init__(self, core: CoreProject) -> None:
        self.core = core
        self.initiator = "api"      # who the operations log names as doing its undoable edits ("cli": the CLI's)

    def __enter__(self) -> Project:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self.core.close()

    def __repr__(self) -> str:
        return f"<rageval project {str(self.core.path)!r}>"

    @property
    def path(self) -> Path:
        """The project file (for one read through a migrated copy: the file, not the copy)."""
        return Path(self.core.copy_of or self.core.path)

    @property
    def read_copy_of(self) -> Path | None:
        """Set when this read-only project is a migrated temporary copy of an older file (which is unchanged)."""
        return self.core.copy_of

    @property
    def opening_notes(self) -> list[str]:
        """What opening the file did or found that its user must hear (secrets stored in judges' settings before
        they were refused: removed by an open to write, only said by a read-only one); the CLI prints them."""
        return list(self.core.opening_notes)

    # ------------------------------------------------------------------ what is in it
    def info(self) -> dict[str, Any]:
        """`rageval info --json`: golden rows per slice, runs, judges, judgments, ratings."""
        from rageval_desktop.core.store.queries import project_info

        return project_info(self.core)

    def runs(self) -> list[str]:
        return [r["name"] for r in self.info()["runs"]]

    def judges(self) -> pd.DataFrame:
        """One row per judge: name, metric, kind, model, status, and its licence tier with the reasons."""
        import pandas as pd

        from rageval_desktop.core.judges import registry
        from rageval_desktop.core.review.licence import licence

        rows = []
        for judge in registry.list_judges(self.core):
            summary, held = registry.judge_summary(judge), licence(self.core, judge)
            rows.append({**{k: summary.get(k) for k in ("name", "metric", "kind", "model", "status")},
                         "licence": held.tier, "licence_reasons": list(held.reasons)})
        return pd.DataFrame(rows, columns=["name", "metric", "kind", "model", "status", "licence", "licence_reasons"])

    # ------------------------------------------------------------------ imports (all or nothing)
    def import_golden(self, source: str | Path | pd.DataFrame, *, fmt: str | None = None,
                      mapping: dict[str, str] | None = None, default_slice: str | None = None,
                      check_duplicates: bool = False, allow_clearing: bool = False) -> ImportReport:
        """Golden rows from a CSV, JSONL, JSON, Parquet or Excel file, or a DataFrame (the same checks as a file).
        `fmt`: the layout (open-rag-eval, ragas, ...; found from the columns when not given); `mapping`: {column
        in the file: field}, e.g. {"query": "question"}. A field the file leaves out keeps its stored value on
        updated rows; empty cells that would clear stored labels are refused unless `allow_clearing`."""
        from rageval_desktop.core import importers

        with _as_file(source) as (path, named):
            return named(importers.import_golden(self.core, path, fmt=fmt, mapping=_mapping(mapping),
                                           default_slice=default_slice, check_duplicates=check_duplicates,
                                           allow_clearing=allow_clearing))

    def import_run(self, source: str | Path | pd.DataFrame, run: str, *, fmt: str | None = None,
                   mapping: dict[str, str] | None = None, replace: bool = False, notes: str | None = None,
                   rank_by: str = "position") -> ImportReport:
        """A RAG run's outputs (question, answer, retrieved passages, ...) as run `run`; `replace` swaps an
        existing run of that name in one transaction."""
        from rageval_desktop.core import importers

        with _as_file(source) as (path, named):
            return named(importers.import_run(self.core, path, run, fmt=fmt, mapping=_mapping(mapping),
                                        replace=replace, notes=notes, rank_by=rank_by))

    def import_ratings(self, source: str | Path | pd.DataFrame, *, sample_id: int | None = None) -> RatingsImport:
        """Human ratings (row_id or question [+ run], metric, reviewer, score [, passage_rank, item, comment,
        sample_id]). They join the sample named (`sample_id`, or the column), else the newest sample holding every
        target they rate; the report says how many belong to none. From a file it is an undoable operation
        (`rageval undo` withdraws the ratings it made); from a DataFrame it is not (no file to import again)."""
        from rageval_desktop.core import ops
        from rageval_desktop.core.importers import import_ratings

        if isinstance(source, (str, Path)):
            done = ops.run(self.core, ops.ImportRatings(str(Path(source).resolve()), sample_id),
                           initiator=self.initiator)
            return cast("RatingsImport", done.value)
        with _as_file(source) as (path, named):
            return named(import_ratings(self.core, path, sample_id=sample_id))

    # ------------------------------------------------------------------ judges and jobs
    def add_judge(self, name: str, metric: str, kind: str = "llm", *, model: str | None = None,
                  base_url: str | None = None, api_key_env: str | None = None, api_key_keyring: str | None = None,
                  rubric: str | None = None, **params: Any) -> dict[str, Any]:
        """Add a judge (`rageval judges add`). The key is named, never given: `api_key_env="OPENAI_API_KEY"` or
        `api_key_keyring="service/user"`. `params`: concurrency, temperature, seed, max_tokens, timeout, ..."""
        from rageval_desktop.core.judges import registry

        judge = registry.add_judge(self.core, name, metric, kind, rubric=rubric, model=model, base_url=base_url,
                                   api_key_ref=api_key_env or api_key_keyring, params=params)
        return registry.judge_summary(judge)

    def judge(self, run: str, judges: Sequence[str] | None = None, *, slice: str | None = None,  # noqa: A002
              sample: int | None = None, rated_only: bool = False, only_failed: bool = False,
              redo_unparsed: bool = False, concurrency: int | None = None, rpm: float | None = None,
              budget: float | None = None, timeout: float | None = None, use_cache: bool = True,
              progress: Progress | None = None, cancel: threading.Event | None = None,
              raise_on_stop: bool = True) -> JobStats:
        """Run judges over a run's rows, blocking (`rageval judge`). Resumable: what is judged is skipped, so
        calling it again after an interruption pays for nothing twice. `progress(done, total, message)` is called
        as it goes; setting `cancel` stops it (what is saved stays). A job that stops early (a refused key, a
        failed write) raises JobStopped with its stats unless `raise_on_stop=False`; a budget stop returns."""
        spec = job_spec(run, judges, slice=slice, sample=sample, rated_only=rated_only, only_failed=only_failed,
                        redo_unparsed=redo_unparsed, concurrency=concurrency, rpm=rpm, budget=budget,
                        timeout=timeout, use_cache=use_cache)
        return self.run_job(spec, progress=progress, cancel=cancel, raise_on_stop=raise_on_stop)

    def run_job(self, spec: JobSpec, *, progress: Progress | None = None, cancel: threading.Event | None = None,
                raise_on_stop: bool = True) -> JobStats:
        """A live judge job as `job_spec` describes it (`judge` and `rageval judge`/`jobs resume` come here)."""
        from rageval_desktop.core.base.context import TaskContext
        from rageval_desktop.core.jobs.judge_job import run_judge_job

        ctx = TaskContext(on_progress=progress, min_interval_s=0.5)
        if cancel is not None:
            ctx.cancel_event = cancel
        stats = run_judge_job(self.core, spec, ctx)
        if raise_on_stop and stats.stopped in ("fatal", "write_failed"):
            raise JobStopped(f"the job stopped: {stats.message}", stats=stats)
        return stats

    def estimate(self, run: str, judges: Sequence[str] | None = None, **options: Any) -> dict[str, Any]:
        """What a judge job would cost before anything is sent (`rageval judge --dry-run --json`): calls, tokens,
        dollars, and the problems that would stop it (a missing key)."""
        from rageval_desktop.core.jobs.estimate import estimate

        return estimate(self.core, job_spec(run, judges, **options))

    # ------------------------------------------------------------------ numbers and decisions
    def metrics(self, run: str, *, k: Iterable[int] = (5, 10, 50), estimator: str = "mean") -> Metrics:
        """`rageval metrics --json`: every slice's scores with their 95% CIs."""
        from rageval_desktop.core.metrics.dashboard import dashboard

        ks = tuple(sorted({int(x) for x in k}))
        if not ks or min(ks) < 1:
            raise UsageError("k values must be at least 1")
        _estimator(estimator, selective=False)
        summary = dashboard(self.core, run, ks)
        summary["estimator"] = estimator
        return Metrics(summary)

    def compare(self, baseline: str, candidate: str, *, metrics: Sequence[str] | None = None,
                estimator: str = "mean") -> Comparison:
        """`rageval compare --json`: paired deltas on the questions both runs answered."""
        from rageval_desktop.core.metrics.compare import GateUsageError, compare

        try:
            return Comparison(compare(self.core, baseline, candidate, _metric_list(metrics),
                                      _estimator(estimator)))
        except GateUsageError as exc:
            raise UsageError.of(exc) from None

    def plan_gate(self, baseline: str, *, like: str | None = None, churn: float = 1.0, tolerance: float = 5.0,
                  max_tolerance: float = 20.0, allowed: float | None = None, power: float = 0.8,
                  alpha: float = 0.05, metrics: Sequence[str] | None = None) -> GatePlan:
        """`rageval gate plan`: what each cell can detect against `baseline` — pull requests changing answers as
        much as `like` did, or a share `churn` of them anew — and a configuration gating what can be honoured."""
        from rageval_desktop.core.metrics.compare import GateUsageError
        from rageval_desktop.core.metrics.gate_plan import ALLOWED, plan

        try:
            found = plan(self.core, baseline, like=like, churn=churn, tolerance=tolerance,
                         max_tolerance=max_tolerance, allowed=ALLOWED if allowed is None else allowed, power=power,
                         alpha=alpha, metrics=_metric_list(metrics))
        except GateUsageError as exc:
            raise UsageError.of(exc) from None
        config = found.pop("config")
        return GatePlan({**found, "config": config.as_dict()}, config)

    def save_gate_config(self, config: GateConfig | None) -> None:
        """Keep `config` in the project (None removes it): `gate`, the Compare page and reports decide under it."""
        from rageval_desktop.core.metrics import gate_config

        gate_config.save(self.core, config)

    def gate(self, baseline: str, candidate: str, *, max_slice_drop: float = 2.0,
             max_aggregate_drop: float | None = None, metrics: Sequence[str] | None = None,
             require_significant: bool = False, min_slice_n: int | None = None, estimator: str = "mean",
             rule: str = "test", alpha: float | None = None, strict: bool = False,
             allow_unlicensed: str | None = None, config: GateConfig | str | Path | bool | None = None,
             pr: str | None = None, attempts: str | Path | None = None) -> Gate:
        """`rageval gate --json`: may the candidate replace the baseline? `config`: a gate configuration (a
        `GateConfig`, or the path of its file); None uses the one saved in the project, if any, and False none
        (the limits decide). Only licensed judges gate; a waiver needs `allow_unlicensed` with a reason. The
        decision is a `Decision`; `strict` is accepted and changes nothing (it is the default since 0.4). `pr` and
        `attempts`: the pull request (default: the one the CI names) and the ledger of its earlier attempts, which
        this one joins (core.metrics.attempts: retries are spent)."""
        from rageval_desktop.core.base.clock import utcnow
        from rageval_desktop.core.metrics import attempts as tries
        from rageval_desktop.core.metrics import gate_config
        from rageval_desktop.core.metrics.compare import MIN_SLICE_N, GateUsageError
        from rageval_desktop.core.metrics.gate import ALPHA, gate

        try:
            attempt = tries.locate(pr, attempts)
            chosen = gate_config.resolve(self.core, config)
            result = gate(self.core, baseline, candidate, max_slice_drop=max_slice_drop,
                          max_aggregate_drop=max_aggregate_drop, metrics=_metric_list(metrics),
                          require_significant=require_significant,
                          min_slice_n=MIN_SLICE_N if min_slice_n is None else min_slice_n,
                          estimator=_estimator(estimator), rule=rule, alpha=ALPHA if alpha is None else alpha,
                          allow_unlicensed=allow_unlicensed, config=chosen, attempt=attempt)
        except GateUsageError as exc:
            raise UsageError.of(exc) from None
        tries.remember(attempt, result.decision.value, candidate, utcnow())
        return Gate(result, {**result.as_dict(), "estimator": estimator})

    # ------------------------------------------------------------------ review
    def sample(self, run: str, metric: str, size: int = 40, *, seed: int = 0, mode: str = "stratified") -> Sample:
        """Draw rows for reviewers to rate (`rageval sample`); the draw's probabilities are recorded, so agreement
        and corrected estimates weight each rating as it was drawn."""
        from rageval_desktop.core.review import sampling

        return sampling.create_sample(self.core, run, metric, _count(size, "size"), _count(seed, "seed", 0), mode)

    def extend_sample(self, sample_id: int, more: int) -> Sample:
        from rageval_desktop.core.review import sampling

        return sampling.extend_sample(self.core, _count(sample_id, "sample_id"), _count(more, "more"))

    def agreement(self, judge: str | None = None, *, apply: bool = False) -> list[dict[str, Any]]:
        """`rageval agreement --json`: per judge, agreement with the reviewers and its 95% CI, the verdict (keep,
        retire, needs more data), the licence, false accepts and run order. `apply` records the verdicts (a
        retired judge stops counting)."""
        from rageval_desktop.core import ops
        from rageval_desktop.core.judges.registry import get_judge
        from rageval_desktop.core.review import agreement
        from rageval_desktop.core.review.accepts import pass_fail
        from rageval_desktop.core.review.licence import licence
        from rageval_desktop.core.review.system import system_agreement
        from rageval_desktop.core.store import reads

        out = []
        with reads.shared(self.core):        # each judge's pairs, the ratings and the samples' designs read once
            for r in agreement.audit_all(self.core, judge):
                # an operation of core's: `rageval undo` (the app's Ctrl+Z) takes the audit back
                action = ops.run(self.core, ops.RecordAudit(r.judge),
                                 initiator=self.initiator).outcome if apply else None
                held = get_judge(self.core, r.judge)
                item = {"judge": r.judge, "metric": r.metric, "n": r.n, "statistic": r.statistic, "value": r.value,
                        "ci": r.ci, "verdict": r.verdict, "needed": r.needed, "judge_status": r.judge_status,
                        "stats": r.stats, "human_ceiling": r.human_ceiling, "compared_with": r.compared_with,
                        "per_slice": r.per_slice, "per_run": r.per_run, "confusion": r.confusion, "rule": r.rule,
                        "threshold": r.threshold, "min_n": r.min_n, "weighting": r.weighting, "stopping": r.stopping,
                        "anytime_ci": r.anytime_ci, "effective_n": r.effective_n, "bias": r.bias,
                        "look": r.look, "looks": r.looks, "plan_looks": r.plan_looks,
                        "deciding_look": r.deciding_look, "outside_sample": r.outside_sample,
                        "licence": licence(self.core, held, r).as_dict(), "pass_fail": pass_fail(self.core, held),
                        "system": system_agreement(self.core, held)}
                if apply:
                    item["action"] = action
                out.append(item)
        return out

    def selective(self, judge: str | None = None, *, alpha: float | None = None, delta: float | None = None,
                  run: str | None = None) -> list[dict[str, Any]]:
        """`rageval selective --json`: per judge of a metric it can decide (a row's pass or fail), the confidence level
        above which it may decide alone (agreement with the reviewers' pass/fail ≥ 1 − alpha with probability
        ≥ 1 − delta), per slice, and the share of each run it decides (core.review.selective); with `run`, that run's
        pass rate from the judge's decided rows and the reviewers' ratings of its abstentions (None before such a
        sample)."""
        from rageval_desktop.core.judges.registry import get_judge, list_judges
        from rageval_desktop.core.review import selective

        judges = [get_judge(self.core, judge)] if judge else [
            j for j in list_judges(self.core) if selective.decidable(j.metric) is None]
        out = []
        from rageval_desktop.core.metrics.selective_cells import run_estimate

        for j in judges:
            found = selective.selective(self.core, j, alpha=alpha, delta=delta)
            if run is not None:
                found["combined"] = selective.combined(self.core, j, run)
                if found["combined"] is not None:       # the gate's reading: the judge's error there corrected
                    found["combined"]["corrected"] = run_estimate(self.core, j, run)
            out.append(found)
        return out

    def cascade(self, judges: list[str], *, alpha: float | None = None, delta: float | None = None,
                run: str | None = None) -> dict[str, Any]:
        """`rageval selective --cascade --json`: judges in order, cheapest first, each deciding where it is sure
        among the rows the ones before it left; per stage its level, per run the share each judge decides and the
        share left to the desk; with `run`, that run's pass rate from the cascade and the reviewers."""
        from rageval_desktop.core.judges.registry import get_judge
        from rageval_desktop.core.review import selective

        chain = [get_judge(self.core, name.strip()) for name in judges if name.strip()]
        found = selective.cascade(self.core, chain, alpha=alpha, delta=delta)
        if run is not None:
            found["combined"] = selective.combined(self.core, chain, run)
        return found

    def agreement_frame(self, judge: str | None = None) -> pd.DataFrame:
        """The audit as a table: judge, metric, n, statistic, value, ci_low, ci_high, verdict, licence."""
        import pandas as pd

        cols = ["judge", "metric", "n", "statistic", "value", "ci_low", "ci_high", "verdict", "licence"]
        return pd.DataFrame([{**{k: a[k] for k in cols[:5]}, "ci_low": (a["ci"] or (None, None))[0],
                              "ci_high": (a["ci"] or (None, None))[1], "verdict": a["verdict"],
                              "licence": a["licence"]["tier"]} for a in self.agreement(judge)], columns=cols)

    # ------------------------------------------------------------------ reports
    def report(self, run: str, out: str | Path, *, baseline: str | None = None,
               max_slice_drop: float = 2.0) -> Path:
        """An HTML, PDF, Markdown, CSV, JSON or XLSX report of a run (with `baseline`, its comparison and gate)."""
        from rageval_desktop.core.metrics.compare import MIN_SLICE_N, GateUsageError
        from rageval_desktop.core.metrics.gate import check_limits
        from rageval_desktop.core.reports import write_report

        try:
            check_limits(max_slice_drop, None, MIN_SLICE_N)
            return write_report(self.core, run, out, baseline=baseline, max_slice_drop=max_slice_drop)
        except GateUsageError as exc:
            raise UsageError.of(exc) from None


# ---------------------------------------------------------------------------------------------------------- helpers
def job_spec(run: str, judges: Sequence[str] | None = None, *, slice: str | None = None,  # noqa: A002
             sample: int | None = None, rated_only: bool = False, only_failed: bool = False,
             redo_unparsed: bool = False, concurrency: int | None = None, rpm: float | None = None,
             budget: float | None = None, timeout: float | None = None, use_cache: bool = True,
             batch: bool = False, batch_api: str = "auto") -> JobSpec:
    """The job a `judge` call (or `rageval judge`) describes. `batch_api`: with `batch`, the OpenAI-style Batch API
    ('openai'), Anthropic's Message Batches ('anthropic'), or by the endpoint's host ('auto')."""
    from rageval_desktop.core.jobs.message_batches import APIS
    from rageval_desktop.core.jobs.spec import JobSpec

    if batch_api not in APIS:
        raise UsageError(f"the batch API is {', '.join(repr(a) for a in APIS)} (got '{batch_api}')")
    return JobSpec(run=run, judges=list(judges) if judges else None, slice_tag=slice, sample_id=sample,
                   rated_only=rated_only, only_failed=only_failed, redo_failed=redo_unparsed,
                   concurrency=concurrency, rpm=rpm, budget_usd=budget, timeout=timeout, use_cache=use_cache,
                   batch=batch, batch_api=batch_api)


def _estimator(name: str, *, selective: bool = True) -> str:
    """An estimator's name, checked: 'mean' or 'ppi', and for comparisons and the gate 'selective'."""
    known = ("mean", "ppi", "selective") if selective else ("mean", "ppi")
    if name not in known:
        raise UsageError(f"estimator is {', '.join(repr(k) for k in known)} (got '{name}')")
    return name


def _mapping(mapping: dict[str, str] | None) -> dict[str, str] | None:
    return dict(mapping) if mapping else None


class _Report(Protocol):
    file: str


Report = TypeVar("Report", bound=_Report)


class _Namer(Protocol):
    def __call__(self, report: Report, /) -> Report: ...


def _same(report: Report) -> Report:
    return report


def _named(report: Report) -> Report:
    report.file = "a DataFrame"
    return report


@contextmanager
def _as_file(source: object) -> Iterator[tuple[Path, _Namer]]:
    """(a path, a function that names the source in an import's report). A path is used as it is; a DataFrame is
    written to a temporary JSONL file, removed afterwards, so the importers' own checks apply to it as to any file,
    and their report and errors name "the DataFrame" (rows count from 1), not the temporary file."""
    if isinstance(source, str | Path):
        yield Path(source), _same
        return
    to_json = getattr(source, "to_json", None)
    if to_json is None:
        raise UsageError(f"import from a file path or a pandas DataFrame (got {type(source).__name__})")
    with tempfile.TemporaryDirectory(prefix="rageval-") as folder:
        path = Path(folder) / "dataframe.jsonl"
        to_json(path, orient="records", lines=True, force_ascii=False, date_format="iso")
        try:
            yield path, _named
        except ImportFailed as exc:
            raise ImportFailed(exc.detail, file="the DataFrame", row=exc.row, column=exc.column,
                               cli_hint=exc.cli_hint, gui_hint=exc.gui_hint) from None
