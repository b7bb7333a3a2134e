"""Where chitta keeps its files by default, with no other chitta module needed: the settings
(config.py) and a database store's folder for its local files (store/postgres) both use it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

#: The variables naming the home, in order: chitta's, then the original's legacy name.
HOME_VARIABLES = ("CHITTA_HOME", "CC_SOUL_HOME")


def default_home(environ: Mapping[str, str]) -> Path:
    """The data directory: ``$CHITTA_HOME`` or ``$XDG_DATA_HOME/chitta`` (``~/.local/share``)."""
    explicit = next((environ[v] for v in HOME_VARIABLES if environ.get(v)), None)
    if explicit:
        return Path(explicit).expanduser()
    xdg = environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "chitta"
