"""distill.toml: the model chain, when a session is finished, the realms that opt out."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.distill.settings import FILE_NAME, DistillSettings, load_distill_settings
from chitta.errors import BadConfig

GOOD = """
idle_s = 120
max_chars = 8000
min_confidence = 0.7

[[model]]
kind = "ollama"
url = "http://127.0.0.1:11434"
model = "qwen2.5:7b"
timeout_s = 90

[realm.secret-project]
distill = false

[realm.work]
distill = true
"""


def write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / FILE_NAME).write_text(text)
    return home


def test_without_a_file_no_model_is_configured_and_every_realm_distils(tmp_path: Path) -> None:
    settings = load_distill_settings(tmp_path)
    assert settings == DistillSettings() and not settings.model_configured
    assert settings.realm_on("anything")


def test_a_file_gives_the_chain_the_timing_and_the_realms_off(tmp_path: Path) -> None:
    settings = load_distill_settings(write(tmp_path, GOOD))
    assert settings.model_configured and settings.models[0].model == "qwen2.5:7b"
    assert (settings.idle_s, settings.max_chars, settings.min_confidence) == (120, 8000, 0.7)
    assert not settings.realm_on("secret-project") and settings.realm_on("work")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("idle = 3", "unknown key 'idle'"),
        ("idle_s = -1", "idle_s must be between 0 and 86400"),
        ("max_chars = 10", "max_chars must be between 1000 and 400000"),
        ("min_confidence = 2", "min_confidence must be between 0 and 1"),
        ('[[model]]\nkind = "gpt"\nurl = "http://x"\nmodel = "m"', "must be one of openai"),
        ('[[model]]\nkind = "openai"\nmodel = "m"', "needs the key 'url'"),
        ("[realm.w]\ndistill = 'no'", "distill must be true or false"),
        ("[realm.w]\nshare = true", "unknown key 'share'"),
        ("[realm.' bad']\ndistill = false", "does not name a realm"),
        ("model = 3", "must be an array of tables"),
        ("idle_s = ", "is not valid TOML"),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_and_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(BadConfig, match=message) as caught:
        load_distill_settings(write(tmp_path, text))
    assert FILE_NAME in str(caught.value)


def test_the_store_opens_with_the_homes_file_and_refuses_a_bad_one(
    tmp_path: Path, embedder
) -> None:
    home = write(tmp_path / "home", GOOD)
    with Chitta.open(Settings(home=home), embedder=embedder, through_daemon=False) as c:
        assert not c.distill_settings.realm_on("secret-project")
    write(home, "idle_s = 'soon'")
    with pytest.raises(BadConfig, match="idle_s must be a number"):
        Chitta.open(Settings(home=home), embedder=embedder, through_daemon=False)
