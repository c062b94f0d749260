"""The gold-free CLI: judges of the new kinds, `nuggets show|edit|approve`, `models add|list|remove`."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main
from tests.core.test_gold_free import ORE, Script
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "user"))
    path = tmp_path / "ore.rageval"
    assert main(["new", str(path)]) == 0
    assert main(["import", "run", str(path), str(ORE), "--run", "ore"]) == 0
    return path


def out_json(capsys):
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_gold_free_judges_nuggets_and_metrics_from_the_cli(project, capsys, tmp_path):
    p = str(project)
    with FakeOpenAI(Script()) as server:
        endpoint = ["--kind", "llm", "--model", "gpt-4o-mini", "--base-url", server.url, "--api-key-env", "JUDGE_KEY"]
        assert main(["judges", "add", p, "--name", "umbrela", "--metric", "passage_relevance", *endpoint]) == 0
        assert main(["judges", "add", p, "--name", "nug", "--metric", "nuggets", "--grader", "umbrela",
                     *endpoint]) == 0
        assert main(["judges", "add", p, "--name", "cit", "--metric", "citation_support", *endpoint]) == 0
        assert main(["judges", "add", p, "--name", "h", "--metric", "hallucination", *endpoint]) == 1
        assert "--kind hhem" in capsys.readouterr().err
        assert main(["judge", p, "--run", "ore", "--dry-run", "--json"]) == 0
        est = out_json(capsys)
        assert {j["judge"] for j in est["judges"]} == {"umbrela", "nug", "cit"} and est["calls"] > 0
        assert main(["judge", p, "--run", "ore", "--json"]) == 0
        stats = out_json(capsys)
        assert (stats["errors"], stats["unparsed"]) == (0, 0)
    assert main(["metrics", p, "--run", "ore", "--json"]) == 0
    text = capsys.readouterr().out
    for name in ("umbrela_p@1", "umbrela_mrr", "nugget_all", "nugget_vital_strict", "nugget_weighted",
                 "citation_precision", "citation_recall", "citation_f1"):
        assert f'"{name}"' in text, name

    assert main(["nuggets", "show", p, "--question", "query_2", "--json"]) == 0
    shown = out_json(capsys)
    assert shown["question"] == "How big is the sun?" and shown["lists"][0]["status"] == "generated"
    (tmp_path / "list.txt").write_text("vital: The sun is large\nokay: It is a star\n")
    assert main(["nuggets", "edit", p, "--question", "query_2", "--file", str(tmp_path / "list.txt"),
                 "--reason", "reviewed"]) == 0
    assert "saved the curated list (2 nuggets" in capsys.readouterr().out
    assert main(["nuggets", "approve", p, "--question", "query_2", "--json"]) == 0
    assert out_json(capsys)["status"] == "approved"
    assert main(["nuggets", "show", p, "--question", "How big is the sun?"]) == 0
    out = capsys.readouterr().out
    assert "curated (every run): approved" in out and "[okay] It is a star" in out
    assert main(["nuggets", "show", p, "--question", "nope"]) == 2      # a question that does not exist
    assert "no question 'nope'" in capsys.readouterr().err
    # two queries that read alike keep a list each (issue 28): named by text, the question is ambiguous
    assert main(["nuggets", "show", p, "--question", "How many planets have moons?"]) == 2
    assert "asked by several queries (query_3, query_6)" in capsys.readouterr().err
    assert main(["nuggets", "show", p, "--question", "query_3", "--json"]) == 0
    assert main(["nuggets", "show", p, "--question", "query_6", "--json"]) == 0
    capsys.readouterr()
    (tmp_path / "empty.txt").write_text("# nothing\n")
    assert main(["nuggets", "edit", p, "--question", "query_2", "--file", str(tmp_path / "empty.txt")]) == 1
    assert "the list is empty" in capsys.readouterr().err


def test_models_add_checks_the_folder_and_says_what_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "user"))
    assert main(["models", "list", "--json"]) == 0
    assert out_json(capsys) == {}
    (tmp_path / "hhem").mkdir()
    assert main(["models", "add", "hhem", str(tmp_path / "hhem")]) == 1
    err = capsys.readouterr().err
    assert "not an HHEM model folder" in err and "Traceback" not in err
    assert main(["models", "remove", "hhem"]) == 0
    assert "no HHEM model was registered" in capsys.readouterr().out


def test_rows_without_an_answer_are_counted_and_named_not_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    src = tmp_path / "ore.csv"
    src.write_text(ORE.read_text(encoding="utf-8-sig").rstrip("\n") +
                   "\nquery_7,Is the moon cheese?,1,[1],The moon is rock.,\n", encoding="utf-8")
    p = str(tmp_path / "o.rageval")
    assert main(["new", p]) == 0 and main(["import", "run", p, str(src), "--run", "ore"]) == 0
    with FakeOpenAI(Script()) as server:
        assert main(["judges", "add", p, "--name", "nug", "--metric", "nuggets", "--kind", "llm", "--model", "m",
                     "--base-url", server.url]) == 0
        assert main(["judge", p, "--run", "ore"]) == 0
    capsys.readouterr()
    assert main(["metrics", p, "--run", "ore", "--json"]) == 0
    unscored = out_json(capsys)["unscored"]["nug"]
    assert (unscored["rows"], unscored["reasons"]) == (1, {"no_answer": 1})
    assert unscored["listed"] == [{"row": "query_7", "status": "error", "reason": "no_answer"}]
    assert main(["metrics", p, "--run", "ore"]) == 0
    assert "not scored by nug (nuggets): 1 rows (1 no_answer): query_7" in capsys.readouterr().out
