"""Entry point of the packaged app (PyInstaller)."""

from rageval_desktop.gui.app import main

raise SystemExit(main())
