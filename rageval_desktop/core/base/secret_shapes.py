"""What a secret looks like in stored settings: a setting named like one (api_key, token, password…, at any depth)
or a value shaped like an API key. The judges' floor refuses such settings as a judge is added
(`core.judges.secrets.check_params`); the store removes any a project took before that refusal existed
(`core.store.tidy`), and every display of a judge's settings hides them.
"""

from __future__ import annotations

import re

MARK = "[redacted API key]"

# Prefixes of real API keys (OpenAI, Anthropic, Hugging Face, Groq, xAI, GitHub, AWS, Google, Slack, Stripe...):
# a value starting with one is a key pasted where its NAME belongs.
KEY_PREFIXES = ("sk-", "sk_", "pk-", "rk-", "hf_", "gsk_", "xai-", "ghp_", "gho_", "ghs_", "github_pat_", "akia",
                "asia", "aiza", "xoxb-", "xoxp-", "glpat-", "sess-", "org-", "ya29.", "eyj", "nvapi-", "pplx-",
                "fw_", "r8_", "tgp_", "key-", "api-")

WORDLIKE_PREFIXES = ("key-", "api-", "org-", "sess-", "pk-", "rk-")   # also how ordinary names begin

SECRET_SETTING = re.compile(r"(^|[._-])(api_?key|key|secret|password|passwd|pwd|auth|authorization|bearer|"
                            r"credentials?|access_?token|token)$", re.IGNORECASE)


def looks_like_a_key(value: str) -> bool:
    """True for text that is probably a secret rather than a name: a known key prefix, or a long run of letters
    and digits that mixes cases and digits the way generated keys do (names are words: OPENAI_API_KEY)."""
    return value.lower().startswith(KEY_PREFIXES) or _generated(value)


def _generated(value: str) -> bool:
    """A long run of letters and digits mixed as generated keys mix them (names and words are not)."""
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    mixed = any(c.islower() for c in core) + any(c.isupper() for c in core) + any(c.isdigit() for c in core)
    return len(core) >= 20 and (mixed == 3 or sum(c.isdigit() for c in core) >= 8)


def settings_of(value: object, name: str = "") -> list[tuple[str, object]]:
    """(name, value) of every setting, nested ones named by their path (headers.X-Api); list items by their list's."""
    if isinstance(value, dict):
        return [(f"{name}.{k}" if name else str(k), v) for k, v in value.items()] + [
            pair for k, v in value.items() for pair in settings_of(v, f"{name}.{k}" if name else str(k))
            if isinstance(v, (dict, list, tuple))]
    if isinstance(value, (list, tuple)):
        return [(name, v) for v in value] + [pair for v in value for pair in settings_of(v, name)
                                             if isinstance(v, (dict, list, tuple))]
    return []


def holds_a_key(value: object) -> bool:
    """A stored value that is surely a key: a word of it, 20 characters or more, starts as real keys do ('sk-…',
    'Bearer hf_…'; after a prefix ordinary names share, such as 'api-', it goes on as generated keys do). Narrower
    than `looks_like_a_key`: what this finds is removed without asking, so a commit hash, a checksum or
    'api-gateway-production-east' in a setting is left alone."""
    return isinstance(value, str) and any(
        len(word) >= 20 and word.lower().startswith(KEY_PREFIXES) and not re.search(r"[/\\.]", word)
        and (not word.lower().startswith(WORDLIKE_PREFIXES) or _generated(word)) for word in value.split())


def stored_secrets(params: object) -> list[str]:
    """The names (paths) of the settings in `params` that hold a secret: named like one, or holding a key."""
    found: list[str] = []
    for name, value in settings_of(params):
        if _secret(name.rsplit(".", 1)[-1], value) and name not in found:
            found.append(name)
    return found


def _secret(key: str, value: object) -> bool:
    """One setting holds a secret: named like one, or holding a key (what `stored_secrets` names and
    `without_secrets` leaves out)."""
    return bool(SECRET_SETTING.search(key)) or holds_a_key(value)


def without_secrets(params: object, replace: str | None = None) -> object:
    """`params` with every secret setting left out (a setting named like one, a value that holds a key; a list's
    key-holding items too), or its value replaced by `replace` when one is given."""
    if isinstance(params, dict):
        kept: dict[object, object] = {}
        for key, value in params.items():
            if _secret(str(key), value):
                if replace is not None:
                    kept[key] = replace
                continue
            kept[key] = without_secrets(value, replace)
        return kept
    if isinstance(params, (list, tuple)):
        items = [replace if holds_a_key(v) else without_secrets(v, replace) for v in params
                 if replace is not None or not holds_a_key(v)]
        return items if isinstance(params, list) else tuple(items)
    return params


def shown(params: dict[str, object]) -> dict[str, object]:
    """A judge's settings as they may be shown or exported: every secret replaced by a marker."""
    out = without_secrets(params, MARK)
    assert isinstance(out, dict)
    return out
