"""The commands on the whole store (status, export, import, backups, re-embedding, init),
built from their operations' descriptions (cli/ops.py)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from chitta import __version__
from chitta.cli.common import daemon_client, errors, settings_of
from chitta.cli.ops import op_command, run_op
from chitta.errors import ChittaError, ModelMismatch
from chitta.files import private_dir
from chitta.ops import OPERATIONS


def absolute(*names: str):
    """A ``prepare`` that makes the named path parameters absolute: the daemon's working
    folder is not the caller's."""

    def prepare(ctx: click.Context, params: dict[str, Any]) -> dict[str, Any]:
        for name in names:
            if params.get(name) not in (None, "-"):
                params[name] = str(Path(params[name]).expanduser().absolute())
        return params

    return prepare


def _export_output(data: dict[str, Any]) -> None:
    if "jsonl" in data:
        sys.stdout.write(data["jsonl"])
        sys.stdout.flush()
    summary = ", ".join(f"{v} {k}" for k, v in data["counts"].items())
    click.echo(f"exported {summary}", err=True)


def _import_source(ctx: click.Context, params: dict[str, Any]) -> dict[str, Any]:
    """The file to import: a path, or stdin spooled to an owner-only file the daemon can read
    (it may be larger than one request), removed when the command ends."""
    if params.get("path") != "-":
        return absolute("path")(ctx, params)
    home = settings_of(ctx).home
    private_dir(home)
    fd, spool = tempfile.mkstemp(prefix=".import-stdin-", suffix=".jsonl", dir=home)
    ctx.call_on_close(lambda: Path(spool).unlink(missing_ok=True))
    with os.fdopen(fd, "wb") as fh:
        while chunk := sys.stdin.buffer.read(1 << 20):
            fh.write(chunk)
    params["path"] = spool
    return params


def _import_report(data: dict[str, Any]) -> None:
    from chitta.cli.render import print_import_report
    from chitta.transfer import ImportReport

    got = data["imported"]
    print_import_report(ImportReport(
        memories=got["memories"], episodes=got["episodes"], triplets=got["triplets"],
        aliases=got["aliases"], skipped_existing=data["skipped_existing"],
        reembedded=data["reembedded"], errors=[(e["line"], e["error"]) for e in data["errors"]],
    ))  # fmt: skip


def _import_exit(data: dict[str, Any]) -> None:
    # Nothing usable in the file: that is bad input, not an import.
    if data["bad_lines"] and not any(data["imported"].values()):
        sys.exit(2)


def _restored(data: dict[str, Any]) -> None:
    if data["saved"] is None:
        click.echo(f"restored {data['path']} (there was no store before)")
    elif data.get("damaged"):
        click.echo(f"restored {data['path']}; the damaged store was kept as {data['saved']}")
    else:
        click.echo(f"restored {data['path']}; the previous contents are in {data['saved']}")


def _reembed_model(ctx: click.Context, params: dict[str, Any]) -> dict[str, Any]:
    """Through the daemon, re-embedding uses the daemon's model: refuse when this command is
    configured with another one (the user means to switch models)."""
    from chitta.embed.loader import DEFAULT_MODEL_NAME

    settings = settings_of(ctx)
    if settings.embed.backend != "onnx":
        return params
    wanted = settings.embed.model_dir.name if settings.embed.model_dir else DEFAULT_MODEL_NAME
    client = daemon_client(ctx)
    if client is None:
        return params
    with client:
        status = client.call("memory_status")
    running = status["model"]["name"]
    if running != wanted:
        raise ModelMismatch(
            f"the chitta daemon (pid {status['daemon']['pid']}) embeds with {running}, not "
            f"the configured {wanted}; stop it (kill -TERM {status['daemon']['pid']}) and run "
            "`chitta reembed` again to switch models"
        )
    return params


def _reembedded(data: dict[str, Any]) -> None:
    m = data["model"]
    click.echo(f"re-embedded {data['reembedded']} memories with {m['name']} (dim {m['dim']}, "
               f"{m['hash'][:12]})")  # fmt: skip


def _migrated(data: dict[str, Any]) -> None:
    from chitta.cli.render import print_migration_report

    print_migration_report(data)


def _migrate_exit(data: dict[str, Any]) -> None:
    if not data["complete"]:
        sys.exit(4)  # the destination lacks records of the source: as a store error does


def status_info(ctx: click.Context) -> dict[str, Any]:
    """What ``status`` shows: the store's figures (the daemon's too, when one serves it),
    or that it does not exist yet; and the realm this command's calls would use."""
    from chitta.daemon.client import daemon_answers

    settings = settings_of(ctx)
    absent = not settings.store_is_database and not settings.store_path.exists()
    if absent and not daemon_answers(settings.socket_path):
        from chitta.embed.loader import build_embedder

        identity = build_embedder(settings.embed).identity()
        info: dict[str, Any] = {"version": __version__, "store": settings.store_shown,
                                "exists": False, "model": identity.as_dict()}  # fmt: skip
    else:
        # Opened without the model check, so a mismatch is shown rather than refused.
        info = run_op(ctx, OPERATIONS["memory_status"], {}, check_model=False)
    info["realm"] = settings.realm.as_dict()
    return info


def register(group: click.Group) -> None:
    """Add the store commands to ``group``."""
    op_command(group, "export_memories", _export_output, name="export",
               prepare=absolute("path"))  # fmt: skip
    op_command(group, "import_memories", _import_report, name="import", prepare=_import_source,
               progress="bytes", finish=_import_exit)  # fmt: skip
    op_command(group, "backup", lambda d: click.echo(f"backed up {d['store']} to {d['path']}"),
               prepare=absolute("path"))  # fmt: skip
    op_command(group, "restore_backup", _restored, prepare=absolute("path"),
               progress="steps")  # fmt: skip
    op_command(group, "reembed", _reembedded, prepare=_reembed_model, progress="memories",
               check_model=False)  # fmt: skip
    op_command(group, "migrate", _migrated, progress="memories", finish=_migrate_exit)

    @group.command()
    @click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
    @click.pass_context
    def status(ctx: click.Context, as_json: bool) -> None:
        """Show the store, the model, the realm in use and what the store holds."""
        from chitta.cli.common import emit

        with errors(as_json):
            info = status_info(ctx)
            if as_json:
                emit(info)
            else:
                from chitta.cli.render import print_status

                print_status(info)

    @group.command()
    @click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
    @click.pass_context
    def init(ctx: click.Context, as_json: bool) -> None:
        """Create the store if needed, check the model end to end, and show the status."""
        from chitta.cli.common import emit, open_store
        from chitta.hooks.cli import setup_line

        with errors(as_json):
            from chitta.daemon.client import daemon_answers

            if not daemon_answers(settings_of(ctx).socket_path):
                with open_store(ctx) as chitta:  # creates the store
                    probe = chitta.embedder.embed(["chitta model check"]).vectors
                    if probe.shape != (1, chitta.embedder.identity().dim):
                        raise ChittaError(
                            "the embedding model returned a vector of the wrong shape"
                        )
            # else: the daemon that serves the store embedded with its model when it started.
            info = status_info(ctx)
            if as_json:
                emit(info)
                return
            from chitta.cli.render import print_status

            print_status(info)
            click.echo(
                "\nready. try:\n"
                '  chitta remember "We chose SQLite WAL because crash recovery comes free" '
                "--kind wisdom --realm demo\n"
                '  chitta recall "why not our own write-ahead log?" --realm demo\n'
                "\nto give Claude Code this memory (its hooks and the MCP server), run:\n"
                f"  {setup_line(ctx)}"
            )
