"""Synthesis: the cited answer from a model chain, or the extractive answer when none answers.

The models in ``SynthSettings.models`` are tried in order: "openai" (an OpenAI-compatible chat
endpoint, POST {url}/chat/completions) and "ollama" (POST {url}/api/generate). A step that
fails, times out or answers something unusable (not JSON, fields missing, empty text) adds
"model <kind>:<model>: <what went wrong>" to the errors and the chain goes on; the first usable
answer wins, including a NO_ANSWER_AVAILABLE abstention. After the last model — or with none
configured — comes the extractive answer (cited/extractive.py).

An answer citing ids that are not among the citations keeps its text; those citations are
removed from it and an error note names them. An answer citing nothing is kept with a note.
Standard library HTTP only (cited/transport.py: the whole exchange within the endpoint's
``timeout_s``, no redirects, which would forward the bearer token); errors name the endpoint
and the cause, never memory text nor the token.
"""

from __future__ import annotations

import json
import logging
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chitta.cited.abstain import EXTRACTIVE_NO_MATCH, model_abstention
from chitta.cited.base import Citation
from chitta.cited.extractive import extractive_answer
from chitta.cited.settings import ModelEndpoint, SynthSettings
from chitta.cited.transport import fetch
from chitta.embed.http import _excerpt, _keys
from chitta.errors import ChittaError

log = logging.getLogger(__name__)

#: Characters of one citation's content shown to the model.
CONTEXT_CHARS = 1000

PROMPT_TEMPLATE = """\
You answer questions from a person's memory stores, using only the numbered context below. \
Follow these rules strictly:

1. Be concise: answer in 2-3 sentences. Use bullet points only if necessary.
2. Cite sources: put inline citations like [1], [2] after what they support, where [N] is \
the number of an entry in the context.
3. Abstain if unsure: if the context is insufficient or its relevance scores are low, respond \
with exactly: "NO_ANSWER_AVAILABLE: <reason>"
4. Do not hallucinate or infer beyond the provided evidence.
5. Prefer the higher-ranked entries (listed first, with higher scores) over lower ones.

Query: {query}

Context (ranked by relevance):
{context}

Answer:"""

# A reply is untrusted text: ASCII digits, at most 6 (int() of thousands of digits raises),
# and the whitespace before a marker is matched from the start of its run only (else a long
# run of spaces is scanned again from each of its positions).
_CITE = re.compile(r"(?<!\s)(\s*)\[([0-9]{1,6}(?:\s*,\s*[0-9]{1,6})*)\]")
#: What an API key from the environment may hold: visible ASCII (RFC 6750's token68 and more).
_TOKEN = re.compile(r"[\x21-\x7e]+")


class ModelStepError(ChittaError):
    """One step of the model chain gave no usable answer; recorded, and the chain goes on."""

    code = "model_error"


@dataclass(frozen=True, slots=True)
class Synthesis:
    """What synthesis produced: an answer, or the reason it abstained, and how."""

    answer: str | None
    abstention_reason: str | None
    mode: str  # "model" | "extractive"
    model: str | None  # "<kind>:<model>" when a model answered (or abstained)
    errors: tuple[str, ...]


def context_line(citation: Citation) -> str:
    """ "[N] (source, score 0.xx) text", the text on one line and cut to CONTEXT_CHARS."""
    text = " ".join(citation.content.split())
    if len(text) > CONTEXT_CHARS:
        text = text[: CONTEXT_CHARS - 1].rstrip() + "…"
    return f"[{citation.citation_id}] ({citation.source}, score {citation.rrf_score:.2f}) {text}"


def build_prompt(query: str, citations: Sequence[Citation]) -> str:
    """The synthesis prompt: seed 003's rules, the query and the numbered context."""
    context = "\n".join(context_line(c) for c in citations)
    return PROMPT_TEMPLATE.format(query=query, context=context)


def synthesize(
    query: str,
    citations: Sequence[Citation],
    settings: SynthSettings,
    *,
    env: Mapping[str, str] | None = None,
) -> Synthesis:
    """The first usable model answer, else the extractive answer; every failed step noted."""
    env = os.environ if env is None else env
    prompt = build_prompt(query, citations)
    known = {c.citation_id for c in citations}
    private = [prompt, query, *(c.content for c in citations)]
    errors: list[str] = []
    for endpoint in settings.models:
        label = f"{endpoint.kind}:{endpoint.model}"
        try:
            text = ask_model(endpoint, prompt, env, private)
            reason = model_abstention(text)
            if reason is not None:
                return Synthesis(None, reason, "model", label, tuple(errors))
            answer, notes = check_citations(text, known)
        except ModelStepError as exc:
            log.info("cited synthesis: model %s failed: %s", label, exc)
            errors.append(f"model {label}: {exc}")
            continue
        errors.extend(f"model {label}: {note}" for note in notes)
        return Synthesis(answer, None, "model", label, tuple(errors))
    answer = extractive_answer(query, citations, settings.extractive_sentences)
    if answer is None:
        return Synthesis(None, EXTRACTIVE_NO_MATCH, "extractive", None, tuple(errors))
    return Synthesis(answer, None, "extractive", None, tuple(errors))


def check_citations(text: str, known: set[int]) -> tuple[str, list[str]]:
    """``text`` with citations of unknown ids removed, and notes on what was wrong.

    "[2, 7]" with 7 unknown becomes "[2]"; "[7]" alone goes, with the space before it. An
    answer left with no text raises :class:`ModelStepError` (nothing usable remains)."""
    missing: list[int] = []
    cited: list[int] = []

    def keep(match: re.Match[str]) -> str:
        ids = [int(part) for part in match.group(2).split(",")]
        good = [i for i in ids if i in known]
        missing.extend(i for i in ids if i not in known)
        cited.extend(good)
        if not good:
            return ""
        return match.group(1) + "[" + ", ".join(str(i) for i in good) + "]"

    cleaned = _CITE.sub(keep, text).strip()
    if not cleaned:
        raise ModelStepError("answered only citations of ids not in the context")
    notes = []
    if missing:
        ids = ", ".join(f"[{i}]" for i in dict.fromkeys(missing))
        notes.append(f"cited {ids}, not among the {len(known)} citations; removed")
    if not cited:
        notes.append("the answer cites none of the citations")
    return cleaned, notes


def ask_model(
    endpoint: ModelEndpoint, prompt: str, env: Mapping[str, str], private: Sequence[str] = ()
) -> str:
    """The model's answer text to ``prompt``; :class:`ModelStepError` when there is none.

    ``private`` are texts blanked out of any error excerpt (the server may echo them)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.api_key_env:
        token = env.get(endpoint.api_key_env, "").strip()
        if not token:
            raise ModelStepError(f"environment variable {endpoint.api_key_env} is not set")
        if not _TOKEN.fullmatch(token):
            # http.client would refuse it with an error quoting the token; never say its value.
            raise ModelStepError(
                f"environment variable {endpoint.api_key_env} holds characters a bearer token "
                "cannot have (a line break, a control or non-ASCII character)"
            )
        headers["Authorization"] = f"Bearer {token}"
    if endpoint.kind == "openai":
        url = _endpoint(endpoint.url, "/chat/completions")
        body = {
            "model": endpoint.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
        }
    elif endpoint.kind == "ollama":
        url = _endpoint(endpoint.url, "/api/generate")
        body = {"model": endpoint.model, "prompt": prompt, "stream": False}
    else:
        raise ModelStepError(f"unknown model kind {endpoint.kind!r} (openai or ollama)")
    payload = _post(url, body, headers, endpoint.timeout_s, private)
    text = _answer_text(payload, endpoint.kind)
    if not text.strip():
        raise ModelStepError("answered an empty text")
    return text.strip()


def _endpoint(base: str, path: str) -> str:
    """``base`` with ``path`` appended unless it already ends with it; http(s) only."""
    parts = urllib.parse.urlsplit(base.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ModelStepError(f"the url must be http(s), got {base!r}")
    url = base.strip().rstrip("/")
    return url if url.endswith(path) else url + path


def _post(
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    timeout_s: float,
    private: Sequence[str],
) -> Any:
    """POST ``body`` as JSON and return the decoded JSON answer, all within ``timeout_s``."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    raw = fetch(request, where=url, timeout_s=timeout_s, private=private, error=ModelStepError)
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ModelStepError(
            f"{url} answered invalid JSON: {_excerpt(raw, list(private)) or '(empty body)'}"
        ) from None


def _answer_text(payload: Any, kind: str) -> str:
    """The answer in a chat-completions or generate response."""
    if kind == "ollama":
        text = payload.get("response") if isinstance(payload, dict) else None
        if not isinstance(text, str):
            raise ModelStepError(f"answered JSON without a 'response' text ({_keys(payload)})")
        return text
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ModelStepError(f"answered JSON without 'choices' ({_keys(payload)})")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str):
        raise ModelStepError("answered 'choices' without a message content text")
    return text
