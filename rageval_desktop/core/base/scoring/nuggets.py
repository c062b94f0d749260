"""AutoNuggetizer scores (TREC 2024 RAG track, as open-rag-eval computes them), as pure functions.

A row's answer is checked against a list of nuggets, each labelled vital or okay; each nugget is assigned
support (1), partial_support (0.5) or not_support (0). Per row:
- All = mean assignment over every nugget; Vital = over the vital ones;
- Weighted = (Σ vital + 0.5 · Σ okay) / (n_vital + 0.5 · n_okay);
- each also *strict*: only full support counts (partial = 0).
Unlike open-rag-eval, a count of zero is not replaced by one: Vital with no vital nugget is unknown (None), and
Weighted uses the true counts. A row whose chain failed has no scores at all (never 0.5). All values on 0-100.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

ASSIGNMENT_SCORES = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
IMPORTANCE = ("vital", "okay")
NO_ANSWER_NUGGET = "Not enough information, no answer found"
MAX_NUGGETS = 30        # creation keeps at most this many
KEEP = 20               # importance keeps the top 20, vital first
WINDOW = 10             # passages per creation call
BATCH = 10              # nuggets per importance or assignment call
SOURCE_METRIC = "nuggets"
NAMES = ("nugget_all", "nugget_all_strict", "nugget_vital", "nugget_vital_strict", "nugget_weighted",
         "nugget_weighted_strict")
DEFINITIONS = {
    "nugget_all": "judge-based (AutoNuggetizer): mean support of all nuggets (support 1, partial 0.5)",
    "nugget_all_strict": "judge-based (AutoNuggetizer): share of all nuggets fully supported",
    "nugget_vital": "judge-based (AutoNuggetizer): mean support of the vital nuggets (partial 0.5)",
    "nugget_vital_strict": "judge-based (AutoNuggetizer): share of the vital nuggets fully supported",
    "nugget_weighted": "judge-based (AutoNuggetizer): support weighted vital 1, okay 0.5 (partial 0.5)",
    "nugget_weighted_strict": "judge-based (AutoNuggetizer): full support weighted vital 1, okay 0.5",
}


def sort_by_importance(nuggets: Sequence[str], labels: Sequence[str]) -> list[dict[str, str]]:
    """Vital first (stable: the creation order stays within each group), the top KEEP kept."""
    pairs = sorted(zip(nuggets, labels, strict=True), key=lambda pair: pair[1] != "vital")
    return [{"text": text, "importance": label} for text, label in pairs[:KEEP]]


def row_scores(importance: Sequence[str], assignments: Sequence[str]) -> dict[str, float | None]:
    """The six nugget scores of one row from its nuggets' importance and assignment labels (same order)."""
    if len(importance) != len(assignments):
        raise ValueError(f"{len(assignments)} assignments for {len(importance)} nuggets")
    scores = [ASSIGNMENT_SCORES[a] for a in assignments]
    strict = [1.0 if a == "support" else 0.0 for a in assignments]
    out: dict[str, float | None] = {}
    for suffix, values in (("", scores), ("_strict", strict)):
        vital = [v for v, imp in zip(values, importance, strict=True) if imp == "vital"]
        okay = [v for v, imp in zip(values, importance, strict=True) if imp != "vital"]
        out[f"nugget_all{suffix}"] = 100.0 * sum(values) / len(values) if values else None
        out[f"nugget_vital{suffix}"] = 100.0 * sum(vital) / len(vital) if vital else None
        weight = len(vital) + 0.5 * len(okay)
        out[f"nugget_weighted{suffix}"] = 100.0 * (sum(vital) + 0.5 * sum(okay)) / weight if weight else None
    return out


def scores_from_detail(detail: dict) -> dict[str, float | None]:
    """The six scores from a judgment's stored detail ({"nuggets": [{"text", "importance", "assignment"}]})."""
    items = detail.get("nuggets") or []
    return row_scores([n["importance"] for n in items], [n["assignment"] for n in items])


def windows(passages: Sequence[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Creation windows: WINDOW passages each, in rank order (so any k works)."""
    return [list(passages[i:i + WINDOW]) for i in range(0, len(passages), WINDOW)]


def numbered(passages: Sequence[tuple[int, str]]) -> str:
    """Passages as the creation prompt shows them: numbered from 1 within the window, as open-rag-eval does."""
    return "\n".join(f"[{i}] {text}" for i, (_, text) in enumerate(passages, start=1))


def parse_list_text(text: str) -> list[dict[str, str]]:
    """A nugget list as a person writes it, one per line: `vital: text`, `okay: text`, or just `text` (vital).
    Blank lines and `#` comments are ignored."""
    out = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*•").strip()
        if not line or line.startswith("#"):
            continue
        head, sep, rest = line.partition(":")
        if sep and head.strip().lower() in IMPORTANCE and rest.strip():
            out.append({"text": rest.strip(), "importance": head.strip().lower()})
        else:
            out.append({"text": line, "importance": "vital"})
    return out


def list_text(nuggets: Sequence[dict[str, str]]) -> str:
    """The editable form of a list (parse_list_text reads it back)."""
    return "".join(f"{n['importance']}: {n['text']}\n" for n in nuggets)


def batch_values(question: str, batch: list[str], answer: str | None = None) -> dict[str, str]:
    """An importance (no answer) or assignment prompt's fields for one batch of nuggets."""
    values = {"question": question, "nuggets": json.dumps(batch, ensure_ascii=False), "count": str(len(batch))}
    return values if answer is None else {**values, "answer": answer}
