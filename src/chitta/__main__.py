"""``python -m chitta`` runs the command line."""

from chitta.cli import main

main()
