"""``chitta triplet …`` and ``chitta analogy``: the store's triplets and entity aliases, and
a:b :: c:? over them (relations/).

Each command is one daemon method (daemon/methods.py). When a daemon serves the store the
command asks it; otherwise it opens the store and runs the same method in this process, so the
two print the same thing and check their input the same way.
"""

from __future__ import annotations

from typing import Any

import click

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
REALM_OPT = click.option(
    "--realm", "-r", help="Realm (project) whose edges and aliases these are (default: default)."
)
DATE_HELP = "ISO 8601, e.g. 2026-11-29 or 2026-11-29T13:45+01:00 (UTC when no zone is given)"


def _run(ctx: click.Context, method: str, *, create: bool = False, **params: Any) -> dict:
    """``method``'s reply without ``ok``: from the daemon when one answers, else run here.
    ``None`` parameters are left out (the method's defaults apply)."""
    from chitta.cli.common import daemon_client as _daemon
    from chitta.cli.common import open_store as _open
    from chitta.daemon.methods import METHODS, check_params

    given = {k: v for k, v in params.items() if v is not None}
    client = _daemon(ctx)
    if client is not None:
        with client:
            data = client.call(method, **given)
    else:
        check_params(METHODS[method], given)  # before opening: a bad call touches nothing
        with _open(ctx, create=create) as chitta:
            data = METHODS[method].run(chitta, given)
    data.pop("ok", None)
    return data


def _show(data: dict, as_json: bool, plain: Any) -> None:
    """``data`` as JSON, or through ``plain`` for people."""
    from chitta.cli.common import emit as _emit

    if as_json:
        _emit(data)
    else:
        plain(data)


def edge_line(t: dict[str, Any]) -> str:
    """One triplet in words: its ends, predicate, weight, validity and source."""
    when = f"from {t['valid_from']}"
    if t["invalidated_at"] is not None:
        when += f" until {t['invalidated_at']}"
    source = f", source {t['source_memory']}" if t["source_memory"] else ""
    return (
        f"{t['subject']} -[{t['predicate']}]-> {t['object']}  "
        f"(weight {t['weight']:g}, {when}{source})"
    )


@click.group()
def triplet() -> None:
    """Triplets: edges subject -[predicate]-> object between entities, kept with their history.

    Names match whatever their case and spacing (Lives In and lives_in are one predicate);
    aliases make two names one entity. An invalidated edge is kept and answers as_of questions.
    """


@triplet.command()
@click.argument("subject")
@click.argument("predicate")
@click.argument("object_", metavar="OBJECT")
@click.option("--weight", "-w", type=float,
              help="How strongly the edge holds, in (0, 1] (default 1).")  # fmt: skip
@click.option("--valid-from", help=f"When the edge began to hold (default now); {DATE_HELP}.")
@click.option("--source-memory", help="Id of the memory that states it (same realm).")
@REALM_OPT
@JSON_OPT
@click.pass_context
def add(ctx: click.Context, object_: str, as_json: bool, **opts: Any) -> None:
    """Store the edge SUBJECT -[PREDICATE]-> OBJECT and print its id.

    An equal edge that is already current is not stored twice: its id is printed instead.
    """
    from chitta.cli.common import errors as _errors

    with _errors(as_json):
        data = _run(ctx, "add_triplet", create=True, object=object_, **opts)

        def plain(d: dict) -> None:
            note = "  (already stored: an equal current edge)" if d["existing"] else ""
            click.echo(f"{d['triplet']['id']}  {edge_line(d['triplet'])}{note}")

        _show(data, as_json, plain)


@triplet.command()
@click.argument("triplet_id", metavar="ID")
@click.option("--at", help=f"When the edge stopped holding (default now); {DATE_HELP}.")
@JSON_OPT
@click.pass_context
def invalidate(ctx: click.Context, triplet_id: str, at: str | None, as_json: bool) -> None:
    """Mark the edge ID as no longer holding. It is kept: `triplet list --as-of` a time
    before then, or `--all`, still shows it."""
    from chitta.cli.common import errors as _errors

    with _errors(as_json):
        data = _run(ctx, "invalidate_triplet", id=triplet_id, at=at)

        def plain(d: dict) -> None:
            t = d["triplet"]
            if d["already"]:
                click.echo(f"{t['id']} was already invalidated at {t['invalidated_at']}")
            else:
                click.echo(f"invalidated {t['id']} at {t['invalidated_at']}")

        _show(data, as_json, plain)


@triplet.command(name="list")
@click.option("--subject", "-s", help="Only edges from this entity (or one of its aliases).")
@click.option("--predicate", "-p", help="Only edges over this predicate.")
@click.option("--object", "-o", "object_", help="Only edges to this entity (or its aliases).")
@REALM_OPT
@click.option("--as-of", help=f"The edges that held at this time (default now); {DATE_HELP}.")
@click.option("--all", "include_invalidated", is_flag=True,
              help="Every edge, invalidated ones too (not with --as-of).")  # fmt: skip
@click.option("--limit", "-n", type=int, default=100, show_default=True,
              help="At most this many edges, newest first (1-1000).")  # fmt: skip
@JSON_OPT
@click.pass_context
def list_(ctx: click.Context, object_: str | None, as_json: bool, **opts: Any) -> None:
    """List the edges that hold now, newest first. --as-of: those that held at a time;
    --all: every edge, invalidated ones too."""
    from chitta.cli.common import errors as _errors
    from chitta.errors import BadArgument

    with _errors(as_json):
        if opts["include_invalidated"] and opts["as_of"] is not None:
            raise BadArgument("give --as-of or --all, not both")
        data = _run(ctx, "find_triplets", object=object_, **opts)

        def plain(d: dict) -> None:
            for t in d["triplets"]:
                click.echo(f"{t['id']}  {edge_line(t)}")
            if not d["triplets"]:
                click.echo("no triplets match", err=True)

        _show(data, as_json, plain)


@triplet.command()
@click.argument("alias_name", metavar="ALIAS")
@click.argument("canonical")
@REALM_OPT
@JSON_OPT
@click.pass_context
def alias(
    ctx: click.Context, alias_name: str, canonical: str, realm: str | None, as_json: bool
) -> None:
    """Make ALIAS name the same entity as CANONICAL.

    E.g. NYC for New York City: edges stored under either name then answer for both.
    """
    from chitta.cli.common import errors as _errors

    with _errors(as_json):
        data = _run(ctx, "alias_entity", create=True, alias=alias_name, canonical=canonical,
                    realm=realm)  # fmt: skip
        _show(
            data, as_json, lambda d: click.echo(f"alias {d['alias_key']} -> {d['canonical_key']}")
        )


@triplet.command()
@click.argument("alias_name", metavar="ALIAS")
@REALM_OPT
@JSON_OPT
@click.pass_context
def unalias(ctx: click.Context, alias_name: str, realm: str | None, as_json: bool) -> None:
    """Forget the alias ALIAS. Edges stored under it stay, under its own name."""
    from chitta.cli.common import errors as _errors

    with _errors(as_json):
        data = _run(ctx, "remove_alias", alias=alias_name, realm=realm)

        def plain(d: dict) -> None:
            if d["removed"]:
                click.echo(f"removed the alias {alias_name!r}")
            else:
                click.echo(f"{alias_name!r} was not an alias; nothing changed")

        _show(data, as_json, plain)


@triplet.command()
@REALM_OPT
@JSON_OPT
@click.pass_context
def aliases(ctx: click.Context, realm: str | None, as_json: bool) -> None:
    """List the realm's aliases. Each line: the alias key -> the entity key it names."""
    from chitta.cli.common import errors as _errors

    with _errors(as_json):
        data = _run(ctx, "list_aliases", realm=realm)

        def plain(d: dict) -> None:
            for a in d["aliases"]:
                click.echo(f"{a['alias_key']} -> {a['canonical_key']}  "
                           f"(written {a['alias']!r}, since {a['created_at']})")  # fmt: skip
            if not d["aliases"]:
                click.echo("no aliases", err=True)

        _show(data, as_json, plain)


@click.command()
@click.argument("a")
@click.argument("b")
@click.argument("c")
@REALM_OPT
@click.option("--as-of", help=f"Answer over the edges that held at this time; {DATE_HELP}.")
@click.option("--limit", "-n", type=int, default=10, show_default=True,
              help="At most this many answers (1-100).")  # fmt: skip
@JSON_OPT
@click.pass_context
def analogy(ctx: click.Context, as_json: bool, **opts: Any) -> None:
    """A is to B as C is to what? Answered from the stored triplets only.

    The predicates of the edges from A to B are followed from C; each answer shows the A->B
    and C->D edges behind it. When A and B are not related, or C has no edge over those
    predicates, the command abstains and says which (exit code 0: that is an answer too).
    """
    from chitta.cli.common import errors as _errors

    with _errors(as_json):
        _show(_run(ctx, "recall_analogy", **opts), as_json, print_analogy)


def print_analogy(d: dict[str, Any]) -> None:
    """An analogy's answers with their supports, or its abstention, for people."""
    head = f"{d['a']} : {d['b']} :: {d['c']} : ?"
    if d["predicates"]:
        head += f"   (over {', '.join(d['predicates'])})"
    if d["as_of"]:
        head += f"   as of {d['as_of']}"
    click.echo(head)
    if d["abstained"]:
        click.echo(f"abstained ({d['reason_code']}): {d['reason']}")
    for rank, answer in enumerate(d["answers"], start=1):
        click.echo(f"{rank:>2}. {answer['entity']}  (score {answer['score']:.3g})")
        for s in answer["supports"]:
            click.echo(f"      {s['predicate']}:  a->b {_support(s['ab'])}")
            click.echo(f"      {' ' * len(s['predicate'])}   c->d {_support(s['cd'])}")
    if d["bounded"]:
        click.echo(f"bounded: {'; '.join(d['bounds'])}")


def _support(t: dict[str, Any]) -> str:
    source = t["source_memory"] or "none"
    return f"{t['subject']} -> {t['object']}  (weight {t['weight']:g}, source {source}, {t['id']})"
