"""What the window's workers run: core calls shaped as `fn(*args, ctx)`. No Qt here either."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.paths import user_data_dir

if TYPE_CHECKING:
    from PySide6.QtGui import QImage

    from rageval_desktop.core.golden.dedupe import NewRowsCheck
    from rageval_desktop.core.importers.common import ImportReport
    from rageval_desktop.core.jobs.batch import BatchStats
    from rageval_desktop.core.jobs.judge_job import JobStats
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.metrics.gate import GateResult
    from rageval_desktop.core.metrics.gate_config import GateConfig
    from rageval_desktop.core.reports.plots import Region
    from rageval_desktop.core.review.packs import PackInfo
    from rageval_desktop.core.store.integrity import CheckReport
    from rageval_desktop.core.store.project import Project  # imported inside the functions: not on the start-up path
    from rageval_desktop.core.store.restore import RestoreReport


WINDOW_READER_CACHE_KIB = 4 * 1024


def window_readers() -> None:
    """The window's readers serve its tables and small reads; the pages' large reads run in the helper process
    (gui.chart_process), whose readers keep the usual cache: 4 MB each here, not 16 (about 17 MB of the window's at
    200,000 rows, bench/bench_gui.py --only memory)."""
    from rageval_desktop.core.store.project import Project

    Project.reader_cache_kib = WINDOW_READER_CACHE_KIB


def open_project(path: Path, ctx: TaskContext) -> Project:
    """The full page check an unclean shutdown calls for is deferred (`check_due`): the window runs it on its read
    lane, so a large project opens at once."""
    from rageval_desktop.core.store.project import Project

    window_readers()
    return Project.open(path, check="defer")


def check_new_golden(project: Project, ids: list[str], ctx: TaskContext) -> NewRowsCheck:
    from rageval_desktop.core.golden.dedupe import check_new

    return check_new(project, ids, ctx=ctx)


def check_project(project: Project, reason: str, ctx: TaskContext) -> CheckReport:
    """Every page of the file (read-only, its own connection); a passing check is recorded (and clears the marks an
    unclean shutdown left)."""
    from rageval_desktop.core.store import integrity

    return integrity.check_project(project, reason=reason)


def create_project(path: Path, ctx: TaskContext) -> Project:
    from rageval_desktop.core.store.project import Project

    window_readers()
    return Project.create(path)


def demo_path() -> Path:
    return user_data_dir() / "demo.rageval"


def ensure_demo_project(ctx: TaskContext) -> Path:
    from rageval_desktop.core.demo import write_demo_project

    path = demo_path()
    if not path.exists():
        write_demo_project(path, ctx=ctx)
    return path


def unsupported(path: Path) -> str | None:
    """Why a dropped file cannot be imported (its type or it is a folder), or None."""
    from rageval_desktop.core.base.errors import ImportFailed
    from rageval_desktop.core.importers.readers import file_format

    if path.is_dir():
        return f"{path.name} is a folder: drop a file (a project, a golden set, a run or a corpus)"
    try:
        file_format(path)
    except ImportFailed as exc:
        return f"{exc}. RAGEval Desktop opens .rageval projects and imports tables."
    return None


def import_file(project: Project, path: Path, kind: str, run_name: str | None, fmt: str | None,
                mapping: dict[str, str] | None, allow_clearing: bool = False, *, ctx: TaskContext) -> ImportReport:
    from rageval_desktop.core import importers

    if kind == "golden":
        # the near-duplicate check follows as its own background task (check_new_golden): the rows are saved first
        return importers.import_golden(project, path, fmt=fmt, mapping=mapping or None, ctx=ctx,
                                       allow_clearing=allow_clearing)
    if kind == "run":
        return importers.import_run(project, path, run_name or path.stem, fmt=fmt, mapping=mapping or None, ctx=ctx)
    return importers.import_corpus(project, path, ctx=ctx)


@dataclass(frozen=True)
class Chart:
    png: bytes
    regions: list[Region]   # what a click on the chart is about
    image: QImage | None = None    # the PNG decoded in the worker: decoding it on the GUI thread took 8 ms a chart


def _chart(png: bytes, regions: list[Region]) -> Chart:
    """A chart with its image decoded here, off the GUI thread (a QImage may be made on any thread; the label makes
    its pixmap from it)."""
    from PySide6.QtGui import QImage

    return Chart(png, regions, QImage.fromData(png))


def backup(project: Project, ctx: TaskContext) -> Path:
    return project.backup("manual")


def periodic_backup(project: Project, ctx: TaskContext) -> Path | None:
    return project.backup_if_changed()


def keep_values(project: Project, ctx: TaskContext) -> int:
    """The large runs' values that an edit of the golden set took away (or a file never had), kept again for quick
    reads (core.metrics.values): how many runs. The parts are read and encoded in the helper process, a part at a
    time (`page_numbers.value_parts`; at 200,000 rows the reads held 87 MB more in the window's process), and
    written here."""
    from rageval_desktop.core.metrics.rowdata import keep_missing_values
    from rageval_desktop.gui import chart_process, page_numbers

    def read(project: Project, rid: int, parts: list[str], parallel: bool) -> list[tuple[str, bytes]]:
        return chart_process.read(page_numbers.value_parts, project, ctx, rid, parts)

    kept = len(keep_missing_values(project, parallel=False, read=read))
    if kept:
        # the writer's page cache (up to 64 MB, for a large import's indexes) kept the pages the parts were written
        # to: 26 MB of the window's at 200,000 rows, given back (SQLite's shrink_memory) now the write is done
        project.pragma("shrink_memory")
    return kept


def restore_backup(project_path: Path, backup: Path, ctx: TaskContext) -> RestoreReport:
    from rageval_desktop.core.store.restore import restore

    return restore(project_path, backup)


def add_judge(project: Project, values: dict[str, object], ctx: TaskContext) -> Judge:
    """The judge dialog's values (a dict: run_task passes arguments by position, the context last)."""
    from rageval_desktop.core.judges.registry import add_judge as add

    return add(project, **values)  # type: ignore[arg-type]


def clone_judge(project: Project, judge_name: str, template: str, ctx: TaskContext) -> Judge:
    from rageval_desktop.core.judges.registry import clone_with_rubric, get_judge

    return clone_with_rubric(project, get_judge(project, judge_name), template)


def test_connection(project: Project, judge_name: str, ctx: TaskContext) -> str:
    """One tiny call through the judge's endpoint: says whether the URL, model and key work (core's check)."""
    from rageval_desktop.core.judges.caller import check_connection

    return check_connection(project, judge_name).describe()


def run_judges(project: Project, spec: JobSpec, ctx: TaskContext) -> JobStats:
    from rageval_desktop.core.jobs.judge_job import run_judge_job

    return run_judge_job(project, spec, ctx)


BATCH_POLL_SECONDS = 30.0


def run_batch(project: Project, spec: JobSpec, job_id: int | None, ctx: TaskContext) -> BatchStats:
    """A batch job (new, or resumed by id): submit, poll until the provider is done, judge the rows."""
    from rageval_desktop.core.jobs.batch import run_batch_job

    return run_batch_job(project, spec, ctx, job_id=job_id, poll_seconds=BATCH_POLL_SECONDS)


def waiting_batch_jobs(project: Project, ctx: TaskContext) -> list[dict]:
    from rageval_desktop.core.jobs.batch import waiting

    return waiting(project)


def dashboard_with_plot(project: Project, run: str, baseline: str | None, kind: str, size: tuple[int, int],
                        dark: bool, ctx: TaskContext) -> tuple[dict, dict | None, Chart]:
    """`page_numbers.dashboard`, in the helper process (`chart_process.read`), its chart decoded here."""
    from rageval_desktop.gui import chart_process, page_numbers

    summary, base, png, regions = chart_process.read(page_numbers.dashboard, project, ctx, run, baseline, kind,
                                                     size, dark)
    return summary, base, _chart(png, regions)


def dashboard_chart(summary: dict, base: dict | None, kind: str, size: tuple[int, int], dark: bool,
                    ctx: TaskContext) -> Chart:
    from rageval_desktop.gui import page_numbers

    return _chart(*page_numbers.dashboard_png(summary, base, kind, size, dark))


def compare_with_plot(project: Project, baseline: str, candidate: str, size: tuple[int, int], dark: bool,
                      estimator: str, limit: float, ctx: TaskContext) -> tuple[dict, Chart, GateResult, float]:
    """`page_numbers.compare` with the gate's verdict at `limit`, in the helper process (`chart_process.read`), its
    chart decoded here: (comparison, chart, verdict, limit)."""
    from rageval_desktop.gui import chart_process, page_numbers

    result, png, regions, verdict = chart_process.read(page_numbers.compare, project, ctx, baseline, candidate, size,
                                                       dark, estimator, limit)
    return result, _chart(png, regions), verdict, limit


def record_decision(project: Project, baseline: str, candidate: str, limit: float, estimator: str,
                    folder: str, ctx: TaskContext) -> dict:
    """Compare → Record decision…: the gate as `rageval gate --record` decides it (under the project's saved
    configuration, if any), signed with the user's default key, kept and written."""
    from rageval_desktop.core.metrics import gate_config
    from rageval_desktop.core.metrics.gate import gate
    from rageval_desktop.core.reports.decisions import record_gate, write_record

    result = gate(project, baseline, candidate, max_slice_drop=limit, estimator=estimator,
                  config=gate_config.resolve(project, None))
    from rageval_desktop.core.reports import signing

    record = record_gate(project, result, baseline, candidate, estimator=estimator, waivers=result.waivers)
    files = write_record(record, result, folder)
    return {"id": record["id"], "decision": record["decision"], "signer": record["signature"]["signer"],
            "files": [str(f) for f in files], "notes": signing.said()}


def gate_plan(project: Project, baseline: str, like: str | None, tolerance: float, max_tolerance: float,
              ctx: TaskContext) -> dict:
    """Compare → Plan gate…: `rageval gate plan` (like a past candidate, or every answer anew)."""
    from rageval_desktop.core.metrics.gate_plan import plan

    return plan(project, baseline, like=like, churn=1.0, tolerance=tolerance, max_tolerance=max_tolerance)


def save_gate_config(project: Project, config: GateConfig, ctx: TaskContext) -> None:
    from rageval_desktop.core.metrics import gate_config

    gate_config.save(project, config)


def write_gate_config(config: GateConfig, path: str, ctx: TaskContext) -> str:
    from rageval_desktop.core.metrics import gate_config

    return str(gate_config.write_file(config, path))


def compare_chart(comparison: dict, size: tuple[int, int], dark: bool, ctx: TaskContext) -> Chart:
    from rageval_desktop.gui import chart_process

    png, regions = chart_process.draw("deltas", comparison, size, dark)
    return _chart(png, regions)


def failures(project: Project, run: str, failure: str | None, slice_tag: str | None, metric: str | None,
             sample: int | None, ctx: TaskContext | None, licensed_only: bool = False) -> dict:
    """`page_numbers.failures`, in the helper process (`chart_process.read`)."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.failures, project, ctx, run, failure, slice_tag, metric, sample,
                              licensed_only)


def export_report(project: Project, run: str, out: Path, baseline: str | None, ctx: TaskContext) -> Path:
    from rageval_desktop.core.reports import write_report

    return write_report(project, run, out, baseline=baseline)


def export_packs(project: Project, sample_id: int, reviewers: list[str], out: Path, overlap: int,
                 ctx: TaskContext) -> list[PackInfo]:
    from rageval_desktop.core.review.packs import export_packs as write

    return write(project, sample_id, reviewers, out, overlap)


def import_packs(project: Project, paths: list[str | Path], ctx: TaskContext) -> list[dict[str, Any]]:
    """All the packs or none, score packs and pairwise packs alike: every one is checked before any is written
    (core.review.pair_packs.import_review_packs)."""
    from rageval_desktop.core.review.pair_packs import import_review_packs as merge

    ctx.report(0, 1, f"{len(paths)} pack(s)")
    return merge(project, paths)
