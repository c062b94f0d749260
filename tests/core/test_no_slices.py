"""Issue 76.4: a project whose golden rows have no slices labelled every row "(unlinked)" in metrics, the gate and
the dashboard, though every row was linked — and gated "(unlinked)" beside "all", the same questions twice."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.importers import import_golden, import_run
from rageval_desktop.core.judges.registry import add_judge, get_judge
from rageval_desktop.core.review import agreement, ratings
from rageval_desktop.core.store.project import Project


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def project(tmp_path):
    golden = [{"id": f"q{i}", "question": f"Q{i}?", "gold_answer": "A", "gold_chunk_ids": [f"c{i}"],
               **({"slice_tag": "easy"} if i >= 20 else {})} for i in range(24)]
    run = [{"id": f"q{i}", "question": f"Q{i}?", "answer": "A", "retrieved": [{"chunk_id": f"c{i if i % 3 else i + 1}",
                                                                                "text": "t"}]} for i in range(26)]
    run[24]["id"] = run[25]["id"] = "elsewhere"            # two rows answer no golden question
    run[24]["question"], run[25]["question"] = "Z1?", "Z2?"
    path = tmp_path / "p.rageval"
    with Project.create(path) as p:
        import_golden(p, _write(tmp_path / "g.jsonl", golden[:20]))
        for name in ("v1", "v2"):
            import_run(p, _write(tmp_path / f"{name}.jsonl", run[:20]), name)
    return path


def test_a_project_without_slices_is_all_and_nothing_else(project, capsys):
    assert main(["metrics", str(project), "--run", "v1", "--json"]) == 0
    slices = json.loads(capsys.readouterr().out)["slices"]
    assert list(slices) == ["all"] and slices["all"]["n"] == 20
    assert main(["gate", str(project), "--baseline", "v1", "--candidate", "v2", "--metrics", "hit@5", "--json"]) == 3
    found = json.loads(capsys.readouterr().out)
    assert {c["slice"] for c in found["undecided"] + found["safe"] + found["regressions"]} == {"all"}
    assert main(["metrics", str(project), "--run", "v1"]) == 0
    assert "(unlinked)" not in capsys.readouterr().out


def test_rows_without_a_slice_beside_sliced_and_unlinked_ones_are_named_so(tmp_path):
    golden = [{"id": f"q{i}", "question": f"Q{i}?", "gold_answer": "A", **({"slice_tag": "easy"} if i >= 10 else {})}
              for i in range(20)]
    run = [{"id": f"q{i}", "question": f"Q{i}?", "answer": "A", "retrieved": []} for i in range(20)]
    run += [{"id": f"z{i}", "question": f"Z{i}?", "answer": "A", "retrieved": []} for i in range(3)]
    with Project.create(tmp_path / "p.rageval") as p:
        import_golden(p, _write(tmp_path / "g.jsonl", golden))
        import_run(p, _write(tmp_path / "r.jsonl", run), "v1")
        from rageval_desktop.core.metrics.dashboard import dashboard

        found = dashboard(p, "v1")
        assert {"(no slice)", "easy", "(unlinked)", "all"} <= set(found["slices"])
        assert found["slices"]["(no slice)"]["n"] == 10 and found["slices"]["(unlinked)"]["n"] == 3
        add_judge(p, "j", "correctness_binary", "lexical")
        rows = [r for (r,) in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
        from rageval_desktop.core.jobs.judge_job import run_judge_job
        from rageval_desktop.core.jobs.spec import JobSpec

        run_judge_job(p, JobSpec(run="v1", judges=["j"]))
        for r in rows:
            ratings.rate(p, r, "correctness_binary", "ann", 1.0)
        result = agreement.agreement(p, get_judge(p, "j"))
        assert set(result.per_slice) == {"(no slice)", "easy"}          # (unlinked rows have no gold answer to judge)
        assert result.per_slice["(no slice)"]["n"] == 10
