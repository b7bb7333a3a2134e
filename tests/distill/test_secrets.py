"""What looks like a credential is never a fragment (distill/secrets.py)."""

from __future__ import annotations

import pytest

from chitta.distill.secrets import looks_secret


@pytest.mark.parametrize(
    "text",
    [
        "the password is Tr0ub4dor&3 for the staging box",
        "set API_KEY=abcd1234efgh in the env file",
        "token: 9f8e7d6c5b4a",
        "AWS key AKIAIOSFODNN7EXAMPLE was rotated",
        "use ghp_1234567890abcdefghijABCDEFGHIJ for the bot",
        "xoxb-1234567890-abcdefghij is the slack bot token",
        "export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234",
        "the header was eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
        "-----BEGIN RSA PRIVATE KEY----- follows",
        "connect to postgresql://admin:s3cret@db.internal/app",
        "the digest a3f5c9e1b2d4f6a8c0e2b4d6f8a0c2e4f6a8b0c2 is the id",
    ],
)  # fmt: skip
def test_credentials_are_caught(text: str) -> None:
    assert looks_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "I prefer tabs over spaces in every Python file.",
        "We reset the password policy to require 12 characters.",
        "The token bucket refills at 10 requests a second.",
        "Use postgresql://localhost/app for the tests.",
        "Pin numpy to 1.26 and onnxruntime to 1.18.",
    ],
)  # fmt: skip
def test_ordinary_text_is_not(text: str) -> None:
    assert not looks_secret(text)
