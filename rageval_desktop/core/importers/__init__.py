"""Importers: files (CSV, JSONL, JSON, Parquet, XLSX) in several layouts, all-or-nothing.

The names below load with their module on first use: the import's reader process (`reader_process`, started for
every large file) needs only the readers, not every importer and what they import."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rageval_desktop.core.importers.common import ImportReport
    from rageval_desktop.core.importers.corpus_import import import_corpus
    from rageval_desktop.core.importers.golden_import import import_golden
    from rageval_desktop.core.importers.layouts import parse_mapping
    from rageval_desktop.core.importers.ratings_import import RatingsImport, import_ratings
    from rageval_desktop.core.importers.run_import import import_run

_HOMES = {"ImportReport": "common", "import_corpus": "corpus_import", "import_golden": "golden_import",
          "parse_mapping": "layouts", "RatingsImport": "ratings_import", "import_ratings": "ratings_import",
          "import_run": "run_import"}

__all__ = ["ImportReport", "RatingsImport", "import_corpus", "import_golden", "import_ratings", "import_run",
           "parse_mapping"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
