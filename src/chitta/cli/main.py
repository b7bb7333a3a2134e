"""The ``chitta`` command line: human-readable by default, ``--json`` for machines.

Settings are read once, in the group callback. Errors from chitta become one line on
stderr (``error: …``) and the error class's exit code; nothing is half-written.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from chitta import __version__
from chitta.cli.bench import bench
from chitta.cli.bench_abstain import abstain as _abstain  # noqa: F401 - registers `bench abstain`
from chitta.cli.bench_analogy import analogy as _analogy  # noqa: F401 - registers `bench analogy`
from chitta.cli.bench_cited import cited as _cited_bench  # noqa: F401 - registers `bench cited`
from chitta.cli.bench_confirm import confirm as _confirm  # noqa: F401 - registers `bench confirm`
from chitta.cli.bench_timecue import timecue as _timecue  # noqa: F401 - registers `bench timecue`
from chitta.cli.calibrate import calibrate
from chitta.cli.cited import cited_recall
from chitta.cli.common import JSON_OPT, SCOPE_HELP
from chitta.cli.common import daemon_client as _daemon
from chitta.cli.common import emit as _emit
from chitta.cli.common import errors as _errors
from chitta.cli.common import open_store as _open
from chitta.cli.common import settings_of as _settings
from chitta.cli.model import model
from chitta.cli.relations import analogy, triplet
from chitta.config import load_settings
from chitta.errors import BadArgument, ChittaError, StoreLocked
from chitta.hooks.cli import hook, hooks, setup, setup_line
from chitta.recall.config import FUSIONS, KNOWN_LANES, KNOWN_STAGES, PRESETS


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
        settings.store_path  # noqa: B018 - validates the store name now, not mid-command
        logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
        ctx.obj = settings


@main.command()
@click.argument("content")
@click.option("--kind", "-k", help="One of the 26 memory kinds (default: insight).")
@click.option("--realm", "-r", help=SCOPE_HELP)
@click.option("--agent", "agent_id", help="Agent id isolation axis.")
@click.option("--channel", help="Channel isolation axis.")
@click.option("--tags", "-t", help="Comma-separated tags, e.g. storage,decision.")
@click.option("--event-time", help="When it happened (ISO 8601), if not now.")
@click.option("--supersedes", help="Id of the memory this one replaces.")
@click.option("--confidence", type=float, help="Initial confidence in (0, 1); default 0.7.")
@click.option("--session", help="Source: the session it came from.")
@click.option("--file", "source_file", help="Source: the file it is about.")
@click.option("--url", help="Source: the URL it came from.")
@JSON_OPT
@click.pass_context
def remember(ctx: click.Context, content: str, as_json: bool, **opts: Any) -> None:
    """Store CONTENT as a memory ('-' reads it from stdin)."""
    from chitta.store.records import Source

    with _errors(as_json):
        text = sys.stdin.read() if content == "-" else content
        source = Source(session=opts.pop("session"), file=opts.pop("source_file"),
                        url=opts.pop("url"))  # fmt: skip
        client = _daemon(ctx)
        if client is not None:
            with client:
                done = client.call("remember", content=text, **source.as_dict(),
                                   **{k: v for k, v in opts.items() if v is not None})  # fmt: skip
            done.pop("ok", None)
        else:
            with _open(ctx) as chitta:
                result = chitta.remember(text, source=source, **opts)
            done = {"id": result.id, "deduplicated": result.deduplicated,
                    "similarity": result.similarity, "truncated": result.truncated,
                    "supersedes": result.supersedes}  # fmt: skip
        if as_json:
            _emit(done)
            return
        if done["deduplicated"]:
            click.echo(
                f"{done['id']}  (near-duplicate, cosine {done['similarity']}: reinforced the "
                "existing memory)"
            )
        else:
            click.echo(done["id"])
        if done["truncated"]:
            click.echo("note: only the first 256 tokens were embedded", err=True)


def _json_option(text: str | None, option: str) -> Any:
    """An option's JSON value (``None`` when not given), or an error naming the option."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadArgument(f"{option} is not JSON: {exc.msg} at character {exc.pos}") from None


@main.command()
@click.argument("query")
@click.option("--realm", "-r", help="Realm to search (default: default).")
@click.option("--agent", "agent_id", help="Only this agent's memories.")
@click.option("--channel", help="Only this channel's memories.")
@click.option("--limit", "-n", type=int, default=10, show_default=True)
@click.option("--strategy", "-s", default="hybrid", show_default=True,
              help=f"One of: {', '.join(PRESETS)} (field runs every lane).")  # fmt: skip
@click.option(
    "--ablate",
    help=f"Comma-separated lanes or stages to switch off: {', '.join(sorted(KNOWN_LANES))}; "
    f"{', '.join(sorted(KNOWN_STAGES))}.",
)
@click.option("--fusion", help=f"Fusion mode: {' or '.join(FUSIONS)} (default: the strategy's).")
@click.option("--cross-realm", is_flag=True, help="Also search the other realms (lane xr).")
@click.option("--disable-hdc", is_flag=True, help="Skip the hdc (sparse code) lane.")
@click.option("--include-superseded", is_flag=True, help="Also show replaced memories.")
@click.option("--session", help="The asking agent session; primes recall with what it "
              "stored lately (the ctx lane).")  # fmt: skip
@click.option("--trace", is_flag=True,
              help="Add the recall trace: every lane's candidates, fusion, gate, order (ids "
                   "and scores, no text); printed as JSON.")  # fmt: skip
@click.option("--no-rerank", "rerank", flag_value=False, default=True,
              help="Skip the cross-encoder stage (if one is set up).")  # fmt: skip
@click.option("--time-cue", help='Roughly when, as JSON: \'{"after": "2026-08-01", "before": '
              '"2026-08-31", "confidence": "likely"}\' (docs/time-cue.md).')  # fmt: skip
@JSON_OPT
@click.pass_context
def recall(ctx: click.Context, query: str, as_json: bool, ablate: str | None, **opts: Any) -> None:
    """Find the memories that best answer QUERY, with the lanes that found them, and the
    corrections it names."""
    from chitta.cli.render import print_hits
    from chitta.wire import result_to_dict

    with _errors(as_json):
        lanes = [x.strip() for x in ablate.split(",") if x.strip()] if ablate else []
        opts["time_cue"] = _json_option(opts["time_cue"], "--time-cue")
        client = _daemon(ctx)
        if client is not None:
            with client:
                data = client.call("recall", query=query, ablate=lanes, **opts)
        else:
            with _open(ctx, create=False) as chitta:
                data = result_to_dict(chitta.recall(query, ablate=lanes, **opts))
        if as_json:
            _emit(data)
        else:
            print_hits(data)
            if "trace" in data:
                click.echo(json.dumps({"trace": data["trace"]}, indent=1))


@main.command()
@click.argument("query")
@click.option("--realm", "-r", help="Realm to search (default: default).")
@click.option("--agent", "agent_id", help="Only this agent's memories.")
@click.option("--channel", help="Only this channel's memories.")
@click.option("--limit", "-n", type=int, default=10, show_default=True)
@click.option("--budget", type=int, default=2000, show_default=True,
              help="Characters of quotes, 100-100000.")  # fmt: skip
@click.option("--strategy", "-s", default="hybrid", show_default=True,
              help=f"One of: {', '.join(PRESETS)}.")  # fmt: skip
@click.option("--session", help="The asking agent session (primes the ctx lane).")
@click.option("--trace", is_flag=True, help="Add the trace (ids and scores, no text).")
@click.option("--time-cue", "time_cue", metavar="JSON",
              help="Roughly when, as for recall (docs/time-cue.md).")  # fmt: skip
@JSON_OPT
@click.pass_context
def reconstruct(ctx: click.Context, query: str, as_json: bool, **opts: Any) -> None:
    """Answer QUERY with items that quote the stored records behind them, within a budget."""
    from chitta.cli.render import print_reconstruction
    from chitta.wire import reconstruction_to_dict

    with _errors(as_json):
        opts["time_cue"] = _json_option(opts["time_cue"], "--time-cue")
        client = _daemon(ctx)
        if client is not None:
            with client:
                data = client.call("reconstruct", query=query, **opts)
        else:
            with _open(ctx, create=False) as chitta:
                data = reconstruction_to_dict(chitta.reconstruct(query, **opts))
        if as_json:
            _emit(data)
        else:
            print_reconstruction(data)
            if "trace" in data:
                click.echo(json.dumps({"trace": data["trace"]}, indent=1))


@main.command()
@click.option("--deadline", type=float, default=30.0, show_default=True,
              help="Seconds a request may run before its caller gets a timeout error.")  # fmt: skip
@click.pass_context
def serve(ctx: click.Context, deadline: float) -> None:
    """Serve the store over JSON-RPC on a Unix socket until SIGTERM or Ctrl-C.

    The socket is $CHITTA_HOME/chitta.sock unless CHITTA_SOCKET_PATH names another; the
    protocol is in docs/daemon.md.
    """
    import signal

    from chitta.api import Chitta
    from chitta.daemon.server import Daemon
    from chitta.errors import AlreadyRunning

    settings = _settings(ctx)
    with _errors():
        if deadline <= 0:
            raise BadArgument(f"--deadline must be positive, got {deadline}")
        try:
            chitta = Chitta.open(settings)
        except StoreLocked as exc:
            from chitta.daemon.client import daemon_answers

            if not daemon_answers(settings.socket_path):
                raise  # another command holds the store: not a daemon to connect to
            pid = f" (pid {exc.pid})" if exc.pid else ""
            where = settings.store_path
            raise AlreadyRunning(f"chitta is already running{pid} on {where}") from None
        try:
            daemon = Daemon(chitta, settings.socket_path, deadline_s=deadline)
        except BaseException:
            chitta.close()
            raise
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: daemon.stop())
        click.echo(f"chitta serve: listening on {settings.socket_path} (pid {os.getpid()})",
                   err=True)  # fmt: skip
        daemon.serve_forever()
        click.echo("chitta serve: stopped", err=True)


@main.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve MCP on stdio, forwarding every tool to the daemon (started if none answers).

    Register it with: claude mcp add chitta -- chitta mcp (see docs/mcp.md).
    """
    from chitta.mcp_server import run

    run(_settings(ctx))


@main.command()
@click.argument("memory_id")
@JSON_OPT
@click.pass_context
def show(ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """Show one memory with all its fields."""
    from chitta.transfer import memory_to_dict

    with _errors(as_json), _open(ctx, create=False) as chitta:
        data = memory_to_dict(chitta.get(memory_id, include_deleted=True))
        data.pop("type")
        if as_json:
            _emit({"memory": data})
        else:
            for key, value in data.items():
                click.echo(f"{key:>14}: {value}")


def _id_command(
    name: str, help_text: str, action: Callable[[Any, str], object], *, remote: bool = False
) -> None:
    """Register a command that applies ``action`` to each MEMORY_ID; with ``remote``, through
    the daemon's method of the same name when a daemon serves the store."""

    @main.command(name=name, help=help_text)
    @click.argument("memory_ids", nargs=-1, required=True)
    @JSON_OPT
    @click.pass_context
    def command(ctx: click.Context, memory_ids: tuple[str, ...], as_json: bool) -> None:
        with _errors(as_json):
            client = _daemon(ctx) if remote else None
            if client is not None:
                with client:
                    for memory_id in memory_ids:
                        client.call(name, id=memory_id)
            else:
                with _open(ctx, create=False) as chitta:
                    for memory_id in memory_ids:
                        action(chitta, memory_id)
            if as_json:
                _emit({name: list(memory_ids)})
            else:
                click.echo(f"{name}: {', '.join(memory_ids)}")


_id_command(
    "forget", "Forget memories (soft delete: `chitta restore` brings them back).",
    lambda c, i: c.forget(i), remote=True,
)  # fmt: skip
_id_command("restore", "Bring back forgotten memories.", lambda c, i: c.restore(i))
_id_command("purge", "Remove memories for good.", lambda c, i: c.purge(i))
_id_command(
    "strengthen", "Record evidence for memories (confidence and strength go up).",
    lambda c, i: c.strengthen(i), remote=True,
)  # fmt: skip
_id_command(
    "weaken", "Record evidence against memories (confidence and strength go down).",
    lambda c, i: c.weaken(i), remote=True,
)  # fmt: skip


@main.command()
@click.argument("old_id")
@click.argument("new_id")
@click.pass_context
def supersede(ctx: click.Context, old_id: str, new_id: str) -> None:
    """Record that NEW_ID replaces OLD_ID (recall then shows only the new one)."""
    with _errors(), _open(ctx, create=False) as chitta:
        chitta.supersede(old_id, new_id)
        click.echo(f"{new_id} supersedes {old_id}")


@main.command()
@JSON_OPT
@click.pass_context
def decay(ctx: click.Context, as_json: bool) -> None:
    """Apply each kind's decay rate for the time since the last decay."""
    with _errors(as_json), _open(ctx, create=False) as chitta:
        count = chitta.decay()
        if as_json:
            _emit({"decayed": count})
        else:
            click.echo(f"decayed {count} memories")


@main.command()
@click.option("--realm", "-r", help="Only this realm.")
@click.option("--embeddings", is_flag=True, help="Include vectors (base64 float32).")
@click.option("--include-deleted", is_flag=True, help="Include forgotten memories.")
@click.option("--output", "-o", type=click.Path(path_type=Path), help="File (default: stdout).")
@click.pass_context
def export(ctx: click.Context, output: Path | None, **opts: Any) -> None:
    """Write memories, episodes, triplets and entity aliases as JSONL."""
    from chitta.transfer import export_jsonl

    with _errors():
        client = _daemon(ctx)
        if client is not None:
            with client:
                done = client.call("export_memories", **opts)
            counts = done["counts"]
            if output is None:
                sys.stdout.write(done["jsonl"])
            else:
                output.write_text(done["jsonl"], encoding="utf-8")
        else:
            with _open(ctx, create=False) as chitta:
                if output is None:
                    counts = export_jsonl(chitta, sys.stdout, **opts)
                else:
                    with output.open("w", encoding="utf-8") as fh:
                        counts = export_jsonl(chitta, fh, **opts)
        summary = ", ".join(f"{v} {k}" for k, v in counts.items())
        click.echo(f"exported {summary}", err=True)


def _import_through(client: Any, path: Path, into: str | None) -> Any:
    """Import through the daemon: the whole file in one request, so it must fit in one."""
    from chitta.daemon.protocol import MAX_REQUEST_BYTES
    from chitta.transfer import ImportReport

    if str(path) == "-":
        text = sys.stdin.read()
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
    from chitta.daemon.protocol import request_line

    if len(request_line("import_memories", {"jsonl": text, "into": into}, 1)) > MAX_REQUEST_BYTES:
        raise BadArgument(
            f"{path} is too large to import through the daemon in one request (at most "
            f"{MAX_REQUEST_BYTES >> 20} MiB); stop the daemon and import it again"
        )
    done = client.call("import_memories", jsonl=text, into=into)
    return ImportReport(
        memories=done["imported"]["memories"], episodes=done["imported"]["episodes"],
        triplets=done["imported"]["triplets"], aliases=done["imported"]["aliases"],
        skipped_existing=done["skipped_existing"],
        reembedded=done["reembedded"], errors=[(e["line"], e["error"]) for e in done["errors"]],
    )  # fmt: skip


@main.command(name="import")
@click.argument("path", type=click.Path(path_type=Path, allow_dash=True))
@click.option("--into", help="Put everything into this realm, under new ids.")
@JSON_OPT
@click.pass_context
def import_(ctx: click.Context, path: Path, into: str | None, as_json: bool) -> None:
    """Read a JSONL export (PATH, or - for stdin); bad lines are reported and skipped."""
    from chitta.cli.render import import_progress, print_import_report
    from chitta.transfer import import_jsonl

    with _errors(as_json):
        if str(path) != "-" and not path.is_file():
            raise BadArgument(f"no file at {path}")
        client = _daemon(ctx)
        if client is not None:
            with client:
                report = _import_through(client, path, into)
        else:
            with _open(ctx) as chitta:
                if str(path) == "-":
                    report = import_jsonl(chitta, sys.stdin, into=into)
                else:
                    with (
                        path.open(encoding="utf-8", errors="replace") as fh,
                        import_progress(path, quiet=as_json) as advance,
                    ):
                        report = import_jsonl(chitta, fh, into=into, progress=advance)
        if as_json:
            _emit(report.as_dict())
        else:
            print_import_report(report)
        imported = report.memories or report.episodes or report.triplets or report.aliases
        if report.bad_lines and not imported:
            sys.exit(2)


@main.command()
@JSON_OPT
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the store, the model and what the store holds."""
    from chitta.cli.render import print_status

    with _errors(as_json):
        settings = _settings(ctx)
        if not settings.store_path.exists():
            from chitta.embed.loader import build_embedder

            identity = build_embedder(settings.embed).identity()
            info: dict[str, Any] = {
                "version": __version__,
                "store": str(settings.store_path),
                "exists": False,
                "model": identity.as_dict(),
            }
        elif (client := _daemon(ctx)) is not None:
            with client:
                info = {"exists": True, **client.call("memory_status")}
            info.pop("ok", None)
        else:
            # Opened without the model check, so a mismatch is shown rather than refused.
            with _open(ctx, create=False, check_model=False) as chitta:
                info = {"exists": True, **chitta.status()}
        if as_json:
            _emit(info)
        else:
            print_status(info)


@main.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the store if needed, check the model end to end, and show the status."""
    from chitta.cli.render import print_status

    with _errors(), _open(ctx) as chitta:
        probe = chitta.embedder.embed(["chitta model check"]).vectors
        if probe.shape != (1, chitta.embedder.identity().dim):
            raise ChittaError("the embedding model returned a vector of the wrong shape")
        print_status({"exists": True, **chitta.status()})
        click.echo(
            "\nready. try:\n"
            '  chitta remember "We chose SQLite WAL because crash recovery comes free" '
            "--kind wisdom --realm demo\n"
            '  chitta recall "why not our own write-ahead log?" --realm demo\n'
            "\nto give Claude Code this memory (its hooks and the MCP server), run:\n"
            f"  {setup_line(ctx)}"
        )


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.pass_context
def backup(ctx: click.Context, path: Path) -> None:
    """Copy the live store to PATH (SQLite online backup)."""
    with _errors(), _open(ctx, create=False) as chitta:
        chitta.backup(path)
        click.echo(f"backed up {chitta.store.path} to {path}")


@main.command(name="restore-backup")
@click.argument("path", type=click.Path(path_type=Path))
@click.pass_context
def restore_backup(ctx: click.Context, path: Path) -> None:
    """Replace the store's contents with the backup at PATH (the old contents are kept)."""
    from chitta.store.sqlite import Store

    with _errors():
        with Store(_settings(ctx).store_path) as store:
            saved = store.restore_from(path)
        click.echo(f"restored {path}; the previous contents are in {saved}")


@main.command()
@click.pass_context
def reembed(ctx: click.Context) -> None:
    """Re-embed every memory with the configured model (after changing models)."""
    with _errors(), _open(ctx, create=False, check_model=False) as chitta:
        count = chitta.reembed()
        click.echo(f"re-embedded {count} memories with {chitta.embedder.identity().describe()}")


main.add_command(model)
main.add_command(calibrate)
main.add_command(cited_recall)
main.add_command(bench)
main.add_command(triplet)
main.add_command(analogy)
main.add_command(hook)
main.add_command(hooks)
main.add_command(setup)
