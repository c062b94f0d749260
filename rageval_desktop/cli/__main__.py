"""`python -m rageval_desktop.cli`."""

from rageval_desktop.cli import main

raise SystemExit(main())
