from jacbench.cli import main

raise SystemExit(main())
