"""``python -m evalcore``: see :mod:`evalcore.cli`."""

from evalcore.cli import main

raise SystemExit(main())
