"""``python -m evalcore``: see :mod:`evalcore.cli`."""

from evalcore.cli import entry

entry()
