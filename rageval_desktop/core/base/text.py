"""Text helpers shared by importers, linking and dedupe."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\s\"'“”‘’«»(\[]+|[\s\"'“”‘’«»)\].?!:;,]+$")


def normalise_question(text: str) -> str:
    """The key that links a run row to its golden row when no id is given.

    Case, Unicode form, runs of whitespace and surrounding quotes/punctuation do not change the key.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _SPACE.sub(" ", text).strip()
    return _EDGE_PUNCT.sub("", text)


def short_hash(text: str, length: int = 12) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:length]


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")
_LINE_BREAKS = re.compile(r"[\r\n\t\u2028\u2029]+")


_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MENTION = re.compile(r"(?<![\w@.])@(?=[\w-])")     # an @ that starts a word: 'hit@5', 'a@b.c' mention no one


def inert_text(text: object) -> str:
    """Text from data, safe to print beside other text: a bidirectional control (an RTL override that makes
    'v1' read as a different name) or a control character (ESC starting a terminal's colour or cursor sequence, a
    carriage return that overwrites the line, a bell, C1 controls) is shown as its code point, `[U+202E]`,
    `[U+001B]`, instead of acting. Line feeds and tabs stay (the text's own lines)."""
    return _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", str(text))


def json_inert(text: str) -> str:
    """JSON text with every bidirectional control written as its escape (`\\u202e`): parsed, the data is unchanged;
    printed, nothing reorders the line."""
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def md_escape(text: object) -> str:
    """Text from data, inert in Markdown (pull-request comments, reports): HTML is escaped (`<img onerror>`,
    `</details>`), Markdown punctuation is backslashed (`|` cannot split a table cell, `[x](y)` is no link),
    line breaks become spaces (a name cannot end the table), an `@name` cannot mention anyone (a zero-width space
    follows the @: a run named `@cand` pinged a user in a pull request) and bidirectional controls are shown, not
    obeyed (`inert_text`)."""
    import html

    text = html.escape(inert_text(text), quote=False)
    text = _LINE_BREAKS.sub(" ", text)
    text = _MENTION.sub("@\u200b", text)
    return _MD_SPECIAL.sub(r"\\\1", text)


def normalise_passage(text: str) -> str:
    """The key that matches a passage's text to a corpus chunk: exact, after collapsing runs of whitespace."""
    return " ".join(text.split())


MAX_NAME = 100      # characters in a run's or a judge's name: they head tables, charts, file names and PR comments


def name_problem(name: str) -> str | None:
    """Why a run's or judge's name cannot be used (None when it can): too long, or holding control characters or
    bidirectional overrides that would make it read as another name wherever it is shown."""
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long; a name has at most {MAX_NAME}"
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in name):
        return "holds control or formatting characters (line breaks, bidirectional overrides, zero-width marks)"
    return None


def name_key(name: str) -> str:
    """Names that read alike: `V1`, the fullwidth `ｖ１` and `v1` share one key (NFKC, case-folded)."""
    return unicodedata.normalize("NFKC", name).casefold()


def lookalike(name: str, others: list[str]) -> str | None:
    """Another name that reads like `name` but is not it, if any."""
    key = name_key(name)
    return next((o for o in others if o != name and name_key(o) == key), None)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: object) -> object:
    """A text cell a spreadsheet would evaluate gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value
