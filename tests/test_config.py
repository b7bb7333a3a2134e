"""Settings come from CHITTA_* (or legacy CC_SOUL_*) variables, read only when asked."""

from pathlib import Path

import pytest

from chitta.config import load_settings, store_path
from chitta.errors import BadArgument, BadConfig


def test_defaults_without_environment(tmp_path: Path) -> None:
    s = load_settings({"XDG_DATA_HOME": str(tmp_path)})
    assert s.home == tmp_path / "chitta"
    assert s.store == "default"
    assert s.store_path == tmp_path / "chitta" / "default.db"
    assert s.embed.backend == "onnx"


def test_chitta_spelling_and_legacy_alias() -> None:
    assert load_settings({"CC_SOUL_HOME": "/x/legacy"}).home == Path("/x/legacy")
    both = {"CC_SOUL_HOME": "/x/legacy", "CHITTA_HOME": "/x/new"}
    assert load_settings(both).home == Path("/x/new")
    assert load_settings({"CC_SOUL_STORE": "work"}).store == "work"


def test_embed_settings_are_read() -> None:
    s = load_settings(
        {
            "CHITTA_EMBED_BACKEND": "ollama",
            "CHITTA_EMBED_URL": "http://127.0.0.1:1",
            "CHITTA_EMBED_MODEL": "m",
            "CHITTA_EMBED_TIMEOUT_S": "2.5",
        }
    )
    assert (s.embed.backend, s.embed.url, s.embed.model, s.embed.timeout_s) == (
        "ollama",
        "http://127.0.0.1:1",
        "m",
        2.5,
    )


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"CHITTA_EMBED_BACKEND": "torch"}, "EMBED_BACKEND"),
        ({"CHITTA_EMBED_TIMEOUT_S": "soon"}, "EMBED_TIMEOUT_S"),
        ({"CHITTA_EMBED_THREADS": "two"}, "EMBED_THREADS"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], needle: str) -> None:
    with pytest.raises(BadArgument, match=needle):
        load_settings(env)


@pytest.mark.parametrize("name", ["", "a/b", ".hidden", "x" * 65])
def test_bad_store_names_are_refused(name: str) -> None:
    with pytest.raises(BadArgument, match="store name"):
        store_path(Path("/tmp"), name)


def test_a_store_is_a_name_under_the_home_or_a_database_url(tmp_path: Path) -> None:
    named = load_settings({"CHITTA_HOME": str(tmp_path), "CHITTA_STORE": "work"})
    assert named.store_location == str(tmp_path / "work.db") and not named.store_is_database
    assert named.socket_path == tmp_path / "chitta-work.sock"
    assert named.spool_path == tmp_path / "spool" / "work.jsonl"
    url = "postgresql://ann:s3cret@db.example/chitta"
    team = load_settings({"CHITTA_HOME": str(tmp_path), "CHITTA_STORE": url})
    assert team.store_is_database and team.store_location == url  # as given: to connect
    assert team.store_shown == "postgresql://ann@db.example/chitta"
    sock = team.socket_path
    assert sock.parent == tmp_path and sock.name.startswith("chitta-") and "s3cret" not in str(sock)
    assert len(sock.stem) == len("chitta-") + 12
    other_password = load_settings({"CHITTA_HOME": str(tmp_path), "CHITTA_STORE": url + "x"})
    assert other_password.socket_path != sock  # another database (the name ends in x)
    assert team.spool_path == tmp_path / "spool" / f"{sock.stem}.jsonl"
    with pytest.raises(BadArgument, match="is a database, not a file"):
        team.store_path  # noqa: B018


def test_recall_switches() -> None:
    s = load_settings({"CHITTA_ABLATE_LANES": "kw, sem", "CC_SOUL_RECALL_PROFILE": "1"})
    assert s.recall.ablate_lanes == ("kw", "sem")
    assert s.recall.profile and not s.recall.admit_debug
    assert load_settings({"CHITTA_ADMIT_DEBUG": "true"}).recall.admit_debug
    with pytest.raises(BadArgument, match="unknown lane 'bogus' in CHITTA_ABLATE_LANES"):
        load_settings({"CHITTA_ABLATE_LANES": "bogus"})
    with pytest.raises(BadArgument, match="RECALL_PROFILE must be 0 or 1"):
        load_settings({"CHITTA_RECALL_PROFILE": "loud"})


def test_the_socket_path_defaults_under_the_home_and_can_be_moved() -> None:
    assert load_settings({"CHITTA_HOME": "/h"}).socket_path == Path("/h/chitta.sock")
    moved = load_settings({"CHITTA_HOME": "/h", "CHITTA_SOCKET_PATH": "/run/c.sock"})
    assert moved.socket_path == Path("/run/c.sock")


def test_rerank_settings_default_to_none_configured() -> None:
    rerank = load_settings({}).rerank
    assert (rerank.onnx_dir, rerank.model_dir, rerank.threads, rerank.max_len) == (
        None, None, 8, 128,
    )  # fmt: skip
    assert not rerank.configured


def test_rerank_settings_are_read_with_the_legacy_alias() -> None:
    rerank = load_settings(
        {
            "CHITTA_RERANK_ONNX_DIR": "/m/ce-int8",
            "CC_SOUL_RERANK_MODEL_DIR": "/m/ce",
            "CHITTA_RERANK_THREADS": "2",
            "CC_SOUL_RERANK_MAX_LEN": "256",
        }
    ).rerank
    assert (rerank.onnx_dir, rerank.model_dir) == (Path("/m/ce-int8"), Path("/m/ce"))
    assert (rerank.threads, rerank.max_len, rerank.configured) == (2, 256, True)


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"CHITTA_RERANK_THREADS": "eight"}, "CHITTA_RERANK_THREADS must be an integer"),
        ({"CHITTA_RERANK_THREADS": "2.5"}, "CHITTA_RERANK_THREADS must be an integer"),
        ({"CHITTA_RERANK_THREADS": "0"}, "CHITTA_RERANK_THREADS must be between 1 and 256"),
        ({"CC_SOUL_RERANK_MAX_LEN": "4"}, "CHITTA_RERANK_MAX_LEN must be between 8 and 512"),
        ({"CHITTA_RERANK_MAX_LEN": "100000"}, "CHITTA_RERANK_MAX_LEN must be between 8 and 512"),
        ({"CHITTA_RERANK_MAX_LEN": "long"}, "CHITTA_RERANK_MAX_LEN must be an integer"),
    ],
)
def test_bad_rerank_numbers_are_bad_config(env: dict[str, str], needle: str) -> None:
    with pytest.raises(BadConfig, match=needle):
        load_settings(env)


def test_the_on_demand_daemon_idle_exit_is_read_and_checked() -> None:
    assert load_settings({}).daemon_idle_s == 1800  # 30 minutes unless told
    assert load_settings({"CHITTA_DAEMON_IDLE_S": "0"}).daemon_idle_s == 0  # never
    assert load_settings({"CC_SOUL_DAEMON_IDLE_S": "90"}).daemon_idle_s == 90
    for raw in ("-1", "soon", "1.5", "30m"):
        with pytest.raises(BadConfig, match="CHITTA_DAEMON_IDLE_S"):
            load_settings({"CHITTA_DAEMON_IDLE_S": raw})


@pytest.mark.parametrize(
    ("name", "field", "default"),
    [("DAEMON_MAX_CONNECTIONS", "daemon_max_connections", 128),
     ("DAEMON_CONNECTION_IDLE_S", "daemon_connection_idle_s", 60),
     ("DAEMON_WORKERS", "daemon_workers", 16)],
)  # fmt: skip
def test_the_daemon_limits_are_read_and_checked(name: str, field: str, default: int) -> None:
    assert getattr(load_settings({}), field) == default
    assert getattr(load_settings({f"CHITTA_{name}": "7"}), field) == 7
    for raw in ("0", "-1", "many", "1.5", "1000000"):
        with pytest.raises(BadConfig, match=f"CHITTA_{name}"):
            load_settings({f"CHITTA_{name}": raw})


def test_whether_mcp_offers_the_code_tool_is_read_and_checked() -> None:
    assert load_settings({}).mcp_code == "auto"  # once code is indexed (code/offered.py)
    assert load_settings({"CHITTA_MCP_CODE": " ON "}).mcp_code == "on"
    assert load_settings({"CHITTA_MCP_CODE": "off"}).mcp_code == "off"
    for raw in ("yes", "1", "always"):
        with pytest.raises(BadConfig, match="CHITTA_MCP_CODE must be one of auto, on, off"):
            load_settings({"CHITTA_MCP_CODE": raw})


def test_distill_is_on_unless_turned_off() -> None:
    assert load_settings({"CHITTA_HOME": "/tmp/x"}).distill is True
    assert load_settings({"CHITTA_HOME": "/tmp/x", "CHITTA_DISTILL": "0"}).distill is False
    assert load_settings({"CHITTA_HOME": "/tmp/x", "CHITTA_LEARN": "0"}).recall.learn is False
    with pytest.raises(BadArgument, match="CHITTA_DISTILL"):
        load_settings({"CHITTA_HOME": "/tmp/x", "CHITTA_DISTILL": "maybe"})
