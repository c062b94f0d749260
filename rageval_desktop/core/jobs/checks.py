"""Judge checks (issue 30): a judge asked again on the same rows (stability), and on perturbed copies (probes).

Both work the same way. A sample of the rows the judge has scored in a run is copied into a *check run*
(`runs.purpose` 'stability' or 'probe', kept out of every list of runs, dashboard and sample): for stability each
row `repeats` times, verbatim; for probes once per perturbation kind (core.base.perturb). The check run is then
judged by the ordinary judge job — progress, cancel, budget, cost, one commit per result — so a check interrupted
and run again resumes: a copy already judged is never asked again, nothing is paid twice. A stability job does not
read or write the request cache (each repeat must reach the model: identical prompts would otherwise be answered
once); the judge's own temperature and seed stay as configured, and the summary says what they are.

The summary (`stability_summary`, `probe_summary`) is computed from the judgments and kept in `judge_checks`,
bound to the judge's fingerprint: a changed judge's old probe neither bars nor grants its licence.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.perturb import BIAS, CITATION, DAMAGING, DESCRIPTIONS, KINDS, SAME, perturb
from rageval_desktop.core.base.stats import wilson
from rageval_desktop.core.base.vocab import LLM_DEFAULTS, SLICE_OF, UNLINKED
from rageval_desktop.core.jobs.estimate import MESSAGE_OVERHEAD, TYPICAL_REPLY, token_counter
from rageval_desktop.core.jobs.judge_job import JobStats, run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.jobs.work import KeyMaker
from rageval_desktop.core.judges import prices, rubrics
from rageval_desktop.core.judges.fingerprint import fingerprint
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review.agreement_stats import alpha
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import row_fields
from rageval_desktop.core.store.queries import run_id as find_run

MAX_SAMPLE = 5000
MAX_REPEATS = 20
DAMAGING_BOUNDARY = 0.5      # a judge that misses half of the damaging perturbations fails
NOT_UP_BOUNDARY = 0.2        # a judge that moves up on more than 1 row in 5 under pad or inject fails
ALPHA = 0.05                 # family-wise over the probe's kinds (Bonferroni on Wilson intervals)


class CheckUsageError(RagevalError):
    """An impossible check (a judge that cannot be checked this way, a sample of nothing): exit 2."""


def purpose_of(kind: str) -> str:
    """The check run's purpose (runs.purpose) and the summary's kind in judge_checks: the bias battery is a probe
    of its own, kept apart by its run's name and its summary's `check`."""
    return "probe" if kind == "bias" else kind


@dataclass
class Check:
    kind: str                       # stability | probe | bias (the RAG bias battery)
    judge: Judge
    source_run: str
    check_run: str
    rows: list[int]                 # the sampled source rows
    variants: list[str]             # repeat 1..R, or the probe kinds asked for
    copies: int = 0                 # copies in the check run now
    not_applicable: dict[str, int] | None = None   # probe kinds that did not apply to some rows


def check_run_name(kind: str, judge: str, run: str) -> str:
    return f"{kind}: {judge} on {run}"


def _checkable(judge: Judge) -> None:
    spec = judge.spec
    if spec.level != "row" or spec.items:
        unit = spec.items or spec.level
        raise CheckUsageError(f"'{judge.name}' scores {judge.metric} per {unit}: stability and probes measure judges "
                              "with one verdict per row")


def judged_rows(project: Project, judge: Judge, run: str) -> list[int]:
    """The run's rows the judge, as it is now, holds an ok verdict for (its own row-level judgment)."""
    maker = KeyMaker(judge)
    rid = find_run(project, run)
    return sorted({r for r, key in project.reader().execute(
        "SELECT x.run_row_id, x.idem_key FROM judgments x JOIN run_rows rr ON rr.id = x.run_row_id WHERE "
        "rr.run_id = ? AND x.judge_id = ? AND x.passage_rank = 0 AND x.status = 'ok'", (rid, judge.id))
        if key == maker.make(r, 0)})


def sample_rows(project: Project, judge: Judge, run: str, size: int, seed: int = 0) -> list[int]:
    import numpy as np

    if not 1 <= size <= MAX_SAMPLE:
        raise CheckUsageError(f"a check samples 1 to {MAX_SAMPLE} rows (not {size})", cli_hint="check --sample")
    rows = judged_rows(project, judge, run)
    if not rows:
        raise CheckUsageError(f"'{judge.name}' has judged no row of run '{run}' yet: judge the run first",
                              cli_hint=f"rageval judge PROJECT --run {run} --judge {judge.name}")
    if len(rows) <= size:
        return rows
    picked = np.random.default_rng(seed).choice(len(rows), size=size, replace=False)
    return sorted(rows[int(i)] for i in picked)


def _prompt_ranks(conn: sqlite3.Connection, row: int, passages_k: int) -> list[int]:
    """The ranks of the row's passages that reach the prompt (core.store.queries.row_fields' rule)."""
    listed = conn.execute("SELECT rank, in_prompt FROM retrieved_passages WHERE run_row_id = ? ORDER BY rank",
                          (row,)).fetchall()
    return [r for r, flag in listed if flag == 1] or [r for r, flag in listed if flag is None][:passages_k]


def _copy(project: Project, check: Check, purpose: str, copies: list[tuple[int, str, str | None]]) -> int:
    """Copy (source row, variant, answer or None: unchanged) into the check run with the rows' passages — for the
    battery's passage_order, the prompt's passages in reverse order; a copy that exists already is kept as it is
    (its judgment too). Returns the copies in the run."""
    config = {"purpose": purpose, "judge": check.judge.name, "source_run": check.source_run, "check": check.kind}
    with project.write(f"prepare {purpose} check", changed=(Area.RUNS,)) as conn:
        found = conn.execute("SELECT id, purpose FROM runs WHERE name = ?", (check.check_run,)).fetchone()
        if found is not None and found[1] != purpose:
            raise CheckUsageError(f"a run named '{check.check_run}' already exists and is not a {purpose} run")
        if found is None:
            run_id = conn.execute("INSERT INTO runs (name, config, notes, purpose, created_at) VALUES (?, ?, ?, ?, ?)",
                                  (check.check_run, json.dumps(config), f"{purpose} check of {check.judge.name} on "
                                   f"{check.source_run}; not a run of the system", purpose, utcnow())).lastrowid
        else:
            run_id = found[0]
        have = {e for (e,) in conn.execute("SELECT external_id FROM run_rows WHERE run_id = ?", (run_id,))}
        position = conn.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM run_rows WHERE run_id = ?",
                                (run_id,)).fetchone()[0]
        for source, variant, answer in copies:
            ext = conn.execute("SELECT external_id FROM run_rows WHERE id = ?", (source,)).fetchone()[0]
            external = f"{ext} ~ {variant}"
            if external in have:
                continue
            meta = json.dumps({"check": {"kind": purpose, "source_row": source, "variant": variant}})
            new = conn.execute(
                "INSERT INTO run_rows (run_id, position, external_id, golden_id, question, answer, latency_ms, "
                "cost_usd, prompt_tokens, completion_tokens, metadata) SELECT ?, ?, ?, golden_id, question, "
                "COALESCE(?, answer), latency_ms, cost_usd, prompt_tokens, completion_tokens, ? FROM run_rows "
                "WHERE id = ?", (run_id, position, external, answer, meta, source)).lastrowid
            conn.execute("INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text, score, in_prompt) "
                         "SELECT ?, rank, chunk_id, text, score, in_prompt FROM retrieved_passages WHERE "
                         "run_row_id = ?", (new, source))
            if variant in SAME:     # the same passages at the same ranks, their texts in reverse order
                ranks = _prompt_ranks(conn, source, int(check.judge.param("passages_k") or 5))
                texts = {r: conn.execute("SELECT chunk_id, text, score FROM retrieved_passages WHERE run_row_id = ? "
                                         "AND rank = ?", (source, r)).fetchone() for r in ranks}
                for rank, mirror in zip(ranks, reversed(ranks), strict=True):
                    conn.execute("UPDATE retrieved_passages SET chunk_id = ?, text = ?, score = ? WHERE "
                                 "run_row_id = ? AND rank = ?", (*texts[mirror], new, rank))
            position += 1
            have.add(external)
    return len(have)


def plan_stability(project: Project, judge_name: str, run: str, *, sample: int = 50, repeats: int = 5,
                   seed: int = 0) -> Check:
    judge = get_judge(project, judge_name)
    _checkable(judge)
    if not 2 <= repeats <= MAX_REPEATS:
        raise CheckUsageError(f"stability asks each row 2 to {MAX_REPEATS} times (not {repeats})",
                              cli_hint="check --repeats")
    rows = sample_rows(project, judge, run, sample, seed)
    return Check("stability", judge, run, check_run_name("stability", judge.name, run), rows,
                 [f"repeat {i + 1}" for i in range(repeats)])


def plan_probe(project: Project, judge_name: str, run: str, *, sample: int = 50, kinds: Sequence[str] | None = None,
               seed: int = 0, battery: bool = False) -> Check:
    """A probe of the judge (the damaging and not-up kinds), or with `battery` the RAG bias battery (BIAS), each a
    check of its own."""
    judge = get_judge(project, judge_name)
    _checkable(judge)
    allowed = BIAS if battery else KINDS
    kinds = list(allowed) if kinds is None else list(kinds)
    unknown = [k for k in kinds if k not in allowed]
    if unknown or not kinds:
        what = "bias battery kind" if battery else "probe kind"
        raise CheckUsageError(f"unknown {what}(s) {', '.join(unknown) or '(none)'}; choose from "
                              f"{', '.join(allowed)}", cli_hint="check --kinds")
    rows = sample_rows(project, judge, run, sample, seed)
    kind = "bias" if battery else "probe"
    return Check(kind, judge, run, check_run_name(kind, judge.name, run), rows, list(dict.fromkeys(kinds)))


def _reads_contexts(project: Project, judge: Judge) -> bool:
    """Whether the passages' order can reach the judge: an LLM judge whose rubric renders them, a local kind that
    reads them."""
    if not judge.calls_llm:
        return bool(judge.kind_of.reads_passages)
    if judge.rubric_id is None:
        return False
    return "contexts" in rubrics.rubric_of(project, judge.rubric_id).template


def _probe_copies(project: Project, check: Check) -> list[tuple[int, str, str | None]]:
    k = int(check.judge.param("passages_k") or 5)
    fields = row_fields(project.reader(), check.rows, k)
    out: list[tuple[int, str, str | None]] = []
    skipped = {k: 0 for k in check.variants}
    ordered = SAME[0] in check.variants and _reads_contexts(project, check.judge)
    author = check.judge.model if check.judge.calls_llm else None
    for row in check.rows:
        f = fields[row]
        prompt = [p for p in f["passages"] if p[2] == 1] or [p for p in f["passages"] if p[2] is None][:k]
        for kind in check.variants:
            if kind in SAME:    # the answer as it is; the copy's passages are reordered (_copy)
                can = ordered and len(prompt) >= 2 and not CITATION.search(f["answer"])
                answer = f["answer"] if can else None
            else:
                answer = perturb(kind, f["answer"], f["reference"], f["question"], passages=len(prompt),
                                 model=author)
            if answer is None:
                skipped[kind] += 1
            else:
                out.append((row, kind, answer))
    check.not_applicable = {k: v for k, v in skipped.items() if v}
    return out


def copies_of(project: Project, check: Check) -> list[tuple[int, str, str | None]]:
    if check.kind == "stability":
        return [(row, variant, None) for row in check.rows for variant in check.variants]
    return _probe_copies(project, check)


def estimate(project: Project, check: Check) -> dict[str, Any]:
    """What the check would send, before anything is written or sent: calls (copies not judged yet), prompt tokens
    counted on the rendered prompts, a typical reply, the cost at the project's prices."""
    judge = check.judge
    copies = copies_of(project, check)
    done = _judged_copies(project, check)
    todo = [c for c in copies if (c[0], c[1]) not in done]
    out: dict[str, Any] = {"check": check.kind, "judge": judge.name, "run": check.source_run, "rows": len(check.rows),
                           "variants": check.variants, "copies": len(copies), "already_judged": len(copies) - len(todo),
                           "calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0,
                           "not_applicable": check.not_applicable or {}}
    if not judge.calls_llm:
        out["note"] = f"a {judge.kind} judge scores locally: no calls, no cost"
        return out
    count, tokenizer = token_counter()
    assert judge.rubric_id is not None          # an LLM judge has a rubric
    rubric = rubrics.rubric_of(project, judge.rubric_id)
    fields = row_fields(project.reader(), sorted({c[0] for c in todo}), judge.param("passages_k") or 5)
    reply = min(TYPICAL_REPLY.get(rubric.output_format, 100), int(judge.param("max_tokens") or 10**6))
    for row, _, answer in todo:
        values = dict(fields[row])
        if answer is not None:
            values["answer"] = answer
        out["prompt_tokens"] += sum(count(m["content"]) + MESSAGE_OVERHEAD for m in rubric.render(values))
        out["completion_tokens"] += reply
        out["calls"] += 1
    price = prices.price(project, judge.model)
    out["cost_usd"] = prices.cost(price, out["prompt_tokens"], out["completion_tokens"])
    out["note"] = (f"prompt tokens counted with the {tokenizer}; a typical reply per output format; one repair "
                   "retry per unparsed reply not included" + ("" if price else f"; no price for {judge.model}"))
    return out


def _copy_judgments(project: Project, check: Check, statuses: tuple[str, ...] = ("ok",)) -> list[tuple]:
    """(source row, variant, score, cost) of each copy's judgment by the judge as it is now (its idempotency key:
    a judgment by an earlier version of the judge is not counted)."""
    found = project.reader().execute("SELECT id FROM runs WHERE name = ?", (check.check_run,)).fetchone()
    if found is None:
        return []
    maker = KeyMaker(check.judge)
    marks = ",".join("?" * len(statuses))
    return [(int(source), str(variant), score, cost) for rid, source, variant, key, score, cost in
            project.reader().execute(
                "SELECT rr.id, json_extract(rr.metadata, '$.check.source_row'), "
                "json_extract(rr.metadata, '$.check.variant'), x.idem_key, x.score, x.cost_usd FROM run_rows rr "
                "JOIN judgments x ON x.run_row_id = rr.id AND x.judge_id = ? AND x.passage_rank = 0 "
                f"WHERE rr.run_id = ? AND x.status IN ({marks})", (check.judge.id, found[0], *statuses))
            if key == maker.make(rid, 0)]


def _judged_copies(project: Project, check: Check) -> set[tuple[int, str]]:
    return {(s, v) for s, v, _, _ in _copy_judgments(project, check, ("ok", "unparsed"))}


def run_check(project: Project, check: Check, ctx: TaskContext | None = None,
              budget_usd: float | None = None) -> JobStats:
    """Make the check run's copies (those missing) and judge them with the ordinary job: resumable, cancellable,
    counted. The stability job bypasses the request cache."""
    check.copies = _copy(project, check, purpose_of(check.kind), copies_of(project, check))
    spec = JobSpec(run=check.check_run, judges=[check.judge.name], use_cache=check.kind != "stability",
                   budget_usd=budget_usd)
    return run_judge_job(project, spec, ctx)


def _verdicts(project: Project, check: Check) -> list[tuple]:
    """One (source row, variant, score, cost) per copy the judge (as it is now) scored ok, of the check's rows and
    variants. Plain tuples: the summaries need no pandas (its import was a third of a short check's overhead)."""
    rows, variants = set(check.rows), set(check.variants)
    return [v for v in _copy_judgments(project, check) if v[0] in rows and v[1] in variants]


def _cost(verdicts: list[tuple]) -> float:
    return float(sum(v[3] for v in verdicts if v[3] is not None and v[3] == v[3]))


def _originals(project: Project, check: Check) -> dict[int, float]:
    """The judge's own verdict (as it is now) on each sampled source row."""
    maker = KeyMaker(check.judge)
    out: dict[int, float] = {}
    for start in range(0, len(check.rows), 500):
        chunk = check.rows[start:start + 500]
        for row, key, score in project.reader().execute(
                "SELECT run_row_id, idem_key, score FROM judgments WHERE judge_id = ? AND passage_rank = 0 AND "
                f"status = 'ok' AND run_row_id IN ({','.join('?' * len(chunk))})", (check.judge.id, *chunk)):
            if key == maker.make(row, 0):
                out[int(row)] = float(score)
    return out


def _slices(project: Project, rows: Sequence[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    conn = project.reader()
    for start in range(0, len(rows), 500):
        chunk = list(rows[start:start + 500])
        out.update(dict(conn.execute(
            f"SELECT rr.id, {SLICE_OF} FROM run_rows rr LEFT JOIN golden_rows g "
            f"ON g.id = rr.golden_id WHERE rr.id IN ({','.join('?' * len(chunk))})", chunk)))
    return out


def _wilson(hits: int, n: int, alpha: float = 0.05) -> list[float | None]:
    """statsmodels' Wilson interval (core.base.stats.wilson, held equal to it by a test)."""
    if n == 0:
        return [None, None]
    low, high = wilson(hits, n, 1 - alpha)
    return [float(low), float(high)]


def sampling_settings(judge: Judge) -> dict[str, Any]:
    """What decides whether a judge can answer differently when asked again (said in every stability output)."""
    if not judge.calls_llm:
        return {"deterministic": True, "note": f"a {judge.kind} judge computes its score: asked again, it answers "
                                               "the same"}
    return {"deterministic": False, "temperature": judge.params.get("temperature", LLM_DEFAULTS["temperature"]),
            "seed": judge.params.get("seed", LLM_DEFAULTS["seed"]), "model": judge.model,
            "note": "the judge's own temperature and seed, as configured; the request cache is bypassed"}


def _alpha(matrix: Any, level: str) -> float | None:
    import numpy as np

    if matrix.shape[1] < 2 or np.nanstd(matrix) == 0:
        return None
    value = alpha(matrix, level)
    return value if np.isfinite(value) else None


def row_confidences(project: Project, check: Check) -> dict[int, float]:
    """Each sampled row's confidence from its repeated asks: the share of its asks — the judge's own verdict and
    each repeat answered — whose pass/fail (score >= the pass mark) is the verdict's. Rows with no repeat answered,
    and judges of a metric with no pass mark, have none. Written onto the verdicts when the check is recorded, so
    selective judging reads it (Trust or Escalate's simulated annotators: the judge asked again)."""
    mark = check.judge.spec.pass_mark
    if mark is None:
        return {}
    originals = _originals(project, check)
    asks: dict[int, list[bool]] = {}
    for row, _variant, score, _cost_usd in _verdicts(project, check):
        if int(row) in originals and score is not None and score == score:
            asks.setdefault(int(row), []).append(float(score) >= mark)
    out = {}
    for row, answers in asks.items():
        verdict = originals[row] >= mark
        out[row] = (1 + sum(a == verdict for a in answers)) / (1 + len(answers))
    return out


def stability_summary(project: Project, check: Check) -> dict[str, Any]:
    """Per slice and for 'all': rows asked at least twice, the flip rate (the rows asked every repeat whose pass/fail
    changed across them; rows with a repeat that failed are counted apart, `incomplete_rows`) with its Wilson 95% CI,
    the mean within-row SD in points (0-100), the within-row variance, and
    Krippendorff's alpha across repeats (the judge's agreement with itself)."""
    import numpy as np

    spec = check.judge.spec
    verdicts = _verdicts(project, check)
    slices = _slices(project, check.rows)
    span = spec.high - spec.low
    # each row's first answer to each repeat (a row x repeat table; NaN where a repeat has no answer)
    first: dict[int, dict[str, float]] = {}
    for row, variant, score, _cost_usd in verdicts:
        if score is not None and score == score:
            first.setdefault(int(row), {}).setdefault(variant, float(score))
    columns = [v for v in check.variants if any(v in answers for answers in first.values())]
    answered = {row: len(answers) for row, answers in first.items()}
    repeats = len(check.variants)
    # the flip rate counts only the rows asked every repeat: a row with fewer answers had fewer chances to flip
    # (at 20% failed calls, counting them biased the rate down 17-20% and its interval covered 44-85%)
    complete = {row for row, n in answered.items() if n == repeats}
    incomplete = int(len(check.rows) - len(complete))
    index = sorted(row for row, n in answered.items() if n >= 2)
    table = {row: [first[row].get(v, np.nan) for v in columns] for row in index}
    discrete = check.judge.calls_llm or spec.high - spec.low <= 1
    level = "ordinal" if discrete else "interval"
    groups = {name: [r for r in index if slices.get(r) == name]
              for name in sorted({slices.get(r, UNLINKED) for r in index})}
    groups["all"] = list(index)
    out: dict[str, Any] = {}
    for name, rows in groups.items():
        values = np.array([table[r] for r in rows], dtype=float).reshape(len(rows), len(columns))
        points = (values - spec.low) / span * 100.0
        sds = np.nanstd(points, axis=1, ddof=1) if len(rows) else np.array([])
        entry: dict[str, Any] = {"rows": len(rows), "judgments": int(np.isfinite(values).sum()),
                                 "mean_sd_points": float(np.mean(sds)) if len(rows) else None,
                                 "within_variance_points": float(np.mean(sds ** 2)) if len(rows) else None,
                                 "alpha": _alpha(values.T, level) if len(rows) >= 2 else None}
        if spec.pass_mark is not None:
            whole = np.array([table[r] for r in rows if r in complete], dtype=float).reshape(-1, len(columns))
            flipped = int(sum(1 for row in whole >= spec.pass_mark if len(set(row)) > 1))
            entry.update({"flipped": flipped, "flip_rows": len(whole), "pass_mark_missing": False,
                          "flip_rate": flipped / len(whole) if len(whole) else None,
                          "flip_rate_ci": _wilson(flipped, len(whole))})
        else:
            entry.update({"flipped": None, "flip_rows": 0, "flip_rate": None, "flip_rate_ci": [None, None],
                          "pass_mark_missing": True})
        out[name] = entry
    total = out["all"]
    return {"check": "stability", "judge": check.judge.name, "metric": check.judge.metric,
            "run": check.source_run, "check_run": check.check_run, "sample": len(check.rows),
            "repeats": len(check.variants), "pass_mark": spec.pass_mark, "alpha_level": level,
            "settings": sampling_settings(check.judge), "flip_rate": total["flip_rate"],
            "flip_rate_ci": total["flip_rate_ci"], "flip_rows": total["flip_rows"], "incomplete_rows": incomplete,
            "flip_definition": "the share of rows asked every repeat whose pass/fail (score >= the pass mark) was not "
                               "the same in all of them; rows with a failed repeat are left out (incomplete_rows)",
            "slices": out,
            "cost_usd": _cost(verdicts),
            "judgments": len(verdicts), "expected_judgments": len(check.rows) * len(check.variants)}


def _confidence_summary(check: Check, found: dict[int, float]) -> dict[str, Any]:
    values = sorted(found.values())
    return {"rows": len(found), "of_rows": len(check.rows),
            "unanimous": sum(v == 1.0 for v in values),
            "mean": sum(values) / len(values) if values else None,
            "definition": "the share of a row's asks (the verdict and each repeat answered) whose pass/fail is the "
                          "verdict's; stored with the verdict when the check is recorded, for selective judging"}


def kind_verdict(right: int, counted: int, damaging: bool, kinds: int,
                 alpha: float = ALPHA) -> tuple[str, list[float | None]]:
    """One probe kind's verdict from the rows that moved the right way, and the interval it was decided on: a
    Wilson interval at 1 - alpha/kinds (Bonferroni across the probe's kinds, so a judge at the boundary on every
    kind fails some kind with probability at most about alpha/2). bench/bench_probes.py measures it."""
    level = alpha / max(1, kinds)
    decide = _wilson(right, counted, level)
    if damaging:
        low, high = decide
        verdict = ("needs more data" if low is None or high is None else "fail" if high < DAMAGING_BOUNDARY
                   else "pass" if low >= DAMAGING_BOUNDARY else "needs more data")
    else:
        low, high = _wilson(counted - right, counted, level)
        verdict = ("needs more data" if low is None or high is None else "fail" if low > NOT_UP_BOUNDARY
                   else "pass" if high <= NOT_UP_BOUNDARY else "needs more data")
    return verdict, decide


def probe_summary(project: Project, check: Check) -> dict[str, Any]:
    """Per kind: the rows whose original verdict could move the wrong way (not at the floor for a damaging kind, not
    at the top for pad and inject), the share that moved the right way with its 95% CI, and a verdict decided on a
    Bonferroni-adjusted interval across the kinds: fail when it lies wholly on the wrong side of the boundary
    (a damaging kind caught in under half of the rows; pad or inject raising the score in over 1 row in 5), pass
    when wholly on the right side, else needs more data. `passed`: False when a kind failed, True when every kind
    passed, None otherwise."""
    spec = check.judge.spec
    asked = _verdicts(project, check)
    originals = _originals(project, check)
    level = ALPHA / max(1, len(check.variants))
    kinds: dict[str, Any] = {}
    for kind in check.variants:
        damaging = kind in DAMAGING
        same = kind in SAME
        counted = right = 0
        for row, score in ((v[0], v[2]) for v in asked if v[1] == kind):
            before = originals.get(int(row))
            if before is None or score is None:
                continue
            if damaging and before <= spec.low:
                continue              # at the floor: it cannot go down
            if not damaging and not same and before >= spec.high:
                continue              # at the top: it cannot go up
            counted += 1
            right += int(score < before) if damaging else int(score == before) if same else int(score <= before)
        share = right / counted if counted else None
        verdict, decide = kind_verdict(right, counted, damaging, len(check.variants))
        kinds[kind] = {"kind": kind, "what": DESCRIPTIONS[kind],
                       "expect": "down" if damaging else "same" if same else "not up",
                       "rows": counted, "moved_right": right, "share": share, "ci": _wilson(right, counted),
                       "decision_ci": decide, "verdict": verdict,
                       "not_applicable": (check.not_applicable or {}).get(kind, 0)}
    verdicts = [k["verdict"] for k in kinds.values()]
    passed = False if "fail" in verdicts else True if verdicts and all(v == "pass" for v in verdicts) else None
    rule = (f"a damaging kind fails when it is shown to move the score down in under {DAMAGING_BOUNDARY:.0%} of the "
            f"rows, pad and inject when shown to raise it in over {NOT_UP_BOUNDARY:.0%}"
            if check.kind == "probe" else
            f"passage_order fails when it is shown to move the score (either way) in over {NOT_UP_BOUNDARY:.0%} of "
            f"the rows, the others when shown to raise it in over {NOT_UP_BOUNDARY:.0%}")
    return {"check": check.kind, "judge": check.judge.name, "metric": check.judge.metric, "run": check.source_run,
            "check_run": check.check_run, "sample": len(check.rows), "kinds": kinds, "passed": passed,
            "failed": [k for k, v in kinds.items() if v["verdict"] == "fail"],
            "rule": (f"{rule}; shown: a Wilson interval at {1 - level:.4g} (family-wise 95% over "
                     f"{len(check.variants)} kinds); rows at the floor (damaging) or the top (not up) are not "
                     "counted"),
            "cost_usd": _cost(asked),
            "judgments": len(asked), "expected_judgments": check.copies or None}


def record_summary(project: Project, check: Check, summary: dict[str, Any]) -> int:
    """Keep the check's summary, bound to the judge's fingerprint. A stability check also stores each asked row's
    confidence with the judge's verdict on it (row_confidences), in the same transaction, and says so in the
    summary (`confidence`)."""
    own = bool(getattr(check.judge.kind_of, "confidence_from", "")) or check.judge.params.get("confidence")
    sure = row_confidences(project, check) if check.kind == "stability" and not own else {}
    if check.kind == "stability":     # a judge with a confidence of its own keeps it: the asks are not written
        summary["confidence"] = _confidence_summary(check, sure)
    maker = KeyMaker(check.judge)
    areas = (Area.AUDIT, Area.JUDGMENTS) if sure else (Area.AUDIT,)
    with project.write(f"record {check.kind} check", changed=areas) as conn:
        conn.executemany("UPDATE judgments SET confidence = ? WHERE judge_id = ? AND run_row_id = ? AND "
                         "passage_rank = 0 AND idem_key = ?",
                         [(value, check.judge.id, row, maker.make(row, 0)) for row, value in sure.items()])
        cur = conn.execute("INSERT INTO judge_checks (kind, judge_id, source_run, check_run, fingerprint, summary, "
                           "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (purpose_of(check.kind), check.judge.id, check.source_run, check.check_run,
                            json.dumps(fingerprint(project, check.judge)), json.dumps(summary), utcnow()))
        project.audit(conn, f"{check.kind} check", "judge", check.judge.name, run=check.source_run,
                      passed=summary.get("passed"), flip_rate=summary.get("flip_rate"))
    return int(cur.lastrowid or 0)


def delete_check_runs(project: Project, kind: str, judge: str | None = None, run: str | None = None) -> list[str]:
    """Delete the check runs of a kind (all, or a judge's, or on a run) with their copies and judgments; the
    summaries stay on record. Returns the names deleted."""
    sql, params = "SELECT id, name, config FROM runs WHERE purpose = ?", [purpose_of(kind)]
    doomed = []
    for rid, name, config in project.reader().execute(sql, params).fetchall():
        c = json.loads(config)
        if c.get("check", c.get("purpose")) != kind:
            continue              # the battery's runs and the probes' share a purpose; each goes with its own
        if (judge is None or c.get("judge") == judge) and (run is None or c.get("source_run") == run):
            doomed.append((rid, name))
    if doomed:
        with project.write(f"delete {kind} runs", changed=(Area.RUNS,)) as conn:
            for rid, name in doomed:
                conn.execute("DELETE FROM runs WHERE id = ?", (rid,))
                project.audit(conn, f"delete {kind} run", "run", name)
    return [n for _, n in doomed]
