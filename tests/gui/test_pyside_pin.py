"""PySide6 6.12.0 aborts Python 3.11 after ~5,000 calls to Qt methods that return nothing. Guard the pin."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CALLS = textwrap.dedent("""
    from PySide6.QtWidgets import QApplication, QWidget
    app = QApplication([])
    w = QWidget()
    for i in range(10_000):
        w.resize(100 + i % 50, 100)   # returns None
        app.processEvents()            # returns None
    print("survived", 20_000)
""")


def test_twenty_thousand_void_calls_survive():
    result = subprocess.run([sys.executable, "-c", CALLS], capture_output=True, text=True, timeout=300,
                            env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "survived 20000" in result.stdout


def test_installed_pyside_respects_the_pin():
    import PySide6

    major, minor = (int(x) for x in PySide6.__version__.split(".")[:2])
    assert (major, minor) < (6, 12)
