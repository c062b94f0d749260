"""The dashboard: per run and slice (and "all"), retrieval metrics, judge metrics with CIs and coverage,
latency and cost. Every number is on 0–100 except latency (ms) and cost (USD per query)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.stats import mean_ci, percentile
from rageval_desktop.core.base.vocab import METRICS, NO_SLICE
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.metrics import retrieval
from rageval_desktop.core.metrics.ppi import MIN_RATED, ppi_mean
from rageval_desktop.core.metrics.ppi import describe as describe_ppi
from rageval_desktop.core.metrics.rowdata import STATUSES, RunData, counts_for_row, load_run, per_question, row_status
from rageval_desktop.core.review import selective
from rageval_desktop.core.review.licence import last_check, licence, selective_scope
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.schema import STANDARD_SLICES

if TYPE_CHECKING:
    from numpy import ndarray
    from pandas import DataFrame, Series

ALL = "all"


class Columns:
    """One side of a run's numbers, a column at a time: its rows, or its questions (repeats averaged). `get(name)`
    gives the column's values over every row (or question) in order; `parts` maps each slice, and "all", to the
    positions of its rows (None: all of them). A column is asked for once per use and dropped after it: what a
    summary holds at once is one column and its slices' parts of it, not a frame of every column."""

    def __init__(self, get: Callable[[str], ndarray], has: Callable[[str], bool], parts: dict[str, ndarray | None],
                 size: int) -> None:
        self.get, self.has, self.parts, self.size = get, has, parts, size

    def count(self, part: str) -> int:
        where = self.parts[part]
        return self.size if where is None else len(where)

    def each(self, name: str) -> Mapping[str, ndarray]:
        """The column's values per slice (and all), in the run's order: each part taken when it is asked for (every
        slice's copy of a column at once, for four columns, was a summary's peak)."""
        return Parts(self.get(name), self.parts)


class Parts(Mapping[str, "ndarray"]):
    """One column's values per part (None: every value), each taken when asked for and not kept."""

    def __init__(self, column: ndarray, parts: dict[str, ndarray | None]) -> None:
        self.column, self.parts = column, parts

    def __getitem__(self, part: str) -> ndarray:
        where = self.parts[part]
        return self.column if where is None else self.column[where]

    def __iter__(self) -> Iterator[str]:
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)


def slice_summaries(rows: Columns, questions: Columns, data: RunData) -> dict[str, dict[str, Any]]:
    """The numbers of each slice (and of all): means and CIs over its questions (repeats averaged first), coverage
    over its rows, latency and cost over its rows. Full precision: displays round. Worked out a column at a time
    for every slice (a million rows copied per slice, every column at once, were most of `metrics`' memory); each
    number is the one the slice's own table of questions gave (the same values in the same order, the same
    reductions: pandas' where pandas' were used)."""
    import numpy as np
    import pandas as pd

    def series(values: ndarray) -> Series:
        return pd.Series(values, copy=False)

    out: dict[str, dict[str, Any]] = {}
    gold: dict[str, ndarray | None] = {}
    for part, n_gold in questions.each("n_gold").items():
        with_gold = n_gold > 0
        count = int(with_gold.sum())
        out[part] = {"n": len(n_gold), "n_with_gold": count, "n_without_gold": len(n_gold) - count,
                     "rows": rows.count(part)}
        where = questions.parts[part]
        if where is not None:
            gold[part] = where if count == len(n_gold) else where[with_gold]     # (every question has gold ids)
        else:     # (every question: the column itself, not a copy of it)
            gold[part] = None if count == len(n_gold) else np.flatnonzero(with_gold)

    def of_gold(values: ndarray) -> Parts:
        return Parts(values, gold)

    # the headline retrieval metrics get their 95% CI too (charts draw them), from the same column, placed after
    # the means; one column at a time is held
    cis: dict[str, dict[str, Any]] = {part: {} for part in out}
    listed = [c for c in retrieval.names(data.ks) if c != "first_rank"]
    headline = retrieval.named("headline")
    for col in dict.fromkeys([*listed, *headline]):
        with_ci = col in headline and questions.has(col)
        if col not in listed and not with_ci:
            continue
        for part, values in of_gold(questions.get(col)).items():
            if col in listed:
                out[part][col] = float(series(values).mean()) if out[part]["n_with_gold"] else None
            if with_ci:
                _, low, high = mean_ci(values)
                cis[part][f"{col}_ci"] = None if low is None else [low, high]
            del values
    for part, found in cis.items():
        out[part] |= {f"{col}_ci": found[f"{col}_ci"] for col in headline if f"{col}_ci" in found}
    for metric in data.metrics:
        statuses = rows.each(f"{metric}__status")
        rated = questions.has(f"{metric}__diff")
        diffs, weights = (questions.each(f"{metric}__diff"), questions.each(f"{metric}__weight")) if rated else ({}, {})
        for part, scores in questions.each(metric).items():
            s = out[part]
            mean, low, high = mean_ci(scores)
            status, n = statuses[part], rows.count(part)   # codes (STATUSES, then missing)
            s[metric] = mean
            s[f"{metric}_ci"] = None if mean is None else [low, high]
            s[f"{metric}_n"] = int(np.count_nonzero(~np.isnan(scores)))
            sd = series(scores).std()
            s[f"{metric}_sd"] = float(sd) if sd == sd else None
            for key, said in (("coverage", "ok"), ("unparsed_rate", "unparsed"), ("error_rate", "error")):
                s[f"{metric}_{key}"] = float(series(status == STATUSES.index(said)).mean()) if n else None
            if rated:   # rated by humans: the judge mean corrected by the ratings (PPI)
                s[f"{metric}_ppi"] = ppi_mean(scores, diffs[part], weights[part])
    latency, cost = rows.each("latency_ms"), rows.each("cost_usd")
    for part, s in out.items():
        taken = latency[part]
        s["p50_latency_ms"] = percentile(taken, 50)
        s["p95_latency_ms"] = percentile(taken, 95)
        spent = series(cost[part]).dropna()
        s["cost_per_query"] = float(spent.mean()) if len(spent) else None
    return out


def ordered_slices(frame: DataFrame) -> list[str]:
    """The slices the rows fall in, the standard ones first — none when no row has one (a project without slices:
    every row is in "all" alone, not also in a slice of them all)."""
    present = [str(s) for s in frame["slice"].unique()]
    if present == [NO_SLICE]:
        return []
    known = [s for s in STANDARD_SLICES if s in present]
    return known + sorted(s for s in present if s not in known)


def consistency(rows: DataFrame, metrics: list[str]) -> dict[str, Any]:
    """Over questions answered more than once (open-rag-eval's query_run): per metric, how much a question's score
    moves between its repeats — the mean standard deviation (points) and the mean coefficient of variation (std /
    mean, questions with a positive mean) — and how many questions that is."""
    import pandas as pd

    codes = pd.Series(pd.factorize(rows["qkey"])[0], index=rows.index)   # integers group faster than strings
    sizes = codes.groupby(codes).transform("size")
    repeated = rows[sizes > 1]
    keys = codes[sizes > 1]
    out: dict[str, Any] = {"questions": int(keys.nunique()),
                           "max_repeats": int(sizes.max()) if len(sizes) else 0, "metrics": {}}
    for metric in metrics:
        if metric not in repeated:
            continue
        grouped = repeated[metric].groupby(keys)
        count, std, mean = grouped.count(), grouped.std(ddof=0), grouped.mean()
        ok = count > 1
        cv = (std[ok] / mean[ok])[mean[ok] > 0]
        out["metrics"][metric] = {"questions": int(ok.sum()),
                                  "mean_std": float(std[ok].mean()) if ok.any() else None,
                                  "mean_cv": float(cv.mean()) if len(cv) else None}
    return out


def summarise(data: RunData) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    frame = data.frame
    repeated = data.repeated()
    # a run without repeats: each row is its question, and its columns are read where they are (the questions' own
    # table copied every number column)
    questions = per_question(frame) if repeated else frame
    repeats = int((questions["rows"] > 1).sum()) if repeated else 0
    headline = [m for m in (*retrieval.named("headline"), *data.metrics) if m in frame]
    names = ordered_slices(frame)

    def numbers(get: Callable[[str], ndarray]) -> Callable[[str], ndarray]:
        # a question's numbers as per_question gives them: floats, its gold-id count as it is
        return lambda name: get(name) if name == "n_gold" or name.endswith("__status") else get(name).astype(
            float, copy=False)

    def columns(table: DataFrame, as_numbers: bool) -> Columns:
        codes, found = pd.factorize(table["slice"])
        at = {str(name): code for code, name in enumerate(found)}
        small = np.int32 if len(codes) < 2 ** 31 else np.int64      # (each slice's positions in 4 bytes)
        parts = {name: np.flatnonzero(codes == at[name]).astype(small) if name in at else np.zeros(0, dtype=small)
                 for name in names}

        def get(name: str) -> ndarray:
            if name not in table:   # a retrieval metric a lean load computes when asked
                return data.column(name)
            column = table[name]
            return np.asarray(column.cat.codes.to_numpy() if name.endswith("__status") else column.to_numpy())
        return Columns(numbers(get) if as_numbers else get, lambda name: name in table or data.has(name),
                       {**parts, ALL: None}, len(table))

    rows = columns(frame, False)
    slices = slice_summaries(rows, columns(questions, True) if repeated else
                             Columns(numbers(rows.get), rows.has, rows.parts, rows.size), data)
    if repeats:   # the run holds repeats of the same questions: how consistent are its scores across them?
        table = frame[list(dict.fromkeys(["slice", "qkey", *headline]))]
        for name, s in slices.items():
            part = table if name == ALL else table[table["slice"] == name]
            s["consistency"] = consistency(part, headline)
    return {"run": data.run, "slices": slices, "judge_metrics": data.metrics, "judges": data.judges,
            "retired_judges": data.retired, "unsettled_judges": data.unsettled,
            "golden_set_changed_since_run": data.golden_changed, "repeated_questions": repeats,
            "counting": "n counts questions (a question answered several times counts once, its repeats "
                        "averaged); retrieval metrics use the questions with gold ids (n_with_gold); judge "
                        "metrics the questions scored (<metric>_n); coverage, latency and cost count rows",
            "scale": "0-100 (latency in ms, cost in USD per query)",
            "rated_metrics": data.rated,
            "ppi": f"<metric>_ppi: the judge mean corrected by the human ratings of the slice's questions "
                   f"(prediction-powered inference): estimate, 95% CI, n_rated, effective_n; no estimate with fewer "
                   f"than {MIN_RATED} rated questions (why says so)"}


def dashboard(project: Project, run: str, ks: tuple[int, ...] = (5, 10, 50)) -> dict[str, Any]:
    with reads.shared(project):     # each judge's pairs and the ratings read once (the ratings' side, the licences)
        data = load_run(project, run, ks, lean=True)
        missing = unscored(project, data)
        data.let_go_judgments()
        summary = summarise(data)
        summary["unscored"] = missing
        summary["judge_noise"] = judge_noise(project, summary)
        summary["selective"] = selective_coverage(project, data)
    return summary


def selective_coverage(project: Project, data: Any) -> dict[str, Any]:
    """Per judge metric whose one judge holds a selective licence (core.review.licence): the share of each slice's
    rows it decides, with its level and guarantee — what its numbers there rest on. Its means here still count every
    row; the gate's selective estimator reads the decided rows and the desk's ratings."""
    out: dict[str, Any] = {}
    for metric, names in data.judges.items():
        if len(names) != 1 or selective.decidable(metric):
            continue
        judge = get_judge(project, names[0])
        held = licence(project, judge)
        if held.tier != "selective":
            continue
        found = held.evidence["selective"]
        routed = selective.route(project, [judge], [found["level"]], data.run)
        slices = data.frame["slice"]
        per: dict[str, list[int]] = {}
        for row, who in routed.items():
            name = str(slices.get(row, "—")) if row in slices.index else "—"
            for key in (name, ALL):
                seen = per.setdefault(key, [0, 0])
                seen[0] += who is not None
                seen[1] += 1
        out[metric] = {"judge": judge.name, "level": found["level"], "alpha": found["alpha"],
                       "delta": found["delta"], "said": selective_scope(found),
                       "slices": {k: {"decided": per[k][0] / per[k][1], "rows": per[k][1]}
                                  for k in [*ordered_slices(data.frame), ALL, "—"] if k in per}}
    return out


def judge_noise(project: Project, summary: dict[str, Any]) -> dict[str, Any]:
    """Where a judge metric's judge has been asked again (core.jobs.checks, of the judge as it is now): per slice,
    the share of the spread of its questions' scores that is the judge's own noise (the within-row variance across
    repeats over the questions' variance) and the share of the slice's CI width it accounts for (the interval
    would be that much narrower with a judge that answered the same every time). One judge per metric; a metric
    averaged over several judges is left out."""
    out: dict[str, Any] = {}
    for metric, names in summary["judges"].items():
        if len(names) != 1 or metric not in summary["judge_metrics"]:
            continue
        check = last_check(project, get_judge(project, names[0]), "stability")
        if check is None:
            continue
        per_slice = {}
        for name, s in summary["slices"].items():
            stab = check["slices"].get(name) or check["slices"].get(ALL) or {}
            within, sd = stab.get("within_variance_points"), s.get(f"{metric}_sd")
            if within is None or not sd:
                continue
            share = min(1.0, within / (sd * sd))
            per_slice[name] = {"variance_share": share, "ci_width_share": 1 - math.sqrt(1 - share),
                               "within_sd_points": math.sqrt(within)}
        out[metric] = {"judge": names[0], "check": check["id"], "sample": check["sample"],
                       "repeats": check["repeats"], "slices": per_slice}
    return out


UNSCORED_LISTED = 50   # rows named per judge; the counts cover them all


def unscored(project: Project, data: RunData) -> dict[str, dict[str, Any]]:
    """Per active judge, the rows it has not scored — no answer, an API error, a reply that did not parse, or not
    judged yet — counted by reason and named (open-rag-eval skips them without a word). A row counts once, with the
    status its metric's column shows, from the same judgments (`rowdata.counts_for_row`, `rowdata.row_status`).
    Worked out from the judgments `load_run` read (a query per judge over a million rows took 0.6 s each); SQL reads
    only the error kinds and the listed rows' ids."""
    import numpy as np

    conn = project.reader()
    out: dict[str, dict[str, Any]] = {}
    judged = data.judgments
    if judged is None or judged.empty:
        return out
    n = len(data.frame)
    row_ids = data.frame.index.to_numpy()
    judge_of = judged["judge_id"].to_numpy()
    rank = judged["passage_rank"].to_numpy()
    status = judged["status"].cat.codes.to_numpy()     # STATUSES codes
    position = data.judgment_positions()
    error = STATUSES.index("error")
    names = [*STATUSES, "not judged"]                   # by row_status code
    for jid, name, metric in conn.execute("SELECT id, name, metric FROM judges WHERE status = 'active' ORDER BY id"):
        spec = METRICS.get(metric)
        mine = judge_of == jid
        if spec is None or not mine.any():
            continue
        mine &= counts_for_row(spec, rank)
        code = row_status(position[mine], status[mine], n)
        missing = np.flatnonzero(code != 0)
        if not len(missing):
            continue
        kinds = dict(conn.execute(
            "SELECT x.run_row_id, MIN(x.error_kind) FROM judgments x JOIN run_rows rr ON rr.id = x.run_row_id WHERE "
            f"x.judge_id = ? AND x.status = 'error' AND rr.run_id = ? {'AND x.passage_rank = 0' if spec.items else ''} "
            "GROUP BY x.run_row_id", (jid, data.run_id))) if (code == error).any() else {}
        reasons: dict[str, int] = {}
        for r, c in zip(row_ids[missing], code[missing], strict=True):
            reason = (kinds.get(int(r)) or "error") if c == error else names[c]
            reasons[reason] = reasons.get(reason, 0) + 1
        listed = [int(r) for r in row_ids[missing[:UNSCORED_LISTED]]]
        external = dict(conn.execute(
            f"SELECT id, external_id FROM run_rows WHERE id IN ({','.join('?' * len(listed))})", listed))
        out[name] = {"metric": metric, "rows": len(missing), "reasons": reasons,
                     "listed": [{"row": external[r], "status": names[c], "reason": kinds.get(r) if c == error else None}
                                for r, c in zip(listed, code[missing[:UNSCORED_LISTED]], strict=True)]}
    return out


def dashboard_table(summary: dict[str, Any], estimator: str = "mean") -> tuple[list[str], list[list[Any]]]:
    """The compact table the CLI and reports show: slice x the numbers people scan first. With the `ppi`
    estimator, the judge metrics rated by humans show their corrected estimate (None where a slice has too few
    ratings); the others stay judge means."""
    metrics = summary["judge_metrics"]
    corrected = {m for m in metrics if estimator == "ppi" and m in summary.get("rated_metrics", {})}
    brief = retrieval.named("brief")
    headers = ["slice", "n", "with gold", *brief,
               *[f"{m} (ppi)" if m in corrected else m for m in metrics], "p95 latency ms", "cost/query"]

    def value(s: dict[str, Any], m: str) -> Any:
        return s[f"{m}_ppi"]["estimate"] if m in corrected and f"{m}_ppi" in s else s.get(m)

    rows = []
    for name, s in summary["slices"].items():
        rows.append([name, s["n"], s["n_with_gold"], *(s.get(m) for m in brief),
                     *[value(s, m) for m in metrics], s.get("p95_latency_ms"), s.get("cost_per_query")])
    return headers, rows


def ppi_lines(summary: dict[str, Any]) -> list[str]:
    """For people: per rated judge metric and slice, the judge mean beside its PPI estimate (display rounding)."""
    lines = []
    for metric in summary.get("rated_metrics", {}):
        for name, s in summary["slices"].items():
            p = s.get(f"{metric}_ppi")
            if p is None:
                continue
            judge = "—" if p["judge_mean"] is None else f"{p['judge_mean']:.1f}"
            lines.append(f"{metric:<20} {name:<16} judge {judge}  {describe_ppi(p)}")
    return lines
