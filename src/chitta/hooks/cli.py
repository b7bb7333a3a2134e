"""The ``chitta hook …``, ``chitta hooks install`` and ``chitta setup claude`` commands (click,
nothing heavy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import click

from chitta.errors import ChittaError


@click.group()
def hook() -> None:
    """Claude Code hooks: read the event on stdin, print context, always exit 0."""


def _overrides(ctx: click.Context) -> dict:
    # --home/--store of the main group, kept for the hook to apply inside its own guard.
    return ctx.find_root().meta.get("chitta.overrides", {})


@hook.command()
@click.pass_context
def prompt(ctx: click.Context) -> None:
    """UserPromptSubmit: recall lanes in parallel under CHITTA_HOOK_BUDGET_MS."""
    from chitta.hooks.prompt import prompt_hook
    from chitta.hooks.run import run_hook

    run_hook("prompt", prompt_hook, _overrides(ctx))


@hook.command(name="session-start")
@click.pass_context
def session_start(ctx: click.Context) -> None:
    """SessionStart: the realm's standing corrections and preferences."""
    from chitta.hooks.run import run_hook
    from chitta.hooks.session_start import session_start_hook

    run_hook("session-start", session_start_hook, _overrides(ctx))


@hook.command()
@click.pass_context
def stop(ctx: click.Context) -> None:
    """Stop: record the turn that just ended as an episode."""
    from chitta.hooks.run import run_hook
    from chitta.hooks.stop import stop_hook

    run_hook("stop", stop_hook, _overrides(ctx), needs_daemon=False)


@hook.command(name="post-edit")
@click.pass_context
def post_edit(ctx: click.Context) -> None:
    """PostToolUse (Edit, Write, MultiEdit): re-index the edited file in the daemon."""
    from chitta.hooks.post_edit import post_edit_hook
    from chitta.hooks.run import run_hook

    run_hook("post-edit", post_edit_hook, _overrides(ctx), needs_daemon=False)


def _global_args(ctx: click.Context) -> list[str]:
    """The --home/--store the user gave the main group (the defaults are not written)."""
    from chitta.hooks.install import global_args

    params = ctx.find_root().params
    return global_args(params.get("home"), params.get("store_name"))


def _fail(exc: Exception, path: Path | None = None, as_json: bool = False) -> NoReturn:
    """Exit with chitta's code for ``exc`` (2 for a bad file, 4 for one that cannot be read
    or written)."""
    if isinstance(exc, ChittaError):
        code, message, exit_code = exc.code, str(exc), exc.exit_code
    else:
        where = getattr(exc, "filename", None) or path
        reason = getattr(exc, "strerror", None) or exc
        code, message, exit_code = "io_error", f"cannot read or write {where}: {reason}", 4
    if as_json:
        click.echo(json.dumps({"ok": False, "error": code, "message": message}))
    else:
        click.echo(f"error: {message}", err=True)
    raise SystemExit(exit_code) from None


def setup_line(ctx: click.Context) -> str:
    """The exact ``chitta setup claude`` command for this install and these --home/--store."""
    import shlex

    from chitta.hooks.install import chitta_argv

    return shlex.join([*chitta_argv(), *_global_args(ctx), "setup", "claude"])


@click.group()
def hooks() -> None:
    """Set up the Claude Code hooks."""


@hooks.command()
@click.option("--settings", "settings_path", type=click.Path(path_type=Path),
              help="Claude Code settings file (default: ~/.claude/settings.json).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.pass_context
def install(ctx: click.Context, settings_path: Path | None, as_json: bool) -> None:
    """Merge chitta's hooks into Claude Code's settings (idempotent; backs up the old file).

    The hooks carry the --home/--store given before `hooks` (chitta --home DIR hooks install).
    """
    import shlex

    from chitta.hooks.install import chitta_argv, default_settings_path
    from chitta.hooks.install import install as do_install

    path = settings_path or default_settings_path()
    try:
        done = do_install(path, shlex.join([*chitta_argv(), *_global_args(ctx)]))
    except (ChittaError, OSError) as exc:
        _fail(exc, path, as_json=as_json)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": True,
                    "path": str(done.path),
                    "changed": done.changed,
                    "backup": None if done.backup is None else str(done.backup),
                }
            )
        )
        return
    if not done.changed:
        click.echo(f"{done.path}: chitta's hooks are already installed; nothing changed")
        return
    click.echo(f"{done.path}: " + ", ".join(f"{v} {e}" for e, v in done.changed.items()))
    if done.backup is not None:
        click.echo(f"the previous file is kept as {done.backup}")


@click.group()
def setup() -> None:
    """Set chitta up in an agent's client."""


@setup.command()
@click.option("--project", is_flag=True,
              help="Project scope: .claude/settings.json and .mcp.json at the git root (else "
                   "here), instead of ~/.claude/settings.json and ~/.claude.json.")  # fmt: skip
@click.option("--uninstall", is_flag=True, help="Remove chitta's hooks and MCP server only.")
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
@click.option("--settings", "settings_path", type=click.Path(path_type=Path),
              help="The settings file for the hooks (overrides the scope's).")  # fmt: skip
@click.option("--mcp-config", "mcp_path", type=click.Path(path_type=Path),
              help="The file for the MCP server (overrides the scope's).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.pass_context
def claude(
    ctx: click.Context,
    project: bool,
    uninstall: bool,
    dry_run: bool,
    settings_path: Path | None,
    mcp_path: Path | None,
    as_json: bool,
) -> None:
    """Register chitta's hooks and MCP server with Claude Code (idempotent; backs up what it
    changes). The commands carry the --home/--store given before `setup`."""
    from chitta.hooks.install import chitta_argv
    from chitta.hooks.setup import Targets, apply, plan, targets

    where = targets(project=project, cwd=Path.cwd(), user_home=Path.home())
    where = Targets(settings_path or where.settings, mcp_path or where.mcp)
    try:
        changes = plan(where, [*chitta_argv(), *_global_args(ctx)], uninstall=uninstall)
        backups = [None] * len(changes) if dry_run else apply(changes)
    except (ChittaError, OSError) as exc:
        _fail(exc, as_json=as_json)
    if as_json:
        files = [{"path": str(c.path), "summary": c.summary, "changed": c.content is not None,
                  "written": c.content is not None and not dry_run,
                  "backup": None if b is None else str(b)}
                 for c, b in zip(changes, backups, strict=True)]  # fmt: skip
        click.echo(json.dumps({"ok": True, "files": files}))
        return
    for change, backup in zip(changes, backups, strict=True):
        line = f"{change.path}: {change.summary}"
        if dry_run and change.content is not None:
            line += " [dry run: not written]"
        if backup is not None:
            line += f"; the previous file is kept as {backup}"
        click.echo(line)
