"""Importers: files (CSV, JSONL, JSON, Parquet, XLSX) in several layouts, all-or-nothing."""

from rageval_desktop.core.importers.common import ImportReport
from rageval_desktop.core.importers.corpus_import import import_corpus
from rageval_desktop.core.importers.golden_import import import_golden
from rageval_desktop.core.importers.layouts import parse_mapping
from rageval_desktop.core.importers.ratings_import import RatingsImport, import_ratings
from rageval_desktop.core.importers.run_import import import_run

__all__ = ["ImportReport", "RatingsImport", "import_corpus", "import_golden", "import_ratings", "import_run",
           "parse_mapping"]
