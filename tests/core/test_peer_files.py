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
