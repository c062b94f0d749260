"""Metrics against hand-computed cases and independent implementations; the gate on constructed regressions;
failure classes on constructed rows."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from rageval_desktop.cli import main
from rageval_desktop.core.base.stats import mean_ci
from rageval_desktop.core.base.verdicts import Decision
from rageval_desktop.core.importers import import_golden, import_run
from rageval_desktop.core.metrics import retrieval
from rageval_desktop.core.metrics.compare import GateUsageError, compare
from rageval_desktop.core.metrics.dashboard import dashboard
from rageval_desktop.core.metrics.failures import failure_counts, failure_rows
from rageval_desktop.core.metrics.gate import gate
from rageval_desktop.core.metrics.gate_text import gate_markdown
from rageval_desktop.core.store.project import Project


# --- pure metrics -------------------------------------------------------------------------------------
def row_metrics(gold_ranks, n_gold, ks):
    """One row's every declared retrieval metric, as fractions (the registry's columns on a table of one row)."""
    table = retrieval.table([0], [n_gold], [0] * len(gold_ranks), gold_ranks, ks)
    return {name: float(values[0]) for name, values in table.items() if name != "first_rank"}


def test_retrieval_metrics_by_hand():
    # gold chunks found at ranks 2 and 7, 3 gold chunks in all
    m = row_metrics([2, 7], 3, (5, 10))
    assert m["hit@5"] == 1.0 and m["hit@10"] == 1.0
    assert m["recall@5"] == pytest.approx(1 / 3) and m["recall@10"] == pytest.approx(2 / 3)
    assert m["precision@5"] == pytest.approx(1 / 5) and m["precision@10"] == pytest.approx(2 / 10)
    assert m["mrr"] == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(8)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m["ndcg@10"] == pytest.approx(dcg / idcg)
    assert m["ndcg@5"] == pytest.approx((1 / math.log2(3)) / idcg)
    miss = row_metrics([], 2, (5,))
    assert miss["hit@5"] == miss["mrr"] == miss["ndcg@5"] == 0.0


@pytest.mark.parametrize("seed", range(25))
def test_ndcg_matches_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n_passages = 20
    relevant = rng.random(n_passages) < 0.2
    n_gold = int(relevant.sum()) + int(rng.integers(0, 3))  # some gold chunks never retrieved
    if n_gold == 0:
        n_gold = 1
    ranks = [i + 1 for i in range(n_passages) if relevant[i]]
    scores = np.linspace(1, 0, n_passages + (n_gold - len(ranks)))[None, :]  # unretrieved gold rank last
    truth = np.concatenate([relevant.astype(float), np.ones(n_gold - len(ranks))])[None, :]
    for k in (5, 10):
        # sklearn's ideal ranking includes the unretrieved gold chunks, as ours does through n_gold
        expected = ndcg_score(truth, scores, k=k) if truth.sum() else 0.0
        assert row_metrics(ranks, n_gold, (k,))[f"ndcg@{k}"] == pytest.approx(expected)


def test_the_shipped_quantile_table_is_scipys_own_numbers():
    """resources/stats/t975.npy and t975_large.npy spare the metrics command importing scipy.special: they must hold
    exactly what scipy
    computes (regenerate it with `python -m rageval_desktop.core.base.stats` if scipy's numbers change), and the
    quantile functions must give scipy's doubles from it and beyond it."""
    from scipy.special import ndtri, stdtrit

    from rageval_desktop.core.base import stats

    shipped = np.asarray(stats._table())
    assert shipped.shape == (stats.TABLE_DF + 1,) and np.array_equal(shipped, stats.quantile_table())
    assert stats.normal_quantile(0.975) == float(ndtri(0.975)) and stats.normal_quantile(0.9) == float(ndtri(0.9))
    for q in (*stats.COMMON_Z, 0.8, 0.7, 1 - 0.05 / 8):
        assert stats.normal_quantile(q) == float(ndtri(q)), q
    large = np.asarray(stats.large_table())
    assert large.shape == (stats.LARGE_DF - stats.TABLE_DF,) and np.array_equal(large, stats.large_corrections())
    some = np.random.default_rng(0).integers(stats.TABLE_DF + 1, stats.LARGE_DF + 1, 300).tolist()
    for df in (1, 2, 29, 9_999, stats.TABLE_DF, stats.TABLE_DF + 1, 250_000, 333_333, stats.LARGE_DF,
               stats.LARGE_DF + 1, 37.5, 60_000.5, math.inf, *some):
        for q in (0.975, 0.95, 0.8):
            assert stats.t_quantile(q, df) == float(stdtrit(df, q)), (q, df)
    assert stats.t_quantile(0.975, 0) == float(stdtrit(1, 0.975))       # (df below 1 is read as 1)


def test_mean_ci_is_students_t_and_a_share_gets_wilsons_interval():
    from scipy.stats import t
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(0)
    small = rng.normal(50, 10, 200)
    mean, low, high = mean_ci(small)
    half = t.ppf(0.975, 199) * small.std(ddof=1) / math.sqrt(len(small))
    assert (low, high) == pytest.approx((mean - half, mean + half), rel=1e-12)
    assert mean_ci([np.nan, np.nan]) == (None, None, None)
    # 12 of 12 hits is not [100, 100] (was: the bootstrap's point interval)
    m, lo, hi = mean_ci([100.0] * 12)
    wilson = proportion_confint(12, 12, alpha=0.05, method="wilson")
    assert m == 100 and hi == 100 and lo == pytest.approx(100 * wilson[0], abs=1e-9) and lo < 76
    _, lo, hi = mean_ci([100.0] * 7 + [0.0] * 5)
    assert (lo, hi) == pytest.approx(tuple(100 * x for x in proportion_confint(7, 12, method="wilson")), abs=1e-9)
    # equal values inside the scale get the widest interval a mean of that size could need, not a point
    _, lo, hi = mean_ci([50.0] * 10)
    assert lo < 25 and hi > 75


def build(tmp_path, *, v2_breaks: str | None = None) -> Project:
    """10 easy + 10 keyword-heavy questions; v1 retrieves the gold chunk at rank 1 for every row; v2 is the same
    except that, for the slice `v2_breaks`, the gold chunk drops to rank 8 (outside top 5, in the prompt of 10)."""
    project = Project.create(tmp_path / "m.rageval")
    golden, v1, v2 = [], [], []
    for i in range(20):
        tag = "easy" if i < 10 else "keyword-heavy"
        golden.append({"id": f"g{i}", "question": f"q{i}?", "gold_answer": "a", "gold_chunk_ids": [f"c{i}"],
                       "slice_tag": tag})
        others = [{"chunk_id": f"x{i}-{r}", "text": "t", "in_prompt": r < 10} for r in range(12)]
        good = [{"chunk_id": f"c{i}", "text": "gold", "in_prompt": True}, *others[:11]]
        moved = others[:7] + [{"chunk_id": f"c{i}", "text": "gold", "in_prompt": True}] + others[7:11]
        base = {"id": f"g{i}", "question": f"q{i}?", "answer": "a", "latency_ms": 100.0 + i, "cost_usd": 0.001}
        v1.append({**base, "retrieved": good})
        v2.append({**base, "retrieved": moved if tag == v2_breaks else good, "latency_ms": 200.0 + i})
    for name, rows in (("g.jsonl", golden), ("v1.jsonl", v1), ("v2.jsonl", v2)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_golden(project, tmp_path / "g.jsonl")
    import_run(project, tmp_path / "v1.jsonl", "v1")
    import_run(project, tmp_path / "v2.jsonl", "v2")
    return project


def test_dashboard_numbers(tmp_path):
    with build(tmp_path, v2_breaks="keyword-heavy") as p:
        d1, d2 = dashboard(p, "v1"), dashboard(p, "v2")
    assert list(d1["slices"]) == ["easy", "keyword-heavy", "all"]
    assert d1["slices"]["all"]["hit@5"] == 100.0 and d1["slices"]["all"]["mrr"] == 100.0
    kw = d2["slices"]["keyword-heavy"]
    assert kw["hit@5"] == 0.0 and kw["hit@10"] == 100.0 and kw["mrr"] == pytest.approx(12.5)
    assert d2["slices"]["all"]["hit@5"] == 50.0
    assert d1["slices"]["easy"]["p50_latency_ms"] == pytest.approx(104.5)
    p95 = float(np.percentile(np.arange(100, 120), 95))
    assert d1["slices"]["all"]["p95_latency_ms"] == pytest.approx(p95, abs=0.05)
    assert d1["slices"]["all"]["cost_per_query"] == pytest.approx(0.001)


def test_gate_passes_identical_runs_and_fails_a_slice_regression(tmp_path):
    with build(tmp_path) as p:
        result = gate(p, "v1", "v2")          # 10 questions a slice cannot show a drop within 2 points
        assert result.regressions == [] and result.decision is Decision.NOT_DECISION_GRADE and not result
        wide = gate(p, "v1", "v2", max_slice_drop=50)
        assert wide.passed and wide and {c["status"] for c in wide.safe} == {"within"}
    other = tmp_path / "broken"
    other.mkdir()
    with build(other, v2_breaks="keyword-heavy") as p:
        result = gate(p, "v1", "v2", max_aggregate_drop=100)
        failing = {(r["slice"], r["metric"]) for r in result.regressions}
        assert ("keyword-heavy", "hit@5") in failing and ("keyword-heavy", "mrr") in failing
        assert not any(s == "easy" for s, _ in failing)
        lenient = gate(p, "v1", "v2", max_slice_drop=100, max_aggregate_drop=100)
        assert not lenient.regressions and lenient.decision is Decision.NOT_DECISION_GRADE
        md = gate_markdown(result)
        assert "❌" in md and "| keyword-heavy | hit@5 | 100.0 | 0.0 | **100.0** |" in md


def test_gate_cli_exit_codes(tmp_path, capsys):
    same = tmp_path / "same"
    same.mkdir()
    build(same).close()          # v2 answers as v1 did
    unchanged = str(same / "m.rageval")
    assert main(["gate", unchanged, "--baseline", "v1", "--candidate", "v2", "--max-slice-drop", "50"]) == 0
    assert main(["gate", unchanged, "--baseline", "v1", "--candidate", "v2"]) == 3
    # a run against itself is a slip, not evidence (it was 0 or 3 as the limit chose)
    assert main(["gate", unchanged, "--baseline", "v1", "--candidate", "v1", "--max-slice-drop", "50"]) == 2
    assert "the baseline and the candidate are the same run ('v1')" in capsys.readouterr().err
    p = build(tmp_path, v2_breaks="easy")
    p.close()
    path = str(tmp_path / "m.rageval")
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--markdown", str(tmp_path / "pr.md")]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("gate: ") and "regression" in err
    assert "easy" in (tmp_path / "pr.md").read_text()
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--metrics", "faithfulness"]) == 2
    assert "no metric named faithfulness can be compared" in capsys.readouterr().err
    # an unknown run is a request that cannot be made (exit 2; issue 28: it was 1, the code for a regression)
    assert main(["gate", path, "--baseline", "v1", "--candidate", "nope"]) == 2


def test_runs_without_shared_questions_are_a_usage_error(tmp_path):
    with build(tmp_path) as p:
        with p.write("unlink") as w:
            w.execute("UPDATE run_rows SET golden_id = NULL WHERE run_id = (SELECT id FROM runs WHERE name = 'v2')")
        with pytest.raises(GateUsageError, match="share no golden questions"):
            compare(p, "v1", "v2")


def test_failure_classes(tmp_path):
    with build(tmp_path, v2_breaks="keyword-heavy") as p:
        with p.write("prompt cut") as w:  # for g10..g12 only the first 5 passages reached the prompt
            w.execute("UPDATE retrieved_passages SET in_prompt = (rank <= 5) WHERE run_row_id IN (SELECT rr.id "
                      "FROM run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.name = 'v2' AND "
                      "rr.external_id IN ('g10', 'g11', 'g12'))")
            w.execute("DELETE FROM retrieved_passages WHERE chunk_id = 'c13'")  # never retrieved
        counts = failure_counts(p, "v2")
        assert counts["keyword-heavy"] == {"n": 10, "retrieval": 1, "reranker": 3, "generation": 0}
        assert counts["easy"] == {"n": 10, "retrieval": 0, "reranker": 0, "generation": 0}
        rows = failure_rows(p, "v2", failure="reranker")
        assert sorted(r["external_id"] for r in rows) == ["g10", "g11", "g12"]
        assert all(r["first_gold_rank"] == 8 and r["prompt_k"] == 5 for r in rows)
        assert len(failure_rows(p, "v2", sample=2)) == 2


def by_definition(gold_ranks, n_gold, ks):
    """The textbook definitions, one row at a time (binary relevance; what the registry's columns must equal)."""
    out = {}
    for k in ks:
        inside = [r for r in gold_ranks if r <= k]
        out[f"hit@{k}"] = 1.0 if inside else 0.0
        out[f"recall@{k}"] = len(inside) / n_gold
        out[f"precision@{k}"] = len(inside) / k
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(n_gold, k) + 1))
        out[f"ndcg@{k}"] = sum(1 / math.log2(r + 1) for r in inside) / ideal
    out["mrr"] = 1 / min(gold_ranks) if gold_ranks else 0.0
    return out


def test_vectorised_table_equals_the_row_by_row_definition():
    rng = np.random.default_rng(3)
    row_ids = list(range(100, 400))
    n_gold = rng.integers(0, 4, len(row_ids))
    hit_rows, hit_ranks, per_row = [], [], {}
    for r, g in zip(row_ids, n_gold, strict=True):
        found = int(rng.integers(0, g + 1)) if g else 0
        ranks = sorted(rng.choice(np.arange(1, 60), size=found, replace=False).tolist())
        per_row[r] = ranks
        hit_rows += [r] * len(ranks)
        hit_ranks += ranks
    cols = retrieval.table(row_ids, n_gold, hit_rows, hit_ranks, (5, 10, 50))
    for i, (r, g) in enumerate(zip(row_ids, n_gold, strict=True)):
        if g == 0:
            assert math.isnan(cols["mrr"][i])
            continue
        expected = by_definition(per_row[r], int(g), (5, 10, 50))
        assert set(expected) == set(cols) - {"first_rank"}
        for name, value in expected.items():
            assert cols[name][i] == pytest.approx(value), (r, name)


def test_column_wise_failure_classes_equal_the_row_by_row_definition():
    """classify works a column at a time (a million rows); each row's class and failed judges are still those of
    the definition: gold never retrieved -> retrieval; retrieved below the prompt cut -> reranker; else a judge
    under its pass mark -> generation."""
    import pandas as pd

    from rageval_desktop.core.base.vocab import METRICS
    from rageval_desktop.core.metrics.failures import _failed_metrics, classify
    from rageval_desktop.core.metrics.rowdata import RunData

    rng = np.random.default_rng(11)
    n = 400
    metrics = ["correctness", "faithfulness"]
    frame = pd.DataFrame({
        "n_gold": rng.integers(0, 3, n),
        "first_gold_rank": np.where(rng.random(n) < 0.3, np.inf, rng.integers(1, 12, n).astype(float)),
        "prompt_k": rng.integers(3, 8, n),
        "slice": pd.Categorical(rng.choice(["easy", "edge"], n)),
        **{f"{m}__raw": np.where(rng.random(n) < 0.2, np.nan,
                                 rng.uniform(METRICS[m].low, METRICS[m].high, n)) for m in metrics},
    }, index=range(1000, 1000 + n))
    data = RunData(run="r", run_id=1, frame=frame, metrics=metrics)
    out = classify(data)
    failed = _failed_metrics(out, range(n))
    for i, row in enumerate(frame.itertuples()):
        bad = [m for m in metrics if getattr(row, f"{m}__raw") < METRICS[m].pass_mark]
        expected = ("retrieval" if row.n_gold > 0 and not np.isfinite(row.first_gold_rank) else
                    "reranker" if row.n_gold > 0 and row.first_gold_rank > row.prompt_k else
                    "generation" if bad else None)
        got = out["failure"].iloc[i]
        assert (None if pd.isna(got) else got) == expected
        assert failed[i] == bad
    assert {"retrieval", "reranker", "generation"} <= set(out["failure"].dropna())   # every branch is exercised
    assert "failure" not in frame.columns                                              # the run's frame unchanged


def test_judge_scores_per_row_are_the_mean_over_judges_of_each_judges_mean():
    """Scores are averaged per row with bincounts (a million judgments); the result is the groupby definition:
    passages (and repeats) average within a row and judge, then judges average per row; a row no judge scored is
    NaN, not 0."""
    import pandas as pd

    from rageval_desktop.core.metrics.rowdata import _mean_of_means

    rng = np.random.default_rng(5)
    n, judges, m = 50, 3, 400
    position = rng.integers(0, n - 5, m)              # the last rows are never scored
    judge = rng.integers(0, judges, m)
    values = rng.uniform(0, 100, m)
    got = _mean_of_means(position, judge, values, n, judges)
    frame = pd.DataFrame({"row": position, "judge": judge, "v": values})
    want = frame.groupby(["row", "judge"])["v"].mean().groupby(level="row").mean().reindex(range(n))
    assert np.allclose(got, want.to_numpy(), equal_nan=True)
    assert np.isnan(got[-5:]).all() and not np.isnan(got[:n - 5][np.isin(range(n - 5), position)]).any()


def test_numeric_columns_come_back_exactly_with_nulls_as_nan():
    """A run's numbers are read as one text per column (group_concat) and parsed by orjson: every double must come
    back bit for bit (full precision is the contract of --json) — whole numbers, which take a shorter path, huge,
    tiny and infinite ones too — NULL as NaN, integers as integers. (Under 1e100 in magnitude: SQLite's printf
    rounds the 17th digit of some larger doubles.)"""
    import sqlite3

    from rageval_desktop.core.metrics.rowdata import numeric_columns

    rng = np.random.default_rng(9)
    values = [0.1 + 0.2, 1 / 3, 1e-300, *rng.normal(0, 1, 500) * 10.0 ** rng.uniform(-320, 99, 500),
              123456789.123456789, -2.5e15, 0.0, None, 3.0, -7.0, 2.0 ** 63, -2.0 ** 63, 2.0 ** 53 + 2,
              1e20, 9.87654321e99, -1.2345678901234567e99, 5e-324, float("inf"), float("-inf"),
              *rng.normal(0, 1e6, 200), *rng.integers(-1000, 1000, 50).astype(float)]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER, v REAL)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i * 7, v) for i, v in enumerate(values)])
    ids, got = numeric_columns(conn, [("id", int), ("v", float)], "SELECT id, v FROM t ORDER BY id")
    assert ids.dtype == np.int64 and ids.tolist() == [i * 7 for i in range(len(values))]
    want = np.array([np.nan if v is None else v for v in values])
    assert np.array_equal(got, want, equal_nan=True)                       # bit for bit, not approximately
    empty = numeric_columns(conn, [("id", int), ("v", float)], "SELECT id, v FROM t WHERE id < 0")
    assert [len(c) for c in empty] == [0, 0]


def test_a_gold_chunk_retrieved_twice_or_listed_twice_counts_once_at_its_best_rank(tmp_path):
    from rageval_desktop.core.metrics.rowdata import load_run

    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"id": "g1", "question": "Q?", "gold_chunk_ids": ["c1", "c1", "c2"]}) + "\n")
    run = tmp_path / "r.jsonl"
    passages = ["x", "c1", "y", "c1", "z", "w", "c2"]
    run.write_text(json.dumps({"id": "g1", "question": "Q?", "answer": "A.",
                               "retrieved": [{"chunk_id": c, "text": c} for c in passages]}) + "\n")
    with Project.create(tmp_path / "p.rageval") as p:
        import_golden(p, golden)
        import_run(p, run, "v1")
        row = load_run(p, "v1").frame.iloc[0]
    assert row["n_gold"] == 2 and row["first_gold_rank"] == 2
    assert (row["hit@5"], row["recall@5"], row["recall@10"], row["mrr"]) == (100.0, 50.0, 100.0, 50.0)
    assert row["precision@5"] == pytest.approx(100 / 5)            # c1 once in the top 5, not twice


def test_a_rows_gold_count_is_its_distinct_ids_however_the_list_is_written(tmp_path):
    """n_gold skips the JSON parse for a list with a string and no comma; every other list is parsed. Lists as the
    importers write them, and as another tool may have (spaces, a comma or a quote inside an id)."""
    from rageval_desktop.core.metrics.rowdata import load_run

    lists = [[], ["a"], ["a", "a"], ["a,b"], ["a", "b"], ['a"b'], ["a\\b"], ["é"], ["a", "b", "a"]]
    raw = ['[ "a" ]', '[ ]', '["a" , "b"]', '["x,y","x,y"]']
    golden, run = tmp_path / "g.jsonl", tmp_path / "r.jsonl"
    ids = [f"g{i}" for i in range(len(lists) + len(raw))]
    golden.write_text("".join(json.dumps({"id": g, "question": f"Q{g}?", "gold_chunk_ids": (lists + [[]] * 4)[i]})
                              + "\n" for i, g in enumerate(ids)))
    run.write_text("".join(json.dumps({"id": g, "question": f"Q{g}?", "answer": "A.",
                                       "retrieved": [{"chunk_id": "a", "text": "t"}]}) + "\n" for g in ids))
    with Project.create(tmp_path / "p.rageval") as p:
        import_golden(p, golden)
        import_run(p, run, "v1")
        with p.write("test: lists written by another tool") as conn:
            for g, text in zip(ids[len(lists):], raw, strict=True):
                conn.execute("UPDATE golden_rows SET gold_chunk_ids = ? WHERE id = ?", (text, g))
        texts = dict(p.reader().execute("SELECT id, gold_chunk_ids FROM golden_rows"))
        golden_of = dict(p.reader().execute("SELECT id, golden_id FROM run_rows"))
        frame = load_run(p, "v1").frame
    assert texts["g0"] == "[]" and texts["g1"] == '["a"]'       # (as the importer writes them)
    got = {golden_of[row]: n for row, n in zip(frame.index, frame["n_gold"], strict=True)}
    assert got == {g: len(set(json.loads(texts[g]))) for g in ids}


def test_unscored_rows_count_once_with_the_status_their_column_shows(tmp_path):
    """Worked out from the judgments load_run read: per active judge, a row not scored counts once — unparsed before
    error before not judged, as its metric's status column says — with the error's kind as its reason; a judge that
    grades passages scores a row when one passage is graded; rows are listed in the run's order."""
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.metrics.rowdata import load_run

    path = tmp_path / "u.rageval"
    with Project.create(path) as p:
        per_row = add_judge(p, "f1", "correctness", "lexical")
        graded = add_judge(p, "grades", "passage_relevance", "llm", model="m", base_url="http://127.0.0.1:9/v1")
        idle = add_judge(p, "idle", "correctness_binary", "lexical")   # no judgment on this run: not listed
        now = utcnow()
        with p.write("fill") as w:
            w.execute("INSERT INTO runs (name, created_at) VALUES ('r', ?)", (now,))
            # positions run backwards against ids: the listing follows the run's order
            w.executemany("INSERT INTO run_rows (id, run_id, position, external_id, question, answer) "
                          "VALUES (?, 1, ?, ?, 'q?', 'a')", [(i, 10 - i, f"row{i}", ) for i in range(1, 7)])
            put = ("INSERT INTO judgments (judge_id, run_row_id, passage_rank, idem_key, status, error_kind, score, "
                   "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            w.executemany(put, [
                (per_row.id, 1, 0, "a", "ok", None, 1.0, now),
                (per_row.id, 2, 0, "b", "unparsed", None, None, now),
                (per_row.id, 2, 0, "b2", "error", "timeout", None, now),   # unparsed wins: counted once
                (per_row.id, 3, 0, "c", "error", "no_answer", None, now),
                (per_row.id, 4, 0, "d", "error", None, None, now),
                # rows 5 and 6: never judged
                (graded.id, 1, 1, "g1", "error", "timeout", None, now),
                (graded.id, 1, 2, "g2", "ok", None, 2.0, now),           # one passage graded: scored
                (graded.id, 2, 1, "g3", "error", "timeout", None, now),
                (graded.id, 2, 2, "g4", "error", "rate_limit", None, now),
            ])
        assert idle.id
        found = dashboard(p, "r")["unscored"]
        assert set(found) == {"f1", "grades"}
        f1 = found["f1"]
        assert f1["rows"] == 5
        assert f1["reasons"] == {"unparsed": 1, "no_answer": 1, "error": 1, "not judged": 2}
        assert [(x["row"], x["status"], x["reason"]) for x in f1["listed"]] == [
            ("row6", "not judged", None), ("row5", "not judged", None), ("row4", "error", None),
            ("row3", "error", "no_answer"), ("row2", "unparsed", None)]
        grades = found["grades"]
        assert grades["rows"] == 5 and grades["reasons"] == {"rate_limit": 1, "not judged": 4}
        assert [x["row"] for x in grades["listed"]] == ["row6", "row5", "row4", "row3", "row2"]
        data = load_run(p, "r")
        assert list(data.frame["correctness__status"]) == ["missing", "missing", "error", "error", "unparsed", "ok"]


def test_a_run_whose_rows_interleave_with_another_runs_reads_only_its_own_judgments(tmp_path):
    """The judgments are read as one range of row ids when a run's rows are exactly that range (one import); rows
    written otherwise — interleaved with another run's — are looked up by run."""
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.metrics.rowdata import load_run, row_range

    with Project.create(tmp_path / "i.rageval") as p:
        judge = add_judge(p, "f1", "correctness", "lexical")
        now = utcnow()
        with p.write("fill") as w:
            w.executemany("INSERT INTO runs (name, created_at) VALUES (?, ?)", [("a", now), ("b", now), ("c", now)])
            w.executemany("INSERT INTO run_rows (id, run_id, position, external_id, question, answer) "
                          "VALUES (?, ?, ?, ?, 'q?', 'a')",
                          [(i, 1 + i % 2, i, f"r{i}") for i in range(1, 9)] +
                          [(i, 3, i, f"r{i}") for i in range(9, 13)])
            w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                          "VALUES (?, ?, ?, 'ok', ?, ?)", [(judge.id, i, f"k{i}", float(1 + i % 5), now)
                                                          for i in range(1, 13)])
        conn = p.reader()
        assert row_range(conn, 1) is None and row_range(conn, 2) is None and row_range(conn, 3) == (9, 12)
        for run, ids in (("a", [2, 4, 6, 8]), ("b", [1, 3, 5, 7]), ("c", [9, 10, 11, 12])):
            data = load_run(p, run)
            assert list(data.frame.index) == ids
            assert sorted(data.judgments["row_id"]) == ids
            assert list(data.frame["correctness__raw"]) == [float(1 + i % 5) for i in ids]


@pytest.mark.parametrize("seed", range(20))
def test_gold_hits_match_a_direct_count(seed):
    """Each distinct gold chunk a row retrieved, once, at its best rank — from every (row, place in the golden list,
    rank) where a passage is that chunk; gold lists and passages with repeats."""
    from rageval_desktop.core.metrics.rowdata import gold_hits

    rng = np.random.default_rng(seed)
    triples, want = [], []
    for row in range(1, 40):
        gold = [f"c{v}" for v in rng.integers(0, 6, rng.integers(0, 5))]       # repeats allowed
        passages = [f"c{v}" for v in rng.integers(0, 8, rng.integers(0, 9))]   # rank = place + 1
        triples += [(row, k, r + 1) for k, g in enumerate(gold) for r, p in enumerate(passages) if p == g]
        best = {}
        for k, g in enumerate(gold):
            ranks = [r + 1 for r, p in enumerate(passages) if p == g]
            if ranks and g not in best:
                best[g] = (k, min(ranks))
        want += [(row, rank) for _, rank in sorted(best.values())]
    rng.shuffle(triples)
    rows, keys, ranks = (np.array([t[i] for t in triples], dtype=np.int64) for i in range(3))
    got_rows, got_ranks = gold_hits(rows, keys, ranks) if triples else ([], [])
    assert list(zip(map(int, got_rows), map(int, got_ranks), strict=True)) == want


def test_questions_without_repeats_are_the_rows_themselves():
    """per_question's short way (every question answered once) gives what grouping gives."""
    import pandas as pd

    from rageval_desktop.core.metrics import rowdata

    rng = np.random.default_rng(3)
    n = 50
    frame = pd.DataFrame({
        "golden_id": np.array([None if i % 7 == 0 else f"g{i}" for i in range(n)], dtype=object),
        "latency_ms": rng.uniform(0, 100, n), "cost_usd": np.nan,
        "slice": pd.Categorical(rng.choice(["easy", "edge"], n)), "n_gold": rng.integers(0, 3, n),
        "qkey": rng.permutation(n) - 10, "prompt_k": rng.integers(1, 6, n),
        "hit@5": np.where(rng.random(n) < 0.2, np.nan, rng.random(n) * 100),
        "correctness__status": pd.Categorical(rng.choice(["ok", "error"], n))},
        index=pd.Index(np.arange(100, 100 + n), name="row_id"))
    short = rowdata.per_question(frame)
    grouped = rowdata.grouped_questions(frame, ["prompt_k", "hit@5"])
    pd.testing.assert_frame_equal(short, grouped, check_index_type=False)
    assert short.index.name == "qkey" and list(short.index) == list(frame["qkey"]) and (short["rows"] == 1).all()
    repeated = pd.concat([frame, frame.iloc[[3]]])
    assert rowdata.per_question(repeated).loc[frame["qkey"].iloc[3], "rows"] == 2
