"""One parser per output format. A reply that does not parse raises ParseError: the job stores it as
`unparsed` with its raw text. Nothing here ever invents a default score.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


class ParseError(ValueError):
    pass


@dataclass(frozen=True)
class Verdict:
    score: float
    label: str | None
    rationale: str | None


_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_RESULT = re.compile(r"\[RESULT\]\s*\(?\s*" + _NUMBER + r"\s*\)?", re.IGNORECASE)
_TOTAL = re.compile(r"total\s+rating\s*[:=]\s*\(?\s*" + _NUMBER, re.IGNORECASE)
_SCORE_LINE = re.compile(r"(?:^|\n)\s*(?:##\s*)?(?:final\s+)?score\s*[:=]\s*\(?\s*" + _NUMBER, re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _in_scale(value: float, low: float, high: float, what: str) -> float:
    if not low <= value <= high:
        raise ParseError(f"{what} {value:g} is outside the scale {low:g}–{high:g}")
    return value


def parse_prometheus(text: str, low: float, high: float) -> Verdict:
    """`Feedback: … [RESULT] N` (HF cookbook / Prometheus). The last [RESULT] wins."""
    found = _RESULT.findall(text)
    if not found:
        raise ParseError("no '[RESULT] N' in the reply")
    score = _in_scale(float(found[-1]), low, high, "[RESULT]")
    feedback = text.split("[RESULT]")[0]
    feedback = re.sub(r"^\s*(###)?\s*feedback\s*:\s*", "", feedback, flags=re.IGNORECASE).strip()
    return Verdict(score, None, feedback or None)


def parse_total_rating(text: str, low: float, high: float) -> Verdict:
    """`Evaluation: … Total rating: N` (the cookbook's critique agents)."""
    found = _TOTAL.findall(text)
    if not found:
        raise ParseError("no 'Total rating: N' in the reply")
    score = _in_scale(float(found[-1]), low, high, "Total rating")
    rationale = re.split(r"total\s+rating", text, flags=re.IGNORECASE)[0]
    rationale = re.sub(r"^\s*evaluation\s*:\s*", "", rationale, flags=re.IGNORECASE).strip()
    return Verdict(score, None, rationale or None)


def parse_umbrela(text: str, low: float, high: float) -> Verdict:
    """A final `Score: N` line (0–3); a reply that is just the digit also counts."""
    stripped = text.strip()
    if re.fullmatch(r"[0-9]", stripped):
        return Verdict(_in_scale(float(stripped), low, high, "score"), None, None)
    found = _SCORE_LINE.findall(text)
    if not found:
        raise ParseError("no 'Score: N' line in the reply")
    score = _in_scale(float(found[-1]), low, high, "Score")
    if score != int(score):
        raise ParseError(f"UMBRELA scores are whole numbers, got {score:g}")
    rationale = _SCORE_LINE.split(text)[0].strip()
    return Verdict(score, None, rationale or None)


def parse_json_binary(text: str, low: float, high: float) -> Verdict:
    """`{"is_correct": bool, "reasoning": str}`, bare or in a ```json fence; 1 = correct, 0 = not."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and "is_correct" in obj:
            value = obj["is_correct"]
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                value = value.strip().lower() == "true"
            if not isinstance(value, bool):
                raise ParseError(f"is_correct must be true or false, got {value!r}")
            reasoning = obj.get("reasoning")
            return Verdict(1.0 if value else 0.0, "correct" if value else "incorrect",
                           reasoning if isinstance(reasoning, str) else None)
    raise ParseError('no JSON object with "is_correct" in the reply')


_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(text: str, low: float, high: float) -> Verdict:
    """A yes / no reply — bare ("yes", "`No`.", "Your Response: yes") or as JSON {"answered": "yes"}; 1 = yes.
    A reply that says both, or neither, is not a verdict."""
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            obj = json.loads(text[start:end + 1])
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and len(obj) >= 1:
            value = next(iter(obj.values()))
            if isinstance(value, bool):
                value = "yes" if value else "no"
            if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
                yes = value.strip().lower() == "yes"
                return Verdict(high if yes else low, "yes" if yes else "no", None)
    found = {m.group(1).lower() for m in _YES_NO.finditer(text)}
    if found == {"yes"} or found == {"no"}:
        yes = found == {"yes"}
        return Verdict(high if yes else low, "yes" if yes else "no", None)
    raise ParseError("the reply says both yes and no" if found else "the reply says neither yes nor no")


_LABEL_WORD = re.compile(r"[A-Za-z_]+(?:[ -][A-Za-z_]+)?")
CITATION_LABELS = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}


def _norm_label(word: str) -> str:
    return re.sub(r"[\s-]+", "_", word.strip().strip("'\"`.").lower())


def parse_citation_support(text: str, low: float, high: float) -> Verdict:
    """`full_support`, `partial_support` or `no_support` (quoted, spaced or hyphenated alike); one of them only."""
    found = {_norm_label(m.group(0)) for m in re.finditer(r"(full|partial|no)[\s_-]+support", text, re.IGNORECASE)}
    if len(found) != 1:
        raise ParseError("the reply names several support labels" if found else
                         "the reply names none of full_support, partial_support, no_support")
    label = found.pop()
    return Verdict(low + (high - low) * CITATION_LABELS[label], label, None)


def parse_string_list(text: str) -> list[str]:
    """A list of strings — `["a", "b"]` as JSON or a Python literal, bare or fenced. An empty list, a list with a
    non-string or an empty string, or no list at all is a ParseError."""
    import ast

    if not text or not text.strip():
        raise ParseError("the reply is empty")
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("["), text.rfind("]")
    if start != -1 and end > start:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        value = None
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(candidate.strip())
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
        if isinstance(value, dict) and len(value) == 1:   # {"nuggets": [...]} as structured output gives it
            value = next(iter(value.values()))
        if not isinstance(value, list):
            continue
        if not value:
            raise ParseError("the list is empty")
        if not all(isinstance(v, str) and v.strip() for v in value):
            raise ParseError("the list holds something other than non-empty strings")
        return [v.strip() for v in value]
    raise ParseError("no list of strings (like [\"a\", \"b\"]) in the reply")


def parse_label_list(text: str, allowed: tuple[str, ...], count: int) -> list[str]:
    """Exactly `count` labels from `allowed`, in order (`["vital", "okay"]`; spaces or hyphens for underscores)."""
    try:
        values = parse_string_list(text)
    except ParseError:
        values = None
    if values is None:   # a bare list of words: vital, okay, vital
        values = [w for w in re.split(r"[\s,;\[\]]+", text) if w.strip("'\"`.")]
    labels = [_norm_label(v) for v in values]
    bad = sorted({label for label in labels if label not in allowed})
    if bad:
        raise ParseError(f"unknown label(s) {', '.join(repr(b) for b in bad[:5])}; allowed: {', '.join(allowed)}")
    if len(labels) != count:
        raise ParseError(f"{len(labels)} labels for {count} nuggets")
    return labels


PARSERS = {
    "citation_support": parse_citation_support,
    "yes_no": parse_yes_no,
    "prometheus": parse_prometheus,
    "total_rating": parse_total_rating,
    "umbrela": parse_umbrela,
    "json_binary": parse_json_binary,
}

FORMAT_REMINDERS = {
    "prometheus": 'Reply exactly as: "Feedback: <your feedback> [RESULT] <an integer in the scale>"',
    "total_rating": 'Reply exactly as:\nEvaluation: <your rationale>\nTotal rating: <a number in the scale>',
    "umbrela": 'Reply with one sentence of reasoning, then a final line "Score: N" with N in 0, 1, 2, 3.',
    "json_binary": 'Reply with only a JSON object: {"is_correct": true or false, "reasoning": "<why>"}',
    "yes_no": 'Reply with one word: yes or no.',
    "citation_support": "Reply with one of: full_support, partial_support, no_support.",
    "nugget_list": 'Reply with only the list of nuggets, as ["nugget one", "nugget two", ...].',
    "importance_labels": 'Reply with only the list of labels, one per nugget, as ["vital", "okay", ...].',
    "assignment_labels": 'Reply with only the list of labels, one per nugget, as ["support", "not_support", '
                         '"partial_support", ...].',
}
LIST_FORMATS = ("nugget_list", "importance_labels", "assignment_labels")  # parsed by the nugget chain, not parse()


def parse(output_format: str, text: str | None, low: float, high: float) -> Verdict:
    if not text or not text.strip():
        raise ParseError("the reply is empty")
    return PARSERS[output_format](text, low, high)


_TOKEN_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def _token_score(text: str, low: float, high: float) -> float | None:
    """What one reply token says, as a score: a number on the scale, or true/yes (the top) and false/no (the bottom)
    on a two-point scale; None for anything else."""
    word = text.strip().strip('"\'`*.,:;()[]{}').lower()
    if word in _TOKEN_WORDS and high - low <= 1:
        return high if _TOKEN_WORDS[word] else low
    try:
        value = float(word)
    except ValueError:
        return None
    return value if low <= value <= high and value == value else None


def logprob_confidence(tokens: list | None, verdict: Verdict, low: float, high: float, mark: float) -> float | None:
    """How sure the model was of its verdict's side of the pass mark, from its token log-probabilities: at the last
    reply token that states the verdict's score (a digit, or true/false, yes/no on a two-point scale), the share of the
    probability of its alternatives that are scores on the verdict's side, among those that are scores at all. None
    when no token states the score or none of the alternatives is one (no confidence rather than a wrong one)."""
    import math

    if not tokens:
        return None
    side = verdict.score >= mark
    for text, logprob, alternatives in reversed(tokens):
        said = _token_score(str(text), low, high)
        if said is None or said != verdict.score:
            continue
        seen = {str(a): float(lp) for a, lp in alternatives}
        seen.setdefault(str(text), float(logprob))
        same = total = 0.0
        for alt, lp in seen.items():
            value = _token_score(alt, low, high)
            if value is None or not math.isfinite(lp):
                continue
            p = math.exp(min(lp, 0.0))     # a log-probability is never above 0 (exp(1e308) overflowed)
            total += p
            same += p if (value >= mark) == side else 0.0
        return min(1.0, max(0.0, same / total)) if total > 0 else None
    return None
