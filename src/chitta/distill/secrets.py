"""What looks like a credential, so that the distiller never stores (or sends) it (issue 22,
part 4; docs/distill.md).

Pure and deliberately broad: a sentence that holds any of these is no fragment, whatever
else it says. A missed fragment costs little; a password kept as a "preference" and
recalled into every session costs a great deal.

- a secret named and given: ``password``, ``passwd``, ``pwd``, ``secret``, ``token``, ``api
  key``, ``access key``, ``private key``, ``client secret``, ``auth`` followed within a few
  characters by ``:`` or ``=`` or ``is`` and a value;
- a key of a known shape: AWS (``AKIA…``/``ASIA…``), GitHub (``ghp_``, ``gho_``,
  ``github_pat_``), Slack (``xox[abpr]-``), OpenAI and Anthropic style (``sk-…``), Google
  (``AIza…``), Stripe (``sk_live_``, ``rk_live_``), a JSON web token (``eyJ….eyJ…``), a PEM
  block (``-----BEGIN … KEY-----``), a URL with a password in it (``scheme://user:pw@host``);
- a long random-looking string: 32 or more characters of letters and digits (with ``-``,
  ``_``, ``+``, ``/``, ``=``) mixing letters and digits.
"""

from __future__ import annotations

import re

_NAMED = re.compile(
    r"\b(?:password|passwd|pwd|passphrase|secret|token|api[ _-]?key|access[ _-]?key|"
    r"private[ _-]?key|client[ _-]?secret|auth(?:orization)?)\b.{0,12}?(?:[:=]|\bis\b)\s*\S{4,}",
    re.IGNORECASE,
)
_SHAPED = re.compile(
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bxox[abpr]-[A-Za-z0-9-]{10,}|\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"
    r"|\bAIza[0-9A-Za-z_-]{30,}|\b[sr]k_live_[0-9A-Za-z]{16,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}|-----BEGIN [A-Z ]*KEY-----"
    r"|\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@",
)
_RANDOM = re.compile(r"[A-Za-z0-9_\-+/=]{32,}")


def looks_secret(text: str) -> bool:
    """Whether ``text`` holds something that looks like a credential (module docstring)."""
    if _NAMED.search(text) or _SHAPED.search(text):
        return True
    return any(
        re.search(r"[A-Za-z]", m.group()) and re.search(r"\d", m.group())
        for m in _RANDOM.finditer(text)
    )
