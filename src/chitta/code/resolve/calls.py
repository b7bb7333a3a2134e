"""One callsite to at most one target: the callee the syntax and the index determine, or the
reason there is none (no candidate, or several)."""

from __future__ import annotations

from dataclasses import dataclass

from chitta.code.model import Callsite, Symbol
from chitta.code.resolve import names as nm
from chitta.code.resolve.index import Module, Target
from chitta.code.resolve.scope import EXTERNAL, FOUND, NONE, PARAM, Ctx, Found, Scopes

UNKNOWN = "unknown"  # a receiver whose type the syntax does not give


@dataclass(frozen=True, slots=True)
class Outcome:
    """A callsite's resolution: one ``target``, or ``candidates`` (ambiguous), or neither."""

    target: Symbol | None = None
    candidates: tuple[Symbol, ...] = ()
    reason: str = ""


class Calls:
    """Resolves callsites against the scopes of an index."""

    def __init__(self, scopes: Scopes) -> None:
        self.sc = scopes
        self.ix = scopes.ix

    def resolve(self, call: Callsite) -> Outcome:
        """Where one call goes, if the syntax and the index say."""
        if call.path not in self.ix.files:
            return Outcome(reason="its file is not indexed")
        if call.form in ("indirect", "lambda"):
            return Outcome(reason=f"an {call.form} call: the value called is not named")
        caller = self.ix.symbol(call.path, call.caller, call.line)
        ctx = Ctx(call.path, self.sc.chain(caller))
        receiver = call.qualifier or call.receiver
        if receiver:
            return self._member(ctx, call, receiver.strip())
        found = self.sc.lookup(ctx, call.name)
        if found.status == PARAM:
            return Outcome(reason=f"{call.name} is a parameter")
        if found.status == EXTERNAL:
            return Outcome(reason=f"{call.name} is imported from what the index does not define")
        return self._decide(found.targets, call)

    def _member(self, ctx: Ctx, call: Callsite, receiver: str) -> Outcome:
        fam = nm.family(self.ix.files[ctx.path].language)
        recv = self._receiver(ctx, fam, receiver, qualified=call.form == "qualified")
        if recv.status != FOUND and fam in ("c", "ruby"):
            # ``ns::f()`` / ``A::B.f`` whose namespace has no symbol of its own: the path
            # written out names the definition.
            spelled = self.ix.qualified.get((fam, ".".join([*nm.segments(receiver), call.name])))
            if spelled:
                return self._decide(spelled, call)
        if recv.status == UNKNOWN:
            return self._unknown(fam, call)
        if recv.status != FOUND:
            return Outcome(reason=f"{receiver} is outside the index")
        if fam == "ruby" and call.name == "new":
            # ``Foo.new`` constructs: Foo's initialize, or the class.
            classes = [t for t in recv.targets if isinstance(t, Symbol)]
            return self._decide(classes, call)
        got: list[Target] = []
        blocked = False
        for t in recv.targets:
            if isinstance(t, Symbol) and t.kind in nm.CLASS_KINDS:
                found, hidden = self.sc.class_member(t, call.name, skip_own=recv.type == "super")
                got += found
                blocked = blocked or hidden
            else:
                got += self.sc.member(t, call.name).targets
        if blocked and got:
            # A base outside the index comes first in the lookup and may define it.
            return Outcome(candidates=self._callables(got), reason="a base outside the index")
        if blocked:
            return Outcome(reason="it may be inherited from a base outside the index")
        return self._decide(got, call)

    def _receiver(self, ctx: Ctx, fam: str, receiver: str, qualified: bool) -> Found:
        """What a call's receiver or qualifier names: a class (its instance or itself), a
        module, something outside the index, or ``unknown``."""
        if receiver.startswith("super") and not (fam == "rust" and qualified):
            cls = self.sc.enclosing_class(ctx)
            return Found(FOUND, (cls,), type="super") if cls else Found(NONE)
        if "(" in receiver or "[" in receiver or '"' in receiver or "'" in receiver:
            return Found(UNKNOWN)
        segs = nm.segments(receiver)
        if not segs:
            return Found(UNKNOWN)
        first = segs[0]
        selfish = first in nm.SELF_NAMES.get(fam, ()) and not (
            fam == "rust" and first == "self" and qualified
        )
        if selfish:
            cls = self.sc.enclosing_class(ctx)
            found = Found(FOUND, (cls,)) if cls else Found(NONE)
        else:
            found = self.sc.path(ctx, [first])
            if found.status == PARAM:
                found = self._typed(ctx, found.type)
            elif found.status == NONE:
                # An unbound capitalised name is a type or constant outside the index (``Math``,
                # ``std``); an unbound lower-case one is a local variable.
                return Found(EXTERNAL if first[:1].isupper() else UNKNOWN)
        for seg in segs[1:]:
            if found.status != FOUND:
                return found
            got = [t for t in found.targets for t in self.sc.member(t, seg).targets]
            if not got:
                # An attribute of an object (``self.repo``): its type is not written here.
                return Found(UNKNOWN)
            found = Found.of(got)
        if found.status == FOUND and all(
            isinstance(t, Symbol) and t.kind in nm.CALLABLE_KINDS - nm.CLASS_KINDS
            for t in found.targets
        ):
            return Found(UNKNOWN)  # ``f.x()`` on a function: not a namespace
        return found

    def _typed(self, ctx: Ctx, typ: str | None) -> Found:
        """A parameter's class from its written type; a type not in the index is external."""
        if not typ:
            return Found(UNKNOWN)
        found = self.sc.path(ctx, nm.segments(typ))
        classes = [t for t in found.targets if isinstance(t, Symbol) and t.kind in nm.CLASS_KINDS]
        if found.status == FOUND and classes:
            return Found.of(classes)
        return Found(EXTERNAL) if found.status in (NONE, EXTERNAL) else Found(UNKNOWN)

    def _unknown(self, fam: str, call: Callsite) -> Outcome:
        """A receiver of unknown type: every same-named method is a candidate, none an edge."""
        cands = self.ix.methods.get((fam, call.name), [])
        if not cands:
            return Outcome(reason="no indexed method has this name")
        return Outcome(candidates=tuple(cands), reason="the receiver's type is not known")

    def _callables(self, targets: list[Target]) -> tuple[Symbol, ...]:
        return tuple(t for t in dict.fromkeys(targets) if isinstance(t, Symbol))

    def _decide(self, targets, call: Callsite) -> Outcome:
        """One callable target is an edge; several are ambiguous; none is unresolved. A
        class called is constructed."""
        out: list[Symbol] = []
        for t in targets:
            if isinstance(t, Module) or t.kind not in nm.CALLABLE_KINDS:
                continue
            if t.kind in nm.CLASS_KINDS:
                t = self._constructor(t)
            out.append(t)
        fam = nm.family(self.ix.files[call.path].language)
        if fam == "c":
            out = [self._definition(t) for t in out]
        distinct = self._distinct(out, fam)
        if len(distinct) == 1:
            return Outcome(target=distinct[0])
        if distinct:
            return Outcome(candidates=tuple(distinct), reason="several definitions fit")
        return Outcome(reason="no indexed definition fits")

    def _constructor(self, cls: Symbol) -> Symbol:
        """The class's own constructor, where it has one by name, else the class."""
        fam = nm.family(cls.language)
        name = nm.CONSTRUCTORS.get(fam) or (cls.name if fam in ("java", "c") else None)
        if name:
            own = [s for s in self.ix.members(cls) if s.name == name and s.kind in ("method",
                   "function")]  # fmt: skip
            if own:
                return own[0]
        return cls

    def _definition(self, sym: Symbol) -> Symbol:
        """For a C or C++ declaration in a header, the one definition of its name outside
        the headers, where there is one."""
        if not _is_header(sym.path):
            return sym
        defs = [
            s
            for s in self.ix.qualified.get(("c", sym.qualified), [])
            if not _is_header(s.path) and s.kind == sym.kind
        ]
        return defs[0] if len(defs) == 1 else sym

    def _distinct(self, targets: list[Symbol], fam: str) -> list[Symbol]:
        """Targets that are different definitions. Overloads (one file, one qualified name)
        are one; in C and Ruby a name's declaration and definition in two files are one,
        the definition (not a header) standing for both."""
        seen: dict[tuple, Symbol] = {}
        for t in targets:
            key = (t.qualified,) if fam in ("c", "ruby") else (t.path, t.qualified)
            held = seen.get(key)
            if held is None or (_is_header(held.path) and not _is_header(t.path)):
                seen[key] = t
        return sorted(seen.values(), key=lambda s: (s.qualified, s.path, s.start_line))


def _is_header(path: str) -> bool:
    return path.endswith((".h", ".hh", ".hpp", ".hxx"))
