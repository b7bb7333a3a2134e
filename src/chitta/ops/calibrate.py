"""The ``calibrate`` operation: fit how sure recall is that the store knows the answer
(recall/confidence/calibration.py), show the fit, or forget it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from chitta.errors import BadArgument
from chitta.ops.common import file_path
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.validate import MAX_PATH_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta

#: Above this many pairs the leave-one-out error (one refit per pair) is not computed.
LOO_MAX_PAIRS = 2000
#: Where the reliability diagram of the stored fit is kept (the fit's own data: the pairs it
#: was fitted on are not kept).
RELIABILITY_KEY = "calibration_reliability"
#: The realm sizes the fit's curve is drawn for (`--show`).
CURVE_SIZES = (100, 1_000, 10_000)
#: The distinctive words the first hit holds along the drawn curve: two, the most common count
#: on LoCoMo's answerable questions (recall/confidence/calibration.py, ``ceiling_at``).
CURVE_HELD = 2


def _choose(p: Params) -> str:
    """Which of the four things the call asks for, or :class:`BadArgument`."""
    ways = (("GOLDEN", "golden"), ("--from-run", "from_run"), ("--show", "show"),
            ("--reset", "reset"))  # fmt: skip
    chosen = [name for name, key in ways if p.get(key)]
    if len(chosen) != 1:
        raise BadArgument("give exactly one of GOLDEN, --from-run, --show or --reset")
    threshold, display_only = p.get("threshold"), p.get("display_only", False)
    if (threshold is not None or display_only) and chosen[0] in ("--show", "--reset"):
        raise BadArgument("--threshold and --display-only go with a fit: GOLDEN or --from-run")
    if threshold is not None and display_only:
        raise BadArgument("--display-only keeps the band's threshold; leave out --threshold")
    if threshold is not None and not 0 < threshold < 1:
        raise BadArgument(f"--threshold must lie between 0 and 1, got {threshold}")
    return chosen[0]


def _calibrate(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    chosen = _choose(p)
    if chosen == "--show":
        return {**report(chitta.calibration, None), **_drawn(chitta)}
    if chosen == "--reset":
        chitta.set_calibration(None)
        chitta.store.delete_meta(RELIABILITY_KEY)
        return report(chitta.calibration, None)
    fit, pairs = _fit(chitta, p, ctx)
    chitta.set_calibration(fit)
    data = report(chitta.calibration, pairs)
    if "reliability" in data.get("fitted_on", {}):
        chitta.store.set_meta(RELIABILITY_KEY, json.dumps(data["fitted_on"]["reliability"]))
    return data


def _drawn(chitta: Chitta) -> dict[str, Any]:
    """What the memory browser draws of the fit in use: its curve (the calibrated chance of
    each raw maximum relevance, which the band's threshold splits, for a few realm sizes,
    no evidence from the words either way: found 0.5, and :data:`CURVE_HELD` of them held by
    the first hit)
    and the reliability diagram of the queries it was fitted on (none for the default fit)."""
    from chitta.recall.confidence import calibration as calib

    fit = chitta.calibration
    raws = [round(i / 20, 2) for i in range(21)]
    curve = {str(n): [[r, round(calib.confidence(r, fit, n, held=CURVE_HELD).calibrated, 4)]
                      for r in raws] for n in CURVE_SIZES}  # fmt: skip
    stored = chitta.store.meta(RELIABILITY_KEY) if fit.source != "default" else None
    try:
        bins = json.loads(stored) if stored else None
    except ValueError:
        bins = None
    return {"curve": curve, "reliability": bins if isinstance(bins, list) else None}


def _fit(chitta: Chitta, p: Params, ctx: Context) -> tuple[Any, list]:
    from chitta.recall.confidence import calibration as calib
    from chitta.recall.confidence import golden as gold

    threshold, display_only = p.get("threshold"), p.get("display_only", False)
    if p.get("from_run"):
        run = file_path(ctx, p["from_run"], "from_run")
        pairs, source = gold.pairs_from_run(run), f"bench run {run.name}"
    else:
        golden = file_path(ctx, p["golden"], "golden")
        try:
            lines = golden.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeError) as exc:
            raise BadArgument(f"cannot read the golden file {golden}: {exc}") from None
        queries = gold.read_golden(lines, str(golden))
        pairs, source = (
            gold.measure(chitta, queries, progress=ctx.report),
            f"golden file {golden.name}",
        )
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if display_only:
        current = chitta.calibration
        source = f"percentage refitted on {source}; band fit: {current.source}"
        return calib.refit_display(current, [q.raw for q in pairs], [q.hit3 for q in pairs],
                                   source=source, fitted_at=now, sizes=[q.size for q in pairs],
                                   found=gold.found_of(pairs),
                                   held=gold.held_of(pairs)), pairs  # fmt: skip
    fit_with = partial(
        calib.fit_calibration, [q.raw for q in pairs], [q.hit3 for q in pairs],
        model=chitta.embedder.identity().name, source=source, fitted_at=now,
        sizes=[q.size for q in pairs], found=gold.found_of(pairs), held=gold.held_of(pairs),
    )  # fmt: skip
    if threshold is not None:
        return fit_with(threshold=threshold), pairs
    return fit_with(unanswerable=[q.unanswerable for q in pairs]), pairs


def report(fit: Any, pairs: list | None) -> dict[str, Any]:
    """The calibration in use and, after a fit, how well it fits the queries it came from."""
    from chitta.recall.confidence import calibration as calib

    data: dict[str, Any] = {"calibration": json.loads(fit.to_json())}
    if pairs:
        calibrated = [calib.confidence(q.raw, fit, q.size,
                                       calib.NO_EVIDENCE if q.found is None else q.found,
                                       q.held or 0)
                      for q in pairs]  # fmt: skip
        hits = [q.hit3 for q in pairs]
        data["fitted_on"] = {
            "queries": len(pairs),
            "unanswerable": sum(q.unanswerable for q in pairs),
            "hit@3": round(sum(hits) / len(hits), 4),
            "ece_raw": round(calib.ece([c.calibrated for c in calibrated], hits), 4),
            "ece_shown": round(calib.ece([c.shown for c in calibrated], hits), 4),
            "reliability": calib.reliability([c.shown for c in calibrated], hits),
        }
        if len(pairs) <= LOO_MAX_PAIRS:
            # Leave-one-out: each query's displayed chance from a refit made without it.
            refit = calib.loo_refit([c.calibrated for c in calibrated], hits)
            data["fitted_on"]["ece_refit_loo"] = round(calib.ece(refit, hits), 4)
    return data


CALIBRATE = Operation(
    "calibrate",
    "Fit how sure recall is that the store knows the answer, and store the fit.",
    (
        Param(
            "golden",
            "text",
            "A JSON Lines file of queries and their gold memory ids "
            '({"query": ..., "gold": [ids], "realm": ...}; "gold": [] when the store cannot '
            "answer).",
            positional=True,
            mcp=False,
            max_length=MAX_PATH_CHARS,
        ),
        Param(
            "from_run",
            "text",
            "Fit from a `chitta bench abstain` results file instead.",
            mcp=False,
            max_length=MAX_PATH_CHARS,
        ),
        Param(
            "threshold",
            "number",
            "The KNOWN/UNKNOWN threshold on the calibrated value "
            "(default: chosen from unanswerable queries when there are some, else the "
            "default fit's).",
            minimum=0,
            maximum=1,
        ),
        Param(
            "display_only",
            "flag",
            "Refit only the displayed percentage; keep the band's fit and threshold.",
            default=False,
        ),
        Param("show", "flag", "Print the store's calibration and change nothing.", default=False),
        Param("reset", "flag", "Forget the store's fit; use the default again.", default=False),
    ),  # fmt: skip
    _calibrate,
    writes=True,
    long=True,
)

OPERATIONS = (CALIBRATE,)
