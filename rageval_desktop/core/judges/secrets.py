"""Keep API keys out of everything stored, printed or exported — even when a server echoes them back.

A judge job knows the keys it resolved; every text it stores (raw replies, rationales, error messages, request
ids, the request cache) passes through the scrubber, which replaces each key with a marker — also when the key
comes back encoded: any of its characters JSON-escaped (`sk\\u002d…`, `\\/`) or URL-encoded (`sk%2D…`), as a
server that echoes the request in a JSON body or a header writes it.
"""

from __future__ import annotations

import re

MARK = "[redacted API key]"
MIN_SECRET = 8  # shorter "keys" (placeholders such as "not-needed") are not secrets worth hiding


class Scrubber:
    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets: list[str] = []
        self._patterns: list[re.Pattern[str]] = []
        for secret in secrets or []:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= MIN_SECRET and secret != "not-needed" and secret not in self.secrets:
            self.secrets.append(secret)
            self.secrets.sort(key=len, reverse=True)  # a key containing another is replaced whole
            self._patterns = [_encoded(s) for s in self.secrets]

    def __call__(self, text: str | None) -> str | None:
        if not text or not self.secrets:
            return text
        for secret, pattern in zip(self.secrets, self._patterns, strict=True):
            if secret in text:
                text = text.replace(secret, MARK)
            if "\\" in text or "%" in text:        # an encoded form needs an escape or a percent sign
                text = pattern.sub(MARK, text)
        return text


def _encoded(secret: str) -> re.Pattern[str]:
    """The key with each character as itself, JSON-escaped (`\\u002d`, `\\/`, `\\\\`) or URL-encoded (`%2D`), in any
    mix and case of hex digits."""
    parts = []
    for ch in secret:
        code = ord(ch)
        forms = [re.escape(ch), rf"\\u{code:04x}"]
        if code < 128:
            forms.append(f"%{code:02x}")
        if ch in "/\\\"":
            forms.append(re.escape("\\" + ch))
        parts.append("(?:" + "|".join(forms) + ")")
    return re.compile("".join(parts), re.IGNORECASE)
