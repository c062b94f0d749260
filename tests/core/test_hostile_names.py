"""Names from data (runs, slices, judges) are inert in charts, HTML, PDF and Markdown."""

from __future__ import annotations

import json
import re

import pytest

from rageval_desktop.core.base.text import md_escape
from rageval_desktop.core.importers import import_golden, import_run
from rageval_desktop.core.metrics.compare import compare
from rageval_desktop.core.metrics.gate import gate
from rageval_desktop.core.metrics.gate_text import gate_markdown
from rageval_desktop.core.reports import plots
from rageval_desktop.core.reports.write import write_report

SLICE = "$\\undefinedmacro$ | <img src=x onerror=alert(1)> </details>"
BASE = "v1 $\\frac{a}$ <script>alert(1)</script>"
CAND = "[click](http://evil.example) | `x`"


@pytest.fixture
def hostile(project, tmp_path):
    golden = [{"id": f"g{i}", "question": f"Question {i}?", "gold_answer": f"Answer {i}.",
               "gold_chunk_ids": [f"c{i}"], "slice_tag": SLICE if i % 2 else "easy"} for i in range(24)]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in golden))
    import_golden(project, tmp_path / "g.jsonl")
    for name, hit in ((BASE, 3), (CAND, 2)):
        rows = [{"id": f"g{i}", "question": f"Question {i}?", "answer": f"Answer {i}.",
                 "retrieved": [{"chunk_id": f"c{i}" if i % hit else "zz", "text": "t"}]} for i in range(24)]
        (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        import_run(project, tmp_path / "r.jsonl", name)
    return project


def test_charts_draw_names_with_dollar_signs(hostile):
    """Was: matplotlib parsed `$\\undefinedmacro$` as math and the chart (dashboard, compare, reports) crashed."""
    from rageval_desktop.core.reports.content import build_report

    report = build_report(hostile, CAND, BASE)
    assert plots.slice_bars(report).startswith(b"\x89PNG")
    assert plots.delta_chart(compare(hostile, BASE, CAND)).startswith(b"\x89PNG")


def _cells(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def assert_tables_intact(md: str) -> None:
    """Every row of every Markdown table has as many unescaped `|` as its header."""
    lines = md.splitlines()
    width = None
    for i, line in enumerate(lines):
        if not line.startswith("|"):
            width = None
            continue
        if i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            width = _cells(line)
        assert width is None or _cells(line) == width, line


@pytest.mark.parametrize("ext", [".pdf", ".html", ".md"])
def test_reports_with_hostile_names(hostile, tmp_path, ext):
    from rageval_desktop.core.review import pairwise

    sample = pairwise.draw_pairs(hostile, BASE, CAND, 6, seed=1)     # the side-by-side line names both runs
    for item in pairwise.pair_items(hostile, sample):
        pairwise.rate_pair(hostile, sample, item.position, "ann", "b")
    out = write_report(hostile, CAND, tmp_path / f"r{ext}", baseline=BASE)
    if ext == ".pdf":
        assert out.read_bytes().startswith(b"%PDF")
        return
    text = out.read_text()
    assert "<img src=x" not in text and "<script>alert" not in text
    assert "Side by side (pairwise review): " in text and "of 6 rated pairs" in text
    if ext == ".md":
        assert "undefinedmacro" in text and "</details>" not in text and "](http://evil" not in text
        assert_tables_intact(text)


def test_the_gate_comment_escapes_every_name(hostile):
    """Was: names went into gate.md raw: <img onerror>, <script>, a `|` splitting the table, </details>."""
    result = gate(hostile, BASE, CAND, max_slice_drop=0.0)
    md = gate_markdown(result)
    assert "<img" not in md and "<script" not in md and "](http" not in md and "undefinedmacro" in md
    folds = 1 + bool(result.undecided) + bool(result.safe)     # 'All slices', the undecided and the safe cells
    assert md.count("</details>") == folds and md.count("<details>") == folds
    assert_tables_intact(md)


def test_md_escape():
    assert md_escape("a|b <i>x</i> [l](u) `c`\nd") == "a\\|b &lt;i&gt;x&lt;/i&gt; \\[l\\]\\(u\\) \\`c\\` d"


def test_names_have_a_length_limit_no_controls_and_lookalikes_are_said(tmp_path, capsys):
    """Was (issue 28): any length, RTL overrides, and `V1` or a fullwidth `ｖ１` beside `v1` without a word."""
    import json

    from rageval_desktop.cli import main

    path = tmp_path / "n.rageval"
    assert main(["new", str(path)]) == 0
    run = tmp_path / "r.jsonl"
    run.write_text(json.dumps({"question": "q?", "answer": "a", "retrieved": []}) + "\n")
    assert main(["import", "run", str(path), str(run), "--run", "v1"]) == 0
    capsys.readouterr()
    for bad in ("x" * 101, "v1\u202e2v", "line\nbreak"):
        assert main(["import", "run", str(path), str(run), "--run", bad]) == 1
        assert "the run name" in capsys.readouterr().err
    assert main(["import", "run", str(path), str(run), "--run", "\uff56\uff11"]) == 0       # fullwidth v1
    assert "reads like the existing run 'v1'" in capsys.readouterr().err
    assert main(["judges", "add", str(path), "--name", "Lex", "--metric", "correctness", "--kind", "lexical"]) == 0
    assert main(["judges", "add", str(path), "--name", "lex", "--metric", "correctness", "--kind", "lexical"]) != 0
    assert "reads like the existing judge 'Lex'" in capsys.readouterr().err


def test_cli_text_shows_bidirectional_controls_instead_of_obeying_them(tmp_path, capsys):
    """Was (issue 28): gate and other text output kept RTL overrides from names (only Markdown neutralised them)."""
    import json

    from rageval_desktop.cli import main

    path = tmp_path / "b.rageval"
    assert main(["new", str(path)]) == 0
    (tmp_path / "r.jsonl").write_text(json.dumps({"question": "q\u202eevil?", "answer": "a", "retrieved": []}) + "\n")
    assert main(["import", "run", str(path), str(tmp_path / "r.jsonl"), "--run", "v1"]) == 0
    out, err = capsys.readouterr()
    assert "\u202e" not in out + err and "U+202E" in err
    assert main(["import", "run", str(path), str(tmp_path / "r.jsonl"), "--run", "v2", "--json"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and "\\u202e" in out                # escaped in the JSON text, the data intact
    assert "q\u202eevil?" in json.loads(out)["unlinked_examples"]
