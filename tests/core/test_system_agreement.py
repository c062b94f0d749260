"""System-level agreement (issue 30): Kendall τ between the judge's and the humans' per-run means on the questions
rated in every run — equal to scipy's kendalltau on means computed here from the ratings and the judgments."""

from __future__ import annotations

import json

from scipy.stats import kendalltau

from rageval_desktop.core.importers import import_golden, import_run
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges.registry import add_judge, get_judge
from rageval_desktop.core.review import ratings
from rageval_desktop.core.review.system import system_agreement
from rageval_desktop.core.store.project import Project

N = 12


def three_runs(tmp_path):
    """Three runs of one golden set whose answers state less and less of the reference; a lexical judge; a reviewer
    who rates each answer by a rule of their own (0 or 1)."""
    project = Project.create(tmp_path / "s.rageval", actor="tester")
    golden = [{"id": f"g{i}", "question": f"What is fact {i}?", "gold_answer": "alpha beta gamma delta epsilon",
               "slice_tag": "easy"} for i in range(N)]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in golden))
    import_golden(project, tmp_path / "g.jsonl")
    words = {"v1": "alpha beta gamma delta", "v2": "alpha beta gamma", "v3": "alpha"}
    for run, said in words.items():
        rows = [{"id": f"g{i}", "question": f"What is fact {i}?", "answer": said if i % 4 else "zeta",
                 "retrieved": []} for i in range(N)]
        (tmp_path / f"{run}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        import_run(project, tmp_path / f"{run}.jsonl", run)
    add_judge(project, "recall", "correctness", "lexical", params={"measure": "recall"})
    for run in words:
        run_judge_job(project, JobSpec(run=run))
    for rid, answer in project.reader().execute("SELECT id, answer FROM run_rows").fetchall():
        ratings.rate(project, rid, "correctness", "ann", float(1 + len(answer.split()) if answer != "zeta" else 1))
    return project


def test_kendall_tau_of_the_per_run_means_is_scipys(tmp_path):
    project = three_runs(tmp_path)
    judge = get_judge(project, "recall")
    found = system_agreement(project, judge, resamples=200)
    conn = project.reader()
    means = {}
    for run in ("v1", "v2", "v3"):
        judged = [s for (s,) in conn.execute(
            "SELECT j.score FROM judgments j JOIN run_rows rr ON rr.id = j.run_row_id JOIN runs r ON r.id = rr.run_id "
            "WHERE r.name = ? AND j.status = 'ok'", (run,))]
        human = [s for (s,) in conn.execute(
            "SELECT h.score FROM human_ratings h JOIN run_rows rr ON rr.id = h.run_row_id JOIN runs r ON "
            "r.id = rr.run_id WHERE r.name = ?", (run,))]
        means[run] = (sum(judged) / len(judged), sum(human) / len(human))
    expected = kendalltau([means[r][0] for r in sorted(means)], [means[r][1] for r in sorted(means)]).statistic
    assert found["runs"] == ["v1", "v2", "v3"] and found["questions"] == N
    assert abs(found["tau"] - expected) < 1e-12
    assert found["ci"][0] <= found["tau"] <= found["ci"][1]
    assert expected == 1.0 and found["ordered_same"] == 1.0        # both order v1 > v2 > v3
    project.close()


def test_fewer_than_three_runs_say_why(demo):
    found = system_agreement(demo, get_judge(demo, "answer-recall"), resamples=10)
    assert found["tau"] is None and "needs 3 runs" in found["reason"] and found["runs"] == ["v1", "v2"]


def test_the_cli_reports_the_run_order_beside_the_row_agreement(tmp_path, capsys):
    from rageval_desktop.cli import main

    project = three_runs(tmp_path)
    path = str(project.path)
    project.close()
    assert main(["agreement", path]) == 0
    assert "run order: Kendall τ 1.00" in capsys.readouterr().out
    assert main(["agreement", path, "--json"]) == 0
    system = json.loads(capsys.readouterr().out)[0]["system"]
    assert system["tau"] == 1.0 and system["runs"] == ["v1", "v2", "v3"] and system["reason"] == ""


def test_tau_b_is_scipys_kendalltau_with_ties_and_constant_sides():
    """τ-b computed for many draws at once equals scipy's kendalltau on each: ties on either side (integer means
    tie often), constant sides (NaN), and 2 to 8 runs."""
    import numpy as np

    from rageval_desktop.core.review.system import tau_b

    rng = np.random.default_rng(3)
    for runs in range(2, 9):
        x = rng.integers(0, 4, size=(300, runs)).astype(float)
        y = np.where(rng.random((300, runs)) < 0.5, x, rng.integers(0, 4, size=(300, runs)))
        x[0], y[1] = 2.0, 1.0                                     # a constant side: no τ
        found = tau_b(x, y)
        expected = np.array([kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)])
        assert np.array_equal(np.isnan(found), np.isnan(expected))
        assert np.isnan(found[0]) and np.isnan(found[1])
        assert np.allclose(found[~np.isnan(found)], expected[~np.isnan(expected)], rtol=0, atol=1e-12)
    assert abs(tau_b([0.1, 0.5, 0.3, 0.9], [1, 3, 2, 2]) - kendalltau([0.1, 0.5, 0.3, 0.9], [1, 3, 2, 2]).statistic) \
        < 1e-12


def test_the_bootstrap_interval_is_the_percentiles_of_each_draws_tau(tmp_path, monkeypatch):
    """The interval's draws are scipy's τ on each resample of questions: recomputed here one draw at a time from the
    same generator's draws."""
    import numpy as np

    project = three_runs(tmp_path)
    judge = get_judge(project, "recall")
    found = system_agreement(project, judge, resamples=300, seed=5)
    merged = {}
    conn = project.reader()
    for run in ("v1", "v2", "v3"):
        merged[run] = conn.execute(
            "SELECT rr.golden_id, j.score, h.score FROM judgments j JOIN run_rows rr ON rr.id = j.run_row_id JOIN "
            "runs r ON r.id = rr.run_id JOIN human_ratings h ON h.run_row_id = rr.id WHERE r.name = ? AND "
            "j.status = 'ok' ORDER BY rr.golden_id", (run,)).fetchall()
    judge_q = np.array([[merged[r][q][1] for r in ("v1", "v2", "v3")] for q in range(N)])
    human_q = np.array([[merged[r][q][2] for r in ("v1", "v2", "v3")] for q in range(N)])
    drawn = np.random.default_rng(5).integers(0, N, size=(300, N))
    taus = [kendalltau(judge_q[d].mean(axis=0), human_q[d].mean(axis=0)).statistic for d in drawn]
    taus = [t for t in taus if np.isfinite(t)]
    assert found["ci"] == [float(np.percentile(taus, 2.5)), float(np.percentile(taus, 97.5))]
    project.close()


def kept_draws(project, monkeypatch, judges, resamples):
    """Each judge's run order in one block of shared reads, and the draws the block was asked to keep."""
    from rageval_desktop.core.review import system as system_module
    from rageval_desktop.core.store import reads

    made = []
    real_once = reads.once

    def counted(proj, key, read):
        if key[0] == "bootstrap draws":
            def logged():
                made.append(key)
                return read()
            return real_once(proj, key, logged)
        return real_once(proj, key, read)

    monkeypatch.setattr(system_module.reads, "once", counted)
    with reads.shared(project):
        found = [system_agreement(project, j, resamples=resamples) for j in judges]
    monkeypatch.undo()
    return found, made


def test_judges_in_one_audit_share_the_draws_and_read_as_each_alone(tmp_path, monkeypatch):
    """In a block of shared reads (one `rageval agreement`), every judge with the same shared questions is
    bootstrapped on the same draws, made once; each judge's result equals its own outside the block."""
    project = three_runs(tmp_path)
    add_judge(project, "f1", "correctness", "lexical", params={"measure": "f1"})
    for run in ("v1", "v2", "v3"):
        run_judge_job(project, JobSpec(run=run, judges=["f1"]))
    judges = [get_judge(project, "recall"), get_judge(project, "f1")]
    alone = [system_agreement(project, j, resamples=300) for j in judges]
    together, made = kept_draws(project, monkeypatch, judges, 300)
    assert together == alone
    assert alone[0]["judge_means"] != alone[1]["judge_means"]          # two judges, two readings
    assert made == [("bootstrap draws", N, 300, 0)]          # made once for both
    project.close()


def test_draws_larger_than_one_block_are_made_for_each_judge_not_kept(tmp_path, monkeypatch):
    """Draws of more than one block (n x resamples over 4 million counts, 32 MB) are not kept for the length of the
    audit: each judge makes its own, equal to those it makes alone."""
    project = three_runs(tmp_path)
    judge = get_judge(project, "recall")
    resamples = 4_000_000 // N + 1
    alone = system_agreement(project, judge, resamples=resamples)
    together, made = kept_draws(project, monkeypatch, [judge, judge], resamples)
    assert made == [] and together == [alone, alone]
    project.close()
