"""The app after an unclean shutdown: it opens at once, reads every page in the background and says what it found
in the notice bar; Help → Check Project does the same on demand (issue 15)."""

from __future__ import annotations

import pytest

from rageval_desktop.core.store.project import Project
from tests.core.test_integrity import _big, _crash, _damage_deep_page, _sessions
from tests.gui.conftest import close_window, open_window


def _wait_checked(qtbot, w) -> None:
    qtbot.waitUntil(lambda: w.notice_bar.isVisible() and w.notice_bar.tone in ("ok", "error"), timeout=20_000)


def test_after_a_crash_the_app_opens_then_finds_the_damaged_page_and_offers_the_restore(qtbot, tmp_path):
    path = tmp_path / "p.rageval"
    _big(path)
    with Project.open(path) as p:
        p.backup("manual")
    _crash(path)
    _damage_deep_page(path)
    w = open_window(qtbot, path)               # opened: the check did not hold the window
    assert w.project is not None and w.project.check_due
    _wait_checked(qtbot, w)
    assert w.notice_bar.tone == "error" and w.notice_bar.topic == "integrity"
    text = w.notice_bar.label.text()
    assert "damaged" in text and "after an unclean shutdown" in text
    assert [b.text() for b in w.notice_bar.buttons] == ["Restore from Backup…"]
    w.resize(1280, 720)
    w.grab().save(str(tmp_path / "damaged.png"))
    close_window(qtbot, w)


def test_after_a_crash_a_sound_project_is_said_sound_and_not_checked_again(qtbot, tmp_path):
    path = tmp_path / "p.rageval"
    _big(path)
    _crash(path)
    w = open_window(qtbot, path)
    _wait_checked(qtbot, w)
    assert w.notice_bar.tone == "ok" and "sound" in w.notice_bar.label.text()
    close_window(qtbot, w)
    assert _sessions(path) == []
    w = open_window(qtbot, path)
    assert not w.project.check_due and not w.notice_bar.isVisible()
    close_window(qtbot, w)


def test_help_check_project_finds_a_damaged_page_an_open_does_not_read(qtbot, tmp_path):
    path = tmp_path / "p.rageval"
    _big(path)
    _damage_deep_page(path)
    w = open_window(qtbot, path)
    assert not w.notice_bar.isVisible()
    assert w.menus.check_action.isEnabled()
    w.menus.check_action.trigger()
    _wait_checked(qtbot, w)
    assert w.notice_bar.tone == "error" and "quick_check" in w.notice_bar.label.text()
    w.notice_bar.close_button.click()
    assert not w.notice_bar.isVisible()
    close_window(qtbot, w)


def test_a_page_that_cannot_read_a_damaged_value_says_so_instead_of_staying_blank(qtbot, demo_file, tmp_path,
                                                                                 monkeypatch):
    """The Jobs page's list raised a JSONDecodeError on a job's damaged settings: Qt printed the traceback to a
    terminal nobody sees and the page stayed empty, in silence. The app's hook names the damage in the window."""
    import sys

    from PySide6.QtCore import QTimer

    from rageval_desktop.gui.app import catch_uncaught
    from tests.core.test_integrity import _break_rules

    w = open_window(qtbot, _break_rules(demo_file, tmp_path))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)     # restored after the test
    catch_uncaught(w)
    QTimer.singleShot(0, lambda: w.select_nav("jobs"))          # raised in Qt's event loop, as a click's would be
    qtbot.waitUntil(lambda: "damaged" in (getattr(w, "last_error", None) or ""), timeout=10_000)
    assert "CHECK constraint failed in jobs (json_valid(params))" in w.last_error
    assert "backups" in w.last_error      # how to restore (here: that there is none yet)
    close_window(qtbot, w)


def _raised_in_qt(qtbot, window, monkeypatch, exc: BaseException) -> str:
    """What the window says of `exc` raised in Qt's event loop (as a click's slot would), the app's hook installed."""
    import sys

    from PySide6.QtCore import QTimer

    from rageval_desktop.gui.app import catch_uncaught

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)     # restored after the test
    catch_uncaught(window)
    window.last_error = ""

    def boom() -> None:
        raise exc

    QTimer.singleShot(0, boom)
    qtbot.waitUntil(lambda: bool(getattr(window, "last_error", "")), timeout=10_000)
    return window.last_error


def test_an_unexpected_error_on_the_gui_thread_is_said_with_its_crash_log(qtbot, window, monkeypatch):
    said = _raised_in_qt(qtbot, window, monkeypatch, ValueError("a bug"))
    assert "Something went wrong" in said
    assert "ValueError: a bug" in said and "rageval-crash-" in said


def test_a_refusal_raised_on_the_gui_thread_is_said_as_it_is_not_as_a_bug(qtbot, window, monkeypatch):
    """A RagevalError carries words for the user (a judge's damaged settings): no "Something went wrong", no crash
    log."""
    from rageval_desktop.core.base.errors import JudgeConfigError

    said = _raised_in_qt(qtbot, window, monkeypatch, JudgeConfigError(
        "judge 'x': its settings in the project file are damaged (not a JSON object)"))
    assert "damaged" in said
    assert said.startswith("judge 'x': its settings") and "crash" not in said


def test_a_failure_that_repeats_with_every_paint_is_explained_once(qtbot, window, monkeypatch):
    """Each explanation reads the file for damage and opens a box: a failure repeating with every paint would freeze
    the window under boxes."""
    import sys

    from PySide6.QtCore import QTimer

    from rageval_desktop.gui.app import catch_uncaught

    shown: list[str] = []
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(window, "show_error", lambda message, details="": shown.append(message))
    catch_uncaught(window)

    def boom() -> None:
        raise ValueError("again")

    for delay in (0, 10, 20, 30):
        QTimer.singleShot(delay, boom)
    qtbot.wait(300)
    assert len(shown) == 1 and "ValueError: again" in shown[0]


def test_a_malformed_page_met_on_the_gui_thread_or_in_a_worker_is_said_as_damage(qtbot, window, monkeypatch):
    """Found by opening bit-flipped projects on every page: the Judges page's counts met a malformed page and said
    "Something went wrong: DatabaseError"; a worker's read said the same."""
    import sqlite3

    from rageval_desktop.gui import workers

    said = _raised_in_qt(qtbot, window, monkeypatch, sqlite3.DatabaseError("database disk image is malformed"))
    assert "damaged" in said
    assert "rageval check" in said and "Help → Check Project" in said

    def malformed(*_args, **_kwargs) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    failed: list[tuple[str, str]] = []
    workers.start(malformed, window.project, on_error=lambda m, d: failed.append((m, d)))
    qtbot.waitUntil(lambda: bool(failed), timeout=10_000)
    assert "the project file is damaged (database disk image is malformed)" in failed[0][0] and failed[0][1] == ""


@pytest.mark.slow      # starts the app in its own process (about 2 s)
def test_a_screenshot_of_a_page_that_failed_exits_1_at_once_not_never(demo_file, tmp_path):
    """A computed page whose read failed before it began never sent its numbers: `--screenshot` waited for ever (the
    fuzzing harness's 60 s timeout)."""
    import os
    import subprocess
    import sys

    from tests.core.test_integrity import _break_rules

    path = _break_rules(demo_file, tmp_path)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "RAGEVAL_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-m", "rageval_desktop.gui.app", str(path), "--view", "jobs",
                           "--screenshot", str(tmp_path / "s.png"), "--size", "1024x768"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "no screenshot was written" in done.stderr
    assert "the project file is damaged" in done.stderr and not (tmp_path / "s.png").exists()


def test_an_error_in_a_plain_thread_is_said_on_the_gui_thread(qtbot, window, monkeypatch):
    """Was: an exception in a thread outside the workers (a warm-up, a closer) went to stderr only."""
    import sys
    import threading

    from rageval_desktop.gui.app import catch_uncaught

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)             # both restored after the test
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    catch_uncaught(window)
    window.last_error = ""
    seen: list[bool] = []
    monkeypatch.setattr(window, "show_error", lambda message, details="": (
        seen.append(threading.current_thread() is threading.main_thread()), setattr(window, "last_error", message)))

    def boom() -> None:
        raise ValueError("in a thread")

    thread = threading.Thread(target=boom, name="plain")
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: bool(window.last_error), timeout=10_000)
    assert "ValueError: in a thread" in window.last_error and "rageval-crash-" in window.last_error
    assert seen == [True]                                                # said on the GUI thread
