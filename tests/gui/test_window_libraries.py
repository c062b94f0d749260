"""Issue 76.5: a real window on a fresh Debian aborted (rc 134) without libxcb-cursor0, libxcb-icccm4 and
libxcb-keysyms1, and the app said nothing. It now names them, and the packages that bring them, and exits with 1."""

from __future__ import annotations

from rageval_desktop.gui import app, window_libraries

LDD = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /x/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxkbcommon-x11.so.0 => /lib/x86_64-linux-gnu/libxkbcommon-x11.so.0 (0x00007f)
"""


def test_the_missing_libraries_and_their_packages_are_named():
    found = window_libraries.missing_from_ldd(LDD)
    assert found == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0"]
    assert [window_libraries.debian_package(s) for s in found] == ["libxcb-icccm4", "libxcb-keysyms1",
                                                                   "libxcb-cursor0"]
    assert window_libraries.debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    said = window_libraries.explain(found)
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0" in said


def test_the_app_says_so_and_exits_instead_of_aborting(monkeypatch, capsys):
    monkeypatch.setattr(window_libraries, "missing", lambda: ["libxcb-cursor.so.0"])
    assert app.main(["--demo"]) == 1
    err = capsys.readouterr().err
    assert "libxcb-cursor.so.0" in err and "sudo apt install libxcb-cursor0" in err


def test_a_plugin_that_fails_for_another_reason_is_left_to_qt(tmp_path, monkeypatch):
    fake = tmp_path / "libqxcb.so"
    fake.write_bytes(b"not an ELF file")
    assert window_libraries.missing(fake) == []
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert window_libraries.missing() == []                       # no X11 window: nothing to check
