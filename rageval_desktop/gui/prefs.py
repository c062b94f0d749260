"""Per-user preferences (reviewer name, recent projects) in an INI file beside the user's data, never in a project."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from rageval_desktop.core.base.paths import user_config_dir


def settings() -> QSettings:
    return QSettings(str(user_config_dir() / "settings.ini"), QSettings.Format.IniFormat)


# The review card's keys (the scale's own keys, digits or letters, come from the metric): each remappable to another
# single letter in Preferences › Review keys. Arrow keys and Ctrl+Z always work too.
REVIEW_ACTIONS = {"next": ("j", "next row"), "previous": ("k", "previous row"),
                  "next_unrated": ("n", "next row not rated"), "skip": ("s", "skip the row"),
                  "comment": ("c", "comment on the next rating"), "undo": ("u", "undo the last rating"),
                  "reference": ("r", "fix the reference answer"), "passages": ("p", "show or fold the passages")}


def review_keys() -> dict[str, str]:
    """action -> its key (one lower-case letter), the user's choices over the defaults."""
    s = settings()
    out = {}
    for action, (default, _) in REVIEW_ACTIONS.items():
        value = str(s.value(f"review_keys/{action}", default) or default).strip().lower()
        out[action] = value if len(value) == 1 and value.isalpha() else default
    return out


def check_review_keys(keys: dict[str, str], scale_keys: frozenset[str] | set[str] = frozenset("0123456789")
                      ) -> str | None:
    """Why a mapping cannot be used (None: it can): one letter each, no two actions on one key, none on a score."""
    for action, key in keys.items():
        if len(key) != 1 or not key.isalpha():
            return f"the key for '{REVIEW_ACTIONS[action][1]}' must be one letter (not '{key}')"
    used: dict[str, str] = {}
    for action, key in keys.items():
        if key in used:
            return f"'{key}' is set for both '{REVIEW_ACTIONS[used[key]][1]}' and '{REVIEW_ACTIONS[action][1]}'"
        used[key] = action
        if key in scale_keys:
            return f"'{key}' rates on a scale: choose another key for '{REVIEW_ACTIONS[action][1]}'"
    return None
