"""``python -m rankproof`` runs the command line, then ends the process with its status."""

from rankproof.cli import entry

entry()
