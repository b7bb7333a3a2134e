"""Migrating a whole store to another (SQLite ⇄ PostgreSQL): transfer/migrate.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.errors import InProcessOnly
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.validate import MAX_PATH_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.config import Settings

LOCATION_HELP = ("A SQLite file (a path with a '/' or ending in .db), a postgresql:// URL, or "
                 "the name of a store under CHITTA_HOME.")  # fmt: skip


def _migrate(settings: Settings, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.transfer.migrate import BATCH, migrate_locations

    report = migrate_locations(p["source"], p["destination"], home=settings.home,
                               merge=p.get("merge", False), batch=p.get("batch", BATCH),
                               progress=ctx.progress)  # fmt: skip
    return report.as_dict()


def _refused(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    # The daemon owns one store; a migration opens two others, each under its own lock.
    raise InProcessOnly("migrate runs in the CLI's own process (`chitta migrate SRC DST`), "
                        "not through the daemon")  # fmt: skip


MIGRATE = Operation(
    "migrate",
    "Copy everything the store SOURCE holds into DESTINATION (SQLite or PostgreSQL, either "
    "way), exactly; resumable.",
    (
        Param(
            "source",
            "text",
            "The store to copy. " + LOCATION_HELP,
            required=True,
            positional=True,
            max_length=MAX_PATH_CHARS,
        ),
        Param(
            "destination",
            "text",
            "The store to copy into, made when missing. " + LOCATION_HELP,
            required=True,
            positional=True,
            max_length=MAX_PATH_CHARS,
        ),
        Param(
            "merge",
            "flag",
            "Add to a destination that holds memories of its own (nothing of its own is changed).",
            default=False,
            aliases=("--into",),
        ),
        Param("batch", "int", "Memories per transaction.", default=500, minimum=1, maximum=100_000),
    ),  # fmt: skip
    _refused,
    writes=True,
    long=True,
    offline=_migrate,
    local=True,
    detail="Every memory (forgotten ones too, every field), its vector and access history, "
    "every episode, triplet (invalidated ones too), alias, replication and co-access weight, "
    "and the metadata (calibration, the hooks' shown-lists). The destination is bound to the "
    "source's model; one bound to another model is refused before anything is written, and "
    "so is one that holds memories of its own unless --merge is given. Run again after an "
    "interruption: what the destination holds is skipped, and the end checks that nothing "
    "is missing. Both stores are opened here, never through a daemon: stop the daemons that "
    "serve them first (docs/migrate.md).",
)

OPERATIONS = (MIGRATE,)
