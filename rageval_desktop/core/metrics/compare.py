"""Comparing two runs on the golden questions both answered (the CI gate, core.metrics.gate, decides on it).

The delta of each metric is the mean of per-question differences (candidate - baseline) with Student's t 95%
interval and its standard error (core.metrics.stats); a drop is measured in points on the 0-100 scale. Questions
are counted as in the dashboard (rowdata.per_question): repeats of a question are averaged first, so `metrics`,
`compare` and `gate` agree on n. What is left out of the comparison — rows not linked to the golden set, golden
questions one run did not answer — is counted in `coverage`, and `warnings` says where the dashboard's 'all' (which
counts them) and the comparison would tell different stories. Values are full precision; displays round.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.stats import diff_ci, paired_se
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.metrics import selective_cells
from rageval_desktop.core.metrics.dashboard import ALL, ordered_slices
from rageval_desktop.core.metrics.ppi import ESTIMATORS, applies, ppi_delta
from rageval_desktop.core.metrics.retrieval import canonical_name, is_retrieval, named, spelled
from rageval_desktop.core.metrics.rowdata import RunData, load_run, per_question, source_metric
from rageval_desktop.core.review.selective import decidable
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

if TYPE_CHECKING:
    from numpy import ndarray
    from pandas import DataFrame

MIN_SLICE_N = 10


class GateUsageError(RagevalError):
    """Missing data or an impossible request: exit code 2, not a regression."""


COVERAGE = "coverage"      # the share of the baseline's questions the candidate answered, on 0-100: gated like a metric
FLOOR = 0.0                # what a question the candidate did not answer scores on every metric (a miss, the floor)
MISSING_RULES = {"fail": "a baseline question the candidate did not answer counts as a failure on every metric "
                         "(default)",
                 "leave out": "a baseline question the candidate did not answer is left out of every metric (only "
                              "coverage counts it)"}


def _paired(every_a: DataFrame, every_b: DataFrame, failed: Collection[int] = (),
            missing: str = "fail") -> tuple[DataFrame, int, ndarray]:
    """Every golden question the baseline answered (of each run's `_questions`), side by side: the candidate's scores
    where it answered, and where it did not — no row, or a row whose answer failed (`failed`) — the floor on every
    metric (`missing="fail"`) or nothing (`"leave out"`); its `coverage` 100 where it answered, else 0. Returns the
    table, how many questions both answered, and which of the table's questions the candidate did not answer."""
    import numpy as np
    import pandas as pd

    # a linked question's key is its golden row's rowid (`rowdata._rows_frame`), the same in both runs of one file:
    # pairing by it, not by the golden id's text, took matching a million questions from 1.6 s to a fraction
    keys_a = every_a.index[every_a.index >= 0]
    keys_b = every_b.index[every_b.index >= 0]
    shared = keys_a.intersection(keys_b)
    lost = ~keys_a.isin(shared)
    if len(failed):
        lost |= keys_a.isin(np.fromiter(failed, dtype=np.int64, count=len(failed)))
    # (a run whose every question is compared, in the same order: itself, not a copy of it)
    a = every_a if every_a.index.equals(keys_a) else every_a.loc[keys_a]
    b = every_b if every_b.index.equals(keys_a) else every_b.reindex(keys_a)
    if lost.any():
        b = b.copy() if b is every_b else b
        b["slice"], b["n_gold"] = a["slice"], a["n_gold"]
        rated = [c for c in b.columns if c.endswith(("__diff", "__weight"))]
        scores = [c for c in b.columns if c not in ("slice", "n_gold", "rows") and c not in rated]
        b.loc[lost, rated] = np.nan                           # nobody rated an answer that was not given
        for c in scores:           # (where the baseline has no score either, the question is not compared on it)
            known = a.loc[lost, c].notna().to_numpy() if c in a else True
            b.loc[lost, c] = np.where(known & (missing == "fail"), FLOOR, np.nan)
    a = a.assign(**{COVERAGE: 100.0})
    b = b.assign(**{COVERAGE: np.where(lost, 0.0, 100.0)})
    return pd.concat({"a": a, "b": b}, axis=1), int(len(keys_a) - lost.sum()), lost


def _shown_metrics(comparison: dict[str, Any]) -> list[str]:
    """The metrics a table or chart of the comparison shows: coverage only when the candidate left a question of the
    baseline unanswered (else it is 100 -> 100 in every slice, and takes a column from the metrics)."""
    lost = comparison.get("perimeter", {}).get("unanswered")
    return [m for m in comparison["metrics"] if m != COVERAGE or lost]


def _perimeter(joined: DataFrame, lost: ndarray, every_b: DataFrame) -> dict[str, Any]:
    """What the comparison's perimeter holds beyond the questions both runs answered: the baseline's questions the
    candidate did not answer (no row, or no answer in its rows), and the candidate's linked questions the baseline
    did not answer, per slice, with the slices only the candidate has (`new_slices`)."""
    slices = joined[("a", "slice")].astype(str)
    no_row = ~joined.index.isin(every_b.index)
    linked_b = every_b[every_b.index >= 0]
    extra = linked_b[~linked_b.index.isin(joined.index)]
    extra_slices = extra["slice"].astype(str).value_counts(sort=False)
    known = set(slices.unique())
    return {"baseline_questions": int(len(joined)), "unanswered": int(lost.sum()),
            "no_row": int(no_row.sum()), "no_answer": int((lost & ~no_row).sum()),
            "unanswered_by_slice": {str(k): int(v) for k, v in slices[lost].value_counts(sort=False).items() if v},
            "extra": int(len(extra)), "extra_by_slice": {str(k): int(v) for k, v in extra_slices.items() if v},
            "new_slices": sorted(str(k) for k, v in extra_slices.items() if v and str(k) not in known)}


def _failed_answers(project: Project, baseline_id: int, candidate_id: int) -> set[int]:
    """The golden questions (rowids) the candidate has rows for, none with an answer, where the baseline answered:
    a pipeline's timeout or error saved as an empty answer. (A run that records no answers at all, retrieval only,
    fails none of the questions its baseline did not answer either.)"""
    conn = project.reader()

    def without_answer(rid: int) -> set[int]:
        found = {int(k) for (k,) in conn.execute(
            "SELECT DISTINCT g.rowid FROM run_rows rr JOIN golden_rows g ON g.id = rr.golden_id "
            "WHERE rr.run_id = ? AND (rr.answer IS NULL OR rr.answer = '')", (rid,))}
        if not found:
            return found
        answered = {int(k) for (k,) in conn.execute(      # a repeat that did answer answers the question
            "SELECT DISTINCT g.rowid FROM run_rows rr JOIN golden_rows g ON g.id = rr.golden_id "
            "WHERE rr.run_id = ? AND rr.answer <> ''", (rid,))}
        return found - answered

    failed = without_answer(candidate_id)
    return failed - without_answer(baseline_id) if failed else failed


def _side(project: Project, run: str, requested: list[str] | None, estimator: str,
          judged: bool = False) -> tuple[RunData, DataFrame]:
    """A run loaded for comparing and its questions, with what comparing reads (the metrics asked for, or the
    gate's retrieval metrics and the run's judge metrics: another run's judge metric is not one of its columns;
    the human differences only for the `ppi` estimator); the rest of its numbers let go before the other run is
    loaded."""
    data = load_run(project, run, lean=True)
    data.let_go_judgments()
    wanted = [*requested, *(data.metrics if judged else ())] if requested else [*named("headline"), *data.metrics]
    questions = _questions(data, list(dict.fromkeys(wanted)), rated=estimator == "ppi")
    data.let_go()
    return data, questions


def _questions(data: RunData, wanted: list[str], *, rated: bool = True) -> DataFrame:
    """The run's questions (`per_question`) with only what comparing `wanted` reads: each metric, its human
    differences and weights, and the metric it is derived from (a million questions' every column, copied three
    times over, was most of the comparison's memory)."""
    import pandas as pd

    frame = data.frame
    names = [c for m in wanted for c in (m, *((f"{m}__diff", f"{m}__weight") if rated else ()), source_metric(m))]
    table = {c: frame[c] for c in ("slice", "n_gold", "qkey")}
    table |= {c: data.column(c) for c in dict.fromkeys(names) if data.has(c) and c not in table}
    if data.repeated():
        return per_question(pd.DataFrame(table, index=frame.index))
    # no repeats: each row is its question, as per_question gives it (its numbers as floats; no count of rows, which
    # comparing does not read), made from the columns as they are (copy=False: a frame made from a dict copies every
    # column into one block first)
    qkey = table.pop("qkey").to_numpy()
    table["slice"], table["n_gold"] = frame["slice"].array, frame["n_gold"].to_numpy()   # (values, not aligned)
    table |= {c: v.astype(float, copy=False) for c, v in table.items() if c not in ("slice", "n_gold")}
    return pd.DataFrame(table, index=pd.Index(qkey, name="qkey"), copy=False)


def paired_cell(before: Any, after: Any) -> dict[str, Any]:
    """One cell of a comparison from the paired scores of the questions both runs have: the means, the mean
    difference with its t interval, standard error and degrees of freedom (what the gate tests)."""
    diffs = after - before
    delta, low, high = diff_ci(diffs)
    n = int(len(diffs))
    return {"baseline": float(before.mean()), "candidate": float(after.mean()), "delta": delta, "ci": [low, high],
            "n": n, "se": paired_se(diffs)[1], "df": n - 1}


def _ppi_cell(part: DataFrame, m: str) -> dict[str, Any]:
    """A PPI cell over the questions the candidate answered: a floor filled in for an unanswered one is no judge score
    to correct (its human score is the floor too, and no rating says so), so the unanswered count through coverage."""
    import numpy as np

    part = part[part[("b", COVERAGE)].to_numpy() > 0]

    def column(side: str, suffix: str) -> ndarray:
        key = (side, f"{m}{suffix}")
        return part[key].to_numpy(dtype=float) if key in part else np.full(len(part), np.nan)

    found = ppi_delta(column("a", ""), column("b", ""), column("a", "__diff"), column("b", "__diff"),
                      column("a", "__weight"), column("b", "__weight"))
    return {**found, "estimator": "ppi"}


COMPARE_ESTIMATORS = (*ESTIMATORS, "selective")


def selective_metric(metric: str) -> bool:
    """Whether the selective estimator compares `metric` (a judge metric rated per row, with a pass mark); others
    stay judge means."""
    return applies(metric) and decidable(metric) is None


def _selective_cells(project: Project, out: dict[str, Any], joined: DataFrame, members: dict[str, set[str]],
                     absent: set[str]) -> dict[str, dict[str, Any]]:
    """metric -> slice -> cell (or why), for the metrics the selective estimator compares."""
    questions = {int(q) for q in joined.index}
    slice_of = {int(q): str(s) for q, s in zip(joined.index, joined[("a", "slice")], strict=True)}
    found: dict[str, dict[str, Any]] = {}
    for m in out["metrics"]:
        if m in absent or not selective_metric(m):
            continue
        names = out["judges"].get(m, [])
        if len(names) != 1:
            found[m] = {s: {"why": f"{m} is scored by {len(names)} judges: a selective estimate reads one"}
                        for s in members}
            continue
        found[m] = selective_cells.cells(project, get_judge(project, names[0]), out["baseline"], out["candidate"],
                                         questions, slice_of, members)
    return found


def compare(project: Project, baseline: str, candidate: str, metrics: list[str] | None = None,
            estimator: str = "mean", *, groups: Mapping[str, Sequence[str]] | None = None,
            missing: str = "fail", judged: bool = False) -> dict[str, Any]:
    """Per slice and metric, candidate - baseline with its 95% CI. With `estimator="ppi"`, the judge metrics
    humans rate per row are compared as PPI estimates (core.metrics.ppi: each run's judge mean corrected by its
    own ratings); where a slice has too few ratings its cell is None and `unavailable` says why. `groups` adds
    merged slices (name -> its slices) beside the slices and 'all'.

    Every metric asked for (or, by default, every judge metric an active judge scored on either run) is accounted
    for: one that cannot be compared — not judged on a run, judged by different judges on the two, scored on one
    run only for some questions — is listed in `missing` with why, and has no cells. A name that is no metric at
    all is a usage error.

    The questions compared are every golden question the baseline answered: one the candidate did not answer (no
    row, or none of its rows with an answer) counts as a failure on every metric (`missing`, MISSING_RULES), and
    `coverage` — the share of them the candidate answered — is compared like a metric. What the candidate answered
    that the baseline did not is named in `perimeter` (its questions, and the slices only it has). `judged`: beside
    the metrics asked for, every judge metric scored on both runs (a gate's configuration gates some and names the
    rest: their drops are shown, not hidden)."""
    with reads.shared(project):    # each judge's pairs and the ratings read once for both runs
        return _compare(project, baseline, candidate, metrics, estimator, groups, missing, judged)


def _compare(project: Project, baseline: str, candidate: str, metrics: list[str] | None, estimator: str,
             groups: Mapping[str, Sequence[str]] | None, missing_rule: str = "fail",
             judged: bool = False) -> dict[str, Any]:
    import numpy as np

    if missing_rule not in MISSING_RULES:
        raise GateUsageError(f"unknown rule for unanswered questions '{missing_rule}'; choose one of "
                             f"{', '.join(MISSING_RULES)}")
    if estimator not in COMPARE_ESTIMATORS:
        raise GateUsageError(f"unknown estimator '{estimator}'; choose one of {', '.join(COMPARE_ESTIMATORS)}")
    if baseline == candidate:               # every difference 0 and a gate "undecided": a slip, said as one
        raise GateUsageError(f"the baseline and the candidate are the same run ('{baseline}'): compare two runs "
                             "(rageval info lists them)")
    for name in (baseline, candidate):       # a misspelt run is a request that cannot be made (exit 2), not a
        try:                                # regression (exit 1): CI must tell a typo from a drop
            find_run(project, name)
        except NotFound as exc:
            raise GateUsageError(str(exc)) from None
    requested = list(dict.fromkeys(canonical_name(m) for m in metrics)) if metrics else None
    (a, questions_a), (b, questions_b) = (_side(project, baseline, requested, estimator, judged),
                                          _side(project, candidate, requested, estimator, judged))
    judge_metrics = list(dict.fromkeys([*a.metrics, *b.metrics]))
    wanted = requested or list(dict.fromkeys([*named("headline"), *judge_metrics]))
    if requested and judged:
        wanted = list(dict.fromkeys([*requested, *(m for m in a.metrics if m in b.metrics)]))
    if COVERAGE not in wanted:
        wanted.append(COVERAGE)
    joined, shared, lost = _paired(questions_a, questions_b, _failed_answers(project, a.run_id, b.run_id),
                                   missing_rule)
    if shared == 0:
        raise GateUsageError(f"runs '{baseline}' and '{candidate}' share no golden questions; nothing to compare "
                             "(link run rows to golden rows by id or question)")
    unknown = [m for m in wanted if m not in judge_metrics and m not in joined["a"].columns
               and not _judged_somewhere(project, m)]
    if unknown:
        have = ", ".join([*named("headline"), *judge_metrics])
        raise GateUsageError(f"no metric named {', '.join(unknown)} can be compared: no judge of the project scores "
                             f"it and it is no retrieval metric (available: {have}, and {spelled()} for any k)",
                             cli_hint="check --metrics")
    missing = [found for m in wanted if (found := _missing(m, a, b, joined)) is not None]
    absent = {found["metric"] for found in missing}
    slice_col = joined[("a", "slice")]
    gold = joined[("a", "n_gold")] > 0
    out: dict[str, Any] = {"baseline": baseline, "candidate": candidate, "shared_questions": shared,
                           "missing_rule": missing_rule,
                           "perimeter": _perimeter(joined, lost, questions_b),
                           "judged_on_both": [m for m in a.metrics if m in b.metrics],
                           "metrics": wanted, "slices": {}, "missing": missing,
                           "retired_judges": a.retired or b.retired,
                           "unsettled_judges": _merge_unsettled(a, b, wanted),
                           "judges": {m: sorted(set(a.judges.get(m, [])) | set(b.judges.get(m, [])))
                                      for m in wanted if a.judges.get(m) or b.judges.get(m)},
                           "counting": "n counts questions both runs answered (repeats averaged first); a "
                                       "retrieval metric's n counts those with gold ids, a judge metric's those "
                                       "both runs had scored",
                           "estimator": estimator, "unavailable": [],
                           "groups": {k: list(v) for k, v in (groups or {}).items()}}
    present = ordered_slices(joined["a"])
    members = {s: {s} for s in present} | {g: set(v) for g, v in (groups or {}).items()} | {ALL: set(present)}
    masks = [(s, slice_col == s) for s in present] + [(g, slice_col.isin(list(v))) for g, v in (groups or {}).items()]
    moments: dict[str, Any] = {}
    chosen = _selective_cells(project, out, joined, members, absent) if estimator == "selective" else {}
    # the questions hold only what the cells read (`_questions`); each slice's are a copy of its part, all of them
    # the table itself
    for name, mask in [*masks, (ALL, slice_col == slice_col)]:
        part = joined if name == ALL else joined[mask]
        entry: dict[str, Any] = {"n": int(mask.sum()), "n_with_gold": int((mask & gold).sum())}
        # each metric's differences written where the moments read them (a dict of columns stacked afterwards held
        # them twice: 48 MB at a million questions)
        stack, columns = np.empty((len(part), len(wanted)), order="F"), list[str]()   # a column's values together
        for m in wanted:
            if m in absent:
                entry[m] = None
                continue
            if m in chosen:
                cell = chosen[m].get(name) or {"why": "no cell"}
                if "why" in cell:
                    entry[m] = None
                    out["unavailable"].append({"slice": name, "metric": m, "why": cell["why"]})
                else:
                    entry[m] = cell
                continue
            if estimator == "ppi" and applies(m):
                cell = _ppi_cell(part, m)
                if cell["delta"] is None:
                    entry[m] = None
                    out["unavailable"].append({"slice": name, "metric": m, "why": cell["why"]})
                else:
                    entry[m] = cell
                continue
            before, after = part[("a", m)].astype(float), part[("b", m)].astype(float)
            both = before.notna() & after.notna()
            if is_retrieval(m):
                both &= part[("a", "n_gold")] > 0
            if not both.any():
                entry[m] = None
                continue
            entry[m] = paired_cell(before[both].to_numpy(), after[both].to_numpy())
            stack[:, len(columns)] = (after - before).where(both).to_numpy(dtype=float)
            columns.append(m)
        out["slices"][name] = entry
        moments[name] = (columns, *stacked_moments(stack[:, :len(columns)]))     # (its first columns: no copy)
        del stack
    out["cell_correlation"] = cell_correlation(out, moments, members)
    out["coverage"], out["warnings"] = _coverage([(a, questions_a), (b, questions_b)], joined, wanted)
    out["warnings"][:0] = perimeter_warnings(out)
    out["shown_metrics"] = _shown_metrics(out)
    return out


def perimeter_warnings(out: dict[str, Any]) -> list[str]:
    """What the perimeter holds in words: the questions the candidate did not answer, and how they counted; the
    questions and slices only the candidate answered."""
    p, said = out["perimeter"], []
    if p["unanswered"]:
        how = ("counted as failures on every metric" if out["missing_rule"] == "fail" else
               "left out of every metric but coverage")
        parts = [f"{k} with {what}" for k, what in ((p["no_row"], "no row"), (p["no_answer"], "no answer")) if k]
        said.append(f"candidate '{out['candidate']}' did not answer {p['unanswered']} of the baseline's "
                    f"{p['baseline_questions']} questions ({', '.join(parts)}; coverage "
                    f"{100 * (1 - p['unanswered'] / p['baseline_questions']):.1f}%): {how}")
    if p["new_slices"]:          # (its other questions the baseline did not answer: `_coverage`'s warning)
        said.append(f"candidate '{out['candidate']}' has slices the baseline has no question of: "
                    + ", ".join(f"{s} ({p['extra_by_slice'][s]} questions)" for s in p["new_slices"])
                    + ": not compared")
    return said


def _judged_somewhere(project: Project, metric: str) -> bool:
    """Whether some judge of the project (active or not) scores `metric`, or the metric it is derived from."""
    found = project.reader().execute("SELECT 1 FROM judges WHERE metric IN (?, ?) LIMIT 1",
                                     (metric, source_metric(metric))).fetchone()
    return found is not None


def _missing(m: str, a: RunData, b: RunData, joined: DataFrame) -> dict[str, Any] | None:
    """Why judge metric `m` cannot be compared between the runs (None: it can, or it is no judge metric)."""
    on_a, on_b = m in a.metrics, m in b.metrics
    if not on_a and not on_b and m in joined["a"].columns:     # a retrieval metric: no judge, but gold ids
        if is_retrieval(m) and not (joined[("a", "n_gold")] > 0).any():
            return {"metric": m, "why": "no shared question has gold chunk ids (retrieval metrics need them)",
                    "fix": "import the golden set with its gold_chunk_ids (and slice_tag)"}
        return None
    fix = f"judge both runs with the same active judges (rageval judge PROJECT --run {b.run})"
    if not on_a and not on_b:
        retired = [r["judge"] for r in [*a.retired, *b.retired] if r["metric"] == m]
        return {"metric": m, "why": "no active judge has scored either run" +
                (f" (retired: {', '.join(sorted(set(retired)))})" if retired else ""),
                "fix": "add or reinstate a judge of it and judge both runs"}
    if not on_b or not on_a:
        scored, unscored = (a, b) if on_a else (b, a)
        return {"metric": m, "why": f"not judged on '{unscored.run}' (scored on '{scored.run}' by "
                                    f"{', '.join(scored.judges.get(m, []))})",
                "fix": f"judge it: rageval judge PROJECT --run {unscored.run}"}
    if sorted(a.judges.get(m, [])) != sorted(b.judges.get(m, [])):
        return {"metric": m, "why": f"judged by different judges: '{a.run}' by {', '.join(a.judges.get(m, []))}, "
                                    f"'{b.run}' by {', '.join(b.judges.get(m, []))}", "fix": fix}
    # a derived score may be unknown where its source is known (umbrela_p@5 of four graded passages): the gaps
    # that count are its source's
    source = source_metric(m)
    column = source if ("a", source) in joined.columns and ("b", source) in joined.columns else m
    before, after = joined[("a", column)], joined[("b", column)]
    only_a, only_b = int((before.notna() & after.isna()).sum()), int((before.isna() & after.notna()).sum())
    if only_a or only_b:
        sides = [f"{k} scored on '{r.run}' only" for k, r in ((only_a, a), (only_b, b)) if k]
        return {"metric": m, "why": f"scored on one run only for {only_a + only_b} of {len(joined)} shared "
                                    f"questions ({'; '.join(sides)}: not judged, unparsed or failed there)",
                "fix": "judge the rest (rageval judge retries rows that failed) or look at why they failed "
                       "(rageval failures)"}
    return None


def pairwise_moments(columns: dict[str, Any]) -> tuple[Any, Any]:
    """(counts, covariances) of the per-question differences of each pair of metrics over the questions where both
    are known (NaN: unknown), as matrix products: a million questions cost one pass."""
    import numpy as np

    if not columns:
        return np.zeros((0, 0)), np.zeros((0, 0))
    return stacked_moments(np.column_stack(list(columns.values())))


def stacked_moments(diffs: ndarray) -> tuple[Any, Any]:
    """`pairwise_moments` of the differences as the columns of one matrix (NaN: unknown), which it takes over: its
    unknowns become zeros."""
    import numpy as np

    if not diffs.shape[1]:
        return np.zeros((0, 0)), np.zeros((0, 0))
    # a byte a value, and the counts and sums a column at a time: as floats, `known` was the matrix held twice more
    # (63 MB at a million questions, and as much again where `d.T @ known` converted it), at compare's peak
    known = np.isfinite(diffs)
    d = np.nan_to_num(diffs, copy=False)       # (the matrix is this function's own)
    k = d.shape[1]
    n, sums = np.empty((k, k)), np.empty((k, k))   # sums[c, c']: the sum of c's differences where c' is known too
    for c in range(k):
        n[:, c] = np.count_nonzero(known & known[:, c:c + 1], axis=0)
        sums[:, c] = d.T @ known[:, c].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = (d.T @ d - sums * sums.T / n) / (n - 1)
    return n, np.where(n >= 2, cov, 0.0)


def cell_correlation(out: dict[str, Any], moments: dict[str, Any],
                     members: dict[str, set[str]] | None = None) -> dict[str, Any]:
    """The correlation of every pair of compared cells' mean differences, which the gate's max-T adjustment uses:
    two metrics of one slice share its questions, 'all' shares each slice's, two slices share none. The covariance
    of two means is the covariance of their questions' differences over the questions they share, divided by both
    counts (within the smaller for 'all' or a merged group against a slice it holds; `members` names each cell's
    slices, default: a slice holds itself and 'all' every one). PPI cells are left out (their errors include the
    ratings'); the gate then falls back to Holm."""
    import numpy as np

    cells = [(name, m) for name, entry in out["slices"].items() for m in out["metrics"]
             if entry.get(m) and not entry[m].get("estimator")]
    matrix = np.eye(len(cells))
    for i, (sa, ma) in enumerate(cells):
        for j in range(i + 1, len(cells)):
            sb, mb = cells[j]
            source = _shared_source(sa, sb, members)
            if source is None:
                continue
            names, counts, cov = moments[source]
            x, y = names.index(ma), names.index(mb)
            a, b = out["slices"][sa][ma], out["slices"][sb][mb]
            value = counts[x, y] * cov[x, y] / (a["n"] * b["n"]) / (a["se"] * b["se"])
            matrix[i, j] = matrix[j, i] = float(np.clip(value, -1.0, 1.0)) if np.isfinite(value) else 0.0
    return {"cells": [[name, m] for name, m in cells], "matrix": matrix.tolist()}


def family_matrix(correlation: dict[str, Any] | None, cells: Sequence[tuple[str, str]]) -> Any | None:
    """The correlation matrix of `cells` (slice, metric) from a comparison's `cell_correlation`; None when some
    cell has none (a PPI cell, a comparison made before 0.3) or there are no cells."""
    import numpy as np

    found = correlation or {}
    where = {(s, m): i for i, (s, m) in enumerate(found.get("cells", []))}
    picked = [where[c] for c in cells if c in where]
    if not cells or len(picked) != len(cells):
        return None
    return np.asarray(found["matrix"], dtype=float)[np.ix_(picked, picked)]


def _shared_source(sa: str, sb: str, members: dict[str, set[str]] | None) -> str | None:
    """Whose questions two cells share: the one that holds the other's slices, or None when they share none."""
    if sa == sb:
        return sa
    if members is None:
        return sa if sb == ALL else sb if sa == ALL else None
    left, right = members.get(sa, {sa}), members.get(sb, {sb})
    if left <= right:
        return sa
    if right <= left:
        return sb
    return None


def _coverage(runs: list[tuple[RunData, DataFrame]], joined: DataFrame,
              wanted: list[str]) -> tuple[dict[str, Any], list[str]]:
    """What each run has that the comparison leaves out, and a warning where that changes the story: the
    dashboard's 'all' counts every question a run answered, the comparison only the golden questions both did."""
    import pandas as pd

    out: dict[str, Any] = {}
    warnings: list[str] = []
    for role, (data, questions) in zip(("baseline", "candidate"), runs, strict=True):
        linked = pd.Series(questions.index >= 0, index=questions.index)      # keys: see _paired
        compared = linked & questions.index.isin(joined.index)
        left = questions[~compared]
        out[role] = {"run": data.run, "rows": int(len(data.frame)), "questions": int(len(questions)),
                     "compared": int(compared.sum()), "unlinked": int((~linked).sum()),
                     "not_answered_by_other": int((linked & ~compared).sum())}
        if left.empty:
            continue
        moved = []
        for m in wanted:
            if m not in questions or is_retrieval(m):   # retrieval needs gold ids: unlinked rows have none
                continue
            every, kept = questions[m].mean(), questions.loc[compared, m].mean()
            if every == every and kept == kept and abs(every - kept) >= 0.05:
                moved.append((abs(every - kept), f"{m} {every:.1f} there, {kept:.1f} on the compared questions"))
        parts = [f"{out[role]['unlinked']} not linked to the golden set"] if out[role]["unlinked"] else []
        if out[role]["not_answered_by_other"]:
            parts.append(f"{out[role]['not_answered_by_other']} the other run did not answer")
        text = (f"{role} '{data.run}': {len(left)} question(s) are not compared ({', '.join(parts)}); the "
                f"dashboard's 'all' counts them")
        if moved:
            text += ": " + "; ".join(t for _, t in sorted(moved, reverse=True)[:3])
        warnings.append(text)
    return out, warnings


def _merge_unsettled(a: RunData, b: RunData, wanted: list[str]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for item in [*a.unsettled, *b.unsettled]:
        if item["metric"] in wanted:
            seen.setdefault(item["judge"], item)
    return list(seen.values())


