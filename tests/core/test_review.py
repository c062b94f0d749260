"""Sampling, ratings, agreement statistics and the retirement rule."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.judges.registry import add_judge, get_judge
from rageval_desktop.core.review import agreement, agreement_stats, ratings, sampling, settings
from rageval_desktop.core.store.project import Project
from tests.conftest import REPO
from tests.core.test_judging import make_project


# --- statistics against textbook values and a second implementation ---------------------------------
def test_krippendorff_alpha_textbook_values():
    import krippendorff

    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders x 12 units example
    nan = np.nan
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])
    assert krippendorff.alpha(reliability_data=data, level_of_measurement="nominal") == pytest.approx(0.743, abs=1e-3)
    assert krippendorff.alpha(reliability_data=data, level_of_measurement="interval") == pytest.approx(0.849, abs=1e-3)


def hand_kappa(a, b, labels, weights=None):
    """Cohen's kappa written out from its definition (the second implementation)."""
    k = len(labels)
    index = {v: i for i, v in enumerate(labels)}
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(1), observed.sum(0))
    i, j = np.indices((k, k))
    w = ((i - j) ** 2) / (k - 1) ** 2 if weights == "quadratic" else (i != j).astype(float)
    return 1 - (w * observed).sum() / (w * expected).sum()


def _statistic(name, judge, human, labels):
    index = {v: i for i, v in enumerate(labels)}
    return agreement_stats.statistic(name, [index[v] for v in human], [index[v] for v in judge], len(labels))


@pytest.mark.parametrize("seed", range(10))
def test_kappas_match_the_definition(seed):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, 60).astype(float)
    judge = np.clip(human + rng.integers(-1, 2, 60), 1, 5).astype(float)
    labels = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert _statistic("cohen_kappa", judge, human, labels) == pytest.approx(hand_kappa(human, judge, labels))
    assert _statistic("quadratic_kappa", judge, human, labels) == pytest.approx(
        hand_kappa(human, judge, labels, "quadratic"))
    assert _statistic("exact", judge, human, labels) == pytest.approx(np.mean(judge == human))
    assert _statistic("within_one", judge, human, labels) == 1.0


def test_cohen_kappa_textbook_example():
    # 50 items, two raters, yes/no: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no -> kappa = 0.4 (Wikipedia example)
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert _statistic("cohen_kappa", np.array(b, float), np.array(a, float), [0.0, 1.0]) == pytest.approx(0.4)


# --- a project with ratings ------------------------------------------------------------------------
@pytest.fixture
def rated(tmp_path):
    """60 rows judged by a lexical binary judge; helpers to write ratings that agree on a chosen share."""
    p = make_project(tmp_path / "r.rageval", n=60)
    judge = add_judge(p, "lex", "correctness_binary", "lexical", params={"threshold": 0.5})
    rows = [r[0] for r in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
    with p.write("judgments") as w:
        w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                      "VALUES (?, ?, ?, 'ok', ?, ?)", [(judge.id, r, f"k{r}", float(i % 2), utcnow())
                                                        for i, r in enumerate(rows)])
    yield p, rows
    p.close()


def rate_agreeing(p, rows, n, agree, reviewer="ann"):
    """Rate the first n rows so that `agree` of them match the judge (score = i % 2)."""
    for i, r in enumerate(rows[:n]):
        judge_score = i % 2
        human = judge_score if i < agree else 1 - judge_score
        ratings.rate(p, r, "correctness_binary", reviewer, human)


@pytest.mark.parametrize("rule, n, agree, verdict", [
    ("point", 29, 29, "needs more ratings"),     # perfect agreement, but n is under the minimum
    ("point", 30, 30, "keep"),
    ("point", 100, 69, "retire"),                # exact agreement 0.69 < 0.7: the old rule retires on noise
    ("point", 100, 71, "keep"),
    ("interval", 29, 29, "needs more ratings"),  # the CI decides, the minimum n does not allow it yet
    ("interval", 30, 30, "keep"),
    ("interval", 100, 69, "needs more ratings"),  # CI about [0.60, 0.78] straddles 0.7
    ("interval", 100, 71, "needs more ratings"),
    ("interval", 100, 90, "keep"),               # CI about [0.84, 0.95], wholly above
    ("interval", 100, 50, "retire"),             # CI about [0.40, 0.60], wholly below
])
def test_retirement_boundaries(rated, rule, n, agree, verdict, tmp_path):
    p, rows = rated
    if n > len(rows):
        extra = make_project(tmp_path / "big.rageval", n=n)
        p, rows = extra, [r[0] for r in extra.reader().execute("SELECT id FROM run_rows ORDER BY id")]
        judge = add_judge(p, "lex", "correctness_binary", "lexical")
        with p.write("j") as w:
            w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                          "VALUES (?, ?, ?, 'ok', ?, ?)", [(judge.id, r, f"k{r}", float(i % 2), utcnow())
                                                            for i, r in enumerate(rows)])
    settings.set_policy(p, statistic="exact", threshold=0.7, min_n=30, rule=rule)
    rate_agreeing(p, rows, n, agree)
    result = agreement.agreement(p, get_judge(p, "lex"))
    assert (result.n, result.verdict) == (n, verdict)
    assert result.value == pytest.approx(agree / n)
    low, high = result.ci
    if rule == "interval" and verdict == "keep":
        assert low >= 0.7
    if rule == "interval" and verdict == "retire":
        assert high < 0.7
    if verdict == "needs more ratings":
        assert result.needed >= max(1, 30 - n)
    else:
        assert result.needed == 0


def _policy(**kw):
    return settings.RetirementPolicy(**{"threshold": 0.7, "min_n": 30, **kw})


@pytest.mark.parametrize("value, ci, old, new", [
    (0.6897, [0.47, 0.84], "retire", "needs more ratings"),   # the pair: nearly the same evidence...
    (0.7089, [0.49, 0.84], "keep", "needs more ratings"),     # ...opposite verdicts under the old rule
    (0.80, [0.71, 0.88], "keep", "keep"),
    (0.55, [0.41, 0.69], "retire", "retire"),
    (0.70, [0.70, 0.80], "keep", "keep"),                     # the lower bound at the threshold keeps
])
def test_interval_rule_against_the_point_rule(value, ci, old, new):
    assert agreement.decide(value, ci, 30, _policy(rule="point"))[0] == old
    assert agreement.decide(value, ci, 30, _policy(rule="interval"))[0] == new


def test_decision_uses_unrounded_values():
    # 0.6916548 rounds to 0.6917 (>= 0.69168): the old code kept it; unrounded it is below the threshold
    pol = _policy(rule="point", threshold=0.69168)
    assert agreement.decide(0.6916548, [0.5, 0.8], 30, pol)[0] == "retire"
    pol = _policy(rule="interval", threshold=0.69168)
    assert agreement.decide(0.75, [0.6916548, 0.8], 30, pol)[0] == "needs more ratings"


def test_needed_estimate_shrinks_with_the_distance_to_the_threshold():
    pol = _policy()
    near = agreement.decide(0.72, [0.55, 0.86], 30, pol)
    far = agreement.decide(0.85, [0.68, 0.95], 30, pol)
    assert near[0] == far[0] == "needs more ratings"
    # sized for 80% power against the anytime interval (issue 27; was: a coin flip, n' = n (half/distance)^2):
    # the distance to the threshold equals (anytime boundary + z_0.8) standard errors at n'
    from scipy.stats import norm

    from rageval_desktop.core.review.evidence import boundary

    for (value, (lo, hi)), (_, more) in (((0.72, (0.55, 0.86)), near), ((0.85, (0.68, 0.95)), far)):
        sigma = (hi - lo) / 2 / 1.959964 * 30 ** 0.5
        m = 30 + more
        assert (boundary(m, tuned_for=60) + norm.ppf(0.8)) * sigma / m ** 0.5 == pytest.approx(abs(value - 0.7),
                                                                                            rel=0.01)
    assert near[1] > 10 * far[1] > 0
    assert agreement.decide(0.70, [0.6, 0.8], 30, pol)[1] == agreement.MAX_ESTIMATE


def test_apply_retires_records_and_reinstates_only_after_a_pass(rated):
    p, rows = rated
    rate_agreeing(p, rows, 40, 20)              # kappa ~ 0: retire
    result = agreement.agreement(p, get_judge(p, "lex"))
    assert result.statistic == "cohen_kappa" and result.verdict == "retire"
    assert result.ci[0] is not None and result.ci[0] <= result.value <= result.ci[1]
    assert agreement.apply(p, result) == "retired"
    judge = get_judge(p, "lex")
    assert judge.status == "retired" and "cohen_kappa" in p.reader().execute(
        "SELECT status_reason FROM judges").fetchone()[0]
    report = p.reader().execute("SELECT verdict, n, statistic FROM agreement_reports").fetchone()
    assert report == ("retire", 40, "cohen_kappa")
    assert p.reader().execute("SELECT COUNT(*) FROM audit_log WHERE action = 'audit: retired'").fetchone()[0] == 1
    with pytest.raises(RagevalError, match="only after a new audit passes"):
        agreement.set_status(p, "lex", "active", "I trust it")
    # fix the disagreements: withdraw the bad ratings and re-rate them in agreement
    bad = [r for r, in p.reader().execute("SELECT id FROM human_ratings ORDER BY id")][20:40]
    for rid in bad:
        ratings.withdraw(p, rid)
    for i, r in enumerate(rows[20:40], start=20):
        ratings.rate(p, r, "correctness_binary", "ann", i % 2)
    again = agreement.agreement(p, get_judge(p, "lex"))
    assert again.verdict == "keep" and again.value == 1.0
    assert agreement.apply(p, again) == "reinstated"
    assert get_judge(p, "lex").status == "active"


def test_retired_judge_leaves_dashboards(rated):
    from rageval_desktop.core.metrics.dashboard import dashboard

    p, _ = rated
    assert "correctness_binary" in dashboard(p, "v1")["judge_metrics"]
    agreement.set_status(p, "lex", "retired", "drifted")
    d = dashboard(p, "v1")
    assert d["judge_metrics"] == [] and d["retired_judges"][0]["judge"] == "lex"


def test_consensus_of_several_reviewers_and_human_ceiling(rated):
    p, rows = rated
    for i, r in enumerate(rows[:30]):
        ratings.rate(p, r, "correctness_binary", "ann", i % 2)
        ratings.rate(p, r, "correctness_binary", "bob", i % 2 if i % 5 else 1 - i % 2)
    result = agreement.agreement(p, get_judge(p, "lex"))
    assert result.reviewers == 2 and "each reviewer" in result.compared_with and result.n == 30
    assert result.human_ceiling is not None and 0 < result.human_ceiling < 1
    # the judge is compared with each reviewer (issue 27; was: with their median, ties rounded down, so a judge
    # siding with either reviewer on a split counted as wrong, or as right, by the rounding): 60 pairs, and the 6
    # rows bob flipped count half right (ann) and half wrong (bob)
    matrix = np.array(result.confusion["matrix"])
    assert matrix.sum() == 60 and matrix[0][1] + matrix[1][0] == 6
    assert result.stats["exact"] == pytest.approx(1 - 3 / 30)


def test_sampling_is_stratified_reproducible_and_extendable(rated):
    p, _ = rated
    a = sampling.create_sample(p, "v1", "correctness_binary", size=20, seed=3)
    b = sampling.create_sample(p, "v1", "correctness_binary", size=20, seed=3)
    c = sampling.create_sample(p, "v1", "correctness_binary", size=20, seed=4)
    assert a.row_ids == b.row_ids and a.row_ids != c.row_ids and len(set(a.row_ids)) == 20
    strata = dict(p.reader().execute("SELECT run_row_id, stratum FROM review_sample_rows WHERE sample_id = ?",
                                     (a.id,)))
    bands = {s.split("|")[1] for s in strata.values()}
    slices = {s.split("|")[0] for s in strata.values()}
    assert bands == {"low", "high"} and slices == {"easy", "edge"}
    counts = [list(strata.values()).count(k) for k in set(strata.values())]
    assert max(counts) - min(counts) <= 1        # balanced across the four strata
    grown = sampling.extend_sample(p, a.id, 10)
    assert grown.row_ids[:20] == a.row_ids and len(set(grown.row_ids)) == 30


def test_rating_validation(rated):
    p, rows = rated
    with pytest.raises(RagevalError, match="whole number from 0 to 1"):
        ratings.rate(p, rows[0], "correctness_binary", "ann", 3)
    with pytest.raises(RagevalError, match="reviewer name"):
        ratings.rate(p, rows[0], "correctness_binary", " ", 1)
    skip = ratings.rate(p, rows[0], "correctness_binary", "ann", None, skipped=True)
    assert skip.skipped and ratings.current(p, "correctness_binary") == {}


RATE_THEN_HANG = """
import sys, time
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.review.ratings import rate
p = Project.open(sys.argv[1])
rate(p, int(sys.argv[2]), "correctness_binary", "ann", 1)
print("rated", flush=True)
time.sleep(60)
"""


def test_a_rating_survives_a_kill(rated):
    p, rows = rated
    proc = subprocess.Popen([sys.executable, "-c", RATE_THEN_HANG, str(p.path), str(rows[0])], cwd=REPO,
                            stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    assert proc.stdout.readline().strip() == "rated"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with Project.open(p.path) as fresh:
        assert ratings.current(fresh, "correctness_binary") == {rows[0]: 1.0}


def test_cli_sample_ratings_agreement(rated, tmp_path, capsys):
    p, rows = rated
    path = str(p.path)
    assert main(["sample", path, "--run", "v1", "--metric", "correctness_binary", "--size", "30", "--json"]) == 0
    sample = json.loads(capsys.readouterr().out)
    assert len(sample["row_ids"]) == 30
    questions = dict(p.reader().execute("SELECT id, question FROM run_rows"))
    lines = ["question,metric,reviewer,score"] + [f"{questions[r]},correctness_binary,carol,{i % 2}"
                                                  for i, r in enumerate(rows[:35])]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    assert main(["ratings", "import", path, str(tmp_path / "r.csv")]) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("row_id,metric,reviewer,score\n999999,correctness_binary,carol,1\n")
    assert main(["ratings", "import", path, str(bad)]) == 1
    capsys.readouterr()
    assert main(["agreement", path, "--apply", "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)
    assert {"judge", "metric", "n", "statistic", "value", "ci", "verdict"} <= set(result)
    assert (result["n"], result["verdict"], result["action"]) == (35, "keep", "recorded")
    assert main(["ratings", "export", path, "--out", str(tmp_path / "out.jsonl")]) == 0
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 35
    assert main(["retire", path, "lex", "--reason", "testing"]) == 0
    assert main(["reinstate", path, "lex", "--reason", "audit passed"]) == 0


def test_a_rewritten_rubric_is_audited_on_rows_already_rated(tmp_path, monkeypatch):
    """Clone a judge onto an edited rubric, run it on the rated rows only, and get its agreement at once."""
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import clone_with_rubric
    from rageval_desktop.core.reports.content import build_report
    from tests.support.fake_openai import FakeOpenAI, Reply

    p = make_project(tmp_path / "c.rageval", n=40)
    rows = [r[0] for r in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
    for i, r in enumerate(rows[:32]):
        ratings.rate(p, r, "correctness", "ann", 1 + i % 5)

    def mirror(body, n):  # the judge agrees with the reviewer: question i gets 1 + i % 5
        from tests.support.fake_openai import question_of

        i = int(question_of(body).split()[-1].rstrip("?"))
        return Reply(f"Feedback: ok [RESULT] {1 + i % 5}")

    with FakeOpenAI(mirror) as server:
        judge = add_judge(p, "gpt", "correctness", "llm", model="m", base_url=server.url)
        clone = clone_with_rubric(p, judge, p.reader().execute("SELECT template FROM rubrics").fetchone()[0]
                                  + "\nBe strict.\n")
        stats = run_judge_job(p, JobSpec(run="v1", judges=[clone.name], rated_only=True))
        assert (stats.rows, server.calls) == (32, 32)
    result = agreement.agreement(p, get_judge(p, clone.name))
    assert result.n == 32 and result.stats["exact"] == 1.0
    agreement.apply(p, result)
    health = {j["judge"]: j for j in build_report(p, "v1")["judge_health"]}
    assert health[clone.name]["agreement"]["verdict"] == "pass"
    assert "only reviewer" in health[clone.name]["agreement"]["compared_with"]
    p.close()


def test_a_retired_judge_is_audited_again_on_the_rated_rows_and_reinstated_by_a_passing_audit(tmp_path):
    """Was: a retired judge, changed, could not be run at all ("reinstate it after a passing audit to run it") — and
    could not pass an audit without being run. Now the rated rows are its audit: only they are judged."""
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from tests.support.fake_openai import FakeOpenAI, Reply, question_of

    p = make_project(tmp_path / "r.rageval", n=40)
    rows = [r[0] for r in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
    for i, r in enumerate(rows[:32]):
        ratings.rate(p, r, "correctness", "ann", 1 + i % 5)

    def mirror(body, n):
        return Reply(f"Feedback: ok [RESULT] {1 + int(question_of(body).split()[-1].rstrip('?')) % 5}")

    with FakeOpenAI(mirror) as server:
        add_judge(p, "gpt", "correctness", "llm", model="m", base_url=server.url)
        agreement.set_status(p, "gpt", "retired", "a rubric to rewrite")
        with pytest.raises(RagevalError, match=r"is retired: it judges only the rows people rated"):
            run_judge_job(p, JobSpec(run="v1", judges=["gpt"]))
        stats = run_judge_job(p, JobSpec(run="v1", judges=["gpt"], rated_only=True))
        assert (stats.rows, server.calls) == (32, 32)
    result = agreement.agreement(p, get_judge(p, "gpt"))
    assert result.verdict == "keep"
    agreement.apply(p, result)
    assert get_judge(p, "gpt").status == "active"
    p.close()


def test_per_passage_ratings_import_and_count(tmp_path, monkeypatch, capsys):
    """Was: `ratings import` dropped passage_rank, so UMBRELA ratings landed on rank 0 and agreement had n = 0;
    and a column it did not use vanished without a word."""
    monkeypatch.setenv("UMB_KEY", "sk-test-0123456789")
    p = make_project(tmp_path / "p.rageval", n=20)
    judge = add_judge(p, "umbrela", "passage_relevance", "llm", model="m", base_url="http://127.0.0.1:9/v1",
                      api_key_ref="UMB_KEY")
    rows = [r for r, in p.reader().execute("SELECT id FROM run_rows ORDER BY id")]
    with p.write("judged") as w:
        w.executemany("INSERT INTO judgments (judge_id, run_row_id, passage_rank, idem_key, status, score, "
                      "created_at) VALUES (?, ?, ?, ?, 'ok', ?, ?)",
                      [(judge.id, r, rank, f"k{r}-{rank}", 3.0 if rank == 1 else 0.0, utcnow())
                       for r in rows for rank in (1, 2)])
    lines = ["row_id,passage_rank,metric,reviewer,score,confidence"]
    lines += [f"{r},{rank},passage_relevance,ann,{3 if rank == 1 else 0},high" for r in rows for rank in (1, 2)]
    (tmp_path / "umbrela.csv").write_text("\n".join(lines) + "\n")
    path = str(p.path)
    p.close()
    assert main(["ratings", "import", path, str(tmp_path / "umbrela.csv"), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["imported"] == 40
    assert "column(s) not used: confidence" in captured.err
    with Project.open(path) as fresh:
        ranks = sorted({r for r, in fresh.reader().execute("SELECT passage_rank FROM human_ratings")})
        assert ranks == [1, 2]
        result = agreement.agreement(fresh, get_judge(fresh, "umbrela"))
        assert result.n == 40 and result.value == 1.0
    (tmp_path / "bad.csv").write_text("row_id,passage_rank,metric,reviewer,score\n"
                                      f"{rows[0]},7,passage_relevance,ann,2\n")
    assert main(["ratings", "import", path, str(tmp_path / "bad.csv")]) == 1
    err = capsys.readouterr().err
    assert "bad.csv" in err and "row 1" in err and "passage_rank" in err and "no retrieved passage at rank 7" in err
    (tmp_path / "missing.csv").write_text(f"row_id,metric,reviewer,score\n{rows[0]},passage_relevance,ann,2\n")
    assert main(["ratings", "import", path, str(tmp_path / "missing.csv")]) == 1
    assert "rated per retrieved passage" in capsys.readouterr().err


def test_ratings_by_question_in_several_runs_need_the_run(tmp_path, capsys):
    """Was (issue 28): ratings given by question without a run column all landed on v1 when the question was in
    several runs; they are refused as ambiguous, with what to add."""
    path = tmp_path / "d.rageval"
    assert main(["demo", str(path)]) == 0
    with Project.open(path) as p:
        question = p.reader().execute("SELECT question FROM run_rows LIMIT 1").fetchone()[0]
        before = p.reader().execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0]
    (tmp_path / "r.jsonl").write_text(json.dumps({"question": question, "metric": "correctness", "reviewer": "ann",
                                                  "score": 3}) + "\n")
    assert main(["ratings", "import", str(path), str(tmp_path / "r.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "is in 2 run rows (runs: v1, v2); add a run column" in err and "row 1" in err
    (tmp_path / "r.jsonl").write_text(json.dumps({"question": question, "run": "v2", "metric": "correctness",
                                                  "reviewer": "ann", "score": 3}) + "\n")
    assert main(["ratings", "import", str(path), str(tmp_path / "r.jsonl")]) == 0
    with Project.open(path) as p:
        run = p.reader().execute("SELECT r.name FROM human_ratings h JOIN run_rows rr ON rr.id = h.run_row_id JOIN "
                                 "runs r ON r.id = rr.run_id ORDER BY h.id DESC LIMIT 1").fetchone()[0]
        assert run == "v2" and p.reader().execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0] == before + 1
