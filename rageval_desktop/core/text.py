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


_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")
_MENTION = re.compile(r"(?<![\w@.])@(?=[\w-])")     # an @ that starts a word: 'hit@5', 'a@b.c' mention no one


def inert_text(text: object) -> str:
    """Text from data, safe to print beside other text: a bidirectional control (an RTL override that makes
    'v1' read as a different name) is shown as its code point, `[U+202E]`, instead of acting."""
    return _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", str(text))


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
