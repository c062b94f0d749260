"""The version, in one place: the package, the CLI's --version, reports and the wheel (pyproject.toml reads it)."""

__version__ = "0.2.0"
