"""The project file: schema, migrations, connections (one writer lane), backups.

Its modules are imported by name (`rageval_desktop.core.store.project`); importing one of them, say `changes`, does
not load the rest (the app's first window comes before any project is opened)."""
