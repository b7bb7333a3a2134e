"""Distillation's settings file: ``<home>/distill.toml`` (TOML), read into
:class:`DistillSettings` (docs/distill.md#settings).

The whole format, every key optional::

    idle_s = 300                # a session is finished this long after its last turn
    max_chars = 24000           # the most transcript text one request carries (1000-400000)
    min_confidence = 0.5        # curated memories the model is less sure of are dropped (0-1)

    [[model]]                   # as cited.toml's model chain: tried in order
    kind = "openai"             # required: openai (POST {url}/chat/completions) | ollama
    url = "http://127.0.0.1:11434"      # required, http or https
    model = "qwen2.5:7b"        # required
    timeout_s = 60              # the whole exchange, at most 3600
    api_key_env = "OPENAI_API_KEY"      # the variable holding a bearer token

    [realm.secret-project]      # one table per realm that differs from the default
    distill = false             # nothing of this realm is distilled, nothing sent anywhere

Without a ``[[model]]`` nothing is ever sent to a model (model distillation is off, which is
the default); the model-free rules still run. ``distill = false`` turns both off for a realm.
Anything else is a :class:`BadConfig` naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.cited.config import Reader, model_endpoint, read_toml
from chitta.cited.settings import ModelEndpoint
from chitta.errors import ChittaError
from chitta.validate import check_scope_name

FILE_NAME = "distill.toml"
_TOP_KEYS = ("idle_s", "max_chars", "min_confidence", "model", "realm")
_REALM_KEYS = ("distill",)
#: A day: a session idle that long is over whatever the setting says.
MAX_IDLE_S = 86_400


@dataclass(frozen=True, slots=True)
class DistillSettings:
    """How sessions are distilled: the model chain (empty: no model distillation), when a
    session counts as finished, how much one request carries, and the realms left out."""

    models: tuple[ModelEndpoint, ...] = ()
    idle_s: float = 300.0
    max_chars: int = 24_000
    min_confidence: float = 0.5
    realms_off: frozenset[str] = frozenset()
    #: Where they were read from (None: the defaults, no file).
    file: str | None = None

    @property
    def model_configured(self) -> bool:
        """Whether a model is configured (only then is anything ever sent to one)."""
        return bool(self.models)

    def realm_on(self, realm: str) -> bool:
        """Whether ``realm``'s turns are distilled at all (``distill = false`` opts out)."""
        return realm not in self.realms_off


def load_distill_settings(home: Path) -> DistillSettings:
    """The settings in ``<home>/distill.toml``; the defaults without that file."""
    file = home / FILE_NAME
    if not file.exists():
        return DistillSettings()
    return parse_distill_settings(read_toml(file), file)


def parse_distill_settings(data: Mapping[str, Any], file: Path) -> DistillSettings:
    """Check a parsed file (``file`` names it in errors)."""
    r = Reader(file)
    r.keys(data, _TOP_KEYS, "the top level")
    base = DistillSettings()
    models = data.get("model", [])
    if not isinstance(models, list):
        raise r.fail("[[model]]", "must be an array of tables")
    return DistillSettings(
        models=tuple(model_endpoint(r, item, i) for i, item in enumerate(models, start=1)),
        idle_s=_idle(r, data.get("idle_s", base.idle_s)),
        max_chars=r.integer(data.get("max_chars", base.max_chars), "max_chars", 1000, 400_000),
        min_confidence=r.fraction(
            data.get("min_confidence", base.min_confidence), "min_confidence"
        ),  # fmt: skip
        realms_off=_realms_off(r, data.get("realm", {})),
        file=str(file),
    )


def _idle(r: Reader, value: object) -> float:
    number = r.number(value, "idle_s")
    if not 0 <= number <= MAX_IDLE_S:
        raise r.fail("idle_s", f"must be between 0 and {MAX_IDLE_S} seconds, got {value}")
    return number


def _realms_off(r: Reader, value: object) -> frozenset[str]:
    off = set()
    for realm, table in r.table(value, "[realm]").items():
        where = f"[realm.{realm}]"
        try:
            check_scope_name(realm, "realm")
        except ChittaError as exc:
            raise r.fail(where, f"does not name a realm: {exc}") from None
        r.keys(r.table(table, where), _REALM_KEYS, where)
        if not r.flag(table.get("distill", True), f"{where} distill"):
            off.add(realm)
    return frozenset(off)
