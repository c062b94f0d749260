"""Keep API keys out of everything stored, printed or exported — even when a server echoes them back.

A judge job knows the keys it resolved; every text it stores (raw replies, rationales, error messages, request
ids, the request cache) passes through the scrubber, which replaces each key with a marker — also when the key
comes back encoded: any of its characters JSON-escaped (`sk\\u002d…`, `\\/`) or URL-encoded (`sk%2D…`), as a
server that echoes the request in a JSON body or a header writes it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, overload

from rageval_desktop.core.base.errors import JudgeConfigError, RagevalError
from rageval_desktop.core.base.secret_shapes import (
    KEY_PREFIXES,
    MARK,
    SECRET_SETTING,
    holds_a_key,
    looks_like_a_key,
    settings_of,
)

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge

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

    @overload
    def __call__(self, text: str) -> str: ...

    @overload
    def __call__(self, text: None) -> None: ...

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


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_key_ref(ref: str | None) -> str | None:
    """Accept `VAR`, `env:VAR` or `keyring:SERVICE:USER`; refuse anything that looks like a key itself — the
    refusal never repeats the value."""
    if ref is None or ref == "":
        return None
    never = "never the key itself (nothing was stored)"
    if ref.startswith("keyring:"):
        parts = ref.split(":")
        if len(parts) != 3 or not all(parts[1:]):
            raise JudgeConfigError("a keyring reference looks like keyring:SERVICE:USER")
        if any(looks_like_a_key(part) for part in parts[1:]):
            raise JudgeConfigError(f"a keyring reference names the SERVICE and USER of an entry, {never}")
        return ref
    name = ref[4:] if ref.startswith("env:") else ref
    if not _ENV_NAME.match(name) or len(name) > 64 or looks_like_a_key(name):
        raise JudgeConfigError("give the NAME of an environment variable that holds the API key (for example "
                               f"OPENAI_API_KEY), or keyring:SERVICE:USER — {never}")
    return f"env:{name}"


def check_model_name(model: str, api_key_ref: str | None = None) -> None:
    """A key pasted as --model was stored and shown in every report: refuse a model name that starts like a key or
    equals the key the reference resolves to — the refusal never repeats the value."""
    looks = model.lower().startswith(KEY_PREFIXES) and len(model) >= 20
    same = False
    if api_key_ref and not looks:
        try:
            same = resolve_api_key(api_key_ref) == model
        except RagevalError:
            same = False
    if looks or same:
        raise JudgeConfigError("the model's name (for example gpt-4o-mini) looks like an API key; nothing was stored",
                               cli_hint="give the key by the name of an environment variable with --api-key-env",
                               gui_hint="put the key in an environment variable and give its name as the API key")


def check_params(params: dict[str, object], whose: str = "the judge's settings") -> None:
    """A judge's settings (`--param KEY=VALUE`, or what a plug-in kind returns) never carry a secret: a setting named
    like one (api_key, token, password…, at any depth) or a value that looks like a key is refused — it would be
    stored in the project, copied into every backup and shown with the judge. The refusal never repeats the value."""
    for name, value in settings_of(params):
        if SECRET_SETTING.search(name):
            raise JudgeConfigError(f"{whose} may not hold '{name}': a secret would be stored in the project (nothing "
                                   "was stored); give the key by the name of an environment variable or a keyring "
                                   "entry", cli_hint="use --api-key-env NAME or --api-key-keyring keyring:SERVICE:USER",
                                   gui_hint="put the key in an environment variable and give its name as the API key")
        if isinstance(value, str) and (holds_a_key(value) or not re.search(r"[\s/\\.]", value)
                                       and looks_like_a_key(value)):
            raise JudgeConfigError(f"{whose}: the value of '{name}' looks like an API key; nothing was stored — "
                                   "give the key by the name of an environment variable or a keyring entry",
                                   cli_hint="use --api-key-env NAME")


_SECRET_QUERY = re.compile(r"(key|token|secret|password|passwd|pwd|auth|sig|signature|credential)", re.I)


def safe_endpoint(url: str) -> str:
    """An endpoint address as it may be shown and stored: no user:secret@, no query, no path segment that looks
    like a key (an OPENAI_BASE_URL from the environment was never checked by check_base_url)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an address that does not parse)"
    path = "/".join("…" if looks_like_a_key(seg) else seg for seg in parts.path.split("/"))
    return f"{parts.scheme}://{host}{port}{path}" if parts.scheme else "(an address that does not parse)"


def check_base_url(url: str | None) -> str | None:
    """An endpoint address, never a carrier of credentials (`https://user:KEY@host`, `?api_key=...`): those would be
    stored in the project, shown in the GUI and written to reports."""
    if url is None or not url.strip():
        return None
    from urllib.parse import parse_qsl, urlsplit

    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        raise JudgeConfigError("the base URL is not a valid address") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JudgeConfigError("the base URL must be an http(s) address such as http://localhost:8000/v1")
    if parts.username or parts.password:
        raise JudgeConfigError("the base URL carries credentials (user:secret@host); nothing was stored — remove "
                               "them and give the key by the name of an environment variable or a keyring entry",
                               cli_hint="use --api-key-env NAME")
    if any(_SECRET_QUERY.search(k) or looks_like_a_key(v) for k, v in parse_qsl(parts.query)) or \
            any(looks_like_a_key(seg) for seg in parts.path.split("/")):
        raise JudgeConfigError("the base URL seems to carry a key (in its query or path); nothing was stored — give "
                               "the key by the name of an environment variable or a keyring entry",
                               cli_hint="use --api-key-env NAME")
    return url


def resolve_api_key(ref: str | None) -> str:
    """The key for a call. Local servers (vLLM, Ollama, llama.cpp) need none: a placeholder is sent."""
    if ref is None:
        return "not-needed"
    if ref.startswith("env:"):
        value = os.environ.get(ref[4:])
        if not value:
            raise JudgeConfigError(f"the environment variable {ref[4:]} that should hold the API key is not set")
        return value
    import keyring

    _, service, user = ref.split(":")
    value = keyring.get_password(service, user)
    if not value:
        raise JudgeConfigError(f"no keyring entry for service '{service}', user '{user}'")
    return value


def key_problems(judges: Iterable[Judge]) -> list[str]:
    """Why each judge that calls an endpoint could not be given its key now (a variable not set, no keyring entry),
    in words naming the judge and what to set — checked before a job does any work, and by its dry run."""
    out = []
    for judge in judges:
        if not judge.calls_llm:
            continue
        try:
            resolve_api_key(judge.api_key_ref)
        except JudgeConfigError as exc:
            ref = judge.api_key_ref or ""
            fix = (f"set {ref[4:]} in the environment" if ref.startswith("env:") else
                   "add the keyring entry" if ref else "")
            out.append(f"judge '{judge.name}': {exc}" + (f" ({fix})" if fix else ""))
    return out
