"""How an operation is described: once, with its parameters' types, ranges, defaults and help.

One :class:`Operation` drives the daemon's JSON-RPC method (the name and the checks), the MCP
tool (its input schema and description) and the CLI command (its arguments and options). The
checks here run before an operation touches the store, wherever it is called from, so a bad
call is refused the same way — the same error class, code and exit code — everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta import validate
from chitta.errors import BadArgument, TooLarge

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.config import Settings

Params = Mapping[str, Any]

#: The parameter types and the JSON values each accepts.
TYPES: Mapping[str, tuple[type, ...]] = {
    "text": (str,),
    "int": (int,),
    "number": (int, float),
    "flag": (bool,),
    "list": (list,),
    "object": (dict,),
    "tags": (str, list),  # "a,b" or ["a", "b"]
    "when": (str, int, float),  # ISO 8601 text or epoch milliseconds
}
_JSON_SCHEMA: Mapping[str, dict[str, Any]] = {
    "text": {"type": "string"},
    "int": {"type": "integer"},
    "number": {"type": "number"},
    "flag": {"type": "boolean"},
    "list": {"type": "array", "items": {"type": "string"}},
    "object": {"type": "object"},
    # The canonical forms; the checks also take "a,b" tags and epoch milliseconds.
    "tags": {"type": "array", "items": {"type": "string"}},
    "when": {"type": "string"},
}
#: The size limits of a parameter that declares none: each text's characters (a list's items,
#: every key and value of an object), and a list's items (an object's values in all).
LENGTHS: Mapping[str, int] = {"text": validate.MAX_TEXT_CHARS, "when": validate.MAX_WORD_CHARS,
                              "tags": validate.MAX_TAG_CHARS, "list": validate.MAX_WORD_CHARS,
                              "object": validate.MAX_WORD_CHARS}  # fmt: skip
ITEMS: Mapping[str, int] = {"tags": validate.MAX_TAGS, "list": 32, "object": 32}
#: The whole numbers SQLite stores (a 64-bit signed integer).
INT64 = (-(2**63), 2**63 - 1)
_WORDS = {"text": "text", "int": "a whole number", "number": "a number", "flag": "true or false",
          "list": "a list of text", "object": "an object", "tags": "text or a list of text",
          "when": "an ISO 8601 time or epoch milliseconds"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Param:
    """One named parameter of an operation.

    ``default`` is what the implementation uses when the parameter is left out (``None``: the
    operation's own default, named in ``help``). ``choices`` are the only values accepted;
    ``enum`` are the canonical values the schema lists where the operation also reads other
    spellings (kinds in any case), so they are not enforced here. ``shape`` is the JSON schema
    of an ``object`` parameter's fields. ``cli``/``mcp`` say where it is offered;
    ``flag`` and ``short`` name its CLI option when the name alone would not do, and
    ``positional`` makes it a CLI argument. ``realm`` marks the scope parameter that the
    realm rule (chitta/scope.py) fills when a caller leaves it out.

    ``max_length`` is the most characters of a text (of each item of a list, of every key
    and value of an object; ``tags`` as one string has room for ``max_items`` tags and
    their commas), ``max_items`` the most items of a list (values of an object, in all);
    left out, the type's default (:data:`LENGTHS`, :data:`ITEMS`). A value over either is
    refused as ``too_large`` — :class:`~chitta.errors.TooLarge`, or the subclass
    ``too_large`` names (content's is ContentTooLong) — whatever edge it came through.
    ``strip`` counts a text's length without its surrounding whitespace, for a text the
    operation keeps stripped (a memory's content: ``chitta remember -`` reads a newline too).
    The MCP schema does not state these limits: they lie far beyond what a model sends, and
    the tool list goes with every request; the checks refuse an over-long value by name.
    """

    name: str
    type: str
    help: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    enum: tuple[str, ...] = ()
    shape: Mapping[str, Any] | None = None
    minimum: float | None = None
    maximum: float | None = None
    positional: bool = False
    flag: str | None = None
    short: str | None = None
    aliases: tuple[str, ...] = ()  # other CLI spellings of the option
    cli: bool = True
    mcp: bool = True
    realm: bool = False
    hidden: bool = False  # on the CLI but left out of its help (an old spelling)
    cli_help: str | None = None  # the CLI's help when it differs (a --no-<name> switch)
    max_length: int | None = None
    max_items: int | None = None
    too_large: type[TooLarge] = TooLarge
    strip: bool = False

    def __post_init__(self) -> None:
        if self.max_length is None and self.type in LENGTHS:
            object.__setattr__(self, "max_length", LENGTHS[self.type])
        if self.max_items is None and self.type in ITEMS:
            object.__setattr__(self, "max_items", ITEMS[self.type])

    @property
    def option(self) -> str:
        """The CLI option's long name."""
        return self.flag or "--" + self.name.replace("_", "-")

    def schema(self) -> dict[str, Any]:
        """This parameter's JSON schema (for MCP's input schema)."""
        out: dict[str, Any] = {"description": self.help}
        out.update(self.shape if self.shape is not None else _JSON_SCHEMA[self.type])
        if self.choices or self.enum:  # an enum of text says the type
            out.pop("type", None)
            out["enum"] = list(self.choices or self.enum)
        if self.minimum is not None:
            out["minimum"] = _number(self.minimum)
        if self.maximum is not None:
            out["maximum"] = _number(self.maximum)
        # A flag left out is false: saying so costs every request a few characters.
        if self.default is not None and self.default is not False:
            out["default"] = self.default
        return out


def _number(value: float) -> float | int:
    """A bound as JSON writes it shortest (1, not 1.0)."""
    return int(value) if float(value).is_integer() else value


@dataclass(frozen=True, slots=True)
class Context:
    """What an operation may need beyond the store: where the home is, and a way to report
    progress of long work (``progress(done, total)``; ``None`` when nobody listens)."""

    home: Path
    progress: Callable[[int, int], None] | None = None
    #: True when the operation runs inside the daemon (paths must then be absolute).
    in_daemon: bool = False

    def report(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)


Run = Callable[["Chitta", Params, Context], dict[str, Any]]
#: An operation run in the CLI's own process without opening the store (its settings instead).
Offline = Callable[["Settings", Params, Context], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: its name (the JSON-RPC method and the MCP tool), its parameters, what it
    does, and how it behaves (``writes``: one at a time; ``long``: may outlive the request
    deadline and report progress)."""

    name: str
    summary: str  # one line: the CLI help's first line, and MCP's when ``mcp`` is empty
    params: tuple[Param, ...]
    run: Run
    writes: bool = False
    long: bool = False
    #: The MCP tool's description (short: it is sent with every request); "" = not offered.
    mcp: str = ""
    #: MCP's hint: "read", "write", "idempotent" (writes, saying it twice changes nothing)
    #: or "destructive".
    effect: str = "read"
    #: Open the store with create=True when it runs in the CLI's own process.
    creates: bool = False
    #: More for the CLI's help, after the summary (a paragraph).
    detail: str = ""
    #: Run this instead, with the store unopened, when the CLI runs the operation in its own
    #: process (restore_backup: the store it replaces may be too damaged to open).
    offline: Offline | None = None
    #: Never through a daemon: the CLI always runs ``offline``, and the daemon refuses the
    #: method (migrate: the stores it works on are its parameters, not the daemon's store).
    local: bool = False
    by_name: Mapping[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {p.name: p for p in self.params})

    def call(self, chitta: Chitta, params: Params, ctx: Context | None = None) -> dict[str, Any]:
        """Check ``params`` and run the operation in this process: its reply, with ``ok``."""
        check_params(self, params)
        context = ctx if ctx is not None else Context(home=chitta.home)
        return {"ok": True, **self.run(chitta, given(params), context)}

    def input_schema(self, offered_in: str | None = "mcp") -> dict[str, Any]:
        """The MCP tool's input schema: the parameters offered to MCP (``required`` only when
        some are); ``offered_in=None``: every parameter (the REST API's request body)."""
        offered = [p for p in self.params if offered_in is None or getattr(p, offered_in)]
        out: dict[str, Any] = {"type": "object",
                               "properties": {p.name: p.schema() for p in offered}}  # fmt: skip
        required = [p.name for p in offered if p.required]
        if required:
            out["required"] = required
        # No "additionalProperties": check_params refuses an unknown parameter by name anyway,
        # and the schema is sent with every request.
        return out


def check_params(op: Operation, params: Params, *, offered: str | None = None) -> None:
    """Refuse unknown, missing, mistyped or out-of-range parameters, naming the first one.

    ``None`` stands for "not given" for an optional parameter. ``offered`` ("mcp") limits
    the known parameters to those offered there."""
    known = {n for n, p in op.by_name.items() if offered is None or getattr(p, offered)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise BadArgument(
            f"unknown parameter {unknown[0]!r} for {op.name}; it takes: "
            f"{', '.join(sorted(known)) or 'nothing'}"
        )
    for p in op.params:
        value = params.get(p.name)
        if value is None:
            if p.required:
                raise BadArgument(f"{op.name} needs the parameter {p.name!r}")
            continue
        check_value(p, value)


def check_value(p: Param, value: Any) -> None:
    """Refuse a value of the wrong type, over its size limits, holding text that is not
    Unicode (a lone surrogate, which UTF-8 and so SQLite cannot hold) or a number that is not
    finite or not a 64-bit whole number, outside the choices or outside the range.

    The sizes come first, so that no later check (nor its message) reads a huge value."""
    allowed = TYPES[p.type]
    if isinstance(value, bool) and bool not in allowed:
        raise BadArgument(f"{p.name} must be {_WORDS[p.type]}, got true/false")
    if not isinstance(value, allowed):
        raise BadArgument(f"{p.name} must be {_WORDS[p.type]}, got {_json_type(value)}")
    _check_size(p, value)
    if isinstance(value, str):
        _check_text(p.name, value, top=True)
    elif isinstance(value, list | dict):
        for leaf in _leaves(value, nested=p.type == "object"):
            _check_leaf(p.name, leaf)
    if isinstance(value, float) and not math.isfinite(value):
        raise BadArgument(f"{p.name} must be a finite number, got {value}")
    if p.type == "list" and not all(isinstance(item, str) for item in value):
        raise BadArgument(f"{p.name} must be a list of text")
    if p.choices and value not in p.choices:
        raise BadArgument(f"unknown {p.name} {value!r}; choose one of: {', '.join(p.choices)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if p.minimum is not None and value < p.minimum:
            raise BadArgument(f"{p.name} must be at least {p.minimum:g}, got {value}")
        if p.maximum is not None and value > p.maximum:
            raise BadArgument(f"{p.name} must be at most {p.maximum:g}, got {value}")
        if isinstance(value, int) and not _int64(value):
            raise BadArgument(f"{p.name} is outside the whole numbers chitta can store "
                              "(-2^63 to 2^63-1)")  # fmt: skip


def _check_size(p: Param, value: Any) -> None:
    """Refuse a text, a list or an object over ``p``'s limits (``p.too_large``)."""
    length, items = p.max_length, p.max_items
    if isinstance(value, str) and length is not None:
        if p.type == "tags" and items is not None:
            length = items * (length + 1) - 1  # room for every tag and a comma between
        size = len(value.strip()) if p.strip else len(value)
        if size > length:
            raise p.too_large(validate.too_long(p.name, size, length) + p.too_large.hint)
    elif isinstance(value, list) and items is not None:
        if len(value) > items:
            raise p.too_large(f"{p.name} has {len(value):,} items; the limit is {items:,}")
        for item in value:
            if isinstance(item, str) and length is not None and len(item) > length:
                raise p.too_large(f"an item of {p.name} is {len(item):,} characters; "
                                  f"the limit is {length:,}")  # fmt: skip
    elif isinstance(value, dict) and items is not None:
        for count, leaf in enumerate(_leaves(value, nested=True), start=1):
            if count > items:
                raise p.too_large(f"{p.name} holds more than {items:,} values; "
                                  f"the limit is {items:,}")  # fmt: skip
            if isinstance(leaf, str) and length is not None and len(leaf) > length:
                raise p.too_large(f"a text in {p.name} is {len(leaf):,} characters; "
                                  f"the limit is {length:,}")  # fmt: skip


def _leaves(value: list | dict, *, nested: bool) -> Iterator[Any]:
    """The keys and values inside ``value`` (containers too), depth first; with
    ``nested=False`` only its own items."""
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        children = [x for kv in node.items() for x in kv] if isinstance(node, dict) else node
        for child in children:
            yield child
            if nested and isinstance(child, list | dict):
                stack.append(child)


def _check_leaf(name: str, value: Any) -> None:
    if isinstance(value, str):
        _check_text(name, value, top=False)
    elif isinstance(value, float) and not math.isfinite(value):
        raise BadArgument(f"{name} holds {value}: numbers must be finite")
    elif isinstance(value, int) and not isinstance(value, bool) and not _int64(value):
        raise BadArgument(f"{name} holds a whole number outside -2^63 to 2^63-1")


def _int64(value: int) -> bool:
    return INT64[0] <= value <= INT64[1]


def _check_text(name: str, text: str, *, top: bool) -> None:
    """Refuse text that UTF-8 cannot encode: a lone surrogate (JSON's "\\ud800", or bytes
    that were not UTF-8 in a command line's arguments)."""
    found = validate.SURROGATE.search(text)
    if found is not None:
        where = f" at character {found.start():,}" if top else ""
        raise BadArgument(f"{name} is not Unicode text: a lone surrogate "
                          f"(U+{ord(found.group()):04X}){where}")  # fmt: skip


def _json_type(value: Any) -> str:
    names = {str: "text", int: "a number", float: "a number", list: "a list",
             dict: "an object"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def with_realm(op: Operation, params: Params, realm: str, offered: str) -> dict[str, Any]:
    """``params`` with ``realm`` (the realm rule's, chitta/scope.py) for every realm parameter
    offered at ``offered`` ("cli" or "mcp") that the caller left out; a list one gets
    ``[realm]``."""
    out = dict(params)
    for p in op.params:
        if p.realm and getattr(p, offered) and not out.get(p.name):
            out[p.name] = [realm] if p.type == "list" else realm
    return out


def given(params: Params) -> dict[str, Any]:
    """``params`` without the ones left out (``None``)."""
    return {k: v for k, v in params.items() if v is not None}
