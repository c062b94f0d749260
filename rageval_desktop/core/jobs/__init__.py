"""Background work as plain functions that take a TaskContext (progress + cancel); Qt only adapts it."""

from rageval_desktop.core.base.context import Cancelled, TaskContext

__all__ = ["Cancelled", "TaskContext"]
