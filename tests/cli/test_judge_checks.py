"""Stability and sensitivity probes (issue 30), against the loopback OpenAI-compatible server: the flip rate a
scripted judge shows lies within its interval of the truth, calls = sample × repeats, a re-run pays nothing; an
always-5 judge fails its probe (and with it the gate licence), a judge that follows the evidence passes; check runs
stay out of every list of runs and go in one command."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.perturb import KINDS, perturb
from tests.support.capitals import capitals_project
from tests.support.fake_openai import FakeOpenAI, Reply

ROWS = 60


@pytest.fixture
def project(tmp_path, monkeypatch, capsys):
    """60 questions whose answers carry most of the reference (a judge that reads them gives 4 of 5)."""
    monkeypatch.setenv("JUDGE_KEY", "sk-test-key")

    def ref(k: int) -> str:
        return f"The capital of Country{k} is City{k}, founded in {1100 + k} by Founder{k}."

    path = capitals_project(
        tmp_path, ROWS, lambda k: {"gold_answer": ref(k), "slice_tag": "easy" if k % 2 else "edge"},
        lambda k: {"answer": f"The capital of Country{k} is City{k}, founded in {1100 + k}. It is a large city.",
                   "retrieved": [{"chunk_id": f"c{k}", "text": ref(k)}]})
    capsys.readouterr()
    return path


def _add(path, url, name="gpt"):
    assert main(["judges", "add", path, "--name", name, "--metric", "correctness", "--kind", "llm", "--model", "m",
                 "--base-url", url, "--api-key-env", "JUDGE_KEY"]) == 0


def _tag(prompt: str, tag: str) -> str:
    """The text of the last <tag> block (the rubric's instructions name the tags before the blocks)."""
    end = prompt.rfind(f"</{tag}>")
    return prompt[prompt.rfind(f"<{tag}>", 0, end) + len(tag) + 2:end].strip()


def evidence_score(prompt: str) -> int:
    """A judge that reads the evidence: how much of the reference the response carries, less for a negation or a
    number or name the reference does not have; instructions inside the response are data."""
    response, reference = _tag(prompt, "response"), _tag(prompt, "reference")
    if response.strip() in ("", "N/A"):
        return 1
    words = lambda t: set(re.findall(r"[a-z0-9]+", t.lower())) - {"the", "of", "is", "in", "by", "a"}  # noqa: E731
    recall = len(words(reference) & words(response)) / len(words(reference))
    score = 1 + 4 * recall
    if re.search(r"\bnot\b|cannot", response) and not re.search(r"\bnot\b", reference):
        score -= 2
    if set(re.findall(r"\d+", response)) - set(re.findall(r"\d+", reference)):
        score -= 2
    return max(1, min(5, int(score)))


def test_perturbations_apply_to_the_fixture_and_are_deterministic():
    answer = "The capital of Country3 is City3, founded in 1103. It is a large city."
    ref = "The capital of Country3 is City3, founded in 1103 by Founder3."
    out = {k: perturb(k, answer, ref, "What is the capital of Country3?") for k in KINDS}
    assert all(out.values()) and out == {k: perturb(k, answer, ref, "What is the capital of Country3?")
                                         for k in KINDS}
    assert out["drop_fact"] == "It is a large city." and "is not City3" in out["negate"]
    assert "1110" in out["swap_entity"] and out["empty"] == "N/A"


@pytest.mark.slow      # heavy (2-3 s): make test stays near 90 s; CI runs it
def test_a_judge_that_flips_shows_its_flip_rate_and_a_rerun_pays_nothing(project, capsys):
    q, repeats, sample = 0.08, 5, 50
    seen: Counter = Counter()

    def flippy(body: dict, n: int) -> Reply:
        prompt = body["messages"][-1]["content"]
        seen[prompt] += 1
        draw = int(hashlib.sha256(f"{prompt}|{seen[prompt]}|7".encode()).hexdigest(), 16) % 10_000 / 10_000
        return Reply(f"Feedback: fine. [RESULT] {2 if draw < q else 4}")

    with FakeOpenAI(flippy) as server:
        _add(project, server.url)
        assert main(["judge", project, "--run", "v1", "--judge", "gpt"]) == 0
        capsys.readouterr()
        before = server.calls
        assert main(["stability", project, "--judge", "gpt", "--run", "v1", "--dry-run", "--json"]) == 0
        est = json.loads(capsys.readouterr().out)
        assert (est["calls"], est["copies"], server.calls) == (sample * repeats, sample * repeats, before)
        assert est["settings"] == {"deterministic": False, "temperature": 0.0, "seed": 0, "model": "m",
                                   "note": "the judge's own temperature and seed, as configured; the request cache "
                                           "is bypassed"}
        assert main(["stability", project, "--judge", "gpt", "--run", "v1", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert server.calls - before == sample * repeats          # every repeat reached the model
        truth = 1 - (1 - q) ** repeats - q ** repeats
        low, high = out["flip_rate_ci"]
        assert low <= truth <= high and 0 < out["flip_rate"] < 1
        assert out["slices"]["all"]["rows"] == sample and out["judgments"] == sample * repeats
        assert set(out["slices"]) == {"easy", "edge", "all"} and out["slices"]["all"]["alpha"] < 1
        assert out["settings"]["temperature"] == 0.0 and out["id"] >= 1
        calls = server.calls
        assert main(["stability", project, "--judge", "gpt", "--run", "v1", "--json"]) == 0
        again = json.loads(capsys.readouterr().out)
        assert server.calls == calls and again["flip_rate"] == out["flip_rate"]   # resumed: nothing re-bought
    # the copies are not a run of the system
    assert main(["info", project, "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["runs"]] == ["v1"]
    assert main(["metrics", project, "--run", "v1", "--json"]) == 0
    noise = json.loads(capsys.readouterr().out)["judge_noise"]["correctness"]
    assert noise["judge"] == "gpt" and noise["repeats"] == repeats
    share = noise["slices"]["all"]["ci_width_share"]
    assert 0 < share <= 1        # this judge's scores differ only by its own flips: most of the width is noise
    assert main(["stability", project, "--delete", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == ["stability: gpt on v1"]


@pytest.mark.slow      # 700 calls through the loopback server (about 4 s)
def test_an_always_5_judge_fails_its_probe_and_cannot_gate_an_evidence_judge_passes(project, capsys):
    def replies(body: dict, n: int) -> Reply:
        model, prompt = body["model"], body["messages"][-1]["content"]
        score = 5 if model == "always-5" else evidence_score(prompt)
        return Reply(f"Feedback: judged. [RESULT] {score}")

    with FakeOpenAI(replies) as server:
        _add(project, server.url, "reader")
        assert main(["judges", "add", project, "--name", "yes-man", "--metric", "correctness", "--kind", "llm",
                     "--model", "always-5", "--base-url", server.url, "--api-key-env", "JUDGE_KEY"]) == 0
        assert main(["judge", project, "--run", "v1"]) == 0
        capsys.readouterr()
        assert main(["probe", project, "--judge", "yes-man", "--run", "v1", "--json"]) == 0
        bad = json.loads(capsys.readouterr().out)
        assert bad["passed"] is False and "drop_fact" in bad["failed"]
        assert bad["kinds"]["drop_fact"]["verdict"] == "fail" and bad["kinds"]["drop_fact"]["share"] == 0
        assert bad["kinds"]["pad"]["rows"] == 0          # always at the top: pad and inject cannot show anything
        calls = server.calls
        assert main(["probe", project, "--judge", "reader", "--run", "v1", "--json"]) == 0
        good = json.loads(capsys.readouterr().out)
        assert server.calls - calls == 50 * len(KINDS)
        assert good["passed"] is True, [(k["kind"], k["verdict"]) for k in good["kinds"].values()]
        assert all(k["share"] == 1 for k in good["kinds"].values())
    assert main(["info", project, "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["runs"]] == ["v1"]
    assert main(["probe", project, "--delete", "--judge", "yes-man"]) == 0
    assert "deleted 1 probe run(s): probe: yes-man on v1" in capsys.readouterr().out


def test_checks_refuse_what_they_cannot_do(project, capsys):
    with FakeOpenAI() as server:
        _add(project, server.url)
        assert main(["stability", project, "--judge", "gpt", "--run", "v1"]) == 2
        assert "has judged no row of run 'v1' yet" in capsys.readouterr().err
        assert main(["judge", project, "--run", "v1"]) == 0
        assert main(["stability", project, "--judge", "gpt", "--run", "v1", "--repeats", "1"]) == 2
        assert main(["probe", project, "--judge", "gpt", "--run", "v1", "--kinds", "shout"]) == 2
        err = capsys.readouterr().err
        assert "2 to 20 times (not 1)" in err and "unknown probe kind(s) shout" in err and "Traceback" not in err
        assert main(["probe", project, "--run", "v1"]) == 2
