"""Where bundled resources and per-user files live."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path


def resources_dir() -> Path:
    """The resources: the copy a wheel or a bundle carries inside the package (rageval_desktop/resources, found with
    importlib.resources), else the checkout's top-level resources/ folder (source or editable install)."""
    packaged = Path(str(importlib.resources.files("rageval_desktop") / "resources"))
    if (packaged / "rubrics").is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "resources"
    if (checkout / "rubrics").is_dir():
        return checkout
    raise FileNotFoundError("the resources folder of RAGEval Desktop is missing (looked in "
                            f"{checkout} and {packaged}); reinstall the app")


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
