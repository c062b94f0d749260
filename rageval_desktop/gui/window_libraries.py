"""The system libraries a real window needs, said before Qt aborts without them (issue 76: on a fresh Debian the app
died with rc 134 and Qt's "could not load the Qt platform plugin xcb"; the README named none of them).

Qt loads its xcb platform plugin when the application is made; a library the plugin links against that is not
installed makes Qt abort the process, which nothing can catch. So the plugin is loaded first, here (what Qt loads
next costs nothing more): when that fails for a missing library, `ldd` lists every one missing, and the app says which
Debian/Ubuntu packages bring them and exits with 1.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

_SONAME = re.compile(r"(lib[\w.+-]+\.so(?:\.\d+)*)")


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package that usually ships a library: libxcb-icccm.so.4 -> libxcb-icccm4,
    libxkbcommon-x11.so.0 -> libxkbcommon-x11-0 (Debian's rule: a '-' before the version when the name ends in a
    digit)."""
    name, _, version = soname.partition(".so")
    version = version.lstrip(".").split(".")[0]
    return f"{name}{'-' if name[-1:].isdigit() else ''}{version}" if version else name


def missing_from_ldd(text: str) -> list[str]:
    """The libraries `ldd` reports as not found."""
    return list(dict.fromkeys(line.split("=>")[0].strip() for line in text.splitlines()
                              if "not found" in line and "=>" in line))


def missing(plugin: Path | None = None) -> list[str]:
    """The libraries the xcb plugin needs that this system lacks ([] when it has them, when the window will not be an
    X11 one — offscreen, Wayland, not Linux — or when the plugin cannot be found or fails for another reason, which Qt
    then reports itself)."""
    if plugin is None:
        if not sys.platform.startswith("linux"):
            return []
        if os.environ.get("QT_QPA_PLATFORM", "xcb").split(":")[0] not in ("", "xcb"):
            return []
        from PySide6.QtCore import QLibraryInfo

        plugin = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms" / "libqxcb.so"
    if not plugin.is_file():
        return []
    import ctypes  # (only where the xcb plugin is loaded: 2.7 ms of every other start)

    try:
        ctypes.CDLL(str(plugin), mode=os.RTLD_LAZY)
        return []
    except OSError as exc:
        said = str(exc)
    if "cannot open shared object file" not in said:
        return []
    import subprocess  # (only when a library is missing: 3.6 ms of every start otherwise)

    first = [m for m in _SONAME.findall(said) if Path(m).name != plugin.name][:1]
    try:
        listed = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        listed = ""
    return missing_from_ldd(listed) or first


def explain(libraries: list[str]) -> str:
    packages = " ".join(dict.fromkeys(debian_package(lib) for lib in libraries))
    return (f"error: a window needs system libraries this computer does not have: {', '.join(libraries)}. On Debian "
            f"or Ubuntu: sudo apt install {packages} (the README's Install section lists every library a window "
            "needs). The command line, rageval, needs none of them.")
