"""What every command shares at the CLI's edge: settings, the daemon or the store, and the
one way errors become a message and an exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from chitta.config import Settings, load_settings
from chitta.errors import ChittaError, StoreLocked

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
SCOPE_HELP = "Realm (project) the memory belongs to."


def emit(data: dict[str, Any]) -> None:
    click.echo(json.dumps({"ok": True, **data}, ensure_ascii=False, indent=None))


def fail(exc: ChittaError, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"ok": False, "error": exc.code, "message": str(exc)}))
    else:
        click.echo(f"error: {exc}", err=True)
    sys.exit(exc.exit_code)


@contextmanager
def errors(as_json: bool = False) -> Iterator[None]:
    """Turn chitta's errors into a message and an exit code at this edge."""
    try:
        yield
    except ChittaError as exc:
        fail(exc, as_json)


def settings_of(ctx: click.Context) -> Settings:
    return ctx.find_object(Settings) or load_settings()


def daemon_client(ctx: click.Context):
    """A client of this store's daemon when one answers on its socket, else None (the
    command then opens the store in-process)."""
    from chitta.daemon.client import DaemonClient, daemon_answers

    path = settings_of(ctx).socket_path
    return DaemonClient(path) if daemon_answers(path) else None


@contextmanager
def open_store(ctx: click.Context, *, create: bool = True, check_model: bool = True):
    from chitta.api import Chitta

    settings = settings_of(ctx)
    try:
        chitta = Chitta.open(settings, create=create, check_model=check_model)
    except StoreLocked as exc:
        from chitta.daemon.client import daemon_answers

        if not daemon_answers(settings.socket_path):
            raise
        # The daemon holds the store; this command has no daemon method (yet) to go through.
        raise StoreLocked(
            f"the chitta daemon (pid {exc.pid}) serves this store, and this command does not go "
            f"through it yet; stop the daemon first (kill -TERM {exc.pid}) and run it again",
            pid=exc.pid,
        ) from None
    try:
        yield chitta
    finally:
        chitta.close()
