"""Keep API keys out of everything stored, printed or exported — even when a server echoes them back.

A judge job knows the keys it resolved; every text it stores (raw replies, rationales, error messages, the
request cache) passes through the scrubber, which replaces each key (and its `Bearer` form) with a marker.
"""

from __future__ import annotations

MARK = "[redacted API key]"
MIN_SECRET = 8  # shorter "keys" (placeholders such as "not-needed") are not secrets worth hiding


class Scrubber:
    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets: list[str] = []
        for secret in secrets or []:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= MIN_SECRET and secret != "not-needed" and secret not in self.secrets:
            self.secrets.append(secret)
            self.secrets.sort(key=len, reverse=True)  # a key containing another is replaced whole

    def __call__(self, text: str | None) -> str | None:
        if not text or not self.secrets:
            return text
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MARK)
        return text
