"""Issue 76.1/76.2: files peers ship, imported as their own tools read them (tests/data/peers/ORIGIN.md says where
each comes from). ragas-examples' hf_doc_qa_eval.csv (a header ending in an empty column name) was refused whole,
naming no column; open-rag-eval's responses_eng_eng.csv (20 rows, then 80 rows of `,,,,`) was refused at row 21."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.importers.preview import preview
from rageval_desktop.core.store.project import Project

PEERS = Path(__file__).resolve().parent.parent / "data" / "peers"
RAGAS = PEERS / "ragas-hf_doc_qa_eval.csv"
ORE = PEERS / "open-rag-eval-responses_eng_eng.csv"


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "p.rageval"
    Project.create(path).close()
    return path


def test_ragas_examples_dataset_imports_as_pandas_reads_it(project, capsys):
    read = pd.read_csv(RAGAS)
    assert list(read.columns)[-1] == "Unnamed: 2"                      # what ragas' own pandas read gives
    assert main(["import", "golden", str(project), str(RAGAS), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["layout"] == "ragas-examples" and report["added"] == len(read) == 66
    assert report["warnings"] == ["the last 1 column(s) of the header have no name and were left out; 1 row(s) "
                                  "had a value there, not imported"]
    with Project.open(project, read_only=True) as p:
        stored = dict(p.reader().execute("SELECT question, gold_answer FROM golden_rows"))
    first = read.iloc[0]
    assert stored[first["question"]] == first["expected_answer"]        # its text as written, newline and all


def test_open_rag_eval_results_with_a_spreadsheets_blank_rows_import(project, capsys):
    read = pd.read_csv(ORE).dropna(how="all")                         # as open-rag-eval's connector groups them
    assert main(["import", "run", str(project), str(ORE), "--run", "ore", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["layout"] == "open-rag-eval" and report["added"] == read["query_id"].nunique() == 4
    assert "80 row(s) with every cell empty were skipped (as a spreadsheet saves blank rows)" in report["warnings"]
    with Project.open(project, read_only=True) as p:
        passages = p.reader().execute("SELECT COUNT(*) FROM retrieved_passages").fetchone()[0]
    assert passages == len(read) == 20


def test_the_wizard_previews_both_and_says_what_it_left_out():
    golden = preview(None, RAGAS, "golden")
    assert (golden.layout, golden.closest, golden.rows, golden.error) == ("ragas-examples", "ragas-examples", 66, None)
    assert golden.summary["warnings"][0].startswith("the last 1 column(s) of the header have no name")
    run = preview(None, ORE, "run")
    assert (run.layout, run.rows, run.error) == ("open-rag-eval", 20, None)
    assert run.summary["warnings"] == ["80 row(s) with every cell empty were skipped (as a spreadsheet saves blank "
                                       "rows)"]


def test_a_nameless_column_anywhere_else_is_named_by_its_place(project, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("question,,gold_answer\nQ?,x,A\n")
    assert main(["import", "golden", str(project), str(bad)]) == 1
    assert "column 2 after 'question' before 'gold_answer' has no name in the header row" in capsys.readouterr().err
    dupes = tmp_path / "dupes.csv"
    dupes.write_text("question,gold_answer,question\nQ?,A,R\n")
    assert main(["import", "golden", str(project), str(dupes)]) == 1
    assert "duplicate column name(s): 'question' (columns 1, 3)" in capsys.readouterr().err


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("kind, rows, layout, question, answer", [
    ("golden", [{"input": "What does with do?", "target": "It manages a context.", "id": "s1"},
                {"input": [{"role": "system", "content": "Be brief."},
                           {"role": "user", "content": [{"type": "text", "text": "What is a generator?"}]}],
                 "target": ["A function that yields.", "An iterator."], "id": "s2"}],
     "inspect-ai", "What is a generator?", "A function that yields."),
    ("golden", [{"input": "What does with do?", "expected_output": "It manages a context.", "context": ["c1"]},
                {"input": "What is a generator?", "expected_output": "A function that yields."}],
     "deepeval", "What is a generator?", "A function that yields."),
    ("run", [{"input": "What does with do?", "actual_output": "Context.", "retrieval_context": ["p1", "p2"],
              "completion_time": 1.5},
             {"input": "What is a generator?", "actual_output": "A function that yields.",
              "retrieval_context": ["p3"]}],
     "deepeval", "What is a generator?", "A function that yields."),
    ("run", [{"question": "What does with do?", "expected_answer": "x", "model_response": "Context.",
              "retrieved_documents": "['p1...', 'p2...']", "correctness_score": "pass"},
             {"question": "What is a generator?", "expected_answer": "y", "model_response": "A function that yields.",
              "retrieved_documents": "[]", "correctness_score": "fail"}],
     "ragas-experiment", "What is a generator?", "A function that yields."),
    ("golden", [{"id": "a1b2", "status": "ACTIVE", "input": {"question": "What is a generator?", "context": "PEP 255"},
                 "expectedOutput": {"answer": "A function that yields."}, "metadata": {"source": "docs"},
                 "sourceTraceId": None, "datasetId": "ds1", "datasetName": "qa", "createdAt": "2026-01-01T00:00:00Z",
                 "updatedAt": "2026-01-02T00:00:00Z"},
                {"id": "c3d4", "status": "ACTIVE", "input": "What does with do?", "expectedOutput": None}],
     "langfuse", "What is a generator?", "A function that yields."),
    ("golden", [{"id": "0e1f", "dataset_id": "d9", "inputs": {"messages": [
                    {"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is a generator?"}]},
                 "outputs": {"message": {"role": "assistant", "content": "A function that yields."}},
                 "metadata": {"dataset_split": ["base"]}, "created_at": "2026-01-01T00:00:00"},
                {"id": "2a3b", "inputs": {"query": "What does with do?"}, "outputs": {"output": "A context."}}],
     "langsmith", "What is a generator?", "A function that yields."),
])
def test_peer_layouts_are_detected_not_mapped_by_hand(project, tmp_path, capsys, kind, rows, layout, question,
                                                        answer):
    """Issue 76.2: inspect-ai datasets, DeepEval goldens and test cases and ragas experiment results were refused or
    needed a --map a user does not know to give."""
    path = _jsonl(tmp_path / f"{layout}.jsonl", rows)
    if kind == "run":
        assert main(["import", "run", str(project), str(path), "--run", "r", "--json"]) == 0
    else:
        assert main(["import", "golden", str(project), str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layout"] == layout
    with Project.open(project, read_only=True) as p:
        sql = ("SELECT question, answer FROM run_rows" if kind == "run" else
               "SELECT question, gold_answer FROM golden_rows")
        assert (question, answer) in p.reader().execute(sql).fetchall()


def test_langfuse_and_langsmith_exports_import_as_their_apis_list_them(project, tmp_path, capsys):
    """Issue 76.2: Langfuse's dataset items as its API pages them ({"data": [...], "meta": ...}; an archived item
    comes in retired) and LangSmith's examples as `langsmith dataset export` writes them (a JSON list); an object's
    other values are kept in metadata, and an object that names no question is refused by row and column."""
    page = {"data": [{"id": "i1", "status": "ARCHIVED", "input": {"question": "Old?", "lang": "en"},
                      "expectedOutput": "Gone.", "metadata": None},
                     {"id": "i2", "status": "ACTIVE", "input": "New?", "expectedOutput": "Here."}],
            "meta": {"page": 1, "limit": 50, "totalItems": 2, "totalPages": 1}}
    (tmp_path / "langfuse.json").write_text(json.dumps(page))
    assert main(["import", "golden", str(project), str(tmp_path / "langfuse.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layout"] == "langfuse"
    with Project.open(project, read_only=True) as p:
        rows = p.reader().execute("SELECT id, question, gold_answer, status, metadata FROM golden_rows "
                                  "WHERE id IN ('i1', 'i2') ORDER BY id").fetchall()
    assert [r[:4] for r in rows] == [("i1", "Old?", "Gone.", "retired"), ("i2", "New?", "Here.", "approved")]
    assert json.loads(rows[0][4])["input"] == {"question": "Old?", "lang": "en"}
    examples = [{"id": "e1", "inputs": {"question": "Q1?"}, "outputs": {"answer": "A1"}, "metadata": {"k": 1}},
                {"id": "e2", "inputs": {"question": "Q2?"}, "outputs": None}]
    (tmp_path / "langsmith.json").write_text(json.dumps(examples))
    assert main(["import", "golden", str(project), str(tmp_path / "langsmith.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layout"] == "langsmith"
    vague = [{"inputs": {"a": "x", "b": "y"}, "outputs": {"answer": "z"}}]
    (tmp_path / "vague.json").write_text(json.dumps(vague))
    assert main(["import", "golden", str(project), str(tmp_path / "vague.json")]) == 1
    err = capsys.readouterr().err
    assert "row 1" in err and "inputs" in err and "'a', 'b': none is named like a question" in err


def test_a_deepeval_test_run_file_imports_its_test_cases(project, tmp_path, capsys):
    run = {"testFile": "test_rag.py", "testCases": [
        {"name": "test_case_0", "input": "What does with do?", "actualOutput": "Context.",
         "expectedOutput": "It manages a context.", "retrievalContext": ["p1"], "success": True,
         "metricsData": [{"name": "Faithfulness", "score": 1.0, "threshold": 0.5, "success": True}], "order": 0},
        {"name": "test_case_1", "input": "What is a generator?", "actualOutput": "A function that yields.",
         "retrievalContext": [], "success": False, "metricsData": [], "order": 1}]}
    path = tmp_path / "test_run.json"
    path.write_text(json.dumps(run))
    assert main(["import", "run", str(project), str(path), "--run", "r", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["layout"] == "deepeval-test-run" and report["added"] == 2


def test_a_refusal_says_the_map_that_would_read_the_file(project, tmp_path, capsys):
    path = _jsonl(tmp_path / "g.jsonl", [{"prompt": "Q?", "ground_truth": "A"}])
    assert main(["import", "golden", str(project), str(path)]) == 1
    assert "--map question=prompt,gold_answer=ground_truth would read it" in capsys.readouterr().err
