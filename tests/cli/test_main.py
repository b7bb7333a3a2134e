"""The command line as a new user meets it: real processes, a real store, the real model.

Most tests run twice (the ``run`` fixture's parameter): with no daemon, each command opening
the store itself, and with a real daemon serving the store, each command going through it.
The assertions are the same: the output, the ``--json`` shape and the exit codes agree."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHITTA = [sys.executable, "-m", "chitta"]
WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"


def runner(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(tmp_path / "home")

    def call(*args: str, stdin: str | None = None, ok: bool = True, **extra: str):
        proc = subprocess.run(
            [*CHITTA, *args], capture_output=True, text=True, env={**env, **extra},
            input=stdin, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        if ok:
            assert proc.returncode == 0, proc.stderr
        return proc

    return call


@pytest.fixture(params=["in-process", "daemon"])
def run(request: pytest.FixtureRequest, tmp_path: Path, launch):
    """``chitta ARGS`` in a fresh home, with no daemon or through a real one."""
    if request.param == "daemon":
        launch(tmp_path / "home")
    return runner(tmp_path)


@pytest.fixture
def run_alone(tmp_path: Path):
    """``chitta ARGS`` in a fresh home where no daemon runs (for what only a command that
    opens the store itself can meet: a missing store, a store another process holds)."""
    return runner(tmp_path)


def test_the_walkthrough_of_the_readme(run, tmp_path: Path) -> None:
    mid = run("remember", WAL, "--kind", "wisdom", "--realm", "demo",
              "--tags", "storage,decision").stdout.strip()  # fmt: skip
    run("remember", "Alice prefers tabs over spaces in Python code", "--realm", "demo")
    human = run("recall", "why not our own write-ahead log?", "--realm", "demo").stdout
    assert mid in human and "sem#1" in human and "kw#1" in human
    data = json.loads(run("recall", "why not our own write-ahead log?", "--realm", "demo",
                          "--json").stdout)  # fmt: skip
    assert data["ok"] and data["hits"][0]["id"] == mid
    assert set(data["hits"][0]["lanes"]) == {"sem", "kw"}
    exported = run("export", "--realm", "demo").stdout
    (tmp_path / "demo.jsonl").write_text(exported)
    imported = json.loads(run("import", str(tmp_path / "demo.jsonl"), "--into", "other",
                              "--json").stdout)  # fmt: skip
    assert imported["imported"]["memories"] == 2 and imported["bad_lines"] == 0
    run("forget", mid)
    status = json.loads(run("status", "--json").stdout)
    assert status["per_realm"] == {"demo": 1, "other": 2} and status["forgotten"] == 1
    assert status["model"]["dim"] == 384
    run("restore", mid)
    assert json.loads(run("show", mid, "--json").stdout)["memory"]["kind"] == "wisdom"


def test_files_are_owner_only(run, tmp_path: Path) -> None:
    run("remember", WAL)
    home = tmp_path / "home"
    assert home.stat().st_mode & 0o777 == 0o700
    assert (home / "default.db").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["remember", "short"], 2, "at least 10"),
        (["remember", WAL, "--kind", "fact"], 2, "unknown kind 'fact'"),
        (["remember", WAL, "--tags", "a,,b"], 2, "empty item"),
        (["remember", WAL, "--event-time", "someday"], 2, "ISO 8601"),
        (["remember", WAL, "--realm", "bad realm"], 2, "bad realm"),
        (["remember", "x" * 40000], 2, "limit is 32,768"),
        (["recall", "anything", "--strategy", "psychic"], 2, "unknown strategy"),
        (["recall", "anything", "--fusion", "borda"], 2, "unknown fusion 'borda'; choose one"),
        (["recall", "anything", "--ablate", "hdc,psychic"], 2, "unknown lane 'psychic'"),
        (["forget", "01NOSUCHMEMORY000000000000"], 3, "does not exist"),
        (["--store", "../escape", "status"], 2, "bad store name"),
        (["import", "missing.jsonl"], 2, "no file at"),
    ],
)
def test_bad_input_exits_non_zero_with_a_specific_message(run, args, code, needle) -> None:
    run("remember", WAL)  # a store exists, so errors are about the input
    before = json.loads(run("status", "--json").stdout)
    proc = run(*args, ok=False)
    assert proc.returncode == code, proc.stderr
    assert needle in proc.stderr and proc.stderr.startswith("error: ")
    after = json.loads(run("status", "--json").stdout)
    assert after["memories"] == before["memories"]


def test_recall_on_a_missing_store_says_so(run_alone) -> None:
    proc = run_alone("recall", "anything", ok=False)
    assert proc.returncode == 4 and "no store at" in proc.stderr


def test_json_errors_are_json(run) -> None:
    proc = run("remember", "short", "--json", ok=False)
    data = json.loads(proc.stdout)
    assert data == {"ok": False, "error": "content_too_short", "message": data["message"]}


def test_remember_from_stdin_and_dedup_message(run) -> None:
    first = run("remember", "-", stdin=WAL + "\n").stdout.strip()
    again = run("remember", WAL.replace("because", "since")).stdout
    assert again.startswith(first) and "near-duplicate" in again
    note = "Run the linter before committing: make lint catches unused imports"
    mine = run("remember", note, "--session", "s1").stdout.strip()
    burst = run("remember", "Before committing, run make lint: it catches unused imports",
                "--session", "s1").stdout  # fmt: skip
    assert burst.startswith(mine) and "this session stored moments ago" in burst


def test_import_reports_bad_lines(run, tmp_path: Path) -> None:
    good = json.dumps({"kind": "wisdom", "content": "A good memory about backups"})
    (tmp_path / "mixed.jsonl").write_text(f"{good}\nnot json\n")
    proc = run("import", str(tmp_path / "mixed.jsonl"))
    assert "imported 1 memories" in proc.stderr and "line 2: invalid JSON" in proc.stderr
    (tmp_path / "bad.jsonl").write_text("not json\n")
    assert run("import", str(tmp_path / "bad.jsonl"), ok=False).returncode == 2


def test_backup_and_restore(run, tmp_path: Path) -> None:
    mid = run("remember", WAL).stdout.strip()
    run("backup", str(tmp_path / "snap.db"))
    run("purge", mid)
    assert run("show", mid, ok=False).returncode == 3
    out = run("restore-backup", str(tmp_path / "snap.db")).stdout
    assert "pre-restore" in out
    assert json.loads(run("show", mid, "--json").stdout)["memory"]["id"] == mid


def test_a_held_store_names_the_holder(run_alone, tmp_path: Path) -> None:
    from chitta.store.sqlite import Store

    run_alone("remember", WAL)
    with Store(tmp_path / "home" / "default.db"):
        proc = run_alone("remember", "Another memory while the store is held", ok=False)
    assert proc.returncode == 4 and f"held by pid {os.getpid()}" in proc.stderr


def test_a_wrong_model_names_both_and_the_fix(run_alone, tmp_path: Path) -> None:
    from chitta.embed.loader import default_model_files

    run = run_alone
    run("remember", WAL)
    folder = tmp_path / "renamed-model"
    folder.mkdir()
    for src in default_model_files():
        (folder / src.name).symlink_to(src)
    other = {"CHITTA_EMBED_MODEL_DIR": str(folder)}
    proc = run("recall", "write-ahead log", ok=False, **other)
    assert proc.returncode == 4
    assert "renamed-model" in proc.stderr and "all-MiniLM-L6-v2-int8" in proc.stderr
    assert "chitta reembed" in proc.stderr
    status = json.loads(run("status", "--json", **other).stdout)
    assert status["store_model_matches"] is False
    assert status["store_model"]["name"] == "all-MiniLM-L6-v2-int8"
    assert "re-embedded 1 memories" in run("reembed", **other).stdout
    assert run("recall", "write-ahead log", **other).returncode == 0


def test_help_lists_the_commands(run) -> None:
    out = run("--help").stdout
    for command in ("remember", "recall", "forget", "export", "import", "status", "reembed"):
        assert command in out


def test_recall_lanes_fusion_and_corrections_from_the_command_line(run) -> None:
    mid = run("remember", WAL, "--realm", "demo").stdout.strip()
    away = run("remember", "Our other project logs to a custom WAL file", "--realm", "b").stdout
    fix = run("remember", "Never turn WAL off: the default journal loses writes", "--realm",
              "demo", "--kind", "correction").stdout.strip()  # fmt: skip
    assert "field" in run("recall", "--help").stdout
    data = json.loads(run("recall", "WAL log", "--realm", "demo", "--strategy", "field",
                          "--fusion", "rsf", "--cross-realm", "--json").stdout)  # fmt: skip
    assert data["lanes_run"] == ["sem", "kw", "tag", "hdc", "graph", "ctx", "common", "dated",
                                 "ep", "theme", "code", "when", "xr"]  # fmt: skip
    assert away.strip() in [h["id"] for h in data["hits"] if set(h["lanes"]) == {"xr"}]
    assert [(c["id"], c["keys"]) for c in data["corrections"]] == [(fix, ["wal"])]
    no_hdc = json.loads(run("recall", "WAL log", "--realm", "demo", "--cross-realm",
                            "--disable-hdc", "--json").stdout)  # fmt: skip
    assert no_hdc["lanes_run"] == ["sem", "kw", "tag", "ctx", "common", "code", "when", "dated",
                                   "xr"]  # fmt: skip
    human = run("recall", "WAL log", "--realm", "demo", "--cross-realm", COLUMNS="200").stdout
    assert mid in human and "xr@b#1" in human and f"correction {fix} (key wal)" in human
    env = run("recall", "WAL log", "--realm", "demo", "--strategy", "field", "--json",
              CHITTA_ABLATE_LANES="hdc")  # fmt: skip
    assert "hdc" not in json.loads(env.stdout)["lanes_run"]


def test_every_lifecycle_command_works_and_answers_json(run, tmp_path: Path) -> None:
    old = run("remember", WAL, "--realm", "demo").stdout.strip()
    new = run("remember", "We keep SQLite WAL: crash recovery comes free and it is fast",
              "--realm", "demo", "--kind", "wisdom").stdout.strip()  # fmt: skip
    assert json.loads(run("supersede", old, new, "--json").stdout) == {
        "ok": True, "old_id": old, "new_id": new,
    }  # fmt: skip
    assert json.loads(run("show", old, "--json").stdout)["memory"]["superseded_by"] == new
    assert json.loads(run("decay", "--json").stdout)["ok"] is True
    assert json.loads(run("purge", old, "--json").stdout) == {"ok": True, "purge": [old]}
    assert run("show", old, ok=False).returncode == 3
    done = json.loads(run("reembed", "--json").stdout)
    assert done["reembedded"] == 1 and done["model"]["dim"] == 384
    shown = json.loads(run("calibrate", "--show", "--json").stdout)
    assert shown["ok"] and shown["calibration"]["source"].startswith("default")
    snap = tmp_path / "snap.db"
    assert json.loads(run("backup", str(snap), "--json").stdout)["path"] == str(snap)
    restored = json.loads(run("restore-backup", "snap.db", "--json").stdout)
    assert restored["path"] == str(snap) and "pre-restore" in restored["saved"]


def test_supersede_across_realms_is_refused_and_changes_nothing(run) -> None:
    a = run("remember", WAL, "--realm", "one").stdout.strip()
    b = run("remember", "Alice prefers tabs over spaces in Python code", "--realm",
            "two").stdout.strip()  # fmt: skip
    proc = run("supersede", a, b, ok=False)
    assert proc.returncode == 2 and "only supersede one of its own scope" in proc.stderr
    assert json.loads(run("show", a, "--json").stdout)["memory"]["superseded_by"] is None
    hits = json.loads(run("recall", "SQLite WAL", "--realm", "one", "--json").stdout)["hits"]
    assert [h["id"] for h in hits] == [a]


def test_forget_then_restore_as_forget_says(run) -> None:
    mid = run("remember", WAL).stdout.strip()
    assert "restore" in run("forget", "--help").stdout
    run("forget", mid)
    assert json.loads(run("recall", "SQLite WAL crash", "--json").stdout)["hits"] == []
    run("restore", mid)
    hits = json.loads(run("recall", "SQLite WAL crash", "--json").stdout)["hits"]
    assert [h["id"] for h in hits] == [mid]


def test_export_to_a_file_is_owner_only_and_import_reads_stdin(run, tmp_path: Path) -> None:
    run("remember", WAL, "--realm", "demo")
    out = tmp_path / "dump.jsonl"
    done = json.loads(run("export", "--realm", "demo", "-o", "dump.jsonl", "--json").stdout)
    assert done["counts"]["memories"] == 1 and done["path"] == str(out)
    assert out.stat().st_mode & 0o777 == 0o600
    again = json.loads(run("import", "-", "--realm", "copy", "--json",
                           stdin=out.read_text()).stdout)  # fmt: skip
    assert again["imported"]["memories"] == 1
    assert not list((tmp_path / "home").glob(".import-stdin-*"))  # the spool is gone
    status = json.loads(run("status", "--json").stdout)
    assert status["per_realm"] == {"demo": 1, "copy": 1}


def test_old_spellings_still_work(run) -> None:
    run("remember", WAL, "--agent-id", "a1")
    data = json.loads(run("recall", "SQLite WAL", "--disable-hdc", "--strategy", "field",
                          "--agent", "a1", "--json").stdout)  # fmt: skip
    assert "hdc" not in data["lanes_run"] and data["hits"]
    assert "--disable-hdc" not in run("recall", "--help").stdout


@pytest.mark.parametrize("where", ["in-process", "daemon"])
def test_export_and_backup_are_owner_only_under_umask_000(where, tmp_path: Path, launch,
                                                          umask0) -> None:  # fmt: skip
    run = runner(tmp_path)
    if where == "daemon":
        launch(tmp_path / "home")  # started under umask 000 too: it writes the files
    run("remember", WAL, "--realm", "demo")
    tmp_path.chmod(0o755)
    old = tmp_path / "old.jsonl"
    old.write_text("an older export\n")
    old.chmod(0o666)
    for target in ("old.jsonl", "new/folder/dump.jsonl", "snap.db"):
        command = "backup" if target.endswith(".db") else "export"
        run(command, target) if command == "backup" else run("export", "-o", target)
        assert os.stat(tmp_path / target).st_mode & 0o777 == 0o600, target
    assert WAL in old.read_text(encoding="utf-8")
    for folder in ("new", "new/folder", "home"):
        assert os.stat(tmp_path / folder).st_mode & 0o777 == 0o700, folder
    assert os.stat(tmp_path).st_mode & 0o777 == 0o755  # not made by chitta: left alone
    for name in ("default.db", "default.db-wal", "default.db-shm"):
        if (tmp_path / "home" / name).exists():
            assert os.stat(tmp_path / "home" / name).st_mode & 0o777 == 0o600, name


def test_an_export_that_cannot_be_written_is_a_clear_error(run, tmp_path: Path,
                                                           full_device: Path) -> None:  # fmt: skip
    run("remember", WAL, "--realm", "demo")
    proc = run("export", "-o", str(full_device), ok=False)
    assert proc.returncode == 4 and "Traceback" not in proc.stderr, proc.stderr
    assert f"cannot write {full_device}: No space left on device" in proc.stderr
    data = json.loads(run("export", "-o", str(full_device), "--json", ok=False).stdout)
    assert data["error"] == "write_failed" and str(full_device) in data["message"]
    assert full_device.is_char_device()
    for args in (["export"], ["export", "--json"], ["recall", "WAL"]):  # stdout on a full disk
        with full_device.open("w") as full:
            proc = subprocess.run([*CHITTA, *args], stdout=full, stderr=subprocess.PIPE,
                                  text=True, env={**os.environ,
                                                  "CHITTA_HOME": str(tmp_path / "home")},
                                  cwd=tmp_path, timeout=120)  # fmt: skip
        assert proc.returncode == 4 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert "cannot write to standard output: No space left on device" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [["status"], ["status", "--json"], ["--help"], ["--version"], ["model", "--help"],
     ["hooks", "--help"], ["remember", "--help"]],
)  # fmt: skip
def test_any_command_whose_stdout_is_full_is_write_failed(args, tmp_path: Path,
                                                          full_device: Path) -> None:  # fmt: skip
    """Commands that print outside the operations' output (rich, click's help and version)
    fail as write_failed too: one line on stderr, exit 4, no traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    with full_device.open("w") as full:
        proc = subprocess.run([*CHITTA, *args], stdout=full, stderr=subprocess.PIPE, text=True,
                              env={**env, "CHITTA_HOME": str(tmp_path / "home")}, cwd=tmp_path,
                              timeout=120)  # fmt: skip
    assert proc.returncode == 4 and "Traceback" not in proc.stderr, (args, proc.stderr)
    assert proc.stderr.strip().splitlines() == [
        "error: cannot write to standard output: No space left on device"
    ], proc.stderr


def test_a_command_whose_stdout_is_closed_early_is_write_failed(tmp_path: Path) -> None:
    """A reader that goes away (``chitta status | true``): write_failed, not a traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([*CHITTA, "--help"], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, env={**env, "CHITTA_HOME": str(tmp_path / "home")},
                              timeout=120)  # fmt: skip
    finally:
        os.close(write_end)
    assert proc.returncode == 4 and "Traceback" not in proc.stderr, proc.stderr
    assert "error: cannot write to standard output: Broken pipe" in proc.stderr, proc.stderr


def _line(text: str, encoding: str = "utf-8") -> bytes:
    return (json.dumps({"kind": "wisdom", "content": text}, ensure_ascii=False) + "\n").encode(
        encoding
    )


def test_an_import_line_that_is_not_utf8_is_a_bad_line(run, tmp_path: Path) -> None:
    data = _line("The café on the corner opens at seven", "latin-1") + _line(
        "Backups run nightly at two in the morning"
    )
    (tmp_path / "latin1.jsonl").write_bytes(data)
    env = {**os.environ, "CHITTA_HOME": str(tmp_path / "home")}
    for source, stdin in (("latin1.jsonl", None), ("-", data)):  # a file, and stdin
        proc = subprocess.run(
            [*CHITTA, "import", source, "--realm", f"r{len(source)}", "--json"],
            input=stdin, capture_output=True, cwd=tmp_path, timeout=120, env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr  # as with any bad line: the rest landed
        report = json.loads(proc.stdout)
        assert report["imported"]["memories"] == 1 and report["bad_lines"] == 1, report
        assert report["errors"][0]["line"] == 1 and "UTF-8" in report["errors"][0]["error"]
    exported = run("export").stdout
    assert "\ufffd" not in exported and "caf" not in exported
    (tmp_path / "only.jsonl").write_bytes(_line("Rien à importer ici", "latin-1"))
    assert run("import", "only.jsonl", ok=False).returncode == 2  # nothing usable at all
