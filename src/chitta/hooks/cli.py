"""The ``chitta hook …`` and ``chitta hooks install`` commands (click, nothing heavy)."""

from __future__ import annotations

from pathlib import Path

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

    run_hook("stop", stop_hook, _overrides(ctx))


@click.group()
def hooks() -> None:
    """Set up the Claude Code hooks."""


@hooks.command()
@click.option("--settings", "settings_path", type=click.Path(path_type=Path),
              help="Claude Code settings file (default: ~/.claude/settings.json).")  # fmt: skip
def install(settings_path: Path | None) -> None:
    """Merge chitta's hooks into Claude Code's settings (idempotent; backs up the old file)."""
    from chitta.hooks.install import default_settings_path
    from chitta.hooks.install import install as do_install

    path = settings_path or default_settings_path()
    try:
        done = do_install(path)
    except ChittaError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None
    except OSError as exc:
        click.echo(f"error: cannot write {path}: {exc}", err=True)
        raise SystemExit(4) from None
    if not done.added:
        click.echo(f"{path}: chitta's hooks are already installed; nothing changed")
        return
    click.echo(f"{path}: added {', '.join(done.added)}")
    if done.backup is not None:
        click.echo(f"the previous file is kept as {done.backup}")
