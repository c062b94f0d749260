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
# written out (not built from _API): a user's type checker reads it to know what the package exports (a test holds
# the two equal)
__all__ = ["__version__", "open", "create", "demo", "demo_files", "write_demo", "Project", "Metrics", "Comparison",
           "Gate", "GatePlan", "Decision", "RagevalError", "ProjectRefused", "ProjectExists", "ImportFailed",
           "NotFound", "WriteFailed", "JudgeConfigError", "UsageError", "JobStopped"]

if TYPE_CHECKING:
    from typing import Any

    from rageval_desktop.api import Comparison as Comparison
    from rageval_desktop.api import Decision as Decision
    from rageval_desktop.api import Gate as Gate
    from rageval_desktop.api import GatePlan as GatePlan
    from rageval_desktop.api import ImportFailed as ImportFailed
    from rageval_desktop.api import JobStopped as JobStopped
    from rageval_desktop.api import JudgeConfigError as JudgeConfigError
    from rageval_desktop.api import Metrics as Metrics
    from rageval_desktop.api import NotFound as NotFound
    from rageval_desktop.api import Project as Project
    from rageval_desktop.api import ProjectExists as ProjectExists
    from rageval_desktop.api import ProjectRefused as ProjectRefused
    from rageval_desktop.api import RagevalError as RagevalError
    from rageval_desktop.api import UsageError as UsageError
    from rageval_desktop.api import WriteFailed as WriteFailed
    from rageval_desktop.api import create as create
    from rageval_desktop.api import demo as demo
    from rageval_desktop.api import demo_files as demo_files
    from rageval_desktop.api import open as open  # noqa: A004
    from rageval_desktop.api import write_demo as write_demo


def __getattr__(name: str) -> Any:
    if name in _API:
        from rageval_desktop import api

        return getattr(api, name)
    raise AttributeError(f"module 'rageval_desktop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
