"""``python -m evalcore``: see :mod:`evalcore.workflow.cli`."""

from evalcore.workflow.cli import entry

entry()
