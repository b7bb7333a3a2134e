"""cited.toml: the defaults without a file, the whole format, and every refusal naming the file
and the key."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from chitta.cited.config import FILE_NAME, load_cited_settings
from chitta.cited.settings import (
    DEFAULT_PRIORITY,
    AbstainSettings,
    MergeSettings,
    ModelEndpoint,
    SourceConfig,
)
from chitta.errors import BadConfig

FULL = """
limit = 7
source_timeout_s = 2.5

[merge]
k = 30
min_score = 0.25

[abstain]
min_sources = 1
min_chunks = 3
min_top_score = 0.4
respect_band = false

[synth]
extractive_sentences = 2

[[model]]
kind = "openai"
url = "http://127.0.0.1:8642/v1"
model = "hermes"
timeout_s = 12
api_key_env = "OPENAI_API_KEY"

[[model]]
kind = "ollama"
url = "http://127.0.0.1:11434"
model = "qwen2.5:7b"

[[source]]
name = "memory"
kind = "chitta"
realms = ["default", "work"]

[[source]]
name = "other"
kind = "chitta_file"
path = "stores/other.db"
strategy = "keyword"
priority = 0.95

[[source]]
name = "notes"
kind = "markdown"
paths = ["~/notes/MEMORY.md", "notes/*.md"]

[[source]]
name = "session"
kind = "sqlite_fts"
path = "/var/lib/state.db"
table = "messages_fts"
column = "content"
id_column = "message_id"

[[source]]
name = "hindsight"
kind = "http"
url = "http://127.0.0.1:8888/search"
method = "POST"
body = { q = "{query}", k = "{limit}", filters = { tier = "durable" } }
results = "data.hits"
text = "document.content"
score = "score"
ref = "id"
headers = { "X-Token" = "abc" }
"""


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    path.write_text(text, encoding="utf-8")
    return path


def test_without_a_file_the_one_source_is_this_store(tmp_path: Path) -> None:
    settings = load_cited_settings(None, tmp_path)
    # No realms named: the caller's realm is read (the realm rule; cited/service.py).
    assert settings.sources == (SourceConfig("memory", "chitta", 1.0, {"strategy": "hybrid"}),)
    assert (settings.limit, settings.source_timeout_s) == (5, 5.0)
    assert settings.merge == MergeSettings(k=60, min_score=0.3)
    assert settings.abstain == AbstainSettings(min_sources=2, min_chunks=2, min_top_score=0.3)
    assert settings.synth.models == ()


def test_a_file_naming_no_source_tunes_the_default_one(tmp_path: Path) -> None:
    write(tmp_path, "limit = 3\n[merge]\nmin_score = 0.5\n")
    settings = load_cited_settings(None, tmp_path)
    assert [s.name for s in settings.sources] == ["memory"]
    assert settings.limit == 3 and settings.merge.min_score == 0.5


def test_the_whole_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    folder = tmp_path / "conf"
    settings = load_cited_settings(write(folder, FULL), tmp_path / "unused")
    assert (settings.limit, settings.source_timeout_s) == (7, 2.5)
    assert settings.merge == MergeSettings(k=30, min_score=0.25)
    assert settings.abstain == AbstainSettings(
        min_sources=1, min_chunks=3, min_top_score=0.4, respect_band=False
    )
    assert settings.synth.extractive_sentences == 2
    assert settings.synth.models == (
        ModelEndpoint("openai", "http://127.0.0.1:8642/v1", "hermes", 12.0, "OPENAI_API_KEY"),
        ModelEndpoint("ollama", "http://127.0.0.1:11434", "qwen2.5:7b", 30.0, None),
    )
    memory, other, notes, session, hindsight = settings.sources
    assert memory == SourceConfig(
        "memory", "chitta", 1.0, {"realms": ["default", "work"], "strategy": "hybrid"}
    )
    assert other.priority == 0.95
    assert other.options == {
        "path": str(folder / "stores" / "other.db"),  # relative to the file's folder
        "strategy": "keyword",  # no realms named: ["default"] (cited/sources/__init__.py)
    }
    assert notes.priority == DEFAULT_PRIORITY["markdown"]
    assert notes.options == {
        "paths": [str(tmp_path / "me" / "notes" / "MEMORY.md"), str(folder / "notes" / "*.md")]
    }
    assert session.priority == DEFAULT_PRIORITY["sqlite_fts"] == 0.7
    assert session.options == {
        "path": "/var/lib/state.db",
        "table": "messages_fts",
        "column": "content",
        "id_column": "message_id",
    }
    assert hindsight.priority == DEFAULT_PRIORITY["http"] == 0.8
    assert hindsight.options == {
        "url": "http://127.0.0.1:8888/search",
        "method": "POST",
        "query_param": "query",
        "limit_param": "limit",
        "results": "data.hits",
        "text": "document.content",
        "score": "score",
        "ref": "id",
        "body": {"q": "{query}", "k": "{limit}", "filters": {"tier": "durable"}},
        "headers": {"X-Token": "abc"},
        "timeout_s": 2.5,  # the file's source_timeout_s
    }


def test_an_http_source_gets_get_defaults(tmp_path: Path) -> None:
    text = '[[source]]\nname = "h"\nkind = "http"\nurl = "https://x.example/s"\ntext = "t"\n'
    (source,) = load_cited_settings(write(tmp_path, text), tmp_path).sources
    assert source.options == {
        "url": "https://x.example/s",
        "method": "GET",
        "query_param": "query",
        "limit_param": "limit",
        "results": "",
        "text": "t",
        "headers": {},
        "timeout_s": 5.0,
    }


def test_a_named_file_that_is_missing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadConfig, match="no cited recall settings file at .*nope.toml"):
        load_cited_settings(tmp_path / "nope.toml", tmp_path)


def test_a_file_that_is_not_toml_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "limit = = 3\n")
    with pytest.raises(BadConfig, match=f"{path}: is not valid TOML"):
        load_cited_settings(None, tmp_path)


SOURCE = '[[source]]\nname = "s"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("colour = 3\n", r"the top level has an unknown key 'colour'"),
        ("limit = 0\n", r"limit must be between 1 and 100, got 0"),
        ('limit = "5"\n', r"limit must be an integer, got text"),
        ("source_timeout_s = 0\n", r"source_timeout_s must be greater than 0"),
        ("[merge]\nk = 0\n", r"\[merge\] k must be at least 1, got 0"),
        ("[merge]\nk = 1.5\n", r"\[merge\] k must be an integer"),
        ("[merge]\nmin_score = 1.5\n", r"\[merge\] min_score must be between 0 and 1, got 1.5"),
        ("[merge]\nbeta = 1\n", r"\[merge\] has an unknown key 'beta'"),
        ("[abstain]\nmin_top_score = -0.1\n", r"\[abstain\] min_top_score must be between 0"),
        ("[abstain]\nrespect_band = 1\n", r"\[abstain\] respect_band must be true or false"),
        ("[abstain]\nmin_sources = -1\n", r"\[abstain\] min_sources must be at least 0"),
        ("[abstain]\nmin_chunks = true\n", r"\[abstain\] min_chunks must be an integer"),
        ("merge = 3\n", r"\[merge\] must be a table, got an integer"),
        ("[synth]\nextractive_sentences = 0\n", r"\[synth\] extractive_sentences must be"),
        ('[[model]]\nkind = "gpt"\nurl = "http://a"\nmodel = "m"\n', r"\[\[model\]\] #1 kind"),
        ('[[model]]\nkind = "openai"\nurl = "ftp://a"\nmodel = "m"\n', r"#1 url must be an http"),
        ('[[model]]\nkind = "openai"\nurl = "http://a"\n', r"#1 needs the key 'model'"),
        ('[[model]]\nkind="ollama"\nurl="http://a"\nmodel="m"\ntimeout_s=0\n', r"#1 timeout_s"),
        ('[[model]]\nkind="ollama"\nurl="http://a"\nmodel="m"\napi_key_env="A-B"\n', "api_key_env"),
        ('[[model]]\nkind="ollama"\nurl="http://a"\nmodel="m"\nkey="x"\n', r"unknown key 'key'"),
        ('[[source]]\nkind = "chitta"\n', r"\[\[source\]\] #1 needs the key 'name'"),
        ('[[source]]\nname = "a b"\nkind = "chitta"\n', r"#1 name is not allowed: 'a b'"),
        (SOURCE + 'kind = "redis"\n', r"\[\[source\]\] 's' kind must be one of chitta, chitta_fi"),
        (SOURCE + 'kind = "chitta"\nrealm = "x"\n', r"'s' \(chitta\) has an unknown key 'realm'"),
        (
            SOURCE + 'kind = "chitta"\npriority = 0\n',
            r"'s' \(chitta\) priority must be in \(0, 10\]",
        ),
        (SOURCE + 'kind = "chitta"\npriority = 10.5\n', r"priority must be in \(0, 10\], got 10.5"),
        (SOURCE + 'kind = "chitta"\npriority = "high"\n', r"priority must be a number, got text"),
        (SOURCE + 'kind = "chitta"\nrealms = []\n', r"realms must be a non-empty list"),
        (
            SOURCE + 'kind = "chitta"\nrealms = ["-x"]\n',
            r"realms\[0\] is not a realm name: bad realm '-x'",
        ),
        (SOURCE + 'kind = "chitta"\nstrategy = "magic"\n', r"strategy must be one of hybrid"),
        (SOURCE + 'kind = "chitta_file"\n', r"'s' \(chitta_file\) needs the key 'path'"),
        (SOURCE + 'kind = "markdown"\n', r"'s' \(markdown\) needs the key 'paths'"),
        (SOURCE + 'kind = "markdown"\npaths = "a.md"\n', r"paths must be a non-empty list, got"),
        (SOURCE + 'kind = "markdown"\npaths = [3]\n', r"paths\[0\] must be non-empty text"),
        (SOURCE + 'kind="sqlite_fts"\npath="a.db"\ntable="t"\n', r"needs the key 'column'"),
        (
            SOURCE + 'kind="sqlite_fts"\npath="a.db"\ntable="t; drop"\ncolumn="c"\n',
            r"'s' \(sqlite_fts\) table must be an SQL identifier .*got 't; drop'",
        ),
        (
            SOURCE + 'kind="sqlite_fts"\npath="a.db"\ntable="t"\ncolumn="c"\nid_column="1x"\n',
            r"id_column must be an SQL identifier",
        ),
        (SOURCE + 'kind = "http"\nurl = "http://a"\n', r"'s' \(http\) needs the key 'text'"),
        (SOURCE + 'kind="http"\nurl="file:///etc/passwd"\ntext="t"\n', r"url must be an http"),
        (SOURCE + 'kind="http"\nurl="http://a"\ntext="t"\nmethod="PUT"\n', r"GET or POST"),
        (SOURCE + 'kind="http"\nurl="http://a"\ntext="t"\nbody={q="x"}\n', r"body is sent only"),
        (SOURCE + 'kind="http"\nurl="http://a"\ntext="a..b"\n', r"text has an empty part"),
        (SOURCE + 'kind="http"\nurl="http://a"\ntext="t"\nheaders={a=1}\n', r"headers.a must be"),
        (SOURCE + 'kind="http"\nurl="http://a"\ntext="t"\ntimeout_s=-1\n', r"timeout_s must be"),
        (
            SOURCE + 'kind = "chitta"\n' + SOURCE + 'kind = "markdown"\npaths = ["a.md"]\n',
            r"\[\[source\]\] #2 name 's' is used twice",
        ),
        ("source = 3\n", r"\[\[source\]\] must be an array of tables"),
        # Timeouts past an hour: a huge one overflows every wait (OverflowError, no answer).
        ("source_timeout_s = 1e308\n", r"source_timeout_s must be at most 3600 seconds"),
        (
            '[[model]]\nkind="ollama"\nurl="http://a"\nmodel="m"\ntimeout_s=1e300\n',
            r"#1 timeout_s must be at most 3600",
        ),
        (SOURCE + 'kind="http"\nurl="http://a"\ntext="t"\ntimeout_s=4e3\n', r"at most 3600"),
        # URLs and paths Python cannot take: errors naming the key, not a traceback.
        (SOURCE + 'kind="http"\nurl="http://[::1/"\ntext="t"\n', r"url is not a URL"),
        (SOURCE + 'kind="http"\nurl="http://a:port/"\ntext="t"\n', r"url is not a URL"),
        (
            SOURCE + 'kind="chitta_file"\npath="~no-such-user-here/x.db"\n',
            r"path cannot be expanded",
        ),
        (SOURCE + 'kind="markdown"\npaths=["a\\u0000.md"]\n', r"paths\[0\] must not hold a NUL"),
    ],
)
def test_bad_settings_name_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(BadConfig, match=message) as caught:
        load_cited_settings(None, tmp_path)
    assert str(caught.value).startswith(f"{path}: ")


@pytest.mark.parametrize(
    "headers",
    [
        '{ "X-Token" = "abc\\r\\nX-Evil: 1" }',  # a line break: a second header smuggled in
        '{ "X-Token" = "abc\\n" }',
        '{ "X-Token" = "tok\\u00e9n" }',  # not ASCII: http.client cannot send it
        '{ "X-Token" = " abc" }',
        '{ "X Token" = "abc" }',  # not a header name
        '{ "X-Token:" = "abc" }',
    ],
)
def test_http_headers_must_be_sendable_and_are_never_quoted(tmp_path: Path, headers: str) -> None:
    """http.client would refuse these at the request, with an error quoting the value (often a
    token) into the answer's errors and the log: refused here, naming the key only."""
    text = SOURCE + f'kind="http"\nurl="http://a"\ntext="t"\nheaders={headers}\n'
    with pytest.raises(BadConfig, match=r"'s' \(http\) headers") as caught:
        load_cited_settings(write(tmp_path, text), tmp_path)
    assert "abc" not in str(caught.value) and "tok" not in str(caught.value)


def test_http_headers_that_are_fine(tmp_path: Path) -> None:
    text = SOURCE + 'kind="http"\nurl="http://a"\ntext="t"\n'
    text += 'headers = { Authorization = "Bearer a.b-c_d~e+f/g=", "X-Client" = "chitta 1.0" }\n'
    (source,) = load_cited_settings(write(tmp_path, text), tmp_path).sources
    assert source.options["headers"] == {
        "Authorization": "Bearer a.b-c_d~e+f/g=",
        "X-Client": "chitta 1.0",
    }


def test_a_settings_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    """The daemon reads the path a client names: a FIFO would block its worker for good."""
    fifo = tmp_path / "cited.toml"
    os.mkfifo(fifo)
    caught: list[BaseException] = []

    def load() -> None:
        try:
            load_cited_settings(fifo, tmp_path)
        except BaseException as exc:  # noqa: BLE001 -- handed to the test's thread
            caught.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # blocked opening the FIFO: let it go, then fail
        with open(fifo, "w"):
            pass
        thread.join(5)
        pytest.fail("loading a FIFO blocked")
    assert len(caught) == 1 and isinstance(caught[0], BadConfig)
    assert str(caught[0]) == f"{fifo}: is not a regular file"


def test_a_huge_settings_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "# padding\n" * 200_000 + "limit = 3\n")  # about 2 MB
    with pytest.raises(BadConfig, match=f"{path}: is larger than 1 MB"):
        load_cited_settings(path, tmp_path)
