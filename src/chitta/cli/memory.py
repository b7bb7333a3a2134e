"""The commands on memories (remember, recall, reconstruct, show and the lifecycle), each
built from its operation's description (cli/ops.py)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from chitta.cli.common import settings_of
from chitta.cli.ops import op_command


def _read_content(ctx: click.Context, params: dict[str, Any]) -> dict[str, Any]:
    if params.get("content") == "-":
        params["content"] = sys.stdin.read()
    return params


def _remembered(done: dict[str, Any]) -> None:
    if done.get("burst"):
        click.echo(
            f"{done['id']}  (repeats what this session stored moments ago, cosine "
            f"{done['similarity']}: reinforced that memory)"
        )
    elif done["deduplicated"]:
        click.echo(
            f"{done['id']}  (near-duplicate, cosine {done['similarity']}: reinforced the "
            "existing memory)"
        )
    else:
        click.echo(done["id"])
    if done["truncated"]:
        click.echo("note: only the first 256 tokens were embedded", err=True)
    if done.get("embedded") is False:
        click.echo("note: stored at once while the daemon is busy; its vector follows "
                   "shortly, and recall finds it by its words until then", err=True)  # fmt: skip


def _ablate(ctx: click.Context, params: dict[str, Any]) -> dict[str, Any]:
    """The lanes to switch off: --ablate, its old spelling --disable-hdc, and this command's
    CHITTA_ABLATE_LANES — sent along, so that the daemon switches off the same lanes as a
    recall in this process would."""
    off = list(params.get("ablate") or [])
    if params.pop("disable_hdc", False):
        off.append("hdc")
    off += settings_of(ctx).recall.ablate_lanes
    params["ablate"] = list(dict.fromkeys(off)) or None
    return params


def _hits(data: dict[str, Any]) -> None:
    from chitta.cli.render import print_hits  # rich: not on the hooks' path

    print_hits(data)
    if "trace" in data:
        click.echo(json.dumps({"trace": data["trace"]}, indent=1))


def _reconstruction(data: dict[str, Any]) -> None:
    from chitta.cli.render import print_reconstruction

    print_reconstruction(data)
    if "trace" in data:
        click.echo(json.dumps({"trace": data["trace"]}, indent=1))


def _memory(data: dict[str, Any]) -> None:
    for key, value in data["memory"].items():
        click.echo(f"{key:>14}: {value}")


def _provenance(data: dict[str, Any]) -> None:
    name = f" {data['source_name']}" if data["source_name"] else ""
    click.echo(f"{data['id']}  {data['kind']}, realm {data['realm']}")
    click.echo(f"  source: {data['source_kind']}{name} (trust {data['trust']:g})")
    if data["via"]:
        click.echo(f"  made by: {data['via']}")
    for label, links in (("drawn from", data["turns"]), ("replaced", data["replaced"])):
        for link in links:
            who = link["role"] or link["kind"]
            gone = " (forgotten)" if link["forgotten"] else ""
            click.echo(f"  {label}: {link['id']} {who}, {link['at']}{gone}: {link['excerpt']}")
    for missing in data["missing_turns"]:
        click.echo(f"  drawn from: {missing} (no longer stored)")
    for label in ("supersedes", "superseded_by"):
        if data[label]:
            click.echo(f"  {label.replace('_', ' ')}: {data[label]['id']}: "
                       f"{data[label]['excerpt']}")  # fmt: skip
    others = ", ".join(r["source"] for r in data["replications"])
    click.echo(f"  independent sources: {data['independent_sources']}"
               + (f" (stored again by {others})" if others else ""))  # fmt: skip


def _each(name: str):
    def render(data: dict[str, Any]) -> None:
        click.echo(f"{name}: {', '.join(data[name])}")

    return render


def _hygiene(data: dict[str, Any]) -> None:
    if "undo" in data:
        click.echo(f"run {data['undo']}: {data['restored']} memories put back")
        return
    shown = data["previews"]
    verb = "would merge" if data["dry_run"] else "merged"
    for merge in data["merges"]:
        click.echo(f"keep {merge['keep']}  {shown.get(merge['keep'], '')}")
        for other in merge["merged"]:
            click.echo(f"  {verb} {other}  {shown.get(other, '')}")
    for c in data["conflicts"]:
        roles = f"{c['roles'][0] or 'unknown'} / {c['roles'][1] or 'unknown'}"
        click.echo(f"conflict (cosine {c['cosine']}, {roles}):")
        click.echo(f"  newer {c['newer']}  {shown.get(c['newer'], '')}")
        click.echo(f"  older {c['older']}  {shown.get(c['older'], '')}")
    merged = sum(len(m["merged"]) for m in data["merges"])
    click.echo(f"realm {data['realm']}: {data['scanned']} memories scanned, {verb} {merged} "
               f"into {len(data['merges'])}, {len(data['conflicts'])} conflicts")  # fmt: skip
    if data.get("run"):
        click.echo(f"undo with: chitta hygiene --undo {data['run']}")


def _learned(data: dict[str, Any]) -> None:
    if "forgotten_events" in data:
        click.echo(f"forgot {data['forgotten_events']} feedback events")
    click.echo(f"realm {data['realm']}: learning {data['learning']}, "
               f"{data['events']} feedback events")  # fmt: skip
    for strategy, learned in data["strategies"].items():
        click.echo(f"{strategy}:")
        for name, p in learned["params"].items():
            lo, hi = p["range"]
            click.echo(f"  {name:<16} preset {p['preset']:<5g} learned {p['mean']:<7g} "
                       f"± {p['sd']:<7g} (range {lo:g}-{hi:g})")  # fmt: skip
        contexts = ", ".join(f"{b} {n}" for b, n in learned["contexts"].items())
        click.echo(f"  events by query context: {contexts or 'none'}")


def register(group: click.Group) -> None:
    """Add the memory commands to ``group``."""
    op_command(group, "remember", _remembered, prepare=_read_content)
    op_command(group, "recall", _hits, prepare=_ablate)
    op_command(group, "reconstruct", _reconstruction)
    op_command(group, "get_memory", _memory, name="show")
    op_command(group, "provenance", _provenance)
    op_command(group, "edit_memory", _memory, name="edit")
    for name in ("forget", "restore", "purge", "strengthen", "weaken"):
        command = op_command(group, name, _each(name), many="id")
        command.help = command.help.replace("a memory", "memories") if command.help else None
    op_command(group, "supersede",
               lambda d: click.echo(f"{d['new_id']} supersedes {d['old_id']}"))  # fmt: skip
    op_command(
        group,
        "decay",
        lambda d: click.echo(
            f"decayed {d['decayed']} memories ({d.get('demoted', 0)} to a lower tier)"
        ),
    )
    op_command(group, "hygiene", _hygiene)
    op_command(group, "learn", _learned)
