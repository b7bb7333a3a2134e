"""``chitta calibrate``: fit the store's confidence calibration (ops/calibrate.py)."""

from __future__ import annotations

from typing import Any

import click

from chitta.cli.ops import op_command
from chitta.cli.store import absolute


def print_calibration(data: dict[str, Any]) -> None:
    """The calibration in use and, after a fit, how well it fits its queries."""
    fit = data["calibration"]
    default = fit["source"].startswith("default")  # as Calibration.is_default
    click.echo(f"calibration: {fit['source']}" + (" (no fit stored)" if default else ""))
    click.echo(
        f"  p = sigmoid({fit['a']:.3f} x max relevance {fit['b']:+.3f}); KNOWN when p >= "
        f"{fit['threshold']:.3f}; shown = sigmoid({fit['display_a']:.3f} x logit(p) "
        f"{fit['display_b']:+.3f})"
    )
    if f := data.get("fitted_on"):
        click.echo(
            f"  fitted on {f['queries']} queries ({f['unanswerable']} unanswerable), "
            f"hit@3 {f['hit@3']:.3f}; calibration error on them: raw {f['ece_raw']:.3f}, "
            f"shown {f['ece_shown']:.3f}"
            + (f", refit left-one-out {f['ece_refit_loo']:.3f}" if "ece_refit_loo" in f else "")
        )


def register(group: click.Group) -> None:
    """Add ``calibrate`` to ``group``."""
    command = op_command(group, "calibrate", print_calibration,
                         prepare=absolute("golden", "from_run"), progress="queries")  # fmt: skip
    command.help = (
        "Fit how sure recall is that the store knows the answer, and store the fit.\n\n"
        "GOLDEN is a JSON Lines file of queries with the ids of the memories that answer them "
        '({"query": ..., "gold": [ids], "realm": ...}; "gold": [] for a query the store '
        'cannot answer). Each is recalled, and a Platt fit of "the top 3 holds a gold '
        'memory" against the maximum relevance is stored with the store. docs/recall.md '
        '("Honest recall") says more.'
    )
