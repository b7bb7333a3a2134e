"""`chitta serve --http` as a user starts it: the address rules, TLS, a port in use, and
`chitta http-token`."""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import json
import os
import socket
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from chitta.config import Settings
from chitta.daemon.client import DaemonClient


def chitta(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHITTA_")}
    env["CHITTA_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=timeout)  # fmt: skip


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))  # fmt: skip
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return cert_path, key_path


def test_http_token_prints_the_same_token_until_asked_for_a_new_one(tmp_path: Path) -> None:
    home = tmp_path / "h"
    first = chitta(home, "http-token")
    assert first.returncode == 0 and len(first.stdout.strip()) >= 40
    assert chitta(home, "http-token").stdout == first.stdout
    assert chitta(home, "http-token", "--new").stdout != first.stdout
    shown = json.loads(chitta(home, "http-token", "--json").stdout)
    assert shown["token"] == (home / "http-token").read_text().strip()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--http", "10.1.2.3:8765"), "needs TLS"),
        (("--http", "nope"), "HOST:PORT"),
        (("--tls-cert", "c.pem"), "go together"),
        (("--tls-cert", "c.pem", "--tls-key", "k.pem"), "are for --http"),
    ],
)
def test_serve_refuses_a_bad_http_setup_before_it_starts(tmp_path: Path, args, needle) -> None:
    done = chitta(tmp_path / "h", "serve", *args)
    assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "h" / "default.db").exists()  # the store was never opened


def test_a_port_in_use_is_said_and_nothing_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = chitta(tmp_path / "h", "serve", "--http", f"127.0.0.1:{port}")
    assert done.returncode == 2 and "cannot listen there" in done.stderr


def test_a_certificate_that_does_not_load_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c.pem").write_text("not a certificate")
    (tmp_path / "k.pem").write_text("not a key")
    done = chitta(tmp_path / "h", "serve", "--http", "127.0.0.1:0", "--tls-cert",
                  str(tmp_path / "c.pem"), "--tls-key", str(tmp_path / "k.pem"))  # fmt: skip
    assert done.returncode == 2 and "cannot be used" in done.stderr


def test_serve_over_tls(tmp_path: Path, launch) -> None:
    cert, key = make_certificate(tmp_path)
    home = tmp_path / "h"
    launch(home, "--http", "127.0.0.1:0", "--tls-cert", str(cert), "--tls-key", str(key))
    with DaemonClient(Settings(home=home).socket_path) as client:
        url = client.call("memory_status")["daemon"]["http"]
    assert url.startswith("https://127.0.0.1:")
    port = int(url.rsplit(":", 1)[1])
    token = (home / "http-token").read_text().strip()
    context = ssl.create_default_context(cafile=str(cert))
    request = urllib.request.Request(f"https://127.0.0.1:{port}/api/memory_status", data=b"{}",
                                     headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    with urllib.request.urlopen(request, context=context, timeout=30) as reply:
        assert reply.status == 200 and json.load(reply)["ok"]
        assert reply.headers["strict-transport-security"].startswith("max-age=")
    with pytest.raises((OSError, http.client.HTTPException)):  # plain HTTP gets no answer
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10)


def test_the_listening_socket_is_tcp_so_nagle_is_off_for_its_connections() -> None:
    # asyncio sets TCP_NODELAY only on sockets made with IPPROTO_TCP: without it, every
    # keep-alive answer waited ~40 ms for the client's delayed ACK (docs/benchmarks.md).
    from chitta.http.app import Address, HttpFace

    face = HttpFace(Address("127.0.0.1", 0, False))
    try:
        assert face.sock.proto == socket.IPPROTO_TCP and face.address.port > 0
    finally:
        face.stop()
