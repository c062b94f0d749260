"""Every documented exit code, over the commands' common failure modes (issue 28: `gate` with a misspelt run
exited 1, the code for a regression, so a CI pipeline could not tell a typo from a drop). 0 success; 1 the
operation failed (bad input, a refused or damaged file) or, for a verdict, a regression shown; 2 a usage error or
a request that cannot be made (a name that does not exist, runs that share no question); 3 `gate` not
decision-grade; 4 a verdict's command that failed (issue 44: 1 meant both "regression" and "the tool failed")."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("codes") / "d.rageval"
    assert main(["demo", str(path)]) == 0
    return str(path)


CASES = [
    (["metrics", "{p}", "--run", "v2"], 0),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2"], 3),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2", "--strict"], 3),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2", "--metrics", "hit@5", "--max-slice-drop", "60"], 0),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2", "--metrics", "nosuchmetric"], 2),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2", "--config", "{d}/nosuch.json"], 2),
    (["gate", "{d}/nosuch.rageval", "--baseline", "v1", "--candidate", "v2"], 4),
    (["decisions", "{d}/nosuch.rageval", "--verify"], 4),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2", "--rule", "point"], 1),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "nosuchrun"], 2),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v1"], 2),       # was 3: "not decision-grade", of a run
    (["compare", "{p}", "--baseline", "v2", "--candidate", "v2"], 2),    # against itself (every delta +0.0)
    (["gate-plan", "{p}", "--baseline", "v1", "--like", "v1"], 2),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2", "--metrics", "faithfulness"], 2),
    (["gate", "{p}", "--baseline", "v1", "--candidate", "v2", "--max-slice-drop", "-1"], 2),
    (["compare", "{p}", "--baseline", "nosuchrun", "--candidate", "v2"], 2),
    (["metrics", "{p}", "--run", "nosuchrun"], 2),
    (["failures", "{p}", "--run", "nosuchrun"], 2),
    (["report", "{p}", "--run", "nosuchrun", "--out", "{d}/r.html"], 2),
    (["report", "{p}", "--run", "v2", "--out", "{d}/r.docx"], 1),
    (["agreement", "{p}", "--judge", "nosuchjudge"], 2),
    (["judge", "{p}", "--run", "v2", "--judge", "nosuchjudge"], 2),
    (["jobs", "show", "{p}", "999"], 2),
    (["metrics", "{d}/nosuch.rageval", "--run", "v2"], 1),
    (["import", "run", "{p}", "{d}/nosuch.jsonl", "--run", "v9"], 1),
    (["metrics"], 2),
    (["frobnicate"], 2),
]


@pytest.mark.parametrize("argv, code", CASES, ids=[" ".join(a[:1] + a[2:4]) + f" -> {c}" for a, c in CASES])
def test_each_failure_mode_has_its_documented_exit_code(demo, tmp_path, capsys, argv, code):
    args = [a.format(p=demo, d=tmp_path) for a in argv]
    try:
        got = main(args)
    except SystemExit as exc:         # argparse's own usage errors
        got = exc.code
    err = capsys.readouterr().err
    assert got == code, err
    if code:
        assert "Traceback" not in err and err.strip()


def test_json_output_of_a_refused_gate_is_not_half_written(demo, capsys):
    assert main(["gate", demo, "--baseline", "v1", "--candidate", "nosuchrun", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: no run named 'nosuchrun'")
    assert main(["gate", demo, "--baseline", "v1", "--candidate", "v2", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["decision"] == "not_decision_grade"


def test_an_option_the_command_does_not_take_is_refused_with_its_usage_and_the_likely_one(demo, capsys):
    """Was: `rageval judge P --run v2 --judges x` printed the usage of `rageval` itself, a list of 45 commands."""
    for argv, usage, meant in ((["judge", demo, "--run", "v2", "--judges", "x"], "usage: rageval judge ", "--judge"),
                               (["jobs", "list", demo, "--jsn"], "usage: rageval jobs list ", "--json")):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2
        assert f"(did you mean {meant}?)" in err and usage in err and "{new,import" not in err


def test_a_misspelt_command_or_choice_names_the_one_it_most_likely_meant(demo, capsys):
    for argv, meant in ((["metric", demo], "'metrics'"), (["jobs", "lst", demo], "'list'"),
                        (["sample", demo, "--run", "v2", "--metric", "correctness", "--mode", "stratifed"],
                         "'stratified'")):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2 and f"(did you mean {meant}?)" in capsys.readouterr().err
