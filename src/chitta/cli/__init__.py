"""The ``chitta`` command line (cli/main.py builds it; the other modules are its commands)."""

from chitta.cli.main import main

__all__ = ["main"]
