"""Real source files for the extraction tests, fetched once per machine from the registries
the project uses (PyPI sdists, npm tarballs, Debian packages) into an owner-only cache, or read
from the venv's own installed packages. A source whose registry cannot be reached is skipped."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter", reason="needs the 'code' extra: pip install 'chitta[code]'")

CACHE = Path(os.environ.get("CHITTA_TEST_SOURCES", Path.home() / ".cache/chitta-test-sources"))


@dataclass(frozen=True)
class Source:
    """One pinned package of real code: where it comes from and the folder its files sit in."""

    kind: str  # "site" (installed here), "sdist" (PyPI), "npm", "deb"
    name: str
    version: str
    root: str  # the folder, inside the unpacked package, that golden paths start from


SOURCES = {
    "click": Source("site", "click", "8.5.1", ""),
    "ms": Source("npm", "ms", "2.1.3", "package"),
    "rxjs": Source("npm", "rxjs", "7.8.1", "package"),
    "react-query": Source("npm", "@tanstack/react-query", "5.59.0", "package"),
    "ujson": Source("sdist", "ujson", "5.10.0", "ujson-5.10.0"),
    "jpype": Source("sdist", "JPype1", "1.5.0", "JPype1-1.5.0"),
    "memchr": Source(
        "deb", "librust-memchr-dev", "2.5.0-1", "usr/share/cargo/registry/memchr-2.5.0"
    ),
    "pkg-errors": Source(
        "deb", "golang-github-pkg-errors-dev", "0.9.1-2", "usr/share/gocode/src/github.com/pkg"
    ),
    "mustermann": Source(
        "deb",
        "ruby-mustermann",
        "3.0.0-2",
        "usr/share/rubygems-integration/all/gems/mustermann-3.0.0",
    ),
}


def _run(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        pytest.skip(f"could not fetch {command[-1]} ({' '.join(command[:2])}): {tail[0]}")


def _download(source: Source, into: Path) -> None:
    """Fetch and unpack ``source`` into the empty folder ``into``."""
    work = into / ".download"
    work.mkdir()
    if source.kind == "sdist":
        pip = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
        _run([*pip, "-d", str(work), f"{source.name}=={source.version}"], work)
    elif source.kind == "npm":
        if shutil.which("npm") is None:
            pytest.skip(f"npm is not installed: cannot fetch {source.name}@{source.version}")
        _run(["npm", "pack", "--silent", f"{source.name}@{source.version}"], work)
    elif source.kind == "deb":
        if shutil.which("apt-get") is None:
            pytest.skip(f"no apt-get: cannot fetch the Debian package {source.name}")
        _run(["apt-get", "download", f"{source.name}={source.version}"], work)
    for archive in work.iterdir():
        if archive.suffix == ".deb":
            _run(["dpkg-deb", "-x", str(archive), str(into)], work)
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(into, filter="data")
    shutil.rmtree(work)


def fetch(source: Source) -> Path:
    """The folder holding ``source``'s files: from the cache, fetched into it the first time."""
    if source.kind == "site":
        installed = importlib.metadata.version(source.name)
        if installed != source.version:
            pytest.skip(f"{source.name} {installed} is installed; the goldens pin {source.version}")
        return Path(importlib.metadata.distribution(source.name).locate_file(""))
    folder = CACHE / f"{source.kind}-{source.name.replace('/', '_')}-{source.version}"
    if not (folder / ".complete").exists():
        CACHE.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(CACHE, 0o700)
        staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=CACHE))
        try:
            _download(source, staging)
            (staging / ".complete").write_text(f"{source.name} {source.version}\n")
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder / source.root


@pytest.fixture(scope="session")
def real_source():
    """``real_source(key, relative_path)`` -> (path as the golden names it, the file's bytes)."""

    def read(key: str, relative: str) -> tuple[str, bytes]:
        return relative, (fetch(SOURCES[key]) / relative).read_bytes()

    return read
