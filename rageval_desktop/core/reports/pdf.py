"""The PDF report: A4 landscape pages drawn with matplotlib (tables, the same charts as the HTML, failures).

Every text object has math parsing off: untrusted answers with '$' must print as they are.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path
from typing import Any

from rageval_desktop.core.metrics.retrieval import named
from rageval_desktop.core.reports import plots

A4 = (11.69, 8.27)


def _plain(artist: Any) -> Any:
    artist.set_parse_math(False)
    return artist


def _page(pdf: Any, title: str, subtitle: str = "") -> Any:
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=A4)
    _plain(fig.text(0.04, 0.95, title, fontsize=15, weight="bold"))
    if subtitle:
        # wrapped here to the page's width (matplotlib's own wrap ran the gate's rule off the page's right edge) and
        # hung from its top (a second line grew upwards, into the title); a long one is set smaller, above the table
        size = 9.0 if len(subtitle) <= 300 else 8.0
        lines = textwrap.fill(subtitle, width=int(0.92 * fig.get_figwidth() * 72 / (size * 0.52)))
        _plain(fig.text(0.04, 0.935, lines, fontsize=size, color="#5f6368", va="top", linespacing=1.15))
    return fig


def _bottom(fig: Any) -> float:
    """Where the page's last text ends, as a share of the page's height from its foot."""
    box = fig.texts[-1].get_window_extent(fig.canvas.get_renderer())
    return float(box.y0 / (fig.get_figheight() * fig.dpi))


def _table(fig: Any, rect: list[float], headers: list[str], rows: list[list[str]], font: float = 8) -> None:
    ax = fig.add_axes(rect)
    ax.axis("off")
    if not rows:
        _plain(ax.text(0, 1, "(nothing)", fontsize=font, va="top"))
        return
    # each column as wide as its longest value (a slice's name needs more than a number), headers aside: a header
    # wider than its column (a judge metric's name among a dozen columns) is set smaller, not over the next
    longest = [max([4, 0.8 * len(headers[c]), *(len(row[c]) for row in rows)]) for c in range(len(headers))]
    shares = [n / sum(longest) for n in longest]
    table = ax.table(cellText=rows, colLabels=headers, loc="upper left", cellLoc="left", colWidths=shares)
    table.auto_set_font_size(False)
    table.set_fontsize(font)
    table.scale(1, 1.3)
    full_pt = rect[2] * fig.get_figwidth() * 72 * 0.9
    for (r, c), cell in table.get_celld().items():
        _plain(cell.get_text())
        cell.set_edgecolor("#dadce0")
        if r == 0:
            cell.set_facecolor("#f8f9fa")
            cell.get_text().set_weight("bold")
            need = len(headers[c]) * font * 0.62      # bold DejaVu Sans: about 0.62 em a character
            if need > full_pt * shares[c]:
                cell.get_text().set_fontsize(font * full_pt * shares[c] / need)


def _image(fig: Any, rect: list[float], png: bytes) -> None:
    import matplotlib.image as mpimg

    ax = fig.add_axes(rect)
    ax.axis("off")
    ax.imshow(mpimg.imread(io.BytesIO(png), format="png"))


def _f(v: Any) -> str:
    return "—" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v)


def write_pdf(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    d = report["dashboard"]
    metrics = [*named("shown"), *d["judge_metrics"]]
    with PdfPages(out, metadata={"Title": report["title"], "Creator": report["generator"]}) as pdf:
        sub = f"{report['project']} · generated {report['generated_at']}"
        if d["retired_judges"]:
            sub += " · retired judges left out: " + ", ".join(j["judge"] for j in d["retired_judges"])
        if d["unsettled_judges"]:
            sub += " · not yet confirmed by humans: " + ", ".join(j["judge"] for j in d["unsettled_judges"])
        fig = _page(pdf, report["title"], sub)
        rows = [[name, str(s["n"]), str(s["n_with_gold"]), *[_f(s.get(m)) for m in metrics],
                 _f(s.get("p95_latency_ms")),
                 "—" if s.get("cost_per_query") is None else f"${s['cost_per_query']:.5f}"]
                for name, s in d["slices"].items()]
        _table(fig, [0.04, 0.50, 0.92, 0.38], ["slice", "n", "with gold", *metrics, "p95 ms", "cost/query"], rows)
        _image(fig, [0.04, 0.04, 0.92, 0.42], plots.slice_bars(report))
        pdf.savefig(fig)
        plt.close(fig)
        c = report.get("comparison")
        if c:
            g = report["gate"]
            verdict = f"gate: {g['said']}: {g['headline']}"
            fig = _page(pdf, f"{c['candidate']} vs {c['baseline']}",
                        f"{c['shared_questions']} shared questions · delta in points with paired t 95% CI · "
                        f"{verdict} ({g['rule']})" + (f" · covered: {g['covers']}" if g.get("covers") else "")
                        + "".join(f" · {w}" for w in c.get("warnings", []))
                        + (f" · side by side: {report['pairwise']}" if report.get("pairwise") else ""))
            rows = [[name, str(e["n"]), *[("—" if not e.get(m) else
                                            f"{e[m]['delta']:+.1f} [{e[m]['ci'][0]:+.1f}, {e[m]['ci'][1]:+.1f}]")
                                           for m in c["metrics"]]] for name, e in c["slices"].items()]
            # the table hangs below the subtitle, however many lines the gate's coverage took (it ran into them)
            top = min(0.88, _bottom(fig) - 0.01)
            _table(fig, [0.04, top - 0.33, 0.92, 0.33], ["slice", "n", *c["metrics"]], rows, font=7)
            _image(fig, [0.04, 0.03, 0.92, top - 0.38], plots.delta_chart(c))
            pdf.savefig(fig)
            plt.close(fig)
        if report.get("corrected"):
            fig = _page(pdf, "Judge metrics corrected by the human ratings (PPI)",
                        "The judges' mean corrected by the human ratings of the slice's questions (PPI++: the judge "
                        "weighed as far as it tracks them), with a 95% CI; fewer than 10 rated questions: no number.")
            rows = [[c["metric"], c["slice"], _f(c["judge_mean"]),
                     _f(c["estimate"]) if c["estimate"] is not None else c["why"],
                     f"[{_f(c['ci'][0])}, {_f(c['ci'][1])}]" if c["ci"] else "—", str(c["n_rated"])]
                    for c in report["corrected"][:40]]
            _table(fig, [0.04, 0.10, 0.92, 0.78], ["metric", "slice", "judge mean", "corrected", "95% CI", "rated"],
                   rows, font=7)
            pdf.savefig(fig)
            plt.close(fig)
        fig = _page(pdf, "Judge health and failures")
        rows = [[j["judge"], j["metric"], j["kind"], str(j["model"] or ""), j["status"],
                 *["—" if j[k] is None else f"{j[k] * 100:.0f}%" for k in ("coverage", "unparsed_rate", "error_rate")],
                 "not audited" if not j["agreement"] else
                 f"{j['agreement']['statistic']} {j['agreement']['value']:.2f} ({j['agreement']['verdict']})"]
                for j in report["judge_health"]]
        _table(fig, [0.04, 0.62, 0.92, 0.26], ["judge", "metric", "kind", "model", "status", "coverage", "unparsed",
                                               "errors", "agreement"], rows)
        rows = [[name, str(n["n"]), str(n["retrieval"]), str(n["reranker"]), str(n["generation"])]
                for name, n in report["failure_counts"].items()]
        _table(fig, [0.04, 0.30, 0.5, 0.28], ["slice", "n", "retrieval", "reranker", "generation"], rows)
        pdf.savefig(fig)
        plt.close(fig)
        if report["failures"]:
            fig = _page(pdf, f"{len(report['failures'])} failures to read")
            y = 0.88
            for f in report["failures"]:
                rank = f["first_gold_rank"] or "—"
                block = (f"[{f['failure']}] {f['external_id']} · {f['slice']} · gold rank {rank}\n"
                         + textwrap.fill(f"Q: {f['question']}", 150) + "\n"
                         + textwrap.fill(f"A: {(f['answer'] or '')[:400]}", 150))
                _plain(fig.text(0.04, y, block, fontsize=7, va="top", family="monospace"))
                y -= 0.085
            pdf.savefig(fig)
            plt.close(fig)
