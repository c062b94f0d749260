"""Cost before you spend (`rageval judge … --dry-run`): what a judge job would send, from the same plan as the job
(the same items, the same request cache: cached rows are not sent) — calls, prompt tokens counted on the real
rendered prompts with a tokenizer, completion tokens (a typical reply per output format, and the most the judge
may write), and the cost at the project's prices. Nothing is sent and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rageval_desktop.core.base.paths import resources_dir
from rageval_desktop.core.jobs import chains
from rageval_desktop.core.jobs.spec import JobSpec, job_items, job_judges
from rageval_desktop.core.judges import llm, prices, rubrics
from rageval_desktop.core.judges.secrets import key_problems
from rageval_desktop.core.store.project import Project

# a typical reply per output format, in tokens (the estimate); the judge's max_tokens bounds the worst case
TYPICAL_REPLY = {"prometheus": 160, "total_rating": 120, "umbrela": 40, "json_binary": 80, "yes_no": 2}
MESSAGE_OVERHEAD = prices.MESSAGE_OVERHEAD


def token_counter() -> tuple[Callable[[str], int], str]:
    """(count, what counts): the bundled MiniLM WordPiece tokenizer (no torch, no network) — close to, not the same
    as, a hosted model's BPE — else four characters per token."""
    try:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(resources_dir() / "tokenizers" / "minilm-wordpiece.json"))
        tok.no_truncation()
        tok.no_padding()     # the bundled file pads every text to 128 tokens
        return (lambda text: len(tok.encode(text, add_special_tokens=False).ids)), "MiniLM WordPiece tokenizer"
    except Exception:  # noqa: BLE001 - any failure to load falls back to the plain rule
        return prices.text_tokens, f"{prices.CHARS_PER_TOKEN} characters per token"


def estimate(project: Project, spec: JobSpec) -> dict[str, Any]:

    judges = job_judges(project, spec)
    work = job_items(project, spec, judges)
    skipped = work.skipped
    count, tokenizer = token_counter()
    conn = project.reader()
    per_judge: dict[int, dict[str, Any]] = {
        j.id: {"judge": j.name, "metric": j.metric, "kind": j.kind, "calls_llm": j.calls_llm, "model": j.model,
               "items": 0, "calls": 0,
               "cached": 0, "not_sendable": 0, "prompt_tokens": 0, "completion_tokens": 0,
               "completion_tokens_max": 0} for j in judges}
    loaded: dict[int, rubrics.Rubric] = {}

    def count_call(out: dict[str, Any], judge: Any, messages: list[dict], reply_tokens: int) -> None:
        """One call as the job would send it: from the cache (no cost), or its prompt and a typical reply."""
        if spec.use_cache and llm.cached(conn, llm.cache_key(judge.base_url, judge.model, messages,
                                                             judge.request_params())):
            out["cached"] += 1
            return
        out["calls"] += 1
        out["prompt_tokens"] += sum(count(m["content"]) + MESSAGE_OVERHEAD for m in messages)
        most = int(judge.param("max_tokens") or 0)
        out["completion_tokens"] += min(reply_tokens, most or 10**6)
        out["completion_tokens_max"] += most

    for judge in judges:
        if not judge.calls_llm:               # local judges make no calls: no text to read
            per_judge[judge.id]["items"] = work.count([judge])
    for chunk in work.chunks([j for j in judges if j.calls_llm]):   # the text a chunk at a time
        chained = [i for i in chunk if i.judge.spec.items and not i.missing]
        chain_calls = chains.planned_calls(project, chained) if chained else {}
        for item in chunk:
            judge, out = item.judge, per_judge[item.judge.id]
            out["items"] += 1
            if item.missing:
                out["not_sendable"] += 1          # recorded as an error without a call
                continue
            if judge.spec.items:                  # several calls per row, each counted as it would be sent
                for messages, reply in chain_calls[item.idem_key]:
                    count_call(out, judge, messages, count(reply))
                continue
            rid = judge.rubric_key
            if rid not in loaded:
                loaded[rid] = rubrics.rubric_of(project, rid)
            rubric = loaded[rid]
            count_call(out, judge, rubric.render(item.fields), TYPICAL_REPLY.get(rubric.output_format, 100))
    total, total_max = 0.0, 0.0
    unpriced: list[str] = []
    for judge in judges:
        out = per_judge[judge.id]
        price: tuple[float, float] | None
        if not judge.calls_llm:
            price = (0.0, 0.0)
        elif spec.batch and not judge.spec.items:   # sent through the Batch API: at the batch price
            price = prices.batch_price(project, judge.model)
        else:
            price = prices.price(project, judge.model)
        out["batch"] = bool(spec.batch and judge.calls_llm and not judge.spec.items)
        out["price_per_mtok"] = None if price is None else {"input": price[0], "output": price[1]}
        out["cost_usd"] = prices.cost(price, out["prompt_tokens"], out["completion_tokens"])
        out["cost_usd_max"] = prices.cost(price, out["prompt_tokens"], out["completion_tokens_max"])
        if out["calls"] and price is None:
            unpriced.append(judge.model or "(no model)")
        total += out["cost_usd"] or 0.0
        total_max += out["cost_usd_max"] or 0.0
    return {"run": spec.run, "judges": list(per_judge.values()), "already_judged": skipped,
            "problems": key_problems([j for j in judges if per_judge[j.id]["calls"]]),
            "calls": sum(j["calls"] for j in per_judge.values()),
            "cost_usd": None if unpriced else total, "cost_usd_max": None if unpriced else total_max,
            "unpriced_models": sorted(set(unpriced)), "tokenizer": tokenizer,
            "note": "prompt tokens are counted on the rendered prompts; completion tokens are a typical reply per "
                    "output format (cost_usd_max: every call writing max_tokens); one repair retry per unparsed "
                    "reply is not included. Nugget judges: a list not made yet is assumed to hold one nugget per "
                    "passage graded relevant"}


def describe(est: dict[str, Any]) -> str:
    """The dry run in words (the CLI and the app's Estimate dialog)."""
    money = (lambda v: "no price" if v is None else f"${v:.4f}")  # noqa: E731
    lines = [f"dry run on {est['run']}: nothing sent. {est['calls']:,} calls; {est['already_judged']:,} already judged"]
    for j in est["judges"]:
        if not j.get("calls_llm"):           # the kind says (a pinned or plug-in model judge calls too)
            lines.append(f"  {j['judge']:<22} {j['kind']}: {j['items']:,} rows to judge here, no calls")
            continue
        lines.append(f"  {j['judge']:<22} {j['calls']:,} {'batch requests' if j.get('batch') else 'calls'} "
                     f"({j['cached']:,} from the cache, {j['not_sendable']:,} "
                     f"with nothing to judge); ~{j['prompt_tokens']:,} prompt + ~{j['completion_tokens']:,} completion "
                     f"tokens; {money(j['cost_usd'])} (at most {money(j['cost_usd_max'])})"
                     + (" at the batch price" if j.get("batch") else ""))
    lines += [f"cannot start: {p}" for p in est.get("problems", [])]
    if est["unpriced_models"]:
        lines.append(f"no price for {', '.join(m or '?' for m in est['unpriced_models'])}: set one with rageval prices "
                     "set PROJECT MODEL --input USD --output USD")
    else:
        lines.append(f"total {money(est['cost_usd'])} (at most {money(est['cost_usd_max'])}); tokens counted with the "
                     f"{est['tokenizer']}")
    return "\n".join(lines)
