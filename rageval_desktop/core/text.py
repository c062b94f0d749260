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
