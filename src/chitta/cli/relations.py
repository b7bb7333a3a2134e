"""``chitta triplet …`` and ``chitta analogy``: the store's triplets and entity aliases, and
a:b :: c:? over them (relations/), each command built from its operation (cli/ops.py)."""

from __future__ import annotations

from typing import Any

import click

from chitta.cli.ops import op_command
from chitta.errors import BadArgument


@click.group()
def triplet() -> None:
    """Triplets: edges subject -[predicate]-> object between entities, kept with their history.

    Names match whatever their case and spacing (Lives In and lives_in are one predicate);
    aliases make two names one entity. An invalidated edge is kept and answers as_of questions.
    """


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


def _added(d: dict[str, Any]) -> None:
    note = "  (already stored: an equal current edge)" if d["existing"] else ""
    click.echo(f"{d['triplet']['id']}  {edge_line(d['triplet'])}{note}")


def _invalidated(d: dict[str, Any]) -> None:
    t = d["triplet"]
    if d["already"]:
        click.echo(f"{t['id']} was already invalidated at {t['invalidated_at']}")
    else:
        click.echo(f"invalidated {t['id']} at {t['invalidated_at']}")


def _listed(d: dict[str, Any]) -> None:
    for t in d["triplets"]:
        click.echo(f"{t['id']}  {edge_line(t)}")
    if not d["triplets"]:
        click.echo("no triplets match", err=True)


def _one_of(ctx: click.Context, params: dict[str, Any]) -> dict[str, Any]:
    if params.get("include_invalidated") and params.get("as_of") is not None:
        raise BadArgument("give --as-of or --all, not both")
    return params


def _unaliased(d: dict[str, Any]) -> None:
    if d["removed"]:
        click.echo(f"removed the alias {d['alias']!r}")
    else:
        click.echo(f"{d['alias']!r} was not an alias; nothing changed")


def _aliases(d: dict[str, Any]) -> None:
    for a in d["aliases"]:
        click.echo(f"{a['alias_key']} -> {a['canonical_key']}  "
                   f"(written {a['alias']!r}, since {a['created_at']})")  # fmt: skip
    if not d["aliases"]:
        click.echo("no aliases", err=True)


def register(group: click.Group) -> None:
    """Add ``triplet …`` and ``analogy`` to ``group``."""
    op_command(triplet, "add_triplet", _added, name="add")
    op_command(triplet, "invalidate_triplet", _invalidated, name="invalidate")
    op_command(triplet, "find_triplets", _listed, name="list", prepare=_one_of)
    op_command(triplet, "alias_entity", lambda d: click.echo(
        f"alias {d['alias_key']} -> {d['canonical_key']}"), name="alias")  # fmt: skip
    op_command(triplet, "remove_alias", _unaliased, name="unalias")
    op_command(triplet, "list_aliases", _aliases, name="aliases")
    group.add_command(triplet)
    op_command(group, "recall_analogy", print_analogy, name="analogy")
