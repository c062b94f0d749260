"""Stability counts what was asked (issue 46): a row with a repeat that failed had fewer chances to flip; counting it
as asked every time biased the flip rate down (17-20% at 20% failed calls). It is left out of the flip rate and
counted apart."""

from __future__ import annotations

from rageval_desktop.core.jobs import checks
from rageval_desktop.core.judges.judge import Judge


def test_rows_with_a_failed_repeat_are_left_out_of_the_flip_rate(monkeypatch):
    judge = Judge(1, "gpt", "correctness", "llm", 1, "m", None, None, {})
    repeats = [f"repeat {i}" for i in range(1, 6)]
    rows = list(range(40))
    found = []
    for r in rows:
        for i, v in enumerate(repeats):
            if r % 2 == 0:              # even rows flip (2 then 4 ...), every repeat answered
                found.append((r, v, 2.0 if i == 0 else 4.0, 0.0))
            elif i != 1:                # odd rows never flip, and their second repeat failed
                found.append((r, v, 4.0, 0.0))
    monkeypatch.setattr(checks, "_verdicts", lambda p, c: found)
    monkeypatch.setattr(checks, "_slices", lambda p, r: {x: "easy" for x in r})
    out = checks.stability_summary(None, checks.Check("stability", judge, "v1", "stability: gpt on v1", rows, repeats))
    assert out["incomplete_rows"] == 20 and out["flip_rows"] == 20
    assert out["flip_rate"] == 1.0                       # was 0.5: the odd rows counted as never flipping
    assert out["slices"]["all"]["rows"] == 40            # still in the spread and alpha (asked at least twice)
    assert "rows asked every repeat" in out["flip_definition"]
