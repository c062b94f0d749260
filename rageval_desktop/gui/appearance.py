"""The app's look from the user's preferences: theme (follows the system unless set) and font size."""

from __future__ import annotations

from rageval_desktop.gui.prefs import settings

SEEN_KEY = "appearance/system_scheme"     # the system's colour scheme as last seen: "dark" or "light"


def system_dark(*, remembered: bool = False) -> bool:
    """Whether the system's colour scheme is dark. `remembered` (the first paint): the scheme seen last time, if
    any, without asking Qt — asking materialises PySide6's whole `Qt` namespace, 15 ms before the window could
    show; the built window asks (`scheme_differs`) and changes theme if the system has since."""
    prefs = settings()
    if remembered:
        seen = prefs.value(SEEN_KEY)
        if seen in ("dark", "light"):
            return bool(seen == "dark")
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    dark = isinstance(app, QApplication) and app.styleHints().colorScheme() == Qt.ColorScheme.Dark
    if prefs.value(SEEN_KEY) != ("dark" if dark else "light"):
        prefs.setValue(SEEN_KEY, "dark" if dark else "light")
    return dark


def scheme_differs() -> bool:
    """A theme that follows the system shows another scheme than the system's (the first paint took the remembered
    one, or the system changed it since): the window applies the appearance again (`MainWindow.follow_system`)."""
    return theme() == "system" and system_dark() != is_dark()


def theme() -> str:
    """The user's choice: "system", "light" or "dark"."""
    return str(settings().value("theme", "system") or "system")


def apply_appearance(*, first_paint: bool = False) -> None:
    """Theme (system, light, dark) and font size from the user's preferences. `first_paint`: a theme that follows
    the system takes the scheme seen last time (see `system_dark`)."""
    from PySide6.QtGui import QColor, QFont, QPalette
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    prefs = settings()
    font = QFont(app.font())
    font.setPointSize(int(str(prefs.value("font_size", 10) or 10)))
    app.setFont(font)
    chosen = theme()
    dark = chosen == "dark" or (chosen == "system" and system_dark(remembered=first_paint))
    palette = QPalette()
    if dark:
        role = QPalette.ColorRole
        for which, colour in ((role.Window, "#202124"), (role.WindowText, "#e8eaed"), (role.Base, "#2b2c2f"),
                              (role.AlternateBase, "#303134"), (role.Text, "#e8eaed"), (role.Button, "#303134"),
                              (role.ButtonText, "#e8eaed"), (role.Highlight, "#8ab4f8"),
                              (role.HighlightedText, "#202124"), (role.ToolTipBase, "#303134"),
                              (role.ToolTipText, "#e8eaed"), (role.PlaceholderText, "#9aa0a6")):
            palette.setColor(which, QColor(colour))
        # (setColor sets every group: a disabled box drew its text as bright as an enabled one)
        for which, colour in ((role.Text, "#80868b"), (role.WindowText, "#80868b"), (role.ButtonText, "#80868b"),
                              (role.Base, "#262729"), (role.Button, "#27282b")):
            palette.setColor(QPalette.ColorGroup.Disabled, which, QColor(colour))
    else:      # the platform's placeholder grey reads 4.0:1 on white: below WCAG AA for the hints it carries
        palette.setColor(QPalette.ColorRole.PlaceholderText, QColor("#5f6368"))
    app.setPalette(palette)
    app.setProperty("dark", dark)
    from rageval_desktop.core.base.paths import resources_dir

    name = "app-dark.qss" if dark else "app.qss"
    style = resources_dir() / "styles" / name
    if style.exists():
        app.setStyleSheet(style.read_text(encoding="utf-8").replace("{resources}", resources_dir().as_posix()))


def is_dark() -> bool:
    """Whether the theme applied now (apply_appearance) is the dark one: what every colour chosen in code asks."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    return bool(app is not None and app.property("dark"))


def verdict_colours() -> tuple[str, str]:
    """(worse, better) text colours with contrast on the current theme's background (dark: light red and green)."""
    return ("#f28b82", "#81c995") if is_dark() else ("#b3261e", "#1f7a4d")
