"""``python -m rankproof`` runs the command line."""

from rankproof.cli import main

main()
