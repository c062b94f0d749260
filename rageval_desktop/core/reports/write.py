"""Write a report; the file's extension picks the format.

HTML is self-contained (plots inline as data: URIs, no scripts, a CSP that forbids fetching anything) and
autoescaped. CSV/XLSX neutralise cells that a spreadsheet would run as a formula; JSONL/Parquet stay raw for
programs. PDF text goes through matplotlib with math parsing off, so '$' in an answer stays a dollar sign.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import resources_dir
from rageval_desktop.core.base.text import md_escape, neutralise
from rageval_desktop.core.metrics.gate_text import drop_text
from rageval_desktop.core.metrics.retrieval import named
from rageval_desktop.core.reports import plots
from rageval_desktop.core.reports.content import build_report
from rageval_desktop.core.reports.pdf import write_pdf
from rageval_desktop.core.store.project import Project

FORMATS = (".html", ".pdf", ".xlsx", ".csv", ".jsonl", ".parquet", ".md")
def fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def pct(value: Any) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def money(value: Any) -> str:
    return "—" if value is None else f"${value:.5f}"


def long_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every number of the report as one row each: section, run, slice, metric, value (+ CI and coverage)."""
    rows: list[dict[str, Any]] = []
    d = report["dashboard"]
    for name, s in d["slices"].items():
        for key, value in s.items():
            if key.endswith(("_ci", "_coverage", "_unparsed_rate", "_error_rate")):
                continue
            if isinstance(value, dict | list | str):   # a PPI estimate is a row of the "corrected" section below
                continue
            ci = s.get(f"{key}_ci")
            rows.append({"section": "dashboard", "run": d["run"], "slice": name, "metric": key, "value": value,
                         "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
                         "coverage": s.get(f"{key}_coverage"), "baseline": None, "text": None})
    c = report.get("comparison")
    if c:
        for name, e in c["slices"].items():
            for m in c["metrics"]:
                cell = e.get(m)
                if cell:
                    rows.append({"section": "comparison", "run": c["candidate"], "slice": name, "metric": m,
                                 "value": cell["delta"], "ci_low": cell["ci"][0], "ci_high": cell["ci"][1],
                                 "coverage": None, "baseline": c["baseline"], "text": None})
    for c in report.get("corrected", []):
        rows.append({"section": "corrected (ppi)", "run": d["run"], "slice": c["slice"], "metric": c["metric"],
                     "value": c["estimate"], "ci_low": c["ci"][0] if c["ci"] else None,
                     "ci_high": c["ci"][1] if c["ci"] else None, "coverage": None, "baseline": None,
                     "text": c["why"] or f"judge mean {fmt(c['judge_mean'])}; {c['n_rated']} rated questions "
                                        f"(effective {c['effective_n']:.1f})"})
    for j in report["judge_health"]:
        rows.append({"section": "judge_health", "run": d["run"], "slice": "all", "metric": j["metric"],
                     "value": j["coverage"], "ci_low": None, "ci_high": None, "coverage": j["coverage"],
                     "baseline": None, "text": f"{j['judge']} ({j['status']})"})
    for f in report["failures"]:
        rows.append({"section": "failure", "run": d["run"], "slice": f["slice"], "metric": f["failure"],
                     "value": f["first_gold_rank"], "ci_low": None, "ci_high": None, "coverage": None,
                     "baseline": None, "text": f"{f['external_id']}: {f['question']} → {f['answer'] or ''}"})
    return rows


def write_html(report: dict[str, Any], out: Path) -> None:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(resources_dir() / "reports"),
                             autoescape=True, undefined=jinja2.ChainableUndefined)
    pngs = {"slices": base64.b64encode(plots.slice_bars(report)).decode()}
    if report.get("comparison"):
        pngs["deltas"] = base64.b64encode(plots.delta_chart(report["comparison"])).decode()
    if any(report.get("distributions", {}).values()):
        pngs["boxes"] = base64.b64encode(plots.box_plot(report)).decode()
    html = env.get_template("report.html.j2").render(
        r=report, plots=pngs, retrieval_cols=named("shown"),
        fmt=fmt, pct=pct, money=money)
    out.write_text(html, encoding="utf-8")


def write_markdown(report: dict[str, Any], out: Path) -> None:
    d = report["dashboard"]
    metrics = [*named("brief"), *d["judge_metrics"]]
    lines = [f"## {_md(report['title'])}", "", f"_{_md(report['project'])} · {report['generated_at']}_", ""]
    if d["retired_judges"]:
        lines += ["_Retired judges left out: " + ", ".join(_md(j["judge"]) for j in d["retired_judges"]) + "._", ""]
    if d["unsettled_judges"]:
        lines += ["_⚑ Counted, but not yet confirmed by human ratings: " + ", ".join(
            f"{_md(u['judge'])} ({_md(u['verdict'])}, n={u['n']})" for u in d["unsettled_judges"]) + "._", ""]
    lines += ["| slice | n | with gold | " + " | ".join(map(_md, metrics)) + " | p95 ms | cost/query |",
              "|---|---:|---:|" + "---:|" * (len(metrics) + 2)]
    for name, s in d["slices"].items():
        lines.append(f"| {_md(name)} | {s['n']} | {s['n_with_gold']} | " + " | ".join(fmt(s.get(m)) for m in metrics)
                     + f" | {fmt(s.get('p95_latency_ms'))} | {money(s.get('cost_per_query'))} |")
    lines += ["", "_n: questions (repeats averaged); retrieval metrics use those with gold ids. "
              + "; ".join(_md(t) for t in report["definitions"].values() if t) + "_"]
    if report.get("corrected"):
        lines += ["", "### Judge metrics corrected by the human ratings (PPI)", "",
                  "| metric | slice | judge mean | corrected | 95% CI | rated |", "|---|---|---:|---:|---|---:|"]
        for c in report["corrected"]:
            est = fmt(c["estimate"]) if c["estimate"] is not None else _md(c["why"])
            ci = f"[{fmt(c['ci'][0])}, {fmt(c['ci'][1])}]" if c["ci"] else "—"
            lines.append(f"| {_md(c['metric'])} | {_md(c['slice'])} | {fmt(c['judge_mean'])} | {est} | {ci} | "
                         f"{c['n_rated']} |")
    c = report.get("comparison")
    if c:
        lines += [f"- ⚠ {_md(w)}" for w in c.get("warnings", [])]
        lines += ["", f"### Against {_md(c['baseline'])} ({c['shared_questions']} shared questions)", "",
                  "| slice | n | " + " | ".join(map(_md, c["metrics"])) + " |",
                  "|---|---:|" + "---:|" * len(c["metrics"])]
        for name, e in c["slices"].items():
            cells = [f"{e[m]['delta']:+.1f} [{e[m]['ci'][0]:+.1f}, {e[m]['ci'][1]:+.1f}]" if e.get(m) else "—"
                     for m in c["metrics"]]
            lines.append(f"| {_md(name)} | {e['n']} | " + " | ".join(cells) + " |")
        g = report["gate"]
        lines += ["", f"**Gate: {_md(g['said'])}: {_md(g['headline'])}** ({_md(g['rule'])})."]
        if g.get("covers"):
            lines.append(f"What it covered: {_md(g['covers'])}.")
        if g["settle"]:
            lines.append(f"What would settle it: {_md(g['settle'])}.")
        if report.get("pairwise"):
            lines.append(f"Side by side (pairwise review): {_md(report['pairwise'])}")
        lines += [f"- not evaluated: {_md(u['metric'] or 'the gate')} — {_md(u['why'])}" for u in g["not_evaluated"]]
        for r in g["regressions"]:
            lines.append(f"- {_md(r['slice'])} {_md(r['metric'])}: {_md(drop_text(r))}")
        for r in g["undecided"]:
            lines.append(f"- undecided: {_md(r['slice'])} {_md(r['metric'])}: {_md(drop_text(r))} — {_md(r['why'])}")
        for r in g["ungated"]:
            lines.append(f"- not gated: {_md(r['slice'])} {_md(r['metric'])}: {_md(drop_text(r))} — {_md(r['why'])}")
    lines += ["", "### Judges", "", "| judge | metric | status | licence | run order τ | flip rate | probe |",
              "|---|---|---|---|---|---|---|"]
    for j in report["judge_health"]:
        order = j["run_order"]
        tau = "—" if order["tau"] is None else f"{order['tau']:.2f} ({len(order['runs'])} runs)"
        flip = ("—" if not j["stability"] or j["stability"]["flip_rate"] is None else
                f"{j['stability']['flip_rate'] * 100:.0f}% [{j['stability']['flip_rate_ci'][0] * 100:.0f}, "
                f"{j['stability']['flip_rate_ci'][1] * 100:.0f}]")
        probe = "—" if not j["probe"] else (
            {True: "passed", False: "failed", None: "needs more data"}[j["probe"]["passed"]]
            + (f": {', '.join(j['probe']['failed'])}" if j["probe"]["failed"] else ""))
        reasons = f" ({'; '.join(j['licence']['reasons'])})" if j["licence"]["reasons"] else ""
        lines.append(f"| {_md(j['judge'])} | {_md(j['metric'])} | {_md(j['status'])} | "
                     f"{_md(j['licence']['tier'] + reasons)} | {tau} | {flip} | {_md(probe)} |")
    lines += ["", "### Failures", "", "| slice | retrieval | reranker | generation |", "|---|---:|---:|---:|"]
    for name, n in report["failure_counts"].items():
        lines.append(f"| {_md(name)} | {n['retrieval']} | {n['reranker']} | {n['generation']} |")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _md(text: object) -> str:
    return md_escape(text)


def write_table(report: dict[str, Any], out: Path, ext: str) -> None:
    import pandas as pd

    rows = long_rows(report)
    if ext == ".jsonl":
        out.write_text("".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows), encoding="utf-8")
        return
    frame = pd.DataFrame(rows)
    if ext == ".parquet":
        frame.to_parquet(out, index=False)
        return
    safe = frame.map(neutralise)
    if ext == ".csv":
        safe.to_csv(out, index=False)
        return
    failures = pd.DataFrame(report["failures"]).map(lambda v: neutralise(", ".join(v) if isinstance(v, list) else v))
    judges = pd.DataFrame([{**{k: v for k, v in j.items() if k not in ("agreement", "licence", "run_order", "stability",
                                                                       "probe")},
                            "licence": j["licence"]["tier"], "run_order_tau": j["run_order"]["tau"],
                            "flip_rate": (j["stability"] or {}).get("flip_rate"),
                            "probe_passed": (j["probe"] or {}).get("passed")} for j in report["judge_health"]])
    with pd.ExcelWriter(out, engine="openpyxl") as xl:
        safe[safe["section"] == "dashboard"].to_excel(xl, sheet_name="dashboard", index=False)
        safe[safe["section"] == "comparison"].to_excel(xl, sheet_name="comparison", index=False)
        judges.map(neutralise).to_excel(xl, sheet_name="judges", index=False)
        failures.to_excel(xl, sheet_name="failures", index=False)


def write_report(project: Project, run: str, out: str | Path, baseline: str | None = None,
                 max_slice_drop: float = 2.0) -> Path:
    out = Path(out)
    ext = out.suffix.lower()
    if ext not in FORMATS:
        raise RagevalError(f"cannot write '{out.name}': use one of {', '.join(FORMATS)}")
    if not out.parent.exists():
        raise RagevalError(f"{out.parent}: no such folder")
    report = build_report(project, run, baseline, max_slice_drop=max_slice_drop)
    if ext == ".html":
        write_html(report, out)
    elif ext == ".md":
        write_markdown(report, out)
    elif ext == ".pdf":

        write_pdf(report, out)
    else:
        write_table(report, out, ext)
    return out
