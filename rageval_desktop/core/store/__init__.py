"""The project file: schema, migrations, connections (one writer lane), backups."""

from rageval_desktop.core.store.project import APPLICATION_ID, SCHEMA_VERSION, Project

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "Project"]
