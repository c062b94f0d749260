"""Where bundled resources and per-user files live."""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from rageval_desktop.core.base.errors import RagevalError


def resources_dir() -> Path:
    """The resources: the copy a wheel or a bundle carries inside the package (rageval_desktop/resources, found
    beside the modules, or with importlib.resources where they are not files), else the checkout's top-level
    resources/ folder (source or editable install)."""
    here = Path(__file__).resolve()
    # the package's copy (importlib.resources' answer when modules are files), then the checkout's
    for found in (here.parents[2] / "resources", here.parents[3] / "resources"):
        if (found / "rubrics").is_dir():
            return found
    import importlib.resources  # (2 ms before the first paint: only where modules are not plain files)

    packaged = Path(str(importlib.resources.files("rageval_desktop") / "resources"))
    if (packaged / "rubrics").is_dir():
        return packaged
    checkout = here.parents[3] / "resources"
    raise FileNotFoundError("the resources folder of RAGEval Desktop is missing (looked in "
                            f"{checkout} and {packaged}); reinstall the app")


APP = "rageval-desktop"


def _user_dir(kind: str, xdg: str, default: str, legacy: tuple[str, ...] = ()) -> Path:
    """`_found`, once a process for the environment that names it (the settings are read three times before the
    first window is painted: 2 ms each)."""
    path = _found(kind, xdg, default, legacy, os.environ.get("RAGEVAL_DATA_DIR"), os.environ.get(xdg),
                  os.environ.get("HOME"))
    path.mkdir(parents=True, exist_ok=True)      # (removed meanwhile: made again)
    return path


@functools.cache
def _found(kind: str, xdg: str, default: str, legacy: tuple[str, ...], *environment: str | None) -> Path:
    """One of the user's folders, where the operating system keeps them (platformdirs: the XDG base-directory spec on
    Linux, `~/Library/Application Support` on macOS, `%LOCALAPPDATA%` on Windows — it was XDG's on every OS);
    RAGEVAL_DATA_DIR (tests, portable installs) holds them all. `legacy`: files an earlier release kept elsewhere (the
    data folder, or XDG's folder on macOS and Windows), copied here once if not here yet (never moved)."""
    import platformdirs

    data = os.environ.get("RAGEVAL_DATA_DIR")
    path = Path(data) if data else Path(getattr(platformdirs, f"user_{kind}_dir")(APP, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    if legacy and not data:
        earlier = [Path(platformdirs.user_data_dir(APP, appauthor=False)),
                   Path(os.environ.get(xdg) or str(Path.home() / default)) / APP]
        for old in earlier:
            for name in legacy:
                if old != path and (old / name).is_file() and not (path / name).exists():
                    shutil.copy2(old / name, path / name)
    return path


def user_data_dir() -> Path:
    """Per-user data: the demo project, signing keys ($XDG_DATA_HOME, ~/.local/share)."""
    return _user_dir("data", "XDG_DATA_HOME", ".local/share")


def user_config_dir() -> Path:
    """Per-user settings: preferences, recent projects, registered local models ($XDG_CONFIG_HOME, ~/.config)."""
    return _user_dir("config", "XDG_CONFIG_HOME", ".config", legacy=("settings.ini", "models.json"))


def user_state_dir() -> Path:
    """Per-user state worth keeping but not backing up: which files were checked read-only ($XDG_STATE_HOME,
    ~/.local/state)."""
    return _user_dir("state", "XDG_STATE_HOME", ".local/state", legacy=("read-only-checks.json",))


def read_small_text(path: str | Path, what: str, max_bytes: int = 16 * 1024 * 1024) -> str:
    """A small text file a user names (a decision record, an allowed-signers list): a regular file — never a pipe
    or a device, which would block for ever — of at most `max_bytes`, in UTF-8. Anything else is a RagevalError
    that names the file and says why."""
    path = Path(path)
    try:
        if not path.is_file():
            raise RagevalError(f"cannot read {what} {path}: " + ("not found" if not path.exists() else
                                                                   "not a regular file (a folder, a pipe or a device)"))
        size = path.stat().st_size
        if size > max_bytes:
            raise RagevalError(f"cannot read {what} {path}: {size / 2**20:.1f} MiB, more than such a file holds "
                               f"({max_bytes / 2**20:.0f} MiB)")
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise RagevalError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RagevalError(f"cannot read {what} {path}: it is not UTF-8 text") from None
