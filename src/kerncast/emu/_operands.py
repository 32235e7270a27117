"""Registers and operands: getters and writers made once, at translation time.

Each register is one NumPy array over all lanes of a batch, in the dtype of its
declared type. An operand becomes a *getter* ``get(sl) -> array or scalar`` (a
register view's ``__getitem__``, a constant, a special register's array) and a
destination a *writer* ``write(lanes, value)`` (see :func:`make_writer`). Where an
instruction's type has the size of the register, the getter reads a ``.view`` of
it; a narrower type (``st.u8`` of a ``.b32`` register, ``cvt`` sources) truncates,
a wider destination (``ld.s8`` into a ``.b32`` register) is sign- or
zero-extended as the instruction type says.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._errors import UnsupportedInstruction
from kerncast.emu._lanes import make_writer
from kerncast.emu._layout import Layout
from kerncast.emu._program import Frame, Program
from kerncast.emu._types import bits_dtype, dtype_of, imm_scalar, int_dtype, is_signed, size_of
from kerncast.ptx import Address, Imm, Reg, RegPair, Sink, SpecialReg, Symbol, Vector

__all__ = ["Access", "RegFile", "Specials"]

_COMPONENTS = "xyzw"


class RegFile:
    """One array per register (vector registers: one per component)."""

    def __init__(self, program: Program, lanes: int) -> None:
        self.lanes = lanes
        self.arrays: dict[str, np.ndarray] = {}
        self.types: dict[str, str] = {}
        for key, decl in program.registers.items():
            names = [key] if decl.vector == 1 else \
                [f"{key}.{c}" for c in _COMPONENTS[:decl.vector]]
            for name in names:
                self.arrays[name] = np.zeros(lanes, dtype_of(decl.type))
                self.types[name] = decl.type
        self.arrays["%cc"] = np.zeros(lanes, np.uint32)
        self.types["%cc"] = "u32"

    def reset(self) -> None:
        for array in self.arrays.values():
            array.fill(0)

    def array(self, key: str) -> np.ndarray:
        return self.arrays[key]


class Specials:
    """Per-lane special registers of the current batch (``%tid``, ``%ctaid``, ...)."""

    def __init__(self, lanes: int) -> None:
        names = ("tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z", "laneid",
                 "warpid", "smid", "lanemask_eq", "lanemask_lt", "lanemask_le",
                 "lanemask_gt", "lanemask_ge")
        self.arrays = {name: np.zeros(lanes, np.uint32) for name in names}
        self.constants: dict[str, int] = {}
        self.clock = lambda: 0


class Access:
    """Builds getters and writers for the operands of one program and batch geometry."""

    def __init__(self, program: Program, regs: RegFile, specials: Specials,
                 layout: Layout) -> None:
        self.program, self.regs, self.specials, self.layout = program, regs, specials, layout

    # -- registers -----------------------------------------------------------------

    def reg_key(self, frame: Frame, reg: Reg) -> str:
        key = frame.reg(reg.name)
        if reg.component:
            key = f"{key}.{reg.component}"
        if key not in self.regs.arrays:
            if f"{key}.x" in self.regs.arrays:
                raise UnsupportedInstruction(f"vector register {reg.name} used as a whole")
            raise UnsupportedInstruction(f"register {reg.name} is not declared")
        return key

    def _symbol_reg(self, frame: Frame, op) -> Reg | None:
        """Old-style ``.reg`` parameters that the parser left as symbols."""
        if isinstance(op, Symbol) and frame.reg(op.name) in self.regs.arrays:
            return Reg(op.name)
        return None

    def reg_array(self, frame: Frame, reg: Reg, ptype: str) -> np.ndarray:
        """The register as an array of ``ptype`` (a view; sizes must agree)."""
        array = self.regs.arrays[self.reg_key(frame, reg)]
        want = dtype_of(ptype)
        if array.dtype == want:
            return array
        if array.dtype.itemsize != want.itemsize:
            raise UnsupportedInstruction(
                f"register {reg.name} ({array.dtype.itemsize * 8}-bit) used as .{ptype}")
        return array.view(want)

    # -- sources -------------------------------------------------------------------

    def src(self, frame: Frame, op, ptype: str, *, narrow: bool = False):
        """Getter for a source operand of type ``ptype``.

        ``narrow`` allows a register wider than the type (its low bits are read), as
        ``st``, ``cvt`` and ``mov`` packing allow.
        """
        reg = self._symbol_reg(frame, op) or op
        if isinstance(reg, Reg):
            return self._reg_getter(frame, reg, ptype, narrow)
        if isinstance(op, Imm):
            value = imm_scalar(op, ptype)
            return lambda sl: value
        if isinstance(op, SpecialReg):
            return self._special(op, ptype)
        if isinstance(op, Symbol):
            space, key, _ = self.program.resolve(frame, op.name)
            if space == "func":
                raise UnsupportedInstruction(f"the address of function {op.name} is not "
                                             "supported by the emulator")
            value = dtype_of(ptype).type(self.layout.address(space, key)
                                         & ((1 << (8 * size_of(ptype))) - 1))
            return lambda sl: value
        raise UnsupportedInstruction(f"operand {op} cannot be read as .{ptype}")

    def _reg_getter(self, frame: Frame, reg: Reg, ptype: str, narrow: bool):
        array = self.regs.arrays[self.reg_key(frame, reg)]
        if ptype == "pred" or array.dtype == np.bool_:
            if array.dtype != np.bool_ or ptype != "pred":
                if array.dtype == np.bool_:
                    target = dtype_of(ptype)
                    return lambda sl: array[sl].astype(target)
                raise UnsupportedInstruction(f"register {reg.name} is not a predicate")
            if reg.negated:
                return lambda sl: ~array[sl]
            return array.__getitem__
        want = dtype_of(ptype)
        if array.dtype.itemsize == want.itemsize:
            return (array if array.dtype == want else array.view(want)).__getitem__
        if array.dtype.itemsize > want.itemsize and narrow:
            bits = array.view(bits_dtype(array.dtype))
            unsigned = bits_dtype(want)
            return lambda sl: bits[sl].astype(unsigned).view(want)
        if array.dtype.itemsize < want.itemsize:
            src_int = int_dtype(array.dtype.itemsize, is_signed(ptype))
            view = array.view(src_int) if array.dtype.kind != "f" else None
            if view is not None:
                return lambda sl: view[sl].astype(want)
        raise UnsupportedInstruction(
            f"register {reg.name} ({array.dtype.itemsize * 8}-bit) cannot be read as .{ptype}")

    def _special(self, op: SpecialReg, ptype: str):
        name = op.name[1:]
        want = dtype_of(ptype)
        arrays, constants = self.specials.arrays, self.specials.constants
        if name in arrays:
            array = arrays[name]
            if want == array.dtype:
                return array.__getitem__
            return lambda sl: array[sl].astype(want)
        if name in ("clock", "clock64", "globaltimer", "globaltimer_lo", "clock_hi",
                    "globaltimer_hi"):
            specials = self.specials
            scale = {"globaltimer": 1, "globaltimer_lo": 1}.get(name, 1)
            return lambda sl: want.type(int(specials.clock() * scale) &
                                        ((1 << (8 * want.itemsize)) - 1))
        if name in constants:
            value = want.type(constants[name] & ((1 << (8 * want.itemsize)) - 1))
            return lambda sl: value
        raise UnsupportedInstruction(f"special register {op.name} is not supported by the "
                                     "emulator")

    def pred(self, frame: Frame, op):
        """Getter of a predicate operand (``!%p`` negates; immediates 0/1 allowed)."""
        return self.src(frame, op, "pred")

    # -- destinations --------------------------------------------------------------

    def dst(self, frame: Frame, op, ptype: str):
        """``(write, put)`` for a destination: ``write(lanes, v)`` and ``put(sel, v)``.

        A register wider than ``ptype`` receives the value sign- or zero-extended as
        the type's signedness says (``ld.s8`` into a ``.b32`` register).
        """
        if isinstance(op, Sink):
            return (lambda lanes, v: None), (lambda sel, v: None)
        reg = self._symbol_reg(frame, op) or op
        if not isinstance(reg, Reg):
            raise UnsupportedInstruction(f"{op} cannot be written")
        array = self.regs.arrays[self.reg_key(frame, reg)]
        want = dtype_of(ptype)
        if ptype == "pred" or array.dtype == np.bool_:
            if array.dtype != np.bool_:
                raise UnsupportedInstruction(f"register {reg.name} is not a predicate")
            return make_writer(array), array.__setitem__
        if array.dtype.itemsize == want.itemsize:
            target = array if array.dtype == want else array.view(want)
            return make_writer(target), target.__setitem__
        if array.dtype.itemsize > want.itemsize:
            wide = int_dtype(array.dtype.itemsize, is_signed(ptype))
            target = array.view(wide)
            narrow_bits = bits_dtype(want)
            signed_src = int_dtype(want.itemsize, True) if is_signed(ptype) else narrow_bits
            writer = make_writer(target)

            def convert(v):
                v = np.asarray(v)
                if v.dtype != want:
                    v = v.astype(want)
                return v.view(narrow_bits).view(signed_src).astype(wide)

            return (lambda lanes, v: writer(lanes, convert(v))), \
                (lambda sel, v: target.__setitem__(sel, convert(v)))
        raise UnsupportedInstruction(
            f"register {reg.name} ({array.dtype.itemsize * 8}-bit) is too narrow for .{ptype}")

    def dsts(self, frame: Frame, op, ptype: str) -> list:
        """Writers for a vector destination ``{%a, %b, _}`` (or a single register)."""
        items = op.elements if isinstance(op, Vector) else (op,)
        return [self.dst(frame, item, ptype) for item in items]

    def srcs(self, frame: Frame, op, ptype: str) -> list:
        items = op.elements if isinstance(op, Vector) else (op,)
        return [self.src(frame, item, ptype, narrow=True) for item in items]

    def pair(self, frame: Frame, op, ptype: str):
        """Writers of ``p|q`` destinations (``q`` may be missing)."""
        if isinstance(op, RegPair):
            return self.dst(frame, op.first, ptype), self.dst(frame, op.second, ptype)
        return self.dst(frame, op, ptype), None

    # -- addresses -----------------------------------------------------------------

    def address(self, frame: Frame, op: Address, generic: bool):
        """``(getter -> uint64 addresses, space of a symbol base or None)``.

        For a symbol base the address is in the symbol's space, or generic when
        ``generic`` (the instruction names no space).
        """
        base, offset = op.base, op.offset
        reg = self._symbol_reg(frame, base) if isinstance(base, Symbol) else base
        off = np.uint64(offset & 0xFFFFFFFFFFFFFFFF)
        if isinstance(reg, Reg):
            array = self.regs.arrays[self.reg_key(frame, reg)]
            if array.dtype.itemsize == 8:
                view = array.view(np.uint64)
                if offset == 0:
                    return view.__getitem__, None
                return (lambda sl: view[sl] + off), None
            if array.dtype.itemsize == 4:
                view32 = array.view(np.uint32)
                return (lambda sl: view32[sl].astype(np.uint64) + off), None
            raise UnsupportedInstruction(f"register {reg.name} cannot hold an address")
        if isinstance(base, Symbol):
            space, key, _ = self.program.resolve(frame, base.name)
            if space == "func":
                raise UnsupportedInstruction(f"function {base.name} used as an address")
            value = (self.layout.generic_address(space, key) if generic
                     else self.layout.address(space, key)) + offset
            const = np.uint64(value & 0xFFFFFFFFFFFFFFFF)

            def symbol_address(sl):
                count = (sl.stop - sl.start) if isinstance(sl, slice) else len(sl)
                return np.full(count, const, np.uint64)

            return symbol_address, ("kparam" if space == "kparam" else space)
        return (lambda sl: np.full((sl.stop - sl.start) if isinstance(sl, slice) else len(sl),
                                   off, np.uint64)), None

