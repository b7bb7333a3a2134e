"""CLI commands built from the operations' descriptions (chitta/ops).

Each command's arguments and options come from its operation's parameters; the command
checks them as the daemon does, fills the realm by the realm rule, and then runs the
operation through the daemon when one serves the store, or in this process when none does —
the same operation either way, so the two print the same, answer the same ``--json`` and
exit with the same codes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import click

from chitta.cli.common import daemon_client, emit, errors, open_store, output, settings_of
from chitta.errors import BadArgument
from chitta.ops import OPERATIONS, Context, Operation, Param, check_params, given
from chitta.ops.spec import with_realm

#: Each operation's CLI command, as ``op_command`` registered it (for the reference page).
COMMANDS: dict[str, str] = {}

Render = Callable[[dict[str, Any]], None]
Prepare = Callable[[click.Context, dict[str, Any]], dict[str, Any]]
JSON_HELP = "Print JSON for machines."


def run_op(
    ctx: click.Context,
    op: Operation,
    params: dict[str, Any],
    *,
    progress: Callable[[int, int], None] | None = None,
    check_model: bool = True,
) -> dict[str, Any]:
    """``op``'s reply without ``ok``: from the daemon that serves the store, or run here.
    The parameters are checked first, so a bad call touches nothing either way."""
    params = given(params)
    check_params(op, params)
    client = None if op.local else daemon_client(ctx, long=op.long)
    if client is not None:
        with client:
            data = client.call(op.name, progress=progress, **params)
    elif op.offline is not None:
        settings = settings_of(ctx)
        data = op.offline(settings, params, Context(home=settings.home, progress=progress))
    else:
        settings = settings_of(ctx)
        with open_store(ctx, create=op.creates, check_model=check_model) as chitta:
            data = op.call(chitta, params, Context(home=settings.home, progress=progress))
    data.pop("ok", None)
    return data


def fill_realm(ctx: click.Context, op: Operation, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the realm rule's realm wherever the caller named none."""
    return with_realm(op, params, settings_of(ctx).realm.name, "cli")


def _decls(p: Param) -> list[str]:
    names = [p.option, *p.aliases]
    if p.short:
        names.append(p.short)
    return names


def _option(p: Param) -> Callable[[Callable], Callable]:
    """The click argument or option for ``p``."""
    if p.positional:
        return click.argument(p.name, required=p.required, metavar=p.name.upper())
    help_text = p.cli_help or p.help
    if p.type == "flag":
        if p.default is True:  # on unless switched off: --no-<name>
            return click.option(f"--no-{p.option[2:]}", p.name, flag_value=False, default=True,
                                help=help_text, hidden=p.hidden)  # fmt: skip
        return click.option(*_decls(p), p.name, is_flag=True, default=False, help=help_text,
                            hidden=p.hidden)  # fmt: skip
    kind: Any = {"int": int, "number": float}.get(p.type, str)
    if p.default is not None and p.type in ("int", "number", "text"):
        help_text += f"  [default: {p.default}]"
    if p.type == "object":
        help_text += " (JSON)"
    return click.option(*_decls(p), p.name, type=kind, multiple=p.type == "list",
                        help=help_text, hidden=p.hidden, metavar=_metavar(p))  # fmt: skip


def _metavar(p: Param) -> str | None:
    if p.choices:
        return "|".join(p.choices)
    return {"int": "N", "number": "X", "object": "JSON", "list": "A,B"}.get(p.type)


def cli_values(op: Operation, values: dict[str, Any]) -> dict[str, Any]:
    """The parameters as the operation takes them, from what click parsed: lists from
    comma-separated (or repeated) options, objects from JSON text."""
    out: dict[str, Any] = {}
    for p in op.params:
        if not p.cli or p.name not in values:
            continue
        value = values[p.name]
        if p.type == "list":
            value = [x.strip() for v in value for x in v.split(",") if x.strip()] or None
        elif p.type == "object" and value is not None:
            value = json_option(value, p.option)
        out[p.name] = value
    return out


def json_option(text: str, option: str) -> Any:
    """An option's JSON value, or an error naming the option."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadArgument(f"{option} is not JSON: {exc.msg} at character {exc.pos}") from None


def op_command(
    group: click.Group,
    op_name: str,
    render: Render,
    *,
    name: str | None = None,
    prepare: Prepare | None = None,
    many: str | None = None,
    progress: str | None = None,
    extra: Sequence[Callable[[Callable], Callable]] = (),
    finish: Callable[[dict[str, Any]], None] | None = None,
    check_model: bool = True,
) -> click.Command:
    """Add to ``group`` the command of operation ``op_name``.

    ``render`` prints the reply for people (``--json`` prints it for machines); ``prepare``
    turns the parsed values into the parameters (reading stdin, making paths absolute);
    ``many`` names a positional parameter that takes several values, the operation then
    running once for each; ``progress`` ("bytes" or a unit) shows a progress bar on a
    terminal; ``extra`` adds CLI-only options, handed to ``prepare``; ``finish`` runs after
    the output (e.g. to set an exit code); ``check_model=False`` opens a store made with
    another model (to show it, or to re-embed it)."""
    op = OPERATIONS[op_name]

    def callback(**values: Any) -> None:
        ctx = click.get_current_context()
        as_json = values.pop("as_json")
        with errors(as_json):
            params = cli_values(op, values)
            extras = {k: v for k, v in values.items() if k not in op.by_name}
            if prepare is not None:
                params = prepare(ctx, {**params, **extras})
            params = fill_realm(ctx, op, params)
            from chitta.cli.render import progress_bar  # rich: not on the hooks' path

            with progress_bar(op.name, progress, quiet=as_json) as advance:
                if many is None:
                    data = run_op(ctx, op, params, progress=advance, check_model=check_model)
                else:
                    ids = list(params.pop(many))
                    for value in ids:
                        run_op(ctx, op, {**params, many: value})
                    data = {op.name: ids}
            with output():
                if as_json:
                    emit(data)
                else:
                    render(data)
            if finish is not None:
                finish(data)

    doc = f"{op.summary}\n\n{op.detail}" if op.detail else op.summary
    command = click.command(name=name or op.name.replace("_", "-"), help=doc)(callback)
    decorators = [_option(p) for p in op.params if p.cli and p.name != many]
    if many is not None:
        decorators.insert(0, click.argument(many, nargs=-1, required=True,
                                            metavar=f"{many.upper()}..."))  # fmt: skip
    # Applied to a command, each decorator appends its parameter: in the order of the help.
    for decorate in [*decorators, *extra,
                     click.option("--json", "as_json", is_flag=True, help=JSON_HELP)]:  # fmt: skip
        command = decorate(command)
    group.add_command(command)
    prefix = "" if group.name in (None, "main") else f"{group.name} "
    COMMANDS[op.name] = f"{prefix}{command.name}"
    return command
