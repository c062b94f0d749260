"""Per-user preferences (reviewer name, recent projects) in an INI file beside the user's data, never in a project."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from rageval_desktop.core.base.paths import user_data_dir


def settings() -> QSettings:
    return QSettings(str(user_data_dir() / "settings.ini"), QSettings.Format.IniFormat)
