"""Issue 76.3: a peer's scores (ragas' `evaluate(...).to_pandas()` columns, a DeepEval test run's metrics) were kept as
text ("0.6229") no reviewer could audit. A peer judge reads them onto the metric's scale, as verdicts the audit, the
licence and the gate read like any judge's."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement, ratings
from rageval_desktop.core.store.project import Project


@pytest.fixture
def ragas_result(tmp_path):
    """A ragas result as `evaluate(...).to_pandas().to_csv()` writes it: list cells as Python reprs, scores 0-1."""
    rng = np.random.default_rng(76)
    path = tmp_path / "ragas_result.csv"
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["", "user_input", "retrieved_contexts", "response", "reference", "faithfulness",
                      "answer_relevancy"])
        for i in range(40):
            faithful = float(np.clip(rng.beta(2, 1.5), 0, 1))
            out.writerow([i, f"What is item {i}?", str([f"Item {i} is a thing.", "Other text."]), f"It is thing {i}.",
                          f"Item {i} is a thing.", f"{faithful:.4f}", "" if i == 7 else f"{rng.random():.4f}"])
    return path


def test_a_ragas_result_becomes_an_auditable_judge(ragas_result, tmp_path, capsys):
    project = str(tmp_path / "p.rageval")
    Project.create(project).close()
    assert main(["import", "run", project, str(ragas_result), "--run", "v1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["layout"] == "ragas"
    hint = next(w for w in report["warnings"] if w.startswith("another tool's scores are kept with the rows"))
    assert "faithfulness, answer_relevancy" in hint and "--kind peer" in hint
    assert main(["judges", "add", project, "--name", "ragas-faithfulness", "--kind", "peer", "--metric",
                 "faithfulness", "--param", "column=faithfulness"]) == 0
    assert main(["judges", "add", project, "--name", "ragas-relevancy", "--kind", "peer", "--metric",
                 "answer_relevance", "--param", "column=answer_relevancy"]) == 0
    assert main(["judge", project, "--run", "v1", "--judge", "ragas-faithfulness"]) == 0
    assert main(["judge", project, "--run", "v1", "--judge", "ragas-relevancy"]) == 0
    capsys.readouterr()
    with Project.open(project) as p:
        judge = get_judge(p, "ragas-faithfulness")
        got = p.reader().execute("SELECT x.run_row_id, x.score, x.detail, rr.metadata FROM judgments x JOIN run_rows "
                                 "rr ON rr.id = x.run_row_id WHERE x.judge_id = ? AND x.status = 'ok'",
                                 (judge.id,)).fetchall()
        assert len(got) == 40
        for _, score, detail, meta in got:                     # 0-1 onto 1-5, the file's value kept
            raw = float(json.loads(meta)["faithfulness"])
            assert score == pytest.approx(1 + 4 * raw) and json.loads(detail)["peer"]["value"] == raw
        missing = p.reader().execute("SELECT x.status, x.raw_output FROM judgments x JOIN judges j ON "
                                     "j.id = x.judge_id WHERE j.name = 'ragas-relevancy' AND x.status != 'ok'"
                                     ).fetchall()
        assert missing == [("error", "the run's file gave this row no number in 'answer_relevancy' (the cell is "
                                     "empty)")]
        for row, score, _, _ in got:                           # a reviewer who mostly agrees
            ratings.rate(p, row, "faithfulness", "ann", float(np.clip(round(score), 1, 5)))
        found = agreement.agreement(p, judge)
        assert found.n == 40 and found.value is not None and found.value > 0.7
    assert main(["agreement", project, "--judge", "ragas-faithfulness", "--apply"]) == 0
    assert main(["judges", "list", project]) == 0
    assert "ragas-faithfulness" in capsys.readouterr().out


def test_a_peer_judge_says_what_it_needs(tmp_path, capsys):
    project = str(tmp_path / "p.rageval")
    Project.create(project).close()
    assert main(["judges", "add", project, "--name", "x", "--kind", "peer", "--metric", "faithfulness"]) == 1
    assert "--param column=NAME" in capsys.readouterr().err
    assert main(["judges", "add", project, "--name", "x", "--kind", "peer", "--metric", "faithfulness", "--param",
                 "column=f", "--param", "scale=1-0"]) == 1
    assert "its range as LO-HI" in capsys.readouterr().err
