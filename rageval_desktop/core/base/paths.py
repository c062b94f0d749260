"""Where bundled resources and per-user files live."""

from __future__ import annotations

import os
from pathlib import Path


def resources_dir() -> Path:
    """The repository's resources/ folder (source checkout or editable install) or the packaged copy."""
    here = Path(__file__).resolve().parents[2]   # rageval_desktop/
    for candidate in (here.parent / "resources", here / "resources"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the resources folder of RAGEval Desktop is missing; reinstall the app")


def user_data_dir() -> Path:
    """Per-user data (the demo project, recent files). XDG on Linux; overridable for tests."""
    override = os.environ.get("RAGEVAL_DATA_DIR")
    if override:
        path = Path(override)
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = Path(base) / "rageval-desktop"
    path.mkdir(parents=True, exist_ok=True)
    return path
