"""Importers: every layout, every file type, and every kind of bad input leaves the project unchanged."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import import_corpus, import_golden, import_run, parse_mapping
from tests.conftest import DATA, table_dump

GOLDEN = [
    {"id": "g1", "question": "What does assert do?", "gold_answer": "It checks a condition.",
     "gold_chunk_ids": ["c1"], "slice_tag": "easy"},
    {"id": "g2", "question": "How do break and continue differ?", "gold_answer": "One exits, one skips.",
     "gold_chunk_ids": ["c2", "c3"], "slice_tag": "multi-hop"},
    {"id": "g3", "question": "What is object.__len__ for?", "gold_answer": "len()", "gold_chunk_ids": [],
     "slice_tag": "keyword-heavy"},
]
RUN = [
    {"id": "g1", "question": "What does assert do?", "answer": "Checks things [1]",
     "retrieved": [{"chunk_id": "c1", "text": "assert checks", "score": 0.9},
                   {"chunk_id": "c9", "text": "other", "score": 0.1}],
     "latency_ms": 812.5, "cost_usd": 0.0002, "prompt_tokens": 300, "completion_tokens": 20},
    {"question": "  how do BREAK and continue differ ", "answer": "No idea",
     "retrieved": [{"chunk_id": "c3", "text": "continue skips", "score": 0.5}]},
    {"question": "A question nobody asked", "answer": "?", "retrieved": []},
]


def write(path, rows, lists_as_json=True):
    """Write rows in the format the suffix names; list cells become JSON text in CSV/XLSX."""
    suffix = path.suffix
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    else:
        frame = pd.DataFrame(rows)
        if suffix in (".csv", ".xlsx") and lists_as_json:
            for col in frame.columns:
                frame[col] = [json.dumps(v) if isinstance(v, (list, dict)) else v for v in frame[col]]
        if suffix == ".csv":
            frame.to_csv(path, index=False)
        elif suffix == ".parquet":
            frame.to_parquet(path, index=False)
        elif suffix == ".xlsx":
            frame.to_excel(path, index=False)
    return path


def golden_rows(project):
    return {r[0]: r[1:] for r in project.reader().execute(
        "SELECT id, question, gold_answer, gold_chunk_ids, slice_tag FROM golden_rows")}


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json", ".parquet", ".xlsx"])
def test_native_golden_every_file_type(project, tmp_path, suffix):
    report = import_golden(project, write(tmp_path / f"golden{suffix}", GOLDEN))
    assert (report.layout, report.added) == ("native", 3)
    rows = golden_rows(project)
    assert rows["g2"] == ("How do break and continue differ?", "One exits, one skips.", '["c2", "c3"]', "multi-hop")
    assert json.loads(rows["g3"][2]) == []
    edits = project.reader().execute("SELECT COUNT(*) FROM golden_edits WHERE op = 'create'").fetchone()[0]
    assert edits == 3


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json", ".parquet", ".xlsx"])
def test_native_run_every_file_type_links_rows(project, tmp_path, suffix):
    import_golden(project, write(tmp_path / "g.jsonl", GOLDEN))
    report = import_run(project, write(tmp_path / f"run{suffix}", RUN), "v1")
    assert (report.added, report.linked, report.unlinked) == (3, 2, 1)
    assert report.unlinked_examples == ["A question nobody asked"]
    conn = project.reader()
    links = dict(conn.execute("SELECT external_id, golden_id FROM run_rows"))
    assert links == {"g1": "g1", "row-2": "g2", "row-3": None}  # by id, by normalised question, none
    first = conn.execute("SELECT latency_ms, cost_usd, prompt_tokens, completion_tokens FROM run_rows "
                         "WHERE external_id = 'g1'").fetchone()
    assert first == (812.5, 0.0002, 300, 20)
    passages = conn.execute("SELECT rank, chunk_id, text, score FROM retrieved_passages p JOIN run_rows r "
                            "ON r.id = p.run_row_id WHERE r.external_id = 'g1' ORDER BY rank").fetchall()
    assert passages == [(1, "c1", "assert checks", 0.9), (2, "c9", "other", 0.1)]


def test_reimport_golden_is_idempotent_and_records_changes(project, tmp_path):
    import_golden(project, write(tmp_path / "g.jsonl", GOLDEN))
    again = import_golden(project, write(tmp_path / "g.jsonl", GOLDEN))
    assert (again.added, again.updated, again.unchanged) == (0, 0, 3)
    changed = [dict(GOLDEN[0], gold_answer="It raises AssertionError when false.")] + GOLDEN[1:]
    report = import_golden(project, write(tmp_path / "g2.jsonl", changed))
    assert (report.updated, report.unchanged) == (1, 2)
    edit = project.reader().execute("SELECT revision, before, after FROM golden_edits WHERE op = 'update'").fetchone()
    assert edit[0] == 2
    assert json.loads(edit[1])["gold_answer"] == "It checks a condition."
    assert json.loads(edit[2])["gold_answer"] == "It raises AssertionError when false."


def test_ragas_layouts(project, tmp_path):
    rows = [{"user_input": "What does assert do?", "response": "checks", "retrieved_contexts": ["a", "b"],
             "retrieved_context_ids": ["c1", "c2"], "reference": "It checks.", "reference_context_ids": ["c1"]}]
    # ragas CSVs hold Python reprs of lists, as pandas writes them
    path = tmp_path / "ragas.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    golden = import_golden(project, path)
    assert golden.layout == "ragas"
    assert json.loads(golden_rows(project)[next(iter(golden_rows(project)))][2]) == ["c1"]
    run = import_run(project, path, "ragas-run")
    assert (run.layout, run.linked) == ("ragas", 1)
    ps = project.reader().execute("SELECT chunk_id, text FROM retrieved_passages ORDER BY rank").fetchall()
    assert ps == [("c1", "a"), ("c2", "b")]


def test_open_rag_eval_real_file(project, tmp_path):
    src = DATA / "open-rag-eval" / "test_csv_connector.csv"
    report = import_run(project, src, "ore")
    assert report.layout == "open-rag-eval"
    source = pd.read_csv(src)
    groups = source.groupby(["query_id", "query_run"]).size()
    assert report.added == len(groups)
    # query_6 was run twice: visible as two rows and said at import (was: merged without a word)
    assert any("run more than once" in w and "query_6#run1" in w for w in report.warnings)
    conn = project.reader()
    answer = conn.execute("SELECT answer FROM run_rows WHERE external_id = 'query_4'").fetchone()[0]
    assert answer.startswith("Based on the provided sources") and "\n\nSources: [1], [2]" in answer
    ps = conn.execute("SELECT p.rank, p.chunk_id, p.text FROM retrieved_passages p JOIN run_rows r "
                      "ON r.id = p.run_row_id WHERE r.external_id = 'query_1' ORDER BY p.rank").fetchall()
    # "[1]" numbers the passages of one query: scoped to it, so query_3's "[2]" is not query_1's "[2]"
    assert ps == [(1, "query_1:[1]", "Blackholes are big."), (2, "query_1:[2]", "Blackholes are dense."),
                  (3, "query_1:[3]", "The earth is round.")]
    ids = {r[0] for r in conn.execute("SELECT chunk_id FROM retrieved_passages")}
    assert "query_3:[2]" in ids and "[2]" not in ids


def test_open_rag_eval_passages_find_their_corpus_chunks_and_repeats_average(project, tmp_path):
    src = DATA / "open-rag-eval" / "test_csv_connector.csv"
    import_corpus(project, write(tmp_path / "corpus.jsonl", [
        {"chunk_id": "moons-1", "doc_id": "moons", "text": "Seven  planets have\na moon."},
        {"chunk_id": "moons-2", "doc_id": "moons", "text": "Earth has a moon."}]))
    import_golden(project, write(tmp_path / "g.jsonl", [
        {"id": "query_6", "question": "How many planets have moons?", "gold_answer": "Seven",
         "gold_chunk_ids": ["moons-2"], "slice_tag": "easy"}]))
    import_run(project, src, "ore")
    conn = project.reader()
    rows = conn.execute("SELECT r.external_id, p.rank, p.chunk_id FROM retrieved_passages p JOIN run_rows r ON "
                        "r.id = p.run_row_id WHERE r.external_id LIKE 'query_6%' ORDER BY r.id, p.rank").fetchall()
    assert rows == [("query_6#run1", 1, "moons-1"), ("query_6#run2", 1, "moons-1"), ("query_6#run2", 2, "moons-2")]
    from rageval_desktop.core.metrics.dashboard import dashboard

    easy = dashboard(project, "ore")["slices"]["easy"]
    # the file asks this question three times (query_3, and query_6 in two runs): run 1 of query_6 misses the gold
    # chunk, the other two find it at rank 2. One question, its three rows averaged
    assert (easy["n"], easy["rows"]) == (1, 3)
    assert easy["hit@5"] == pytest.approx(200 / 3) and easy["mrr"] == pytest.approx(100 / 3)


def test_open_rag_eval_repeated_query_runs(project, tmp_path):
    base = {"query_id": "q1", "query": "Q?", "passage_id": "[1]", "passage": "p"}
    rows = [dict(base, query_run=1, generated_answer="A1"), dict(base, query_run=2, generated_answer="A2")]
    report = import_run(project, write(tmp_path / "ore.csv", rows), "r")
    assert report.added == 2
    ids = dict(project.reader().execute("SELECT external_id, answer FROM run_rows"))
    assert ids == {"q1#run1": "A1", "q1#run2": "A2"}


def test_hf_cookbook_layouts(project, tmp_path):
    import_corpus(project, write(tmp_path / "corpus.jsonl", [{"chunk_id": "doc#0", "doc_id": "doc",
                                                              "text": "Paris is the capital of France."}]))
    golden = [{"question": "What is the capital of France?", "answer": "Paris",
               "context": "Paris is the capital of France.", "source_doc": "doc", "groundedness_score": 5}]
    report = import_golden(project, write(tmp_path / "eval.csv", golden))
    assert report.layout == "hf-cookbook"
    gid, row = next(iter(golden_rows(project).items()))
    assert json.loads(row[2]) == ["doc#0"]  # context text resolved to the corpus chunk
    meta = json.loads(project.reader().execute("SELECT metadata FROM golden_rows").fetchone()[0])
    assert meta["groundedness_score"] == 5 and meta["source_doc"] == "doc"
    outputs = [{"question": "What is the capital of France?", "true_answer": "Paris", "source_doc": "doc",
                "generated_answer": "Paris.", "retrieved_docs": ["Paris is the capital of France.", "x"]}]
    run = import_run(project, write(tmp_path / "out.json", outputs), "cookbook")
    assert (run.layout, run.linked) == ("hf-cookbook", 1)


def test_mapping_and_format_override(project, tmp_path):
    rows = [{"query": "Q one?", "expected": "A", "ids": '["c1"]', "bucket": "edge"}]
    path = write(tmp_path / "custom.csv", rows)
    with pytest.raises(ImportFailed, match="missing required columns"):
        import_golden(project, path)
    report = import_golden(project, path, fmt="native", mapping=parse_mapping(
        "question=query,gold_answer=expected,gold_chunk_ids=ids,slice_tag=bucket"))
    assert report.added == 1
    assert list(golden_rows(project).values())[0][2:] == ('["c1"]', "edge")
    with pytest.raises(ImportFailed, match="unknown golden format"):
        import_golden(project, path, fmt="nope")


def test_run_name_clash_and_replace(project, tmp_path):
    path = write(tmp_path / "run.jsonl", RUN)
    import_run(project, path, "v1")
    with pytest.raises(ImportFailed, match="already exists"):
        import_run(project, path, "v1")
    report = import_run(project, write(tmp_path / "run2.jsonl", RUN[:1]), "v1", replace=True)
    assert report.added == 1
    assert project.reader().execute("SELECT COUNT(*) FROM run_rows").fetchone()[0] == 1


# --- bad input: clear error naming file/row/column, project unchanged ---------------------------------
def bad_cases(tmp_path):
    big = "x" * (10 * 1024 * 1024)
    cases = {
        "wrong extension": (tmp_path / "golden.txt", "golden", "unsupported file type", None, None),
        "not utf-8": (tmp_path / "latin1.csv", "golden", "line 3 is not UTF-8", None, None),
        "missing columns": (tmp_path / "nocols.csv", "run", "missing required columns", None, None),
        "wrong type": (tmp_path / "types.jsonl", "run", "expected a number", 2, "latency_ms"),
        "empty file": (tmp_path / "empty.csv", "golden", "the file is empty", None, None),
        "header only": (tmp_path / "header.csv", "golden", "no data rows", None, None),
        "duplicate ids": (tmp_path / "dupes.jsonl", "golden", "duplicate id 'g1' \\(first seen on row 1\\)", 3, "id"),
        "10 MB cell": (tmp_path / "big.jsonl", "golden", "limit is 1 million", 2, "gold_answer"),
        "list not a list": (tmp_path / "notlist.csv", "golden", "expected a list", 1, "gold_chunk_ids"),
        "retrieved not a list": (tmp_path / "retr.jsonl", "run", "expected a list", 1, "retrieved"),
        "bad json line": (tmp_path / "broken.jsonl", "golden", "line 2 is not valid JSON", None, None),
        "empty question": (tmp_path / "noq.csv", "golden", "is empty; a value is required", 2, "question"),
    }
    (tmp_path / "golden.txt").write_text("question\nq\n")
    (tmp_path / "latin1.csv").write_bytes("question,gold_answer\nq1,a\nq2,caf\xe9\n".encode("latin-1"))
    write(tmp_path / "nocols.csv", [{"question": "q", "answer": "a"}])
    write(tmp_path / "types.jsonl", [dict(RUN[0]), dict(RUN[1], latency_ms="fast")])
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("question,gold_answer\n")
    write(tmp_path / "dupes.jsonl", [GOLDEN[0], GOLDEN[1], dict(GOLDEN[2], id="g1")])
    write(tmp_path / "big.jsonl", [GOLDEN[0], dict(GOLDEN[1], gold_answer=big)])
    (tmp_path / "notlist.csv").write_text('question,gold_chunk_ids\nq,"[c1, oops"\n')  # a bare id is a list of one
    write(tmp_path / "retr.jsonl", [dict(RUN[0], retrieved="c1")])
    (tmp_path / "broken.jsonl").write_text(json.dumps(GOLDEN[0]) + "\n{\"question\": \n")
    (tmp_path / "noq.csv").write_text("question,gold_answer\nq,a\n  ,b\n")
    return cases


BAD = ["wrong extension", "not utf-8", "missing columns", "wrong type", "empty file", "header only",
       "duplicate ids", "10 MB cell", "list not a list", "retrieved not a list", "bad json line", "empty question"]


@pytest.mark.parametrize("case", BAD)
def test_bad_input_fails_clearly_and_changes_nothing(project, tmp_path, case):
    import_golden(project, write(tmp_path / "seed.jsonl", GOLDEN[:1]))
    import_run(project, write(tmp_path / "seedrun.jsonl", RUN[:1]), "seed")
    path, kind, message, row, column = bad_cases(tmp_path)[case]
    before = table_dump(project.path)
    with pytest.raises(ImportFailed, match=message) as info:
        if kind == "golden":
            import_golden(project, path)
        else:
            import_run(project, path, "new-run")
    err = info.value
    assert str(err).startswith(path.name)  # names the file first
    assert (err.row, err.column) == (row, column)
    assert table_dump(project.path) == before


def test_failure_late_in_a_large_import_rolls_back_everything(project, tmp_path):
    rows = [dict(RUN[0], id=f"r{i}") for i in range(12_000)]
    rows[-1]["retrieved"] = [{"chunk_id": "c", "text": "t"}, {"chunk_id": "c", "text": 5}]
    before = table_dump(project.path)
    with pytest.raises(ImportFailed, match="text must be a string") as info:
        import_run(project, write(tmp_path / "big.jsonl", rows), "big")
    assert info.value.row == 12_000
    assert table_dump(project.path) == before


def test_cancel_rolls_back(project, tmp_path):
    from rageval_desktop.core.base.context import Cancelled, TaskContext

    rows = [dict(RUN[0], id=f"r{i}") for i in range(12_000)]
    ctx = TaskContext(on_progress=lambda done, total, msg: ctx.cancel() if done >= 5000 else None)
    before = table_dump(project.path)
    with pytest.raises(Cancelled):
        import_run(project, write(tmp_path / "big.jsonl", rows), "big", ctx=ctx)
    assert table_dump(project.path) == before


def test_gzip_and_bom(project, tmp_path):
    import gzip

    src = tmp_path / "g.csv"
    write(src, GOLDEN)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
    assert import_golden(project, bom).added == 3
    gz = tmp_path / "g2.jsonl.gz"
    gz.write_bytes(gzip.compress("".join(json.dumps(dict(r, id=r["id"] + "z")) + "\n" for r in GOLDEN).encode()))
    assert import_golden(project, gz).added == 3


def test_demo_project_is_realistic(demo_file, tmp_path):
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.queries import project_info

    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        info = project_info(p)
        assert info["golden_rows"] >= 60
        assert all(n >= 8 for n in info["slices"].values()) and len(info["slices"]) == 6
        assert [r["name"] for r in info["runs"]] == ["v1", "v2"]
        assert all(r["linked"] == r["rows"] == info["golden_rows"] for r in info["runs"])
        conn = p.reader()
        # gold ids point into the corpus, and the two retrievers really differ
        missing = conn.execute("SELECT COUNT(*) FROM golden_rows g, json_each(g.gold_chunk_ids) j "
                               "WHERE j.value NOT IN (SELECT chunk_id FROM corpus_chunks)").fetchone()[0]
        assert missing == 0
        hits = dict(conn.execute("""
            SELECT r.name, AVG(EXISTS (SELECT 1 FROM retrieved_passages p, json_each(g.gold_chunk_ids) j
                                       WHERE p.run_row_id = rr.id AND p.rank <= 5 AND p.chunk_id = j.value))
            FROM run_rows rr JOIN runs r ON r.id = rr.run_id JOIN golden_rows g ON g.id = rr.golden_id
            WHERE json_array_length(g.gold_chunk_ids) > 0 GROUP BY r.name"""))
        assert 0.2 < hits["v1"] < 1.0 and 0.2 < hits["v2"] < 1.0 and hits["v1"] != hits["v2"]
        assert conn.execute("SELECT MIN(latency_ms) > 0, MIN(cost_usd) > 0 FROM run_rows").fetchone() == (1, 1)


def test_hf_cookbook_run_text_is_matched_to_the_corpus(project, tmp_path):
    """Was: cookbook runs kept retrieved documents as text without ids, so with a corpus hit@5 was 0."""
    from rageval_desktop.core.metrics.dashboard import dashboard

    golden = [{"question": f"What is fact {i}?", "answer": f"fact {i}", "context": f"Fact {i} is true."}
              for i in range(3)]
    outputs = [{"question": f"What is fact {i}?", "generated_answer": "yes",
                "retrieved_docs": ["Some other text.", f"Fact {i}\n is   true."]} for i in range(3)]
    before = import_run(project, write(tmp_path / "early.json", outputs), "early")
    assert not any("retrieval metrics cannot be computed" in w for w in before.warnings)  # nothing linked yet
    import_corpus(project, write(tmp_path / "corpus.jsonl", [
        {"chunk_id": f"c{i}", "doc_id": "d", "text": f"Fact {i} is true."} for i in range(3)] + [
        {"chunk_id": "other", "doc_id": "d", "text": "Some other text."}]))
    import_golden(project, write(tmp_path / "eval.csv", golden))
    run = import_run(project, write(tmp_path / "out.json", outputs), "cookbook")
    assert run.linked == 3 and not any("cannot be computed" in w for w in run.warnings)
    ids = [r[0] for r in project.reader().execute(
        "SELECT p.chunk_id FROM retrieved_passages p JOIN run_rows r ON r.id = p.run_row_id JOIN runs u "
        "ON u.id = r.run_id WHERE u.name = 'cookbook' ORDER BY r.id, p.rank")]
    assert ids == ["other", "c0", "other", "c1", "other", "c2"]
    d = dashboard(project, "cookbook")["slices"]["all"]
    assert d["hit@5"] == 100.0 and d["mrr"] == 50.0


def test_text_only_passages_without_a_corpus_are_reported(project, tmp_path):
    import_golden(project, write(tmp_path / "g.jsonl", [{"id": "g1", "question": "Q1?", "gold_answer": "a",
                                                        "gold_chunk_ids": ["c1"]}]))
    rows = [{"id": "g1", "question": "Q1?", "answer": "a", "retrieved": ["just text", "more text"]}]
    report = import_run(project, write(tmp_path / "r.jsonl", rows), "r")
    warning = next(w for w in report.warnings if "cannot be computed" in w)
    assert warning.startswith("1 linked row(s)") and "no corpus" in warning and "rageval import corpus" in warning


def test_rank_is_the_file_position_unless_rank_by_score(project, tmp_path):
    import_golden(project, write(tmp_path / "g.jsonl", [{"id": "g1", "question": "Q1?", "gold_answer": "a",
                                                        "gold_chunk_ids": ["gold"]}]))
    rows = [{"id": "g1", "question": "Q1?", "answer": "a",
             "retrieved": [{"chunk_id": "x", "text": "x", "score": 0.1}, {"chunk_id": "y", "text": "y", "score": 0.5},
                           {"chunk_id": "gold", "text": "g", "score": 0.9}]}]
    path = write(tmp_path / "r.jsonl", rows)
    by_position = import_run(project, path, "pos")
    assert any("scores rise down the list" in w and "--rank-by score" in w for w in by_position.warnings)
    by_score = import_run(project, path, "score", rank_by="score")
    from rageval_desktop.core.metrics.dashboard import dashboard

    assert dashboard(project, "pos")["slices"]["all"]["mrr"] == pytest.approx(100 / 3)
    assert dashboard(project, "score")["slices"]["all"]["mrr"] == 100.0
    order = [r[0] for r in project.reader().execute(
        "SELECT p.chunk_id FROM retrieved_passages p JOIN run_rows r ON r.id = p.run_row_id JOIN runs u "
        "ON u.id = r.run_id WHERE u.name = 'score' ORDER BY p.rank")]
    assert order == ["gold", "y", "x"] and not any("rise down" in w for w in by_score.warnings)


def test_a_repeated_chunk_keeps_its_rank_slot(project, tmp_path):
    import_golden(project, write(tmp_path / "g.jsonl", [{"id": "g1", "question": "Q1?", "gold_answer": "a",
                                                        "gold_chunk_ids": ["gold"]}]))
    rows = [{"id": "g1", "question": "Q1?", "answer": "a",
             "retrieved": [{"chunk_id": "x", "text": "x"}, {"chunk_id": "x", "text": "x"},
                           {"chunk_id": "gold", "text": "g"}]}]
    import_run(project, write(tmp_path / "r.jsonl", rows), "dup")
    from rageval_desktop.core.metrics.dashboard import dashboard

    assert dashboard(project, "dup")["slices"]["all"]["mrr"] == pytest.approx(100 / 3)  # gold at rank 3, not 2


def test_id_lists_in_csv_cells_take_json_or_semicolons_or_pipes(project, tmp_path):
    """The README's list formats, in the CLI and the app alike."""
    import csv

    from rageval_desktop.core.base.errors import ImportFailed
    from rageval_desktop.core.importers import import_golden

    path = tmp_path / "lists.csv"
    rows = [("q one?", "a", '["c1", "c2"]'), ("q two?", "a", "c1;c2"), ("q three?", "a", "c1 | c2"),
            ("q four?", "a", "c9")]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question", "gold_answer", "gold_chunk_ids"])
        w.writerows(rows)
    import_golden(project, path)
    got = dict(project.reader().execute("SELECT question, gold_chunk_ids FROM golden_rows"))
    assert [got[q] for q, _, _ in rows] == ['["c1", "c2"]'] * 3 + ['["c9"]']
    bad = tmp_path / "bad.csv"
    bad.write_text("question,gold_answer,gold_chunk_ids\nq?,a,c1;;c2\n")
    with pytest.raises(ImportFailed, match="row 1, column .gold_chunk_ids.: an empty id"):
        import_golden(project, bad)


def test_new_slices_are_reported_in_one_line(tmp_path):
    """Was: a first golden import printed six "warning: new slice" lines, one per standard slice (issue 31)."""
    import json

    from rageval_desktop.core.importers.golden_import import import_golden
    from rageval_desktop.core.store.project import Project

    rows = [{"id": f"g{i}", "question": f"q{i}?", "gold_answer": "a", "slice_tag": tag}
            for i, tag in enumerate(["easy", "edge", "adversarial", "easy"])]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with Project.create(tmp_path / "p.rageval") as p:
        report = import_golden(p, tmp_path / "g.jsonl", check_duplicates=False)
    slices = [w for w in report.warnings if "slice" in w]
    assert slices == ["3 new slice(s) added to the project: 'adversarial', 'easy', 'edge'"]


@pytest.mark.parametrize(("cell", "integer", "expected"), [
    ("12", False, 12.0), (" 12 ", False, 12.0), ("1e3", True, 1000), ("2.5", False, 2.5), ("1_000", False, 1000.0),
    ("0", True, 0), ("١٢", False, 12.0), ("", False, None), ("   ", True, None),
    ("-1", False, "must be ≥ 0"), ("nan", False, "finite"), ("inf", False, "finite"),
    ("abc", False, "expected a number"), ("2.5", True, "whole number"), ("1e16", False, "too large"),
    ("1e400", False, "finite"),
])
def test_a_number_written_as_text_is_read_or_refused_as_any_other(cell, integer, expected):
    """A CSV's numbers come as text, through a fast path: what it accepts, and what it leaves to the full checks
    (which word the refusal), are the same as for a number cell."""
    from rageval_desktop.core.base.errors import ImportFailed
    from rageval_desktop.core.importers.cells import Cells

    cells = Cells("f.csv")
    if isinstance(expected, str):
        with pytest.raises(ImportFailed, match=expected):
            cells.number({"x": cell}, "x", 1, integer=integer)
    else:
        got = cells.number({"x": cell}, "x", 1, integer=integer)
        assert got == expected and type(got) is type(expected)


def test_a_damaged_parquet_file_is_refused_on_one_line_and_a_one_row_run_reads_as_one_row(project, tmp_path):
    damaged = tmp_path / "fake.parquet"
    damaged.write_bytes(b"PAR1" + b"\x00" * 100 + b"PAR1")   # pyarrow's message for it ends with a line break
    with pytest.raises(ImportFailed) as caught:
        import_run(project, damaged, "bad")
    assert "not a valid Parquet file" in str(caught.value)
    assert "\n" not in str(caught.value)
    one = write(tmp_path / "one.jsonl", [{"question": "q", "answer": "a", "retrieved": []}])
    assert "imported run 'one': 1 row from one.jsonl" in import_run(project, one, "one").summary()
