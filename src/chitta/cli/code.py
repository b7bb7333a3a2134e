"""``chitta code …``: index a repository, find symbols, walk callers and callees, each
command built from its operation (cli/ops.py, ops/code.py)."""

from __future__ import annotations

from typing import Any

import click

from chitta.cli.ops import COMMANDS, JSON_HELP, fill_realm, op_command, run_op
from chitta.ops.common import REALM


@click.group()
def code() -> None:
    """Code intelligence: the symbols, calls, imports and bases of indexed repositories.

    `chitta code index PATH` indexes a repository (again: only what changed); the other
    commands read what it stored, in the realm of the workspace unless --realm names one.
    """


def _indexed(d: dict[str, Any]) -> None:
    where = f" at {d['commit'][:12]}" if d["commit"] else ""
    click.echo(f"indexed {d['repo']}{where}: {d['indexed']} files read, {d['unchanged']} "
               f"unchanged, {d['removed']} removed ({d['seen']} listed"
               f"{' by git' if d['git'] else ''}) in {d['seconds']:.2f}s")  # fmt: skip
    click.echo(f"  {d['symbols']} symbols, {d['callsites']} calls, "
               f"{d['parse_errors']} parse errors in the files read")  # fmt: skip
    if d["skipped"]:
        click.echo("  skipped: " + ", ".join(f"{n} {why}" for why, n in d["skipped"].items()))
    if d.get("unembedded"):
        click.echo(f"  {d['unembedded']} symbols without vectors (--no-embed): search_symbols "
                   "finds them by keywords alone")  # fmt: skip
    states = d["resolution"]
    if any(states.values()):
        click.echo("  calls: " + ", ".join(f"{n} {state}" for state, n in states.items() if n))
    if d.get("linked"):  # older memories now linked to the symbols stored (docs/code.md)
        click.echo(f"  {d['linked']} links from memories to the symbols stored")


def _reindexed(d: dict[str, Any]) -> None:
    for r in d["repos"]:
        what = f"{r['indexed']} read, {r['unchanged']} unchanged, {r['removed']} removed"
        if r["skipped"]:
            what += ", skipped " + ", ".join(f"{n} {why}" for why, n in r["skipped"].items())
        click.echo(f"re-indexed {r['files']} files of {r['repo']}: {what}; {r['resolved']} "
                   f"calls resolved again in {r['seconds'] * 1000:.0f} ms")  # fmt: skip
    for path in d["outside"]:
        click.echo(f"{path} is in no repository indexed in realm {d['realm']}: "
                   "`chitta code index REPO` indexes its repository", err=True)  # fmt: skip


def _nowhere(paths: list[str], realm: str) -> None:
    """Refuse files of which none lies in a repository indexed in ``realm`` (a mistyped
    folder, or a repository not indexed yet): nothing was done."""
    from pathlib import Path

    from chitta.errors import NotAFolder, PathNotFound

    first = paths[0]
    if not Path(first).exists():
        raise PathNotFound(f"no such folder: {first} (nor a file of an indexed repository)")
    raise NotAFolder(f"{first} is not a folder, and no repository indexed in realm {realm} "
                     "holds it: `chitta code index REPO` indexes its repository")  # fmt: skip


def _index_command() -> click.Command:
    """``code index PATH...``: one folder is a whole (incremental) index (code_index); files
    are re-indexed alone (code_reindex)."""
    from chitta.cli.common import emit, errors, output
    from chitta.ops import OPERATIONS

    whole, some = OPERATIONS["code_index"], OPERATIONS["code_reindex"]

    @click.command(name="index")
    @click.argument("paths", nargs=-1, required=True, metavar="PATH...")
    @click.option("--realm", "-r", help=REALM.cli_help)
    @click.option(
        "--no-embed",
        "no_embed",
        is_flag=True,
        help=next(q.cli_help or q.help for q in whole.params if q.name == "no_embed"),
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @click.pass_context
    def index(ctx: click.Context, paths: tuple[str, ...], realm: str | None, no_embed: bool,
              as_json: bool) -> None:  # fmt: skip
        """Index the repository or folder PATH: its symbols, calls, imports and bases (again:
        only the files that changed). Given files instead, re-index just those (and the calls
        they can change) in the indexed repositories that hold them.

        In a git work tree the files git tracks or would track are read (.gitignore holds);
        elsewhere .gitignore files are read. Vendored, generated, binary and very large files
        are skipped and counted by reason. Needs the code extra: pip install 'chitta[code]'.
        """
        from pathlib import Path

        from chitta.cli.render import progress_bar  # rich: not on the hooks' path
        from chitta.errors import BadArgument

        with errors(as_json):
            full = [str(Path(p).expanduser().absolute()) for p in paths]
            folder = len(full) == 1 and Path(full[0]).is_dir()
            if not folder and any(Path(p).is_dir() for p in full):
                raise BadArgument("give one repository or folder, or files: not both")
            op = whole if folder else some
            params = {"path": full[0], "no_embed": no_embed} if folder else {"paths": full}
            params = fill_realm(ctx, op, {**params, "realm": realm})
            with progress_bar(op.name, "files" if folder else None, quiet=as_json) as advance:
                data = run_op(ctx, op, params, progress=advance)
            if not folder and not data["repos"]:
                _nowhere(full, data["realm"])
            with output():
                if as_json:
                    emit(data)
                else:
                    (_indexed if folder else _reindexed)(data)

    COMMANDS[whole.name] = COMMANDS[some.name] = "code index"
    return index


def _line(s: dict[str, Any]) -> str:
    return f"{s['qualified']}  ({s['kind']}, {s['path']}:{s['start_line']})  {s['id']}"


def _found(d: dict[str, Any]) -> None:
    for s in d["symbols"]:
        click.echo(_line(s))
        if s["signature"]:
            click.echo(f"    {s['signature']}")
    if not d["symbols"]:
        click.echo(f"no symbol matches in realm {d['realm']}", err=True)


def _walked(key: str):
    def render(d: dict[str, Any]) -> None:
        for root in d["symbols"]:
            click.echo(_line(root["symbol"]))
            for e in root[key]:
                end, call = e["symbol"], e["call"]
                kind = f" ({end['kind']})" if end.get("kind") else ""
                click.echo(f"{'  ' * e['depth']}{end['qualified']}{kind}  "
                           f"at {call['path']}:{call['line']}")  # fmt: skip
            if not root[key]:
                click.echo(f"  no resolved {key}")
            if root["cut"]:
                click.echo(f"  (more {key}: raise --limit)")
        if d["more_symbols"]:
            click.echo(f"{d['more_symbols']} more symbols of that name: name one by its "
                       "qualified name or id")  # fmt: skip
        if d["pending_calls"]:
            click.echo(f"{d['pending_calls']} calls of realm {d['realm']} are not resolved yet: "
                       f"{key} follow resolved calls only", err=True)  # fmt: skip

    return render


def _searched(d: dict[str, Any]) -> None:
    _found(d)
    if d["unembedded"]:
        click.echo(f"{d['unembedded']} of {d['searched']} symbols have no vector (indexed with "
                   "--no-embed): found by keywords alone", err=True)  # fmt: skip


def _outlined(d: dict[str, Any]) -> None:
    if d["outline"]:
        click.echo(d["outline"])
    else:
        click.echo(f"no indexed symbols in realm {d['realm']}", err=True)


def register(group: click.Group) -> None:
    """Add ``code …`` to ``group``."""
    code.add_command(_index_command())
    op_command(code, "find_symbol", _found, name="find")
    op_command(code, "symbol_callers", _walked("callers"), name="callers")
    op_command(code, "symbol_callees", _walked("callees"), name="callees")
    op_command(code, "search_symbols", _searched, name="search")
    op_command(code, "code_outline", _outlined, name="outline")
    group.add_command(code)
