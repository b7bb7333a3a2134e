"""A definition's parameters read from its one-line signature: their names shadow outer names,
and their written types give a receiver's class (``def f(s: Store): s.get()``)."""

from __future__ import annotations

import re

from chitta.code.resolve.names import family, strip_generics

_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_TYPE = re.compile(r"[A-Za-z_$][\w$]*(?:(?:::|\.)[A-Za-z_$][\w$]*)*")
_MODIFIERS = frozenset(
    [
        "public",
        "private",
        "protected",
        "readonly",
        "final",
        "const",
        "volatile",
        "static",
        "override",
        "mut",
        "ref",
        "out",
        "in",
        "struct",
        "enum",
        "class",
        "unsigned",
        "signed",
        "register",
        "auto",
    ]
)
_OPTIONAL = re.compile(r"(?:typing\.)?Optional\[(.+)\]")
_NOTHING = frozenset({"None", "null", "undefined", ""})
_ARGS = re.compile(r"<[^<>]*>")
_C_PRIMITIVES = frozenset(
    ["int", "char", "long", "short", "float", "double", "void", "bool", "size_t"]
)


def _groups(signature: str) -> list[str]:
    """The contents of each top-level ``( … )`` in a signature, in order."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(signature):
        if ch == "(":
            if depth == 0:
                start = i + 1
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                out.append(signature[start:i])
    return out


def _split(params: str) -> list[str]:
    """Parameters split at top-level commas."""
    out, depth, cur = [], 0, []
    for ch in params:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth = max(0, depth - 1)
        if ch == "," and not depth:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return [p for p in out if p]


def _type(text: str | None) -> str | None:
    """A written type when it is one plain (dotted) name, else None."""
    if not text:
        return None
    text = text.split("=")[0].strip()
    # ``Optional[X]``, ``X | None``, ``X | null``: still an X (or nothing to call on).
    if m := _OPTIONAL.fullmatch(text):
        text = m.group(1)
    kept = [p for p in text.split("|") if p.strip() not in _NOTHING]
    if len(kept) != 1:
        return None
    t = strip_generics(kept[0])
    return t if _TYPE.fullmatch(t) else None


def _named_first(part: str) -> tuple[str, str | None] | None:
    """``name: Type = default`` (Python, TypeScript, Rust, Ruby)."""
    part = part.lstrip("*&.").strip()
    words = part.split()
    while len(words) > 1 and words[0] in _MODIFIERS:
        words = words[1:]
    part = " ".join(words)
    if part.startswith(("{", "[", "(")):
        return None  # a destructuring pattern: its names are not read
    head, _, rest = part.partition(":")
    name = head.split("=")[0].strip().rstrip("?")
    if name.startswith(("&", "mut ")):
        name = name.lstrip("&").removeprefix("mut ").strip()
    if not _IDENT.fullmatch(name):
        return None
    return name, _type(rest) if rest else None


def _named_last(part: str) -> tuple[str, str | None] | None:
    """``Type name`` (Java, C, C++): the last word names it, the words before type it."""
    part = re.sub(r"@\w+(\([^)]*\))?", "", part.split("=")[0]).replace("...", " ")
    while _ARGS.search(part):
        part = _ARGS.sub("", part)
    words = re.findall(r"[A-Za-z_$][\w$:.<>]*|[*&]", part)
    idents = [w for w in words if w not in ("*", "&") and w not in _MODIFIERS]
    if not idents or not _IDENT.fullmatch(idents[-1]):
        return None
    kind = [w for w in idents[:-1] if w not in _C_PRIMITIVES]
    return idents[-1], _type(kind[-1]) if kind else None


def _go(params: str) -> list[tuple[str, str | None]]:
    """``a, b int, s *Server``: names without a type take the next one's."""
    out: list[tuple[str, str | None]] = []
    pending: list[str] = []
    for part in _split(params):
        words = part.split(None, 1)
        if len(words) == 1:
            pending.append(words[0])
            continue
        typ = _type(words[1].lstrip("*.").replace("...", ""))
        for name in [*pending, words[0]]:
            out.append((name, typ))
        pending = []
    # A list of types alone (``func(int, string)``) names no parameters.
    return out


def go_receiver(signature: str) -> tuple[str, str | None] | None:
    """A Go method's receiver: ``func (s *Server) Run()`` -> ``("s", "Server")``."""
    if not signature.lstrip().startswith("func ("):
        return None
    groups = _groups(signature)
    found = _go(groups[0]) if groups else []
    return found[0] if found else None


def parameters(signature: str, language: str) -> tuple[tuple[str, str | None], ...]:
    """Each parameter's name and, when written as one plain name, its type."""
    fam = family(language)
    groups = _groups(signature)
    if fam == "go":
        if signature.lstrip().startswith("func ("):
            groups = groups[1:]
        return tuple(_go(groups[0])) if groups else ()
    if not groups:
        if fam == "ruby" and signature.lstrip().startswith("def "):
            head = signature.strip()[4:].split(None, 1)
            groups = [head[1]] if len(head) > 1 else []
        if not groups:
            return ()
    read = _named_last if fam in ("java", "c") else _named_first
    out = []
    for part in _split(groups[0]):
        if fam == "rust" and part.replace("&", "").replace("mut", "").strip() == "self":
            continue
        got = read(part)
        if got:
            out.append(got)
    return tuple(out)
