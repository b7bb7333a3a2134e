"""The ``chitta`` command line: human-readable by default, ``--json`` for machines.

Settings are read once, in the group callback. Errors from chitta become one line on
stderr (``error: …``) and the error class's exit code; nothing is half-written.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from chitta import __version__
from chitta.cli import calibrate, cited, relations
from chitta.cli import code as code_commands
from chitta.cli import memory as memory_commands
from chitta.cli import store as store_commands
from chitta.cli.bench import bench
from chitta.cli.bench_abstain import abstain as _abstain  # noqa: F401 - registers `bench abstain`
from chitta.cli.bench_agent_day import agent_day as _agent_day  # noqa: F401 - `bench agent-day`
from chitta.cli.bench_analogy import analogy as _analogy  # noqa: F401 - registers `bench analogy`
from chitta.cli.bench_cited import cited as _cited_bench  # noqa: F401 - registers `bench cited`
from chitta.cli.bench_cli import cli as _cli_bench  # noqa: F401 - registers `bench cli`
from chitta.cli.bench_code import code_bench as _code_bench  # noqa: F401 - `bench code`
from chitta.cli.bench_confirm import confirm as _confirm  # noqa: F401 - registers `bench confirm`
from chitta.cli.bench_daemons import daemons as _daemons  # noqa: F401 - `bench daemons`
from chitta.cli.bench_learn import learn as _learn  # noqa: F401 - registers `bench learn`
from chitta.cli.bench_mcp_size import mcp_size as _mcp_size  # noqa: F401 - `bench mcp-size`
from chitta.cli.bench_soak import soak as _soak  # noqa: F401 - registers `bench soak`
from chitta.cli.bench_timecue import timecue as _timecue  # noqa: F401 - registers `bench timecue`
from chitta.cli.common import errors as _errors
from chitta.cli.common import guard_stdout
from chitta.cli.common import settings_of as _settings
from chitta.cli.model import model
from chitta.config import Settings, load_settings
from chitta.errors import BadArgument
from chitta.hooks.cli import hook, hooks, setup
from chitta.scope import RealmChoice


class ChittaGroup(click.Group):
    """The ``chitta`` group: stdout that cannot be written is ``write_failed`` (exit 4) in
    every command, its help and its version, never a traceback."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        guard_stdout()
        with _errors():
            try:
                return super().main(*args, **kwargs)
            finally:
                sys.stdout.flush()  # now, so a failure is said (not Python's at exit)


@click.group(cls=ChittaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="chitta")
@click.option("--home", type=click.Path(path_type=Path), help="Data directory (CHITTA_HOME).")
@click.option("--store", "store_name", help="Store name under the home (CHITTA_STORE).")
@click.pass_context
def main(ctx: click.Context, home: Path | None, store_name: str | None) -> None:
    """chitta: long-term memory for AI agents. Remember what you learn; recall it honestly."""
    if ctx.invoked_subcommand == "hook":
        # A hook must never fail the user's turn: it reads its settings inside its own guard.
        ctx.meta["chitta.overrides"] = {"home": home, "store": store_name}
        return
    with _errors():
        settings = load_settings()
        if home is not None:
            settings = replace(settings, home=home)
        if store_name is not None:
            settings = replace(settings, store=store_name)
        settings.store_location  # noqa: B018 - validates the store name now, not mid-command
        logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
        ctx.obj = settings


@main.command()
@click.option("--deadline", type=float, default=30.0, show_default=True,
              help="Seconds a request may run before its caller gets a timeout error.")  # fmt: skip
@click.option("--idle-exit", "idle_exit", type=click.IntRange(min=0), default=0,
              metavar="SECONDS", show_default=True,
              help="Stop after SECONDS without a request (0: never).")  # fmt: skip
@click.option("--max-connections", "max_connections", type=click.IntRange(1, 65_536),
              default=None, metavar="N",
              help="Connections open at once; one more is told the daemon is busy "
                   "[default: $CHITTA_DAEMON_MAX_CONNECTIONS or 128].")  # fmt: skip
@click.option("--connection-idle", "connection_idle", type=click.IntRange(1, 86_400),
              default=None, metavar="SECONDS",
              help="Close a connection that sends no complete request line for SECONDS "
                   "[default: $CHITTA_DAEMON_CONNECTION_IDLE_S or 60].")  # fmt: skip
@click.option("--workers", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Worker threads at most [default: $CHITTA_DAEMON_WORKERS or 16].")  # fmt: skip
@click.option("--upkeep/--no-upkeep", "upkeep_on", default=True,
              help="Run background upkeep: decay, tier demotion, hygiene "
                   "[default: on unless CHITTA_UPKEEP=0; docs/daemon.md].")  # fmt: skip
@click.option("--http", "http", default=None, metavar="HOST:PORT",
              help="Also serve the REST API, MCP over HTTP and the memory browser here "
                   "(loopback, e.g. 127.0.0.1:8765; another address needs --tls-cert and "
                   "--tls-key). Every request needs the token `chitta http-token` prints "
                   "(docs/http.md).")  # fmt: skip
@click.option("--tls-cert", "tls_cert", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="The HTTP face's TLS certificate (PEM).")  # fmt: skip
@click.option("--tls-key", "tls_key", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="The HTTP face's TLS private key (PEM).")  # fmt: skip
@click.pass_context
def serve(ctx: click.Context, deadline: float, idle_exit: int, max_connections: int | None,
          connection_idle: int | None, workers: int | None, upkeep_on: bool,
          http: str | None, tls_cert: Path | None, tls_key: Path | None) -> None:  # fmt: skip
    """Serve the store over JSON-RPC on a Unix socket until SIGTERM or Ctrl-C (or --idle-exit).

    The socket is $CHITTA_HOME/chitta.sock unless CHITTA_SOCKET_PATH names another; the
    protocol is in docs/daemon.md.
    """
    import signal

    from chitta.daemon.memory import limit_arenas

    limit_arenas()  # before numpy's, the model's and the workers' threads (daemon/memory.py)

    from chitta.api import Chitta
    from chitta.daemon.server import Daemon, Limits
    from chitta.errors import AlreadyRunning, StoreLocked

    settings = _settings(ctx)
    with _errors():
        if deadline <= 0:
            raise BadArgument(f"--deadline must be positive, got {deadline}")
        if (tls_cert is None) != (tls_key is None):
            raise BadArgument("--tls-cert and --tls-key go together")
        if tls_cert is not None and http is None:
            raise BadArgument("--tls-cert and --tls-key are for --http")
        # The address, the token and the certificate are checked and the port bound before
        # the store opens: a port in use fails the start with nothing else begun.
        face, token = (None, "") if http is None else _http_face(settings, http, tls_cert, tls_key)
        try:
            # The daemon serves every client; each names its realm (chitta's own always do),
            # and a request that names none is about realm default.
            chitta = Chitta.open(replace(settings, realm=RealmChoice()), through_daemon=False)
        except StoreLocked as exc:
            from chitta.daemon.client import daemon_answers

            if face is not None:
                face.stop()
            if not daemon_answers(settings.socket_path):
                raise  # another command holds the store: not a daemon to connect to
            pid = f" (pid {exc.pid})" if exc.pid else ""
            where = settings.store_shown
            raise AlreadyRunning(f"chitta is already running{pid} on {where}") from None
        try:
            limits = Limits(max_connections=max_connections or settings.daemon_max_connections,
                            connection_idle_s=connection_idle or settings.daemon_connection_idle_s,
                            workers=workers or settings.daemon_workers)  # fmt: skip
            upkeep = settings.upkeep if upkeep_on else replace(settings.upkeep, enabled=False)
            daemon = Daemon(chitta, settings.socket_path, deadline_s=deadline, limits=limits,
                            idle_exit_s=idle_exit, upkeep=upkeep)  # fmt: skip
        except BaseException:
            chitta.close()
            if face is not None:
                face.stop()
            raise
        if face is not None:
            from chitta.http.app import build_app

            # Over HTTP, as over the socket, a call that names no realm is about realm
            # default: the clients are not in the daemon's working directory.
            face.start(build_app(daemon.dispatch, token=token, address=face.address,
                                 settings=replace(settings, realm=RealmChoice())))  # fmt: skip
            daemon.http_url = face.address.url
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: daemon.stop())
        click.echo(f"chitta serve: listening on {settings.socket_path} (pid {os.getpid()})",
                   err=True)  # fmt: skip
        if face is not None:
            click.echo(f"chitta serve: HTTP on {face.address.url} (the token: chitta "
                       "http-token)", err=True)  # fmt: skip
        try:
            daemon.serve_forever()
        finally:
            if face is not None:
                face.stop()
        why = f" {daemon.stopped_because}" if daemon.stopped_because else ""
        click.echo(f"chitta serve: stopped{why}", err=True)


def _http_face(
    settings: Settings, http: str, cert: Path | None, key: Path | None
) -> tuple[Any, str]:
    """The daemon's HTTP face (chitta/http/), bound and checked, not yet serving, and its
    token (made now, owner-only, if there is none)."""
    from chitta.http.app import Address, HttpFace, parse_address
    from chitta.http.token import read_token

    host, port = parse_address(http, tls=cert is not None)
    token = read_token(settings.home)
    return HttpFace(Address(host, port, cert is not None), cert=cert, key=key), token


@main.command("http-token")
@click.option("--new", is_flag=True, help="Replace the token (every client needs the new one).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.pass_context
def http_token(ctx: click.Context, new: bool, as_json: bool) -> None:
    """Print the HTTP face's access token (made, owner-only, on first use).

    `chitta serve --http` needs every request to carry it: `Authorization: Bearer TOKEN`, or
    given once on the browser's login page (docs/http.md). A daemon reads it when it starts:
    restart it after --new.
    """
    import json

    from chitta.http.token import read_token, token_path

    with _errors(as_json):
        home = _settings(ctx).home
        token = read_token(home, new=new)
        if as_json:
            click.echo(json.dumps({"ok": True, "token": token, "file": str(token_path(home))}))
        else:
            click.echo(token)


@main.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve MCP on stdio, forwarding every tool to the daemon (started if none answers).

    `chitta setup claude` registers it with Claude Code (see docs/mcp.md).
    """
    from chitta.mcp.server import run

    run(_settings(ctx))


memory_commands.register(main)
store_commands.register(main)
calibrate.register(main)
cited.register(main)
relations.register(main)
code_commands.register(main)
main.add_command(model)
main.add_command(bench)
main.add_command(hook)
main.add_command(hooks)
main.add_command(setup)
