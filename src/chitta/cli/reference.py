"""docs/operations.md, made from the operations' descriptions: every JSON-RPC method, MCP
tool and CLI command with its parameters. ``python -m chitta.cli.reference`` prints it; a
test checks that the committed page is the printed one."""

from __future__ import annotations

from chitta.cli.main import main
from chitta.cli.ops import COMMANDS
from chitta.ops import OPERATIONS as OPS
from chitta.ops.spec import Operation, Param

HEAD = """# Operations

Every operation chitta offers, made from the one description each has (`src/chitta/ops/`):
the daemon's JSON-RPC method of that name ([daemon](daemon.md)), the MCP tool where one is
offered ([MCP](mcp.md)), and the CLI command. Parameters are named as in JSON-RPC and MCP;
the CLI spells them as options (`agent_id` is `--agent`), except the positional ones. A
parameter left out takes its default; the realm, left out, is the realm rule's
([configuration](configuration.md#the-realm-rule)). Every text has a size limit (the range
column; "chars" are characters, not bytes), and a list a limit on its items: a value over
either is refused with the error `too_large` (`content_too_long` for a memory's content,
counted as it is stored: without the whitespace around it), naming the parameter and the
limit, at every edge — the daemon, MCP, the CLI ([daemon](daemon.md#errors)). This page is
generated: `python -m chitta.cli.reference > docs/operations.md`.
"""


#: The MCP tools listed only on a condition (mcp/server.py).
LISTED_WHEN = {
    "code": " (listed once code is indexed, or with CHITTA_MCP_CODE=on)",
    "provenance": " (listed with CHITTA_MCP_PROVENANCE=1)",
}


def _range(p: Param) -> str:
    if p.choices:
        return " \\| ".join(f"`{c}`" for c in p.choices)
    if p.minimum is not None and p.maximum is not None:
        return f"{p.minimum:g} to {p.maximum:g}"
    if p.type == "object" and p.max_items is not None:
        return f"≤ {p.max_items:,} values, texts ≤ {p.max_length:,} chars"
    if p.max_items is not None:
        return f"≤ {p.max_items:,} items of ≤ {p.max_length:,} chars"
    if p.max_length is not None:
        return f"≤ {p.max_length:,} chars"
    return ""


def _where(p: Param) -> str:
    if p.positional:
        return "argument"
    flags = ", ".join(f"`{f}`" for f in (p.option, *p.aliases, *([p.short] if p.short else [])))
    if p.type == "flag" and p.default is True:
        flags = f"`--no-{p.option[2:]}`"
    places = [] if p.cli and not p.hidden else ["not on the CLI"]
    if not p.mcp:
        places.append("not in MCP")
    return "; ".join([flags if p.cli and not p.hidden else "", *places]).strip("; ")


def operation(op: Operation) -> str:
    """One operation's section."""
    how = ["writes (one at a time)" if op.writes else "reads"]
    if op.long:
        how.append("long: no request deadline, reports progress")
    if op.local:
        how.append("runs in the CLI's own process, never through the daemon")
    lines = [
        f"## `{op.name}`",
        "",
        op.summary,
        "",
        f"- CLI: `chitta {COMMANDS.get(op.name, '—')}`; MCP: "
        + (f"tool `{op.name}`{LISTED_WHEN.get(op.name, '')}" if op.mcp else "not a tool")
        + f"; {', '.join(how)}.",
    ]
    if op.params:
        lines += ["", "| parameter | type | default | range | CLI | what |",
                  "|---|---|---|---|---|---|"]  # fmt: skip
        for p in op.params:
            default = "required" if p.required else ("" if p.default is None else f"`{p.default}`")
            help_text = p.help.replace("|", "\\|")
            lines.append(f"| `{p.name}` | {p.type} | {default} | {_range(p)} | {_where(p)} | "
                         f"{help_text} |")  # fmt: skip
    return "\n".join(lines)


def page() -> str:
    """The whole page."""
    if not main.commands:  # the CLI is built when cli.main is imported: COMMANDS is filled
        raise RuntimeError("the CLI has no commands")
    return HEAD + "\n" + "\n\n".join(operation(op) for op in OPS.values()) + "\n"


if __name__ == "__main__":
    print(page(), end="")
