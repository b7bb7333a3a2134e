"""The HTTP face's access token: ``<home>/http-token``, made owner-only on first use.

Every request but the health check carries it (``Authorization: Bearer …``, or the browser's
session cookie, got by giving it once on the login page). ``chitta http-token`` prints it
(``--new`` replaces it: every client then needs the new one).
"""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from chitta.errors import BadConfig
from chitta.files import private_dir, tighten, write_text_private

FILE_NAME = "http-token"
#: Bytes of randomness in a token (43 URL-safe characters).
TOKEN_BYTES = 32
#: A token file longer than this is not one of ours.
MAX_TOKEN_CHARS = 256


def token_path(home: Path) -> Path:
    return home / FILE_NAME


def read_token(home: Path, *, create: bool = True, new: bool = False) -> str:
    """The token of ``home``: made (owner-only) when there is none and ``create``, or when
    ``new``; a :class:`BadConfig` for a file that holds no token."""
    path = token_path(home)
    if new or (create and not path.exists()):
        private_dir(home)
        write_text_private(path, secrets.token_urlsafe(TOKEN_BYTES) + "\n")
    try:
        text = path.read_text(encoding="ascii")[: MAX_TOKEN_CHARS + 1].strip()
    except FileNotFoundError:
        raise BadConfig(f"no HTTP token at {path}: `chitta http-token` makes one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadConfig(f"{path}: cannot be read: {exc}") from None
    if not 16 <= len(text) <= MAX_TOKEN_CHARS or any(c.isspace() for c in text):
        raise BadConfig(f"{path} holds no usable token: `chitta http-token --new` makes one")
    tighten(path)
    return text


def same(given: str | None, token: str) -> bool:
    """Whether ``given`` is ``token``, compared in constant time."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())
