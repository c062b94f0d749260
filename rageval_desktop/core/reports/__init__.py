"""Reports built from core data (never from widgets), so the CLI and the GUI write the same file."""

from rageval_desktop.core.reports.write import FORMATS, write_report

__all__ = ["FORMATS", "write_report"]
