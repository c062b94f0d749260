"""docs/architecture.md's "How to add …" recipes, followed as written: a metric (a MetricSpec and a rubric file), a
computed metric (one `register`), an undoable operation (its arguments and one `define`) and a command (an `add_*`
beside its `cmd_*`, one line in ADDERS). A judge kind is followed by
tests/core/test_judge_kinds.py and a page by tests/gui/test_app_state.py."""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass
from typing import ClassVar

import pytest

from rageval_desktop import cli
from rageval_desktop.cli.base import EXIT_OK, Command, UsageError, open_project, say
from rageval_desktop.core import ops
from rageval_desktop.core.base import vocab
from rageval_desktop.core.base.paths import resources_dir
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.metrics import retrieval
from rageval_desktop.core.metrics.dashboard import dashboard
from tests.core.test_judging import llm_judge, proj  # noqa: F401  (the fixture)
from tests.support.fake_openai import FakeOpenAI


def test_a_metric_is_a_spec_and_a_rubric_file(proj, tmp_path, monkeypatch, capsys):  # noqa: F811
    # 1. its MetricSpec in base/vocab.py
    monkeypatch.setitem(vocab.METRICS, "conciseness",
                        vocab.MetricSpec("conciseness", 1, 5, "row", False, "conciseness", 4))
    # 2. its rubric as resources/rubrics/<default_rubric>.txt
    resources = tmp_path / "resources"
    shutil.copytree(resources_dir() / "rubrics", resources / "rubrics")
    text = (resources / "rubrics" / "faithfulness.txt").read_text(encoding="utf-8")
    (resources / "rubrics" / "conciseness.txt").write_text(
        text.replace("name: faithfulness", "name: conciseness").replace("metric: faithfulness", "metric: conciseness"),
        encoding="utf-8")
    monkeypatch.setattr(rubrics, "resources_dir", lambda: resources)
    # what picks it up by name: --metric's help, a judge, the job, the dashboard
    assert "conciseness" in vocab.metric_choices()
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["judges", "add", "--help"])
    assert "conciseness" in capsys.readouterr().out.replace("\n", " ")
    with FakeOpenAI() as server:
        llm_judge(proj, server, name="concise-judge", metric="conciseness")
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.ok == 20 and stats.errors == 0
    summary = dashboard(proj, "v1")
    assert "conciseness" in summary["judge_metrics"]
    assert summary["slices"]["all"]["conciseness"] == pytest.approx(75.0)   # every reply scores 4 of 1-5


def add_hello(command: Command) -> None:
    """The arguments of `rageval hello` (its handler follows)."""
    p = command("hello", cmd_hello, "say how many golden rows a project has")
    p.add_argument("project")
    p.add_argument("--shout", action="store_true")
    p.add_argument("--json", action="store_true")


def cmd_hello(args: argparse.Namespace) -> int:
    if args.shout and args.json:
        raise UsageError("--shout says it aloud; --json is for machines: choose one")
    from rageval_desktop.core.store.queries import project_info

    with open_project(args.project) as project:
        rows = project_info(project)["golden_rows"]
    say(args, {"golden_rows": rows}, f"hello: {rows} golden rows")
    return EXIT_OK


def test_a_command_is_one_function_pair_and_one_line(demo_file, monkeypatch, capsys):
    monkeypatch.setattr(cli, "ADDERS", [*cli.ADDERS, add_hello])
    assert cli.main(["hello", str(demo_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"golden_rows": 72}
    assert cli.main(["hello", str(demo_file), "--json", "--shout"]) == 2
    assert "choose one" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "hello" in capsys.readouterr().out


def r_precision(hits, k):
    """R-precision: the share of a row's top R retrieved passages that are gold, R its number of gold chunks."""
    import numpy as np

    inside = hits.ranks <= hits.gold[hits.idx]
    return hits.share(np.bincount(hits.idx[inside], minlength=hits.n).astype(float), hits.gold.astype(float))


R_PRECISION = retrieval.RetrievalMetric(
    "rprec", "R-precision", "R-precision: mean share of a question's top R passages that are gold, R its number of "
    "gold chunks", r_precision, cut=False, shown=(retrieval.PLAIN,), headline=(retrieval.PLAIN,),
    brief=(retrieval.PLAIN,), zero="no gold chunk in the top R")


@pytest.fixture
def with_r_precision(monkeypatch):
    """docs/architecture.md's recipe: one `register` call (here undone after the test)."""
    monkeypatch.setattr(retrieval, "REGISTRY", dict(retrieval.REGISTRY))
    retrieval.register(R_PRECISION)


def _json(capsys, argv):
    code = cli.main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_a_computed_metric_is_one_registry_entry_found_everywhere(demo_file, tmp_path, with_r_precision, capsys):
    """R-precision declared once reaches the metrics, compare, the gate and its plan, the failing rows, the charts,
    the reports and the --metrics help, with nothing else touched."""
    from rageval_desktop.core.metrics.failures import failure_rows
    from rageval_desktop.core.reports import plots
    from rageval_desktop.core.reports.content import build_report
    from rageval_desktop.core.store.project import Project

    p = str(demo_file)
    _, metrics = _json(capsys, ["metrics", p, "--run", "v2", "--json"])
    every = metrics["slices"]["all"]
    assert 0 <= every["rprec"] <= 100 and every["rprec_ci"][0] <= every["rprec"] <= every["rprec_ci"][1]
    assert cli.main(["metrics", p, "--run", "v2"]) == 0
    assert "rprec" in capsys.readouterr().out.splitlines()[0]      # the terminal table's head
    _, compared = _json(capsys, ["compare", p, "--baseline", "v1", "--candidate", "v2", "--json"])
    assert "rprec" in compared["metrics"]
    _, decided = _json(capsys, ["gate", p, "--baseline", "v1", "--candidate", "v2", "--json"])
    assert any(c["metric"] == "rprec" for c in [*decided["undecided"], *decided["safe"], *decided["regressions"]])
    assert "'all' hit@5 2, hit@10 2, mrr 2, ndcg@10 2, rprec 2" in decided["covers"]
    _, planned = _json(capsys, ["gate", "plan", p, "--baseline", "v1", "--json"])
    assert any(c["metric"] == "rprec" for c in planned["cells"])
    project = Project.open(demo_file, read_only=True)
    try:
        missed = failure_rows(project, "v2", metric="rprec")
        # a row misses R-precision when none of its top R is gold: every row MRR misses, and more
        assert {r["row_id"] for r in failure_rows(project, "v2", metric="mrr")} < {r["row_id"] for r in missed}
        report = build_report(project, "v2", baseline="v1")
    finally:
        project.close()
    assert "rprec" in report["definitions"] and "top R" in report["definitions"]["rprec"]
    regions: list = []
    plots.slice_bars(report, regions=regions)
    assert "rprec" in {r.metric for r in regions}
    assert cli.main(["report", p, "--run", "v2", "--baseline", "v1", "--out", str(tmp_path / "r.md")]) == 0
    assert "rprec" in (tmp_path / "r.md").read_text(encoding="utf-8")
    assert cli.main(["report", p, "--run", "v2", "--out", str(tmp_path / "r.html")]) == 0
    assert "rprec" in (tmp_path / "r.html").read_text(encoding="utf-8")
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main(["compare", "--help"])
    assert "rprec" in capsys.readouterr().out


@dataclass(frozen=True)
class SetJudgeTimeout(ops.Op):
    """docs/architecture.md's recipe for an undoable operation: its typed arguments…"""
    NAME: ClassVar[str] = "set judge timeout"
    name: str
    seconds: float


def test_an_undoable_operation_is_its_arguments_and_one_spec(demo_file, monkeypatch, capsys):
    """… and one `define(OpSpec(...))`: `ops.run` logs it, `rageval undo` lists and undoes it, and a redo reads its
    logged arguments back into its class."""
    from rageval_desktop.core.judges.registry import get_judge, update_judge
    from rageval_desktop.core.store import oplog
    from rageval_desktop.core.store.changes import Area
    from rageval_desktop.core.store.project import Project

    monkeypatch.setattr(ops, "SPECS", dict(ops.SPECS))
    ops.define(ops.OpSpec(SetJudgeTimeout, (Area.JUDGES,), lambda a: f"set {a.name}'s timeout to {a.seconds:g} s",
                          lambda p, a: {"name": a.name, "timeout": get_judge(p, a.name).params.get("timeout")},
                          lambda p, a: update_judge(p, a.name, timeout=a.seconds),
                          lambda p, i: update_judge(p, i["name"], unset=("timeout",)) if i["timeout"] is None
                          else update_judge(p, i["name"], timeout=i["timeout"])))
    with Project.open(demo_file) as project:
        judge = next(iter(j for j in project.reader().execute("SELECT name FROM judges ORDER BY id")))[0]
        before = get_judge(project, judge).params.get("timeout")
        done = ops.run(project, SetJudgeTimeout(judge, 7.5), initiator="api")
        assert get_judge(project, judge).params["timeout"] == 7.5
    assert cli.main(["undo", str(demo_file), "--list"]) == 0
    assert f"set {judge}'s timeout to 7.5 s" in capsys.readouterr().out
    assert cli.main(["undo", str(demo_file), "--yes"]) == 0
    with Project.open(demo_file) as project:
        assert get_judge(project, judge).params.get("timeout") == before
        undo = oplog.recent(project)[0]
        assert undo is not None and undo.name == oplog.UNDO and undo.args == {"of": done.operation}
        ops.redo(project, undo.id)
        assert get_judge(project, judge).params["timeout"] == 7.5
