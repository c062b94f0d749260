from rageval_desktop.cli import main

raise SystemExit(main())
