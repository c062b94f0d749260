"""RAGEval Desktop: human-in-the-loop evaluation of RAG systems, in one local project file.

`import rageval_desktop as rv` gives the Python API (rageval_desktop/api.py, docs/api.md): rv.open, rv.create,
rv.demo, rv.Project and the typed errors. They load on first use, so importing the package stays instant (the
app and the CLI start from here).
"""

from __future__ import annotations

from rageval_desktop._version import __version__

TYPE_CHECKING = False       # not typing's: importing typing costs every start of the app and the CLI ~5 ms

_API = ("open", "create", "demo", "demo_files", "write_demo", "Project", "Metrics", "Comparison", "Gate", "GatePlan",
        "Decision", "RagevalError", "ProjectRefused", "ProjectExists", "ImportFailed", "NotFound", "WriteFailed",
        "JudgeConfigError", "UsageError", "JobStopped")
__all__ = ["__version__", *_API]

if TYPE_CHECKING:
    from typing import Any

    from rageval_desktop.api import (  # noqa: F401
        Comparison,
        Decision,
        Gate,
        GatePlan,
        ImportFailed,
        JobStopped,
        JudgeConfigError,
        Metrics,
        NotFound,
        Project,
        ProjectExists,
        ProjectRefused,
        RagevalError,
        UsageError,
        WriteFailed,
        create,
        demo,
        demo_files,
        open,
        write_demo,
    )


def __getattr__(name: str) -> Any:
    if name in _API:
        from rageval_desktop import api

        return getattr(api, name)
    raise AttributeError(f"module 'rageval_desktop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
