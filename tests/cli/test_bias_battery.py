"""Issue 47, part 7: the RAG bias battery beside the probes — the passages reversed (the verdict should not move), a
citation to no passage, the answer lengthened without new facts, the judge's own model family named as the author
(none should raise the score). A judge swayed by them fails and loses its gate licence; a judge that reads the
evidence passes; the battery is a check of its own (a probe recorded later does not forget it)."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.perturb import BIAS, family, perturb
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review.licence import last_check
from rageval_desktop.core.store.project import Project
from tests.support.capitals import capitals_project
from tests.support.fake_openai import FakeOpenAI, Reply

ROWS = 40


@pytest.fixture
def project(tmp_path, monkeypatch, capsys):
    """40 rows, each with the passage that supports the answer first and an unrelated one second."""
    monkeypatch.setenv("JUDGE_KEY", "sk-test-key")
    path = capitals_project(
        tmp_path, ROWS, lambda k: {"gold_answer": f"City{k}."},
        lambda k: {"answer": f"The capital of Country{k} is City{k}.",
                   "retrieved": [{"chunk_id": f"c{k}", "text": f"Country{k}'s capital is City{k}."},
                                 {"chunk_id": f"x{k}", "text": "Bananas are rich in potassium."}]})
    capsys.readouterr()
    return path


def _block(prompt: str, tag: str) -> str:
    end = prompt.rfind(f"</{tag}>")
    return prompt[prompt.rfind(f"<{tag}>", 0, end) + len(tag) + 2:end].strip()


def swayed(body: dict, n: int) -> Reply:
    """Reads only the first passage; a citation, more words or its own family's name each add a point."""
    prompt = body["messages"][-1]["content"]
    response, passages = _block(prompt, "response"), _block(prompt, "passages")
    city = response.split(" is ")[-1].split(".")[0].split(" [")[0]
    first = passages.split("\n\n")[0]
    score = 4 if city in first else 2
    score += ("[" in response) + ("In other words" in response) + ("written by" in response)
    return Reply(f"Feedback: ok. [RESULT] {min(5, score)}")


def fair(body: dict, n: int) -> Reply:
    prompt = body["messages"][-1]["content"]
    response, passages = _block(prompt, "response"), _block(prompt, "passages")
    city = response.split(" is ")[-1].split(".")[0].split(" [")[0]
    return Reply(f"Feedback: ok. [RESULT] {4 if city in passages else 2}")


def test_the_battery_perturbs_as_described():
    a, ref = "The capital of Country3 is City3. It is large.", "City3."
    assert perturb("fake_citation", a, ref, "q", passages=2) == "The capital of Country3 is City3 [5]. It is large."
    assert perturb("lengthen", a, ref, "q").endswith("In other words, the capital of Country3 is City3.")
    assert perturb("self_author", a, ref, "q", model="gpt-4o-mini").endswith("written by OpenAI's GPT.)")
    assert perturb("self_author", a, ref, "q", model="my-house-model") is None       # family not known
    assert family("meta-llama/Llama-3.1-8B-Instruct") == "Meta's Llama" and family(None) is None


@pytest.mark.slow      # 2 x 200 calls through the loopback server (about 4 s)
def test_a_swayed_judge_fails_the_battery_and_loses_its_licence_a_fair_one_passes(project, capsys):
    with FakeOpenAI(swayed) as swayed_server, FakeOpenAI(fair) as fair_server:  # answering until the test's end
        for name, server in (("swayed", swayed_server), ("fair", fair_server)):
            assert main(["judges", "add", project, "--name", name, "--metric", "faithfulness", "--kind", "llm",
                         "--model", "gpt-4o-mini", "--base-url", server.url, "--api-key-env", "JUDGE_KEY"]) == 0
            assert main(["judge", project, "--run", "v1", "--judge", name]) == 0
            capsys.readouterr()
            assert main(["probe", project, "--judge", name, "--run", "v1", "--battery", "--dry-run", "--json"]) == 0
            est = json.loads(capsys.readouterr().out)
            assert est["calls"] == ROWS * len(BIAS) and est["check"] == "bias"
            assert main(["probe", project, "--judge", name, "--run", "v1", "--battery", "--json"]) == 0
            out = json.loads(capsys.readouterr().out)
            assert out["check"] == "bias" and out["kinds"]["passage_order"]["expect"] == "same"
            assert all(out["kinds"][k]["rows"] == ROWS for k in BIAS)
            if name == "swayed":
                assert out["passed"] is False and sorted(out["failed"]) == sorted(BIAS)
            else:
                assert out["passed"] is True
        with Project.open(project) as p:
            swayed_judge = get_judge(p, "swayed")
            assert last_check(p, swayed_judge, "bias")["passed"] is False
            assert last_check(p, swayed_judge, "probe") is None          # the battery is not a probe
        # a probe recorded after the battery does not wash its failure away (its calls reach the judge's endpoint:
        # with the server gone, every call failed to connect and the probe was still recorded, until jobs stopped
        # on an endpoint that cannot be reached)
        calls = swayed_server.calls
        assert main(["probe", project, "--judge", "swayed", "--run", "v1", "--kinds", "pad", "--json"]) == 0
        assert swayed_server.calls > calls
    capsys.readouterr()
    with Project.open(project) as p:
        assert last_check(p, get_judge(p, "swayed"), "bias")["passed"] is False
        assert last_check(p, get_judge(p, "swayed"), "probe")["check"] == "probe"
    # each check's runs go with their own command
    assert main(["probe", project, "--battery", "--delete", "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["deleted"]) == ["bias: fair on v1", "bias: swayed on v1"]
    assert main(["probe", project, "--delete", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == ["probe: swayed on v1"]


def test_passage_order_leaves_out_rows_whose_answer_cites_passages_by_number(project, capsys, tmp_path):
    rows = [{"id": f"q{k}", "golden_id": f"g{k}", "question": f"What is the capital of Country{k}?",
             "answer": f"The capital of Country{k} is City{k} [1].",
             "retrieved": [{"chunk_id": f"c{k}", "text": f"City{k}."}, {"chunk_id": f"x{k}", "text": "Other."}]}
            for k in range(5)]
    (tmp_path / "v2.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["import", "run", project, str(tmp_path / "v2.jsonl"), "--run", "v2"]) == 0
    with FakeOpenAI(fair) as server:
        assert main(["judges", "add", project, "--name", "fair", "--metric", "faithfulness", "--kind", "llm",
                     "--model", "m", "--base-url", server.url, "--api-key-env", "JUDGE_KEY"]) == 0
        assert main(["judge", project, "--run", "v2", "--judge", "fair"]) == 0
        capsys.readouterr()
        assert main(["probe", project, "--judge", "fair", "--run", "v2", "--battery", "--dry-run", "--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    # passage_order: cited by number; self_author: the model 'm' names no family; the rest apply
    assert est["not_applicable"] == {"passage_order": 5, "self_author": 5} and est["calls"] == 10
