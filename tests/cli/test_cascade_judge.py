"""Issue 47, part 3: `rageval judge --cascade J1,J2` asks the dear judge only about the rows the cheap one is not sure
of (and the rated rows it leaves, which calibrate it), says who decides each row, resumes without paying twice, and
refuses what it cannot do with a usage error."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.review import ratings
from rageval_desktop.core.store.project import Project
from tests.support.capitals import country, short_capitals, unsure
from tests.support.fake_openai import FakeOpenAI, Reply

ROWS = 135   # the dear judge calibrates on the 45 rated rows the cheap one leaves (43 can show it safe at δ / 2)


def passes(k: int) -> bool:
    return k % 2 == 0


@pytest.fixture
def project(tmp_path, monkeypatch, capsys):
    """135 rows, every one rated: even rows pass, odd rows fail."""
    monkeypatch.setenv("JUDGE_KEY", "sk-test-key")
    path = short_capitals(tmp_path, ROWS)
    with Project.open(path) as p:
        for row, ext in p.reader().execute("SELECT id, external_id FROM run_rows").fetchall():
            ratings.rate(p, row, "correctness", "ann", 5.0 if passes(int(ext[1:])) else 1.0)
    capsys.readouterr()
    return path


def judges_by_model(asked: Counter):
    """'small' is sure (5 or 1, right) on two rows in three and sits on the pass mark (4) on the rest; 'big' is
    always sure and right."""
    def reply(body: dict, n: int) -> Reply:
        prompt = body["messages"][-1]["content"]
        k = country(prompt)
        asked[body["model"]] += 1
        right = 5 if passes(k) else 1
        return Reply(f"Feedback: ok. [RESULT] {4 if body['model'] == 'small' and unsure(k) else right}")
    return reply


@pytest.mark.slow      # 120 calls through the loopback server and two cascades (about 4 s)
def test_the_dear_judge_is_asked_only_where_the_cheap_one_is_unsure(project, capsys):
    asked: Counter = Counter()
    with FakeOpenAI(judges_by_model(asked)) as server:
        for name in ("small", "big"):
            assert main(["judges", "add", project, "--name", name, "--metric", "correctness", "--kind", "llm",
                         "--model", name, "--base-url", server.url, "--api-key-env", "JUDGE_KEY"]) == 0
        capsys.readouterr()
        assert main(["judge", project, "--run", "v1", "--cascade", "small,big", "--dry-run", "--json"]) == 0
        est = json.loads(capsys.readouterr().out)
        assert [s["calls"] for s in est["stages"]] == [ROWS, ROWS] and not asked
        assert [s["at_most"] for s in est["stages"]] == [False, True]     # big's share is not known before small
        assert main(["judge", project, "--run", "v1", "--cascade", "small,big", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert asked == {"small": ROWS, "big": ROWS // 3}                   # big only where small was unsure
        assert [s["rows"] for s in out["steps"]] == [ROWS, ROWS // 3]
        assert out["desk"] == 0 and out["stopped"] is None
        assert {k: v for k, v in out["rows"].items()} == {f"r{k}": "big" if unsure(k) else "small"
                                                        for k in range(ROWS)}
        assert [s["level"] for s in out["stages"]] == [0.025, 0.0]   # the loosest levels of the grid shown safe
        assert all(s["bound"] <= 0.1 for s in out["stages"])
        # run again: nothing is bought twice, the same routing
        assert main(["judge", project, "--run", "v1", "--cascade", "small,big", "--dry-run", "--json"]) == 0
        again = json.loads(capsys.readouterr().out)
        assert [s["calls"] for s in again["stages"]] == [0, 0] and [s["at_most"] for s in again["stages"]] == [
            False, False]
        assert main(["judge", project, "--run", "v1", "--cascade", "small,big"]) == 0
        text = capsys.readouterr().out
        assert sum(asked.values()) == ROWS + ROWS // 3
        assert "small 67%, big 33%, desk 0%" in text and "0 judged now, 135 already" in text


@pytest.mark.parametrize(("extra", "said"), [
    (["--judge", "small"], "drop --judge"),
    (["--batch"], "drop --batch"),
    (["--alpha", "1.5"], "--alpha is a share between 0 and 1"),
])
def test_a_cascade_refuses_what_it_cannot_do(project, capsys, extra, said):
    assert main(["judge", project, "--run", "v1", "--cascade", "small,big", *extra]) == 2
    assert said in capsys.readouterr().err


def test_a_cascade_needs_two_judges_of_one_metric(project, capsys):
    assert main(["judges", "add", project, "--name", "sim", "--metric", "correctness", "--kind", "lexical"]) == 0
    assert main(["judges", "add", project, "--name", "faith", "--metric", "faithfulness", "--kind", "llm",
                 "--model", "m", "--api-key-env", "JUDGE_KEY"]) == 0
    capsys.readouterr()
    assert main(["judge", project, "--run", "v1", "--cascade", "sim"]) == 2
    assert "2 to 5 judges" in capsys.readouterr().err
    assert main(["judge", project, "--run", "v1", "--cascade", "sim,faith"]) == 2
    assert "must judge one metric" in capsys.readouterr().err
    assert main(["judge", project, "--run", "v1", "--cascade", "sim,nobody"]) == 2
    assert "nobody" in capsys.readouterr().err
