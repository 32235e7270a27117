"""The typed IR the parser produces: modules, functions, instructions, operands.

Every class is a frozen, slotted dataclass. Positions (``line``, ``column``,
``loc``) and the spelling of literals do not take part in equality, so two
parses of the same program compare equal instruction for instruction whatever
their layout.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

from kerncast._errors import InputError
from kerncast.ptx._classes import InstrClass
from kerncast.ptx._isa import TYPE_SIZES

__all__ = [
    "Address", "Alias", "BodyItem", "CallPrototype", "CallSpec", "Function", "Imm", "Initializer",
    "Instruction", "Label", "LabelDef", "Module", "ModuleItem", "Operand", "Param", "ParamList",
    "Pragma",
    "Reg", "RegDecl", "RegisterDecl", "RegPair", "ScopeEnd", "ScopeStart", "Section", "Sink",
    "SourceLoc",
    "SpecialReg", "Symbol", "SymbolRef", "TargetList", "TexOperand", "Variable", "Vector",
    "float_imm", "format_imm", "type_size",
]


def type_size(ptx_type: str) -> int:
    """Bytes of one element of a PTX type name without the dot (``f32`` -> 4)."""
    return TYPE_SIZES[ptx_type]


# --------------------------------------------------------------------------- operands


@dataclass(frozen=True, slots=True)
class Reg:
    """A declared register: ``%r1``; ``!%p1`` sets ``negated``; ``%v.x`` sets ``component``."""

    name: str
    negated: bool = False
    component: str | None = None

    def __str__(self) -> str:
        text = f"{self.name}.{self.component}" if self.component else self.name
        return "!" + text if self.negated else text


@dataclass(frozen=True, slots=True)
class SpecialReg:
    """A special register such as ``%tid.x``, ``%laneid`` or ``%clock64`` (full name)."""

    name: str

    @property
    def base(self) -> str:
        """The name without its component: ``%tid`` for ``%tid.x``."""
        return self.name.partition(".")[0]

    @property
    def component(self) -> str | None:
        """``x``, ``y`` or ``z`` for the vector special registers, else None."""
        return self.name.partition(".")[2] or None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, eq=False)
class Imm:
    """An immediate constant.

    ``kind`` is the PTX literal type: ``s64`` (integers), ``u64`` (integers with a
    ``U`` suffix), ``f32`` (``0f`` hex form) or ``f64`` (``0d`` hex form, decimal
    floats). ``value`` is a Python int or float; ``bits`` is the IEEE bit pattern of
    a float (None for integers); ``text`` is the spelling used for printing.
    Equality compares kind and value (bit pattern for floats).
    """

    value: int | float
    kind: str = "s64"
    bits: int | None = None
    text: str = ""

    def __post_init__(self) -> None:
        if self.bits is None and self.kind in ("f32", "f64"):
            fmt = ("<f", "<I") if self.kind == "f32" else ("<d", "<Q")
            object.__setattr__(self, "bits",
                               struct.unpack(fmt[1], struct.pack(fmt[0], self.value))[0])

    @property
    def is_float(self) -> bool:
        return self.kind in ("f32", "f64")

    def _key(self) -> tuple[str, int | float]:
        return self.kind, (self.bits if self.bits is not None else self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Imm) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self.text or format_imm(self.value, self.kind)


def format_imm(value: int | float, kind: str) -> str:
    """PTX spelling of a constant: decimal integers, ``0f``/``0d`` hex floats."""
    if kind == "f32":
        return "0f%08X" % struct.unpack("<I", struct.pack("<f", value))[0]
    if kind == "f64":
        return "0d%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    return f"{value}U" if kind == "u64" else str(value)


def float_imm(value: float, kind: str = "f32") -> Imm:
    """An immediate float of ``kind`` f32 or f64 (for building IR by hand)."""
    fmt = ("<f", "<I") if kind == "f32" else ("<d", "<Q")
    bits = struct.unpack(fmt[1], struct.pack(fmt[0], value))[0]
    stored = struct.unpack(fmt[0], struct.pack(fmt[1], bits))[0]
    return Imm(stored, kind, bits, format_imm(value, kind) if math.isfinite(value) else "")


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named variable, parameter or function used as an operand (``param0``, ``vprintf``)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Label:
    """A branch target or a branch/call table name (``$L__BB0_3``)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Address:
    """A memory operand ``[base+offset]``; ``base`` None for an absolute address."""

    base: Reg | Symbol | None
    offset: int = 0

    def __str__(self) -> str:
        if self.base is None:
            return f"[{self.offset}]"
        if self.offset:
            return f"[{self.base}+{self.offset}]"
        return f"[{self.base}]"


@dataclass(frozen=True, slots=True)
class Sink:
    """The bit bucket ``_``."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Vector:
    """A brace list ``{%f1, %f2, _}`` of registers, immediates and sinks."""

    elements: tuple[Operand, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elements)) + "}"


@dataclass(frozen=True, slots=True)
class RegPair:
    """Two destinations joined by ``|``, as in ``setp.lt.s32 %p1|%p2, ...``."""

    first: Reg | Sink
    second: Reg | Sink

    def __str__(self) -> str:
        return f"{self.first}|{self.second}"


@dataclass(frozen=True, slots=True)
class ParamList:
    """The parenthesised return or argument list of ``call``."""

    items: tuple[Operand, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


@dataclass(frozen=True, slots=True)
class TexOperand:
    """A bracketed list such as ``[tex, {%f1, %f2}]`` (texture and surface instructions)."""

    items: tuple[Operand, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.items)) + "]"


Operand = Union[Reg, SpecialReg, Imm, Symbol, Label, Address, Sink, Vector, RegPair,
                ParamList, TexOperand]


# --------------------------------------------------------------------------- instructions


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A ``.loc`` position: file index (see ``Module.files``), line and column.

    ``extra`` keeps any attributes after them as written
    (``, function_name $L__info_string0, inlined_at 1 38 3``).
    """

    file: int
    line: int
    column: int = 0
    extra: str = ""


@dataclass(frozen=True, slots=True)
class CallSpec:
    """The parts of a ``call``: returns, target, arguments and prototype/table name."""

    returns: tuple[Operand, ...]
    target: Operand
    args: tuple[Operand, ...]
    prototype: str | None


@dataclass(frozen=True, slots=True)
class Instruction:
    """One PTX instruction, decoded.

    ``modifiers`` keeps every dotted suffix in order (``("global", "nc", "v4",
    "f32")`` for ``ld.global.nc.v4.f32``); the remaining fields decode them:
    ``types`` in order (``cvt.rn.f32.s32`` has ``("f32", "s32")``), ``space``
    (``global``, ``shared``... without a ``::`` sub-qualifier; None for generic
    addressing), ``vector`` width (1 when scalar), ``rounding``, ``cmp`` and
    ``boolop`` (setp/set), ``cache`` operator, ``atomic_op`` (atom, red, redux,
    bar.red), ``mode`` (shfl up/down/bfly/idx, vote all/any/uni/ballot, bar
    sync/arrive/red, ...), ``sem`` and ``scope`` (memory ordering), and ``flags``:
    every other modifier (``sat``, ``ftz``, ``approx``, ``full``, ``wide``, ``hi``,
    ``lo``, ``uni``, ``sync``, ``aligned``, ``nc``, ``cc``, ``to``...).
    ``targets`` holds the instruction indices a branch may go to; ``iclass`` is the
    instruction class.
    """

    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Reg | None = None
    types: tuple[str, ...] = ()
    space: str | None = None
    vector: int = 1
    rounding: str | None = None
    cmp: str | None = None
    boolop: str | None = None
    cache: str | None = None
    atomic_op: str | None = None
    mode: str | None = None
    sem: str | None = None
    scope: str | None = None
    flags: frozenset[str] = frozenset()
    iclass: InstrClass = InstrClass.OTHER
    targets: tuple[int, ...] = ()
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)
    loc: SourceLoc | None = field(default=None, compare=False)

    @classmethod
    def build(cls, opcode: str, modifiers: tuple[str, ...] = (),
              operands: tuple[Operand, ...] = (), guard: Reg | None = None,
              targets: tuple[int, ...] = ()) -> Instruction:
        """An instruction with its modifiers decoded and its class set, as ``parse``
        makes them (operands are taken as given, without checks)."""
        from kerncast.ptx._classes import classify
        from kerncast.ptx._isa import decode_modifiers

        fields = decode_modifiers(opcode, tuple(modifiers))
        iclass = classify(opcode, fields["types"], fields["space"], tuple(modifiers),
                          fields["mode"])
        return cls(opcode, tuple(modifiers), tuple(operands), guard, **fields, iclass=iclass,
                   targets=tuple(targets))

    @property
    def name(self) -> str:
        """The dotted instruction name: ``ld.global.nc.v4.f32``."""
        return ".".join((self.opcode, *self.modifiers))

    @property
    def type(self) -> str | None:
        """The last type modifier (the operation type for most instructions)."""
        return self.types[-1] if self.types else None

    def has(self, flag: str) -> bool:
        """Whether ``flag`` (``ftz``, ``sat``, ``uni``...) is among the modifiers."""
        return flag in self.modifiers

    @property
    def is_branch(self) -> bool:
        return self.opcode in ("bra", "brx")

    @property
    def is_conditional(self) -> bool:
        """A guarded instruction (``@%p`` or ``@!%p``)."""
        return self.guard is not None

    @property
    def call(self) -> CallSpec | None:
        """The decoded parts of a ``call`` instruction, None for other opcodes."""
        if self.opcode != "call":
            return None
        ops = list(self.operands)
        returns = ops.pop(0).items if ops and isinstance(ops[0], ParamList) else ()
        target = ops.pop(0)
        args = ops.pop(0).items if ops and isinstance(ops[0], ParamList) else ()
        proto = str(ops[0]) if ops else None
        return CallSpec(tuple(returns), target, tuple(args), proto)

    def __str__(self) -> str:
        guard = f"@{self.guard} " if self.guard is not None else ""
        ops = ", ".join(map(str, self.operands))
        return f"{guard}{self.name}{' ' + ops if ops else ''};"


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class RegDecl:
    """One register: its (function-unique) name, type and vector width."""

    name: str
    type: str
    vector: int = 1


@dataclass(frozen=True, slots=True)
class RegisterDecl:
    """A ``.reg`` statement as written: a ``%r<12>`` range (``prefix``, ``count``) or names."""

    type: str
    vector: int
    names: tuple[str, ...]
    prefix: str | None = None
    count: int | None = None


@dataclass(frozen=True, slots=True)
class SymbolRef:
    """An address constant in an initializer: ``sym``, ``sym+8``, ``generic(sym)``."""

    name: str
    offset: int = 0
    generic: bool = False


Initializer = Union[Imm, SymbolRef, tuple]


@dataclass(frozen=True, slots=True)
class Variable:
    """A ``.global``/``.const``/``.shared``/``.local``/``.param`` variable.

    ``dims`` holds the array dimensions (None for ``[]``), ``init`` the
    initializer (an :class:`Imm`, a :class:`SymbolRef` or nested tuples of them).
    """

    name: str
    space: str
    type: str
    vector: int = 1
    dims: tuple[int | None, ...] = ()
    align: int | None = None
    linkage: str | None = None
    init: Initializer | None = None
    attributes: tuple[str, ...] = ()
    line: int = field(default=0, compare=False)

    @property
    def element_size(self) -> int:
        return type_size(self.type) * self.vector

    @property
    def flat_init(self) -> tuple[Imm | SymbolRef, ...]:
        """The initializer's values in memory order (nested braces flattened); the
        remaining elements of a partly initialized array are zero."""
        if self.init is None:
            return ()
        out: list[Imm | SymbolRef] = []
        stack = [self.init]
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                stack.extend(reversed(item))
            else:
                out.append(item)
        return tuple(out)

    @property
    def count(self) -> int | None:
        """Number of elements (1 for a scalar, None for an unsized ``[]`` array)."""
        total = 1
        for dim in self.dims:
            if dim is None:
                return None
            total *= dim
        return total

    @property
    def size(self) -> int | None:
        """Bytes (None for an unsized ``extern`` array)."""
        count = self.count
        return None if count is None else count * self.element_size


@dataclass(frozen=True, slots=True)
class Param:
    """A kernel or function parameter.

    ``space`` is ``param``, or ``reg`` for the old-style register parameters of a
    ``.func``; ``dims`` holds array sizes (``.param .align 8 .b8 s[24]``); ``ptr``,
    ``ptr_space`` and ``ptr_align`` come from ``.ptr .global .align 16``.
    """

    name: str
    type: str
    space: str = "param"
    vector: int = 1
    dims: tuple[int | None, ...] = ()
    align: int | None = None
    ptr: bool = False
    ptr_space: str | None = None
    ptr_align: int | None = None

    @property
    def count(self) -> int:
        """Array elements (1 for a scalar)."""
        total = 1
        for dim in self.dims:
            total *= dim or 0
        return total

    @property
    def size(self) -> int:
        """Bytes the parameter occupies."""
        return type_size(self.type) * self.vector * self.count


@dataclass(frozen=True, slots=True)
class CallPrototype:
    """``name: .callprototype (.param .b32 _) _ (.param .b64 _);``"""

    name: str
    returns: tuple[Param, ...]
    params: tuple[Param, ...]
    noreturn: bool = False


@dataclass(frozen=True, slots=True)
class TargetList:
    """``name: .branchtargets L1, L2;`` or ``.calltargets f, g;``"""

    name: str
    kind: str
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LabelDef:
    """A code label in the body (its index is in ``Function.labels``)."""

    name: str


@dataclass(frozen=True, slots=True)
class Pragma:
    """``.pragma "text";`` (the text without quotes)."""

    text: str


@dataclass(frozen=True, slots=True)
class ScopeStart:
    """``{`` opening a nested scope inside a body."""


@dataclass(frozen=True, slots=True)
class ScopeEnd:
    """``}`` closing a nested scope."""


BodyItem = Union[Instruction, LabelDef, RegisterDecl, Variable, Pragma, ScopeStart, ScopeEnd,
                 TargetList, CallPrototype, SourceLoc]


# --------------------------------------------------------------------------- functions


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True, repr=False)
class Function:
    """A ``.entry`` kernel or a ``.func`` device function.

    Names in a body are unique per function: where a nested scope redeclares a
    register, variable or label that is already visible or that was declared
    with another type, the parser renames it ``name$N`` (and every use in that
    scope), so ``registers``, ``variables`` and ``labels`` are flat tables.
    ``body`` is None for a declaration without a body (``.extern .func``).
    """

    name: str
    is_entry: bool
    params: tuple[Param, ...]
    returns: tuple[Param, ...] = ()
    linkage: str | None = None
    maxntid: tuple[int, ...] | None = None
    reqntid: tuple[int, ...] | None = None
    minnctapersm: int | None = None
    maxnctapersm: int | None = None
    maxnreg: int | None = None
    noreturn: bool = False
    pragmas: tuple[str, ...] = ()
    directives: tuple[tuple[str, tuple[int, ...]], ...] = ()
    registers: Mapping[str, RegDecl] = field(default_factory=dict)
    variables: tuple[Variable, ...] = ()
    instructions: tuple[Instruction, ...] = ()
    labels: Mapping[str, int] = field(default_factory=dict)
    branch_tables: Mapping[str, TargetList] = field(default_factory=dict)
    prototypes: Mapping[str, CallPrototype] = field(default_factory=dict)
    body: tuple[BodyItem, ...] | None = None
    line: int = 0

    @property
    def is_declaration(self) -> bool:
        """True for a prototype without a body."""
        return self.body is None

    def param(self, name: str) -> Param:
        for param in (*self.params, *self.returns):
            if param.name == name:
                return param
        raise InputError(f"function {self.name} has no parameter {name!r}; "
                         f"it has {', '.join(p.name for p in self.params) or 'none'}")

    def variable(self, name: str) -> Variable:
        for var in self.variables:
            if var.name == name:
                return var
        raise InputError(f"function {self.name} declares no variable {name!r}")

    def __repr__(self) -> str:
        kind = "entry" if self.is_entry else "func"
        body = "declaration" if self.body is None else f"{len(self.instructions)} instructions"
        return f"Function({self.name!r}, {kind}, {len(self.params)} params, {body})"

    def label_index(self, name: str) -> int:
        """The instruction index a label stands before (``len(instructions)`` at the end)."""
        return self.labels[name]


@dataclass(frozen=True, slots=True)
class Section:
    """A debug section (``.section .debug_info { ... }``), its contents kept as written."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Alias:
    """``.alias alias, target;``"""

    name: str
    target: str


ModuleItem = Union[Function, Variable, Alias, Pragma, Section]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Module:
    """A parsed PTX module: header, module-level variables and functions in order."""

    version: str
    targets: tuple[str, ...]
    address_size: int
    items: tuple[ModuleItem, ...]
    files: Mapping[int, str] = field(default_factory=dict)
    filename: str | None = None
    #: the PTX text it was parsed from (instructions' ``line`` numbers count its lines)
    text: str | None = None

    @property
    def target(self) -> str:
        """The first ``.target`` entry (``sm_90``)."""
        return self.targets[0]

    @property
    def functions(self) -> tuple[Function, ...]:
        """Every function, definitions preferred over earlier declarations of the same name."""
        best: dict[str, Function] = {}
        for item in self.items:
            if isinstance(item, Function):
                if item.name not in best or not item.is_declaration:
                    best[item.name] = item
        return tuple(best.values())

    @property
    def entries(self) -> tuple[Function, ...]:
        """The kernels (``.entry`` functions with a body)."""
        return tuple(f for f in self.functions if f.is_entry and not f.is_declaration)

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(item for item in self.items if isinstance(item, Variable))

    def kernel(self, name: str | None = None) -> Function:
        """The kernel called ``name``, or the only kernel when ``name`` is None.

        Raises
        ------
        InputError
            When there is no such kernel, or several and no name was given.
        """
        if name is not None:
            func = self.function(name)
            if func.is_entry and not func.is_declaration:
                return func
            raise InputError(f"{name} is a device function, not a kernel; the kernels are "
                             f"{', '.join(f.name for f in self.entries) or 'none'}")
        entries = self.entries
        if len(entries) == 1:
            return entries[0]
        if not entries:
            raise InputError("the PTX module has no kernel (.entry); add one or pick a file "
                             "that has one")
        raise InputError(f"the PTX module has {len(entries)} kernels "
                         f"({', '.join(f.name for f in entries)}); name the one you mean")

    def function(self, name: str) -> Function:
        """The function called ``name``.

        Raises
        ------
        InputError
            When the module has no such function (the message lists the kernels).
        """
        for func in self.functions:
            if func.name == name:
                return func
        kernels = ", ".join(f.name for f in self.entries) or "none"
        raise InputError(f"the PTX module has no function {name!r}; its kernels are {kernels}")

    def variable(self, name: str) -> Variable:
        for var in self.variables:
            if var.name == name:
                return var
        raise InputError(f"the PTX module declares no variable {name!r}")

    def callee(self, name: str) -> Function:
        """The function a ``call`` of ``name`` runs: ``.alias`` followed to its target."""
        aliases = {item.name: item.target for item in self.items if isinstance(item, Alias)}
        seen = set()
        while name in aliases and name not in seen:
            seen.add(name)
            name = aliases[name]
        return self.function(name)

    def __repr__(self) -> str:
        funcs = ", ".join(f.name for f in self.functions)
        return f"Module({self.filename or '<text>'}, {self.target}, functions: {funcs})"
