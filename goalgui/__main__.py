from goalgui.cli import main

raise SystemExit(main())
