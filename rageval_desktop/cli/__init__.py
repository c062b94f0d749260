"""`rageval`: the headless twin of the app. A thin shell: parse arguments, call core, print.

Exit codes: 0 success; 1 an operation failed (bad input, refused file) — for a command that gives a verdict (gate,
decisions --verify, check), the verdict is negative; 2 usage error or an impossible request (a run, judge, sample or
job that does not exist); 3 only `gate`: not decision-grade; 4 a verdict's command that failed before its verdict.
The first line on stderr always says what went wrong in plain words.
"""

from __future__ import annotations

import argparse
import functools
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence

from rageval_desktop import __version__, api
from rageval_desktop.cli.base import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TOOL_FAILED,
    EXIT_USAGE,
    InertStream,
    UsageError,
    _Parser,
)
from rageval_desktop.cli.checks_cmds import cmd_probe, cmd_stability
from rageval_desktop.cli.gate_cmds import cmd_decisions, cmd_gate, cmd_gate_plan, cmd_keys
from rageval_desktop.cli.gold_free_cmds import cmd_models, cmd_nuggets
from rageval_desktop.cli.golden_cmds import cmd_corpus, cmd_golden, cmd_lab, cmd_synth
from rageval_desktop.cli.judging_cmds import cmd_align, cmd_jobs, cmd_judge, cmd_judges, cmd_prices
from rageval_desktop.cli.metrics_cmds import cmd_compare, cmd_failures, cmd_metrics, cmd_report
from rageval_desktop.cli.project_cmds import (
    cmd_backup,
    cmd_backups,
    cmd_check,
    cmd_demo,
    cmd_import,
    cmd_info,
    cmd_migrate,
    cmd_new,
    cmd_restore,
    cmd_undo,
)
from rageval_desktop.cli.review_cmds import (
    cmd_agreement,
    cmd_guidelines,
    cmd_judge_status,
    cmd_ratings,
    cmd_sample,
    cmd_selective,
    cmd_settings,
    cmd_transport,
)
from rageval_desktop.cli.team_cmds import cmd_adjudicate, cmd_pack, cmd_reviewers, cmd_team
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.text import inert_text
from rageval_desktop.core.base.vocab import LLM_DEFAULTS, metric_choices

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "build_parser", "command_paths", "main"]


def _gate_epilog() -> str:
    """`rageval gate --help`'s exit codes, from core's one list of them (core.base.verdicts), and examples."""
    import textwrap

    from rageval_desktop.core.base.verdicts import GATE_EXIT_CODES

    codes = "\n".join(textwrap.fill(text, 116, initial_indent=f"  {code}  ", subsequent_indent="     ")
                      for code, text in GATE_EXIT_CODES.items())
    return "exit codes:\n" + codes + "\n\n" + GATE_EXAMPLES


GATE_EXAMPLES = """examples:
  rageval gate plan eval.rageval --baseline main --like pr-41 --out gate.json   # tolerances the data can detect
  rageval gate eval.rageval --baseline main --candidate pr-42 --config gate.json --markdown gate.md
  rageval gate eval.rageval --baseline main --candidate pr-42 --metrics hit@5 mrr --max-slice-drop 5
  rageval gate eval.rageval --baseline main --candidate pr-42 --record decisions/   # signed, chained record
"""


# --- parser --------------------------------------------------------------------------------------
def _translations_once() -> None:
    """argparse asks gettext for the same three strings for each of the parser's ~70 subparsers, and gettext looks
    for translation files on disk at every ask (880 stat calls, 10 ms of every command): asked once each. The answers
    cannot change while a command runs (nothing here binds another text domain)."""
    if not hasattr(argparse._, "cache_info"):  # type: ignore[attr-defined]
        argparse._ = functools.lru_cache(maxsize=None)(argparse._)  # type: ignore[attr-defined]


def build_parser() -> argparse.ArgumentParser:
    _translations_once()
    parser = _Parser(prog="rageval", description="Headless RAGEval Desktop: evaluate RAG runs in a project file.")
    parser.add_argument("--version", action="version", version=f"rageval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, func: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        # argparse %-formats help strings (not descriptions): a bare % ("95% CIs") would crash --help
        p = sub.add_parser(name, help=help_.replace("%", "%%"), description=help_)
        p.set_defaults(func=func)
        return p

    p = command("new", cmd_new, "create an empty project file")
    p.add_argument("project", help="path of the new .rageval file")
    p.add_argument("--name", help="display name (default: the file name)")

    p = command("import", cmd_import, "import a golden set, a run or corpus chunks (all-or-nothing)")
    what = p.add_subparsers(dest="what", required=True, parser_class=_Parser)
    for kind, help_ in (("golden", "golden rows: question, gold_answer, gold_chunk_ids, slice_tag"),
                        ("run", "outputs of one RAG run: question, answer, retrieved"),
                        ("corpus", "corpus chunks: chunk_id, doc_id, text")):
        q = what.add_parser(kind, help=help_, description=help_)
        q.add_argument("project")
        q.add_argument("file", help=".csv, .jsonl, .json, .parquet or .xlsx")
        q.add_argument("--json", action="store_true", help="print the import report as JSON")
        if kind != "corpus":
            q.add_argument("--format", help="layout: native, ragas, hf-cookbook" +
                           (", open-rag-eval" if kind == "run" else "") + " (default: detected)")
            q.add_argument("--map", metavar="TARGET=SOURCE,...",
                           help="rename the file's columns first, e.g. question=query,answer=response")
        if kind == "golden":
            q.add_argument("--slice", help="slice tag for rows that have none")
            q.add_argument("--dedupe-check", action="store_true",
                           help="after the rows are saved, check the new questions for near-duplicates in the "
                                "golden set (MiniLM; loads the model, ~5 s). Default: say how many are unchecked "
                                "(rageval golden dedupe PROJECT --new checks them later)")
            q.add_argument("--no-dedupe-check", action="store_true", help=argparse.SUPPRESS)  # the default now
            q.add_argument("--allow-clearing", action="store_true",
                           help="let empty cells clear gold chunk ids, slices or gold answers that rows have (refused "
                                "by default; a column left out of the file always keeps what is stored)")
        if kind == "run":
            q.add_argument("--run", required=True, help="name of the run, e.g. v2")
            q.add_argument("--replace", action="store_true", help="replace a run of the same name (backup first)")
            q.add_argument("--notes", help="free text kept with the run")
            q.add_argument("--rank-by", choices=["position", "score"], default="position",
                           help="rank of a retrieved passage: its position in the file (default), or its score, "
                                "highest first")

    p = command("info", cmd_info, "summarise a project")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")

    p = command("check", cmd_check, "read every page of a project file for damage (opening checks only the "
                                    "header and schema; after an unclean shutdown the next open checks all): exit 0 "
                                    "sound, 1 damaged, 4 the check itself could not run")
    p.set_defaults(verdict=True)
    p.add_argument("project")
    p.add_argument("--quick", action="store_true",
                   help="quick_check: every page's structure, not every index against its table (faster on large "
                        "files; the default is integrity_check, which found damage quick_check called sound)")
    p.add_argument("--full", action="store_true", help=argparse.SUPPRESS)   # the default since 0.3; still accepted
    p.add_argument("--json", action="store_true")

    p = command("undo", cmd_undo, "undo the last operation — a golden edit, a judge's edit or status, a rating; the "
                                  "app's undo list")
    p.add_argument("project")
    p.add_argument("--list", action="store_true", help="the recent operations, newest first, and what undid them")
    p.add_argument("--limit", type=int, default=20, help="with --list: how many (default 20)")
    p.add_argument("--operation", type=int, metavar="ID", help="undo this operation (default: the newest in effect)")
    p.add_argument("--yes", action="store_true", help="undo without asking (needed when not at a terminal)")
    p.add_argument("--json", action="store_true")

    p = command("demo", cmd_demo, "write the bundled demo project")
    p.add_argument("path", help="file to create (or a folder, to create demo.rageval in it)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.add_argument("--files", metavar="DIR", help="also write the files the demo is made from to DIR: chunks.jsonl, "
                                                 "golden.csv, outputs-v1.jsonl, outputs-v2.jsonl")
    p.add_argument("--json", action="store_true")

    p = command("judges", cmd_judges, "add, list (with licences) and edit judges; the kinds installed")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list", help="list the project's judges")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("edit", help="change a judge: how it is reached, or its model, rubric or sampling (which "
                                     "expires its licence until it is audited again); undo with rageval undo")
    q.add_argument("project")
    q.add_argument("--name", required=True)
    q.add_argument("--model", help="another model at the same endpoint")
    q.add_argument("--rubric", metavar="FILE", help="a file with the rubric's new text (stored as a new version)")
    q.add_argument("--temperature", type=float)
    q.add_argument("--max-tokens", type=int)
    q.add_argument("--seed", type=int)
    q.add_argument("--base-url", help="another OpenAI-compatible endpoint")
    q.add_argument("--api-key-env", help="NAME of the environment variable holding the key")
    q.add_argument("--concurrency", type=int)
    q.add_argument("--timeout", type=float)
    q.add_argument("--rpm", type=float)
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("kinds", help="the judge kinds installed (built-in and plug-ins) and what each needs")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("add", help="add a judge: an LLM endpoint + rubric, or an embedded scorer")
    q.add_argument("project")
    q.add_argument("--name", required=True)
    q.add_argument("--metric", required=True, help=metric_choices())
    q.add_argument("--kind", required=True, help="how it judges: llm, embedding, lexical, hhem, or a plug-in's kind "
                                                 "(rageval judges kinds lists them)")
    q.add_argument("--rubric", help="bundled rubric name (default: the metric's)")
    q.add_argument("--model", help="model name at the endpoint (LLM judges)")
    q.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default: OpenAI)")
    q.add_argument("--api-key-env", help="NAME of the environment variable holding the key (never the key)")
    q.add_argument("--api-key-keyring", metavar="keyring:SERVICE:USER", help="or a keyring entry")
    q.add_argument("--concurrency", type=int)
    q.add_argument("--rpm", type=float, help="requests-per-minute cap")
    q.add_argument("--max-tokens", type=int)
    q.add_argument("--timeout", type=float, help=f"seconds per call (default {LLM_DEFAULTS['timeout']:g})")
    q.add_argument("--seed", type=int)
    q.add_argument("--temperature", type=float)
    q.add_argument("--passages-k", type=int, help="passages judged per row (passage_relevance; default: every "
                                                   "retrieved passage, as open-rag-eval grades them)")
    q.add_argument("--measure", help="lexical judges: f1 (token F1), recall (token recall of the reference) or "
                                     "rougeL")
    q.add_argument("--threshold", type=float, help="similarity counted as correct (binary metrics)")
    q.add_argument("--grader", help="nuggets: the passage_relevance (UMBRELA) judge whose grades pick the passages "
                                    "nuggets are made from (default: the active one)")
    q.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a setting of the judge's kind (plug-in kinds; repeatable)")
    q.add_argument("--mode", help="hallucination: whole (the whole answer against the joined passages, open-rag-eval's "
                                  "way, the default) or claims (each sentence against each passage, best passage per "
                                  "sentence)")
    q.add_argument("--json", action="store_true")

    p = command("models", cmd_models, "register local models (HHEM) in your user settings")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list", help="the registered local models")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("add", help="register a local model folder")
    q.add_argument("name", choices=["hhem"])
    q.add_argument("path", help="the HHEM-2.1-Open folder (config.json, model.safetensors)")
    q.add_argument("--foundation", help="the flan-t5-base folder (config and tokenizer; default: found beside PATH)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("remove", help="forget a registered model (its files stay)")
    q.add_argument("name", choices=["hhem"])
    q.add_argument("--json", action="store_true")

    p = command("nuggets", cmd_nuggets, "show, edit or approve a question's nugget list (a gold checklist)")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    for action, help_ in (("show", "the question's lists: curated, and generated per run"),
                          ("edit", "write the question's curated list: one nugget per line, 'vital: …' or 'okay: …'"),
                          ("approve", "make a list the question's gold checklist, reused by every later run")):
        q = acts.add_parser(action, help=help_, description=help_)
        q.add_argument("project")
        q.add_argument("--question", required=True, help="a golden row id, a run row's id or query id, or the question")
        if action == "edit":
            q.add_argument("--file", required=True, help="the list as text ('-' reads stdin)")
        if action == "approve":
            q.add_argument("--run", help="approve the list generated for this run (default: the curated list, else "
                                         "the newest generated one)")
        if action != "show":
            q.add_argument("--reason", help="why (kept in the audit log)")
        q.add_argument("--json", action="store_true")

    p = command("judge", cmd_judge, "run judges over a run's rows (resumable: judged rows are skipped)")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--judge", action="append", help="judge name (repeatable; default: every active judge)")
    p.add_argument("--slice", help="only rows of this slice")
    p.add_argument("--sample", type=int, metavar="SAMPLE_ID", help="only the rows of this review sample")
    p.add_argument("--rated-only", action="store_true",
                   help="only rows humans rated (audit a rewritten rubric without new ratings)")
    p.add_argument("--concurrency", type=int, help="calls in flight (default: the judge's own setting)")
    p.add_argument("--rpm", type=float, help="requests-per-minute cap")
    p.add_argument("--budget", type=float, metavar="USD", help="stop before the estimated cost exceeds this")
    p.add_argument("--timeout", type=float, help="seconds per call")
    p.add_argument("--only-missing", action="store_true",
                   help="only rows without a final judgment (the default behaviour; kept for scripts)")
    p.add_argument("--only-failed", action="store_true", help="only rows whose judgment is an error or unparsed")
    p.add_argument("--redo-unparsed", action="store_true", help="also redo rows whose reply did not parse")
    p.add_argument("--no-cache", action="store_true", help="do not use or fill the request cache")
    p.add_argument("--dry-run", action="store_true",
                   help="send nothing: print the calls, tokens and cost per judge this would take")
    p.add_argument("--batch", action="store_true",
                   help="send the requests through the provider's Batch API: cheaper (the batch price), slower "
                        "(within 24 h); resumable with rageval jobs resume")
    p.add_argument("--no-wait", action="store_true",
                   help="with --batch: submit and return; collect later with rageval jobs resume PROJECT ID")
    p.add_argument("--poll-seconds", type=float, metavar="S",
                   help="with --batch: how often to ask the provider (default 30)")
    p.add_argument("--cascade", metavar="J1,J2",
                   help="judges of one metric, cheapest first: each is asked only about the rows the ones before "
                        "it are not sure of (and the rated rows they leave, which calibrate it); the rest go to the "
                        "desk. Prints who decides each row (--json: per row)")
    p.add_argument("--alpha", type=float,
                   help="with --cascade: the disagreement with the reviewers allowed on decided rows (default: the "
                        "project's, settings set --selective-alpha; 0.1 unless set)")
    p.add_argument("--delta", type=float,
                   help="with --cascade: the chance that guarantee fails (default: the project's; 0.1 unless set; "
                        "split between the judges)")
    p.add_argument("--json", action="store_true")

    p = command("prices", cmd_prices, "the price table used for cost accounting")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("set")
    q.add_argument("project")
    q.add_argument("model")
    q.add_argument("--input", type=float, required=True, help="USD per million prompt tokens")
    q.add_argument("--output", type=float, required=True, help="USD per million completion tokens")
    q.add_argument("--batch-input", type=float, help="USD per million prompt tokens through the Batch API "
                   "(default: half the live price)")
    q.add_argument("--batch-output", type=float, help="USD per million completion tokens through the Batch API "
                   "(default: half the live price)")
    q.add_argument("--json", action="store_true")

    p = command("jobs", cmd_jobs, "list jobs, resume an interrupted one, follow or cancel a batch job")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("list")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("resume", help="resume an interrupted job; a batch job polls its batches again")
    q.add_argument("project")
    q.add_argument("id", type=int)
    q.add_argument("--no-wait", action="store_true", help="a batch job: poll once and return")
    q.add_argument("--poll-seconds", type=float, metavar="S", help="how often to ask the provider (default 30)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("show", help="one job; a batch job with its batches")
    q.add_argument("project")
    q.add_argument("id", type=int)
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("cancel", help="cancel a batch job and its remote batches")
    q.add_argument("project")
    q.add_argument("id", type=int)
    q.add_argument("--json", action="store_true")

    p = command("metrics", cmd_metrics, "the dashboard of one run: every slice and 'all' (0-100 scale)")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--k", help="cut-offs for recall/precision/nDCG (default 5,10,50)")
    p.add_argument("--estimator", choices=["mean", "ppi"], default="mean",
                   help="judge metrics as the judges' mean (default) or corrected by the human ratings (ppi: "
                        "prediction-powered inference; needs 10 rated questions per slice)")
    p.add_argument("--json", action="store_true")

    p = command("compare", cmd_compare, "per-slice deltas of a candidate run against a baseline (paired 95% CIs)")
    p.add_argument("project")
    p.add_argument("--baseline", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--metrics", nargs="+", help="default: hit@5 hit@10 mrr ndcg@10 + judged metrics; also "
                   "recall@k (share of gold chunks in the top k), precision@k, ndcg@k")
    p.add_argument("--estimator", choices=["mean", "ppi", "selective"], default="mean",
                   help="judge metrics as the judges' mean (default), corrected by the human ratings (ppi: "
                        "prediction-powered inference; needs 10 rated questions per slice), or as pass rates from "
                        "a selective judge's decided rows and the desk's ratings of the rest (selective: needs a "
                        "rated sample of its abstentions on each run, rageval sample --abstained)")
    p.add_argument("--json", action="store_true")

    p = command("gate", cmd_gate, "may the candidate replace the baseline? exit 0 pass (every gated cell shown "
                                  "safe), 1 a regression shown, 3 not decision-grade (cells the evidence cannot "
                                  "settle, metrics that could not be evaluated), 2 a usage error, 4 the tool "
                                  "failed. `rageval gate plan` proposes tolerances the data can detect")
    p.epilog = _gate_epilog()
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("project", help="the project file (.rageval)")
    p.add_argument("--baseline", required=True, help="the run the candidate must not be worse than, e.g. main")
    p.add_argument("--candidate", required=True, help="the run under test, e.g. pr-123")
    p.add_argument("--config", metavar="FILE", help="a gate configuration (rageval gate plan --out FILE): per "
                   "cell, the tolerance to rule out with 80%% power; default: the one saved in the project, if any")
    p.add_argument("--no-config", action="store_true", help="ignore the project's saved configuration: every cell "
                   "must be shown within --max-slice-drop")
    p.add_argument("--max-slice-drop", type=float, help="without a configuration: points a slice may drop, and the "
                   "drop it must be shown to stay within (default 2)")
    p.add_argument("--max-aggregate-drop", type=float,
                   help="points 'all' may drop (default: the same as --max-slice-drop)")
    p.add_argument("--rule", choices=["test", "point"], default="test",
                   help="test (default): a drop fails when the evidence shows it exceeds the limit, with the "
                        "family-wise error across every gated cell at most --alpha; point: any drop larger than "
                        "the limit fails (the rule before 0.3; fails most unchanged PRs on small slices)")
    p.add_argument("--alpha", type=float,
                   help="the chance of failing a PR that changed nothing, across all gated cells (default 0.05)")
    p.add_argument("--strict", action="store_true", help="accepted for old scripts: a cell not shown safe makes the "
                   "gate not decision-grade (exit 3) by default now")
    p.add_argument("--require-significant", action="store_true",
                   help="with --rule point: fail only on drops over the limit whose paired 95%% CI lies wholly "
                        "below zero")
    p.add_argument("--min-slice-n", type=int, metavar="K",
                   help="slices with fewer than K questions are reported, not gated (default 10; 'all' is always "
                        "gated)")
    p.add_argument("--metrics", nargs="+", help="default: hit@5 hit@10 mrr ndcg@10 + every metric an active judge "
                   "scored on either run; a judge metric without a gate licence, or not judged on both runs, makes "
                   "the gate not decision-grade (exit 3); a name that is no metric: exit 2")
    p.add_argument("--allow-unlicensed", metavar="REASON",
                   help="gate judge metrics whose judges hold no gate licence; the waiver (who, when, REASON) is "
                        "reported and kept in the decision record")
    p.add_argument("--markdown", metavar="FILE", help="also write a pull-request comment")
    p.add_argument("--estimator", choices=["mean", "ppi", "selective"], default="mean",
                   help="judge metrics as the judges' mean (default), corrected by the human ratings (ppi: "
                        "prediction-powered inference; needs 10 rated questions per slice), or as pass rates from "
                        "a selective judge's decided rows and the desk's ratings of the rest (selective: needs a "
                        "rated sample of its abstentions on each run, rageval sample --abstained)")
    p.add_argument("--json", action="store_true", help="print the whole decision as JSON (full precision)")
    p.add_argument("--record", metavar="DIR", help="keep the decision in the project, signed and chained to the "
                                                   "previous one, and write it to DIR as JSON and Markdown")
    p.add_argument("--key", metavar="NAME", help="with --record: sign with this key of yours (rageval keys list; "
                   "default: your default key, made on first use)")
    p.set_defaults(verdict=True)

    p = command("gate-plan", cmd_gate_plan, "what each cell of a gate can detect, and a configuration that gates "
                                            "only what the data can honour (run as: rageval gate plan)")
    p.prog = "rageval gate plan"
    p.add_argument("project", help="the project file (.rageval)")
    p.add_argument("--baseline", required=True, help="the run future candidates are compared with")
    p.add_argument("--like", metavar="RUN", help="a past candidate: pull requests are assumed to change answers as "
                   "much as it did (default: --churn)")
    p.add_argument("--churn", type=float, default=1.0, help="without --like: the share of questions a pull request "
                   "answers anew (default 1.0: every answer independent — the cautious assumption)")
    p.add_argument("--tolerance", type=float, default=5.0, help="the drop you want each cell to catch, in points "
                   "(default 5); a cell that cannot is given the smallest it can, up to --max-tolerance")
    p.add_argument("--max-tolerance", type=float, default=20.0, help="cells that cannot detect this drop are not "
                   "gated on their own: their slices are merged, or gated through 'all' (default 20)")
    p.add_argument("--allowed", type=float, default=1.0, help="a drop shown beyond this fails (default 1: an "
                   "unchanged pull request then fails under 5%% of the time, measured; 0 sits on the boundary)")
    p.add_argument("--power", type=float, default=0.8, help="the power each cell must have at its tolerance "
                   "(default 0.8)")
    p.add_argument("--alpha", type=float, default=0.05, help="the family-wise error rate (default 0.05)")
    p.add_argument("--metrics", nargs="+", help="the metrics to plan for (default: as rageval gate)")
    p.add_argument("--save", action="store_true", help="keep the configuration in the project: rageval gate uses it")
    p.add_argument("--out", metavar="FILE", help="write the configuration to FILE (keep it in your repository; "
                   "rageval gate --config FILE)")
    p.add_argument("--json", action="store_true")

    p = command("decisions", cmd_decisions, "the gate decisions on record; --verify checks each one's signature, "
                                            "chain and inputs: exit 0 all hold, 1 some do not, 4 the tool failed")
    p.add_argument("project")
    p.add_argument("--verify", nargs="*", metavar="FILE", help="check every record's signature (by an allowed "
                   "signer), its hash and link, and that what it used — run rows, passages, judgments, ratings, "
                   "judges — is unchanged; and that each FILE is the record it names (exit 1 if not)")
    p.add_argument("--allowed-signers", metavar="FILE", help="with --verify: trust only the keys this file lists "
                   "(keep it in your repository; `rageval keys export` prints a line for it); default: the "
                   "project's signers and your own keys")
    p.add_argument("--json", action="store_true")
    p.set_defaults(verdict=True)

    p = command("keys", cmd_keys, "your keys for signing decision records, and who may sign in a project")
    what = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = what.add_parser("new", help="make a signing key (kept in your data folder, readable by you only)")
    q.add_argument("--name", default="default", help="its name (default: default)")
    q.add_argument("--signer", help="who signs with it (default: your user name)")
    q = what.add_parser("list", help="your keys")
    q.add_argument("--json", action="store_true")
    q = what.add_parser("export", help="a line for an allowed-signers file: signer, key type, public key")
    q.add_argument("--name", default="default")
    q = what.add_parser("trust", help="let a signer's public key sign decisions in a project")
    q.add_argument("project")
    q.add_argument("line", help="an allowed-signers line (rageval keys export), quoted")
    q = what.add_parser("signers", help="the keys a project trusts")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")

    p = command("failures", cmd_failures, "failing rows by class (retrieval, reranker, generation) and slice")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--class", dest="failure_class", choices=["retrieval", "reranker", "generation"])
    p.add_argument("--slice")
    p.add_argument("--metric", help="only rows this judged metric failed")
    p.add_argument("--sample", type=int, help="read N failures at random (e.g. 10)")
    p.add_argument("--json", action="store_true")

    p = command("report", cmd_report, "write a report: .html .pdf .xlsx .csv .jsonl .parquet or .md (by extension)")
    p.add_argument("project")
    p.add_argument("--run", required=True)
    p.add_argument("--baseline", help="compare against this run (the report then says what the gate says)")
    p.add_argument("--max-slice-drop", type=float, default=2.0, help="the gate's limit in the report (default 2)")
    p.add_argument("--out", required=True, help="file to write; its extension picks the format")
    p.add_argument("--json", action="store_true")

    p = command("sample", cmd_sample, "draw (or extend) a stratified review sample of a run for one metric")
    p.add_argument("project")
    p.add_argument("--run")
    p.add_argument("--metric", help="what to rate: rows, or per item for passage_relevance (passages), nuggets "
                                    "(nuggets), citation_support (citations)")
    p.add_argument("--size", type=int, help="how many rows (or passages, nuggets, citations); default: what the "
                   "plan proposes (see --plan), 40 when it proposes none; with --extend, 10 more")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mode", choices=["stratified", "disagreement", "uncertain"], default="stratified",
                   help="stratified: representative (default); disagreement: where judges disagree or sit near the "
                        "pass mark first; uncertain: nearest the pass mark first (both drawn with unequal "
                        "probabilities, which agreement and PPI weight back)")
    p.add_argument("--extend", type=int, metavar="SAMPLE_ID", help="add --size more targets to this sample")
    p.add_argument("--plan", action="store_true",
                   help="draw nothing: say how many ratings reach a verdict 80%% of the time for a judge at a "
                        "plausible agreement (the judge's last audit, else 0.85, or --kappa), in this mode, and "
                        "what --size can decide")
    p.add_argument("--kappa", type=float, help="the agreement to plan for (with --plan; default: the last audit)")
    p.add_argument("--abstained", metavar="JUDGE[,JUDGE...]",
                   help="a sample of the rows JUDGE (or a cascade, cheapest first) leaves to people in --run: those "
                        "under its selective level (see rageval selective); all of them, or a uniform --size of them")
    p.add_argument("--json", action="store_true")

    p = command("ratings", cmd_ratings, "import or export human ratings (for reviewers who rate outside the app)")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("import", help="CSV/JSONL: row_id or question [+ run], metric, reviewer, score "
                        "[, passage_rank (per-passage metrics, 1 = first passage; or a nugget's or citation's "
                        "number), item (a nugget's or citation's text, as `sample --json` lists it), comment, "
                        "sample_id]")
    q.add_argument("project")
    q.add_argument("file")
    q.add_argument("--sample", type=int, metavar="ID",
                   help="the review sample the ratings were made on (each must be one of its targets); default: the "
                        "newest sample holding every target the file rates, else none (said)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("export")
    q.add_argument("project")
    q.add_argument("--out", required=True, help=".csv or .jsonl")
    q.add_argument("--json", action="store_true")

    p = command("pack", cmd_pack, "review packs: a sample's rows as files for reviewers, and their ratings back")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("export", help="one .ragevalpack per reviewer: the rows to rate, blind (no judge verdicts)")
    q.add_argument("project")
    q.add_argument("--sample", type=int, required=True, metavar="SAMPLE_ID")
    q.add_argument("--reviewer", action="append", required=True, metavar="NAME",
                   help="a reviewer (repeat for a team)")
    q.add_argument("--overlap", type=int, default=1, metavar="K",
                   help="each row goes to K of the reviewers, assigned evenly (default 1)")
    q.add_argument("--out", required=True,
                   help="NAME.ragevalpack for one reviewer; a folder for several (sample<S>-<name>.ragevalpack)")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("import", help="merge the ratings of returned packs (again adds nothing)")
    q.add_argument("project")
    q.add_argument("files", nargs="+", metavar="FILE")
    q.add_argument("--json", action="store_true")

    p = command("team", cmd_team, "reviewers' agreement with each other and the judges, and what to adjudicate")
    p.add_argument("project")
    p.add_argument("--metric", required=True)
    p.add_argument("--sample", type=int, metavar="SAMPLE_ID", help="only the targets of this sample")
    p.add_argument("--json", action="store_true")

    p = command("reviewers", cmd_reviewers, "reviewers checked: accuracy on hidden gold items (with a verdict), "
                                            "test-retest, speed; set a failing reviewer's ratings aside or back")
    p.add_argument("project")
    p.add_argument("--metric", required=True)
    p.add_argument("--set-aside", metavar="NAME", help="withdraw NAME's ratings of the metric from every audit "
                                                       "(with --reason and --lead; `rageval undo` takes it back)")
    p.add_argument("--bring-back", metavar="NAME", help="count NAME's ratings set aside again")
    p.add_argument("--reason", help="why the reviewer is set aside (recorded)")
    p.add_argument("--lead", help="your name, recorded with the decision")
    p.add_argument("--gold-rate", type=float, metavar="R",
                   help="share of a reviewer's queue that is hidden gold items (default 0.1; 0 turns them off)")
    p.add_argument("--retest-rate", type=float, metavar="R",
                   help="share of a reviewer's queue that repeats their own earlier targets (default 0.05)")
    p.add_argument("--speed-floor", type=float, metavar="SECONDS", help="ratings faster than this are flagged "
                                                                        "(default 2)")
    p.add_argument("--floor", type=float, metavar="ACCURACY",
                   help="accuracy on gold below which a reviewer fails (default 0.7)")
    p.add_argument("--json", action="store_true")

    p = command("align", cmd_align, "few-shot examples from the rows a judge got wrong, checked by k-fold "
                                    "cross-validation on the ratings (--apply creates the aligned judge)")
    p.add_argument("project")
    p.add_argument("--judge", required=True, help="an LLM judge rated per row (correctness, faithfulness, …)")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--examples", type=int, default=6, help="few-shot examples in the prompt, at most (default 6)")
    p.add_argument("--seed", type=int, default=0, help="how rated rows are split into folds")
    p.add_argument("--apply", action="store_true", help="create the aligned judge (a new rubric version)")
    p.add_argument("--name", help="the aligned judge's name (default: <judge>-aligned)")
    p.add_argument("--json", action="store_true")

    p = command("adjudicate", cmd_adjudicate, "set the consensus score of a target reviewers disagree on (a lead)")
    p.add_argument("project")
    p.add_argument("--row", type=int, required=True, metavar="ROW_ID")
    p.add_argument("--metric", required=True)
    p.add_argument("--score", type=float, required=True)
    p.add_argument("--reason", required=True)
    p.add_argument("--lead", required=True, help="your name, recorded with the decision")
    p.add_argument("--item", type=int, default=0, help="a passage's rank, or a nugget's or citation's number")
    p.add_argument("--item-key", help="a nugget's or citation's text (as `team --json` lists it)")
    p.add_argument("--json", action="store_true")

    p = command("guidelines", cmd_guidelines, "the scale reviewers rate on and the project's guidelines per metric")
    p.add_argument("project")
    p.add_argument("--metric", required=True)
    p.add_argument("--set", metavar="FILE", help="replace the guidelines with this markdown file ('-' reads stdin)")
    p.add_argument("--json", action="store_true")

    p = command("agreement", cmd_agreement, "judge-human agreement with CIs; --apply retires judges under the bar")
    p.add_argument("project")
    p.add_argument("--judge")
    p.add_argument("--apply", action="store_true", help="record the audit; retire or reinstate accordingly")
    p.add_argument("--json", action="store_true")

    p = command("transport", cmd_transport, "does a judge's audit travel to a run? its errors on the run's ratings "
                "against where it was audited (Fisher's exact test); a shift suspends its gate licence there")
    p.add_argument("project")
    p.add_argument("--run", required=True, help="the run the audit would be reused on (a gate's candidate)")
    p.add_argument("--judge", help="one judge (default: every judge)")
    p.add_argument("--draw", nargs="?", type=int, const=40, metavar="N",
                   help="before anyone rates: put a sample of N rows of the run on the desk (stratified, weighed "
                        "as drawn; default 40, which catch a 25-point rise in a judge's errors 83-95%% of the "
                        "time), one per metric of the licensed judges (or --judge's); rate it, then run transport "
                        "again")
    p.add_argument("--json", action="store_true")

    p = command("selective", cmd_selective, "where a judge may decide alone: the confidence level above which its "
                "pass/fail agrees with the reviewers' at least 1 - alpha of the time, with probability 1 - delta "
                "(fixed-sequence testing on the audit's ratings), per slice, and the share of each run it decides")
    p.add_argument("project")
    p.add_argument("--judge", help="one judge (default: every judge whose metric has a pass mark)")
    p.add_argument("--alpha", type=float, help="disagreement allowed on decided rows (default: the project's, "
                   "settings set --selective-alpha; 0.1 unless set)")
    p.add_argument("--delta", type=float, help="chance the guarantee fails (default: the project's, settings set "
                   "--selective-delta; 0.1 unless set)")
    p.add_argument("--cascade", metavar="J1,J2,...",
                   help="judges in order, cheapest first: each decides where it is sure among the rows the ones "
                        "before it left; the rest go to the desk (δ is split between them)")
    p.add_argument("--run", help="also the run's pass rate from the judge's decided rows and the reviewers' ratings "
                                 "of its abstentions (rageval sample --abstained)")
    p.add_argument("--json", action="store_true")

    for name, func, help_ in (
            ("stability", cmd_stability, "ask a judge again on a sample of the rows it judged: flip rate, score SD, "
                                         "its agreement with itself, and each asked verdict's confidence (the "
                                         "share of asks agreeing) for selective judging"),
            ("probe", cmd_probe, "judge perturbed copies of sampled rows: does the judge notice a dropped fact, a "
                                 "negation, padding, an injected instruction?")):
        p = command(name, func, help_)
        p.add_argument("project")
        p.add_argument("--judge")
        p.add_argument("--run", help="the run whose judged rows are sampled")
        p.add_argument("--sample", type=int, default=50, help="rows (default 50)")
        if name == "stability":
            p.add_argument("--repeats", type=int, default=5, help="times each row is asked (default 5)")
        else:
            p.add_argument("--kinds", help="comma-separated, of drop_fact, negate, swap_entity, truncate, empty, pad, "
                                           "inject (default all); with --battery, of passage_order, fake_citation, "
                                           "lengthen, self_author")
            p.add_argument("--battery", action="store_true",
                           help="the RAG bias battery instead, a check of its own: the passages in reverse order "
                                "(the verdict should not move), a citation to no passage, the answer lengthened "
                                "without new facts, a line naming the judge's own model family as the author (none "
                                "should raise it); a failure bars the gate licence as a failed probe does")
        p.add_argument("--seed", type=int, default=0, help="which rows are sampled (default 0)")
        p.add_argument("--budget", type=float, metavar="USD", help="stop before spending more")
        p.add_argument("--dry-run", action="store_true", help="estimate the calls and the cost; send nothing")
        p.add_argument("--delete", action="store_true",
                       help=f"delete the {name} runs (of --judge, on --run) with their copies; summaries stay")
        p.add_argument("--json", action="store_true")

    for name, help_ in (("retire", "retire a judge by hand, with a reason"),
                        ("reinstate", "reinstate a retired judge (only after a passing audit)")):
        p = command(name, cmd_judge_status, help_)
        p.set_defaults(action=name)
        p.add_argument("project")
        p.add_argument("name")
        p.add_argument("--reason", required=True)
        p.add_argument("--json", action="store_true")

    p = command("settings", cmd_settings, "the retirement policy: statistic, threshold, minimum n, rule; selective "
                "judging's alpha and delta")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("show")
    q.add_argument("project")
    q.add_argument("--json", action="store_true")
    q = acts.add_parser("set")
    q.add_argument("project")
    q.add_argument("--statistic", choices=["auto", "quadratic_kappa", "cohen_kappa", "krippendorff_alpha",
                                           "spearman", "exact"])
    q.add_argument("--threshold", type=float)
    q.add_argument("--min-n", type=int)
    q.add_argument("--rule", choices=["interval", "point"],
                   help="interval (default): keep or retire only when the anytime-valid interval (valid however "
                        "often you look) lies wholly above or below the threshold, else 'needs more ratings'; "
                        "point: the estimate alone (the old rule)")
    q.add_argument("--bias-margin", type=float, metavar="POINTS",
                   help="flag a judge whose mean bias against the reviewers is shown to exceed this many points "
                        "(0-100 scale; default 5)")
    q.add_argument("--selective-alpha", type=float, metavar="A",
                   help="selective judging: the disagreement with the reviewers allowed on the rows a judge decides "
                        "alone (default 0.1); selective licences, the cascade and the gate's selective estimator "
                        "use it")
    q.add_argument("--selective-delta", type=float, metavar="D",
                   help="selective judging: the chance that guarantee fails (default 0.1)")
    q.add_argument("--json", action="store_true")

    p = command("golden", cmd_golden, "the golden set as code: versions, diffs, exports, dedupe, balance, promote")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("version", help="name a snapshot of the golden set")
    q.add_argument("project")
    q.add_argument("name")
    q.add_argument("--note")
    q = acts.add_parser("versions", help="list the snapshots")
    q.add_argument("project")
    q = acts.add_parser("diff", help="rows added, removed and changed between two versions ('current' = now)")
    q.add_argument("project")
    q.add_argument("old")
    q.add_argument("new", nargs="?", default="current")
    q = acts.add_parser("export", help="write a version to .jsonl or .csv (re-import with `import golden`)")
    q.add_argument("project")
    q.add_argument("version", help="a version name or 'current'")
    q.add_argument("--out", required=True)
    q = acts.add_parser("dedupe", help="near-duplicate questions (MiniLM + FAISS)")
    q.add_argument("project")
    q.add_argument("--threshold", type=float, default=0.9)
    q.add_argument("--new", action="store_true",
                   help="only the imported rows not yet checked, against the whole set (costs what the new rows "
                        "cost, not the set)")
    q.add_argument("--embeddings-url", metavar="URL",
                   help="embed on a server that speaks /v1/embeddings (TEI, vLLM, Ollama, OpenAI) instead of the "
                        "bundled MiniLM; with --model")
    q.add_argument("--model", help="the embedding model: the server's model name with --embeddings-url")
    q.add_argument("--api-key-env", metavar="VAR", help="the environment variable holding the endpoint's API key")
    q = acts.add_parser("balance", help="rows per slice against targets; share from production failures")
    q.add_argument("project")
    q = acts.add_parser("target", help="set how many approved rows a slice should have (or add a slice)")
    q.add_argument("project")
    q.add_argument("--slice", required=True)
    q.add_argument("--rows", type=int, required=True)
    q = acts.add_parser("promote", help="add a failing run row to the golden set as a draft")
    q.add_argument("project")
    q.add_argument("--row-id", type=int, required=True)
    q.add_argument("--slice", required=True)
    q.add_argument("--reason")
    for q in acts.choices.values():
        q.add_argument("--json", action="store_true")

    p = command("synth", cmd_synth, "generate draft golden rows from corpus chunks, filtered by critique agents")
    p.add_argument("project")
    p.add_argument("--n", type=int, required=True, help="chunks to sample")
    p.add_argument("--judge", required=True, help="an LLM judge whose endpoint and model write and critique")
    p.add_argument("--style", choices=["factoid", "snippets"], default="factoid")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slice", help="slice tag of the drafts")
    for name in ("groundedness", "relevance", "standalone"):
        p.add_argument(f"--min-{name}", type=float, default=4.0, help=f"keep when {name} >= this (default 4)")
    p.add_argument("--json", action="store_true")

    p = command("lab", cmd_lab, "retrieval lab: recall per chunk size and embedding model, per slice")
    p.add_argument("project")
    p.add_argument("--chunk-sizes", default="200,500", help="token counts, e.g. 200,500")
    p.add_argument("--overlap", type=float, default=0.2, help="share of a chunk repeated in the next (default 0.2)")
    p.add_argument("--model", action="append", help="embedding model (default: the bundled all-MiniLM-L6-v2)")
    p.add_argument("--json", action="store_true")

    p = command("corpus", cmd_corpus, "import a folder of .txt/.md/.rst/.pdf as chunks")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    q = acts.add_parser("import")
    q.add_argument("project")
    q.add_argument("dir")
    q.add_argument("--chunk-size", type=int, default=200, help="tokens per chunk (default 200)")
    q.add_argument("--overlap", type=int, default=40, help="tokens shared by neighbouring chunks (default 40)")
    q.add_argument("--json", action="store_true")

    p = command("migrate", cmd_migrate, "upgrade a project made by an earlier release to this release's schema, in "
                                        "place, after a backup (commands that only read never migrate: they read "
                                        "an older file through a migrated temporary copy)")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")

    p = command("backup", cmd_backup, "write a backup of a project now (kept beside it, rotated)")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")

    p = command("backups", cmd_backups, "list a project's backups (newest last)")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")

    p = command("restore", cmd_restore, "restore a project from a backup (the current state is backed up first)")
    p.add_argument("project")
    p.add_argument("backup", help="a backup file, e.g. from `rageval backups PROJECT`")
    p.add_argument("--json", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:   # the process's own command line: what a large import makes lives until it exits
        from rageval_desktop.core.base.imports import freeze_after

        freeze_after()
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(out), InertStream(err)    # names from data cannot reorder what we print
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["gate", "plan"]:      # `rageval gate plan`: project files end in .rageval, so never "plan"
        argv[:2] = ["gate-plan"]
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("error: interrupted; nothing was half-written (each operation is one transaction)", file=sys.stderr)
        return _failed(args)


def _failed(args: argparse.Namespace) -> int:
    """The code of a command that could not finish: a verdict's command (gate, decisions, check) has its own, so
    that no verdict's code ever doubles as "the tool failed"."""
    return EXIT_TOOL_FAILED if getattr(args, "verdict", False) else EXIT_FAILED


def _run(args: argparse.Namespace) -> int:
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except api.UsageError as exc:  # an impossible request, found by the API the commands call
        print(f"error: {inert_text(exc.for_cli())}", file=sys.stderr)
        return EXIT_USAGE
    except NotFound as exc:       # a run, judge, sample or job that does not exist: a request that cannot be made
        print(f"error: {inert_text(exc.for_cli())}", file=sys.stderr)
        return EXIT_USAGE
    except RagevalError as exc:
        print(f"error: {inert_text(exc.for_cli())}", file=sys.stderr)
        return _failed(args)
    except BrokenPipeError:  # `rageval ... | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK
    except sqlite3.Error as exc:  # a write lane error is translated in core; this is a read or an open
        project = getattr(args, "project", None)
        if project and isinstance(exc, sqlite3.DatabaseError) and "malformed" in str(exc).lower():
            print(f"error: {project}: the project file is damaged ({exc}); see what is damaged with: rageval check "
                  f"{project} — then restore a backup (rageval backups {project}; rageval restore {project} BACKUP)",
                  file=sys.stderr)
        else:
            print(f"error: the project could not be read ({exc})", file=sys.stderr)
        return _failed(args)
    except MemoryError:
        print("error: out of memory; the input is too large for this machine", file=sys.stderr)
        return _failed(args)
    except OSError as exc:
        print(f"error: {exc.strerror or exc}{f' ({exc.filename})' if exc.filename else ''}", file=sys.stderr)
        return _failed(args)
    except Exception as exc:  # a bug of ours: one plain line, the traceback in a file, never on the terminal
        log = _crash_log(exc)
        print(f"error: internal error ({type(exc).__name__}: {str(exc)[:200]}); please report it with {log}",
              file=sys.stderr)
        return _failed(args)


def _crash_log(exc: BaseException) -> str:
    import tempfile
    import traceback

    try:
        with tempfile.NamedTemporaryFile("w", prefix="rageval-crash-", suffix=".txt", delete=False) as fh:
            traceback.print_exception(exc, file=fh)
            return fh.name
    except OSError:
        return "the command line you ran"


if __name__ == "__main__":
    raise SystemExit(main())


def command_paths(parser: argparse.ArgumentParser | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command, as the words that name it (("judges", "add"), ...): what `--help` covers."""
    parser = parser or build_parser()
    out = [prefix]
    for action in parser._actions:   # argparse lists its sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += command_paths(sub, (*prefix, name))
    return out
