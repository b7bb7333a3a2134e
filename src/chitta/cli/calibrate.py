"""``chitta calibrate``: fit the store's confidence calibration (recall/calibration.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

#: Above this many pairs the leave-one-out error (one refit per pair) is not computed.
LOO_MAX_PAIRS = 2000


@click.command()
@click.argument("golden", required=False, type=click.Path(path_type=Path))
@click.option(
    "--from-run",
    type=click.Path(path_type=Path),
    help="Fit from a `chitta bench abstain` results file instead of a golden file.",
)
@click.option(
    "--threshold",
    type=float,
    help="The KNOWN/UNKNOWN threshold on the calibrated value (default: chosen from "
    "unanswerable queries when there are some, else the default fit's).",
)
@click.option(
    "--display-only",
    is_flag=True,
    help="Refit only the displayed percentage; keep the band's fit and threshold.",
)
@click.option("--show", is_flag=True, help="Print the store's calibration and change nothing.")
@click.option("--reset", is_flag=True, help="Forget the store's fit; use the default again.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.pass_context
def calibrate(
    ctx: click.Context,
    golden: Path | None,
    from_run: Path | None,
    threshold: float | None,
    display_only: bool,
    show: bool,
    reset: bool,
    as_json: bool,
) -> None:
    """Fit how sure recall is that the store knows the answer, and store the fit.

    GOLDEN is a JSON Lines file of queries with the ids of the memories that answer them
    ({"query": ..., "gold": [ids], "realm": ...}; "gold": [] for a query the store cannot
    answer). Each is recalled, and a Platt fit of "the top 3 holds a gold memory" against the
    maximum relevance is stored with the store. docs/recall.md ("Honest recall") says more.
    """
    from chitta.cli.common import errors as _errors
    from chitta.cli.common import open_store as _open

    chosen = [
        name
        for name, on in (
            ("GOLDEN", golden),
            ("--from-run", from_run),
            ("--show", show),
            ("--reset", reset),
        )
        if on
    ]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of GOLDEN, --from-run, --show or --reset")
    if (threshold is not None or display_only) and (show or reset):
        raise click.UsageError("--threshold and --display-only go with a fit: GOLDEN or --from-run")
    if threshold is not None and display_only:
        raise click.UsageError("--display-only keeps the band's threshold; leave out --threshold")
    with _errors(as_json), _open(ctx, create=False) as chitta:
        if show:
            _report(chitta.calibration, None, as_json)
            return
        if reset:
            chitta.set_calibration(None)
            _report(chitta.calibration, None, as_json)
            return
        fit, pairs = _fit(chitta, golden, from_run, threshold, display_only)
        chitta.set_calibration(fit)
        _report(chitta.calibration, pairs, as_json)


def _fit(
    chitta: Any, golden: Path | None, from_run: Path | None, threshold: float | None,
    display_only: bool,
):  # fmt: skip
    from datetime import UTC, datetime
    from functools import partial

    from chitta.errors import BadArgument
    from chitta.recall import calibration as calib
    from chitta.recall import golden as gold

    if threshold is not None and not 0 < threshold < 1:
        raise BadArgument(f"--threshold must lie between 0 and 1, got {threshold}")
    if from_run is not None:
        pairs, source = gold.pairs_from_run(from_run), f"bench run {from_run.name}"
    else:
        assert golden is not None
        try:
            lines = golden.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeError) as exc:
            raise BadArgument(f"cannot read the golden file {golden}: {exc}") from None
        queries = gold.read_golden(lines, str(golden))
        pairs, source = gold.measure(chitta, queries), f"golden file {golden.name}"
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if display_only:
        current = chitta.calibration
        source = f"percentage refitted on {source}; band fit: {current.source}"
        return calib.refit_display(current, [p.raw for p in pairs], [p.hit3 for p in pairs],
                                   source=source, fitted_at=now), pairs  # fmt: skip
    fit_with = partial(
        calib.fit_calibration,
        [p.raw for p in pairs],
        [p.hit3 for p in pairs],
        model=chitta.embedder.identity().name,
        source=source,
        fitted_at=now,
    )
    if threshold is not None:
        return fit_with(threshold=threshold), pairs
    fit = fit_with(unanswerable=[p.unanswerable for p in pairs])
    return fit, pairs


def _report(fit: Any, pairs: list | None, as_json: bool) -> None:
    from chitta.recall import calibration as calib

    data: dict[str, Any] = {"calibration": json.loads(fit.to_json())}
    if pairs:
        calibrated = [calib.confidence(p.raw, fit) for p in pairs]
        hits = [p.hit3 for p in pairs]
        data["fitted_on"] = {
            "queries": len(pairs),
            "unanswerable": sum(p.unanswerable for p in pairs),
            "hit@3": round(sum(hits) / len(hits), 4),
            "ece_raw": round(calib.ece([c.calibrated for c in calibrated], hits), 4),
            "ece_shown": round(calib.ece([c.shown for c in calibrated], hits), 4),
        }
        if len(pairs) <= LOO_MAX_PAIRS:
            # Leave-one-out: each query's displayed chance from a refit made without it.
            refit = calib.loo_refit([c.calibrated for c in calibrated], hits)
            data["fitted_on"]["ece_refit_loo"] = round(calib.ece(refit, hits), 4)
    if as_json:
        click.echo(json.dumps({"ok": True, **data}))
        return
    click.echo(f"calibration: {fit.source}" + (" (no fit stored)" if fit.is_default else ""))
    click.echo(
        f"  p = sigmoid({fit.a:.3f} x max relevance {fit.b:+.3f}); KNOWN when p >= "
        f"{fit.threshold:.3f}; shown = sigmoid({fit.display_a:.3f} x logit(p) "
        f"{fit.display_b:+.3f})"
    )
    if pairs:
        f = data["fitted_on"]
        click.echo(
            f"  fitted on {f['queries']} queries ({f['unanswerable']} unanswerable), "
            f"hit@3 {f['hit@3']:.3f}; calibration error on them: raw {f['ece_raw']:.3f}, "
            f"shown {f['ece_shown']:.3f}"
            + (f", refit left-one-out {f['ece_refit_loo']:.3f}" if "ece_refit_loo" in f else "")
        )
