"""``chitta code …``: index a repository, find symbols, walk callers and callees, each
command built from its operation (cli/ops.py, ops/code.py)."""

from __future__ import annotations

from typing import Any

import click

from chitta.cli.ops import op_command
from chitta.cli.store import absolute


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
    states = d["resolution"]
    if any(states.values()):
        click.echo("  calls: " + ", ".join(f"{n} {state}" for state, n in states.items() if n))
    if d.get("linked"):  # older memories now linked to the symbols stored (docs/code.md)
        click.echo(f"  {d['linked']} links from memories to the symbols stored")


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


def register(group: click.Group) -> None:
    """Add ``code …`` to ``group``."""
    op_command(code, "code_index", _indexed, name="index", prepare=absolute("path"),
               progress="files")  # fmt: skip
    op_command(code, "find_symbol", _found, name="find")
    op_command(code, "symbol_callers", _walked("callers"), name="callers")
    op_command(code, "symbol_callees", _walked("callees"), name="callees")
    group.add_command(code)
