"""Where every variable of a program lives: offsets in shared, local, param and const
space, and the global regions of module ``.global`` variables, with their initial bytes."""

from __future__ import annotations

import numpy as np

from kerncast._errors import InputError

from kerncast.emu._errors import UnsupportedInstruction
from kerncast.emu._memory import (
    CONST_WINDOW, LOCAL_WINDOW, PARAM_FRAME_BASE, PARAM_WINDOW, SHARED_WINDOW, GlobalMemory,
    Region,
)
from kerncast.emu._program import Program
from kerncast.emu._types import imm_scalar
from kerncast.ptx import Imm, Param, SymbolRef, Variable

__all__ = ["Layout", "align_up", "param_offsets"]

_GENERIC = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "const": CONST_WINDOW,
            "param": PARAM_WINDOW, "kparam": PARAM_WINDOW, "global": 0}


def align_up(value: int, align: int) -> int:
    return -(-value // align) * align


def _var_align(var: Variable | Param) -> int:
    return max(var.align or 1, (var.element_size if isinstance(var, Variable)
                                else var.size // max(var.count, 1)) or 1)


def _pack(offsets: dict, items: list[tuple[str, Variable]], start: int = 0) -> int:
    """Give each sized variable an aligned offset; returns the end."""
    end = start
    for key, var in items:
        if var.size is None:
            continue
        end = align_up(end, _var_align(var))
        offsets[key] = end
        end += var.size
    return end


def param_offsets(params: tuple[Param, ...]) -> tuple[dict[str, int], int]:
    """Offsets of kernel parameters in the parameter buffer, and its size."""
    offsets, end = {}, 0
    for param in params:
        align = max(param.align or 1, param.size // max(param.count, 1) or 1)
        end = align_up(end, align)
        offsets[param.name] = end
        end += param.size
    return offsets, end


class Layout:
    """Addresses (in each variable's own space) of a program's variables."""

    def __init__(self, program: Program, gmem: GlobalMemory, dynamic_shared: int) -> None:
        self.program = program
        self.shared: dict[str, int] = {}
        static_end = _pack(self.shared, program.variables("shared"))
        dynamic_at = align_up(static_end, 16)
        for key, var in program.variables("shared"):
            if var.size is None:
                self.shared[key] = dynamic_at
        self.shared_static = static_end
        self.shared_size = (dynamic_at + dynamic_shared) if dynamic_shared else static_end
        self.dynamic_shared = dynamic_shared
        self.local: dict[str, int] = {}
        self.local_size = _pack(self.local, program.variables("local"))
        self.param: dict[str, int] = {}
        self.param_size = _pack(self.param, program.variables("param"))
        self.kparam, self.kparam_size = param_offsets(program.kernel.params)
        _check_limits(program.kernel.name, self.shared_size, self.local_size,
                      self.kparam_size)
        self.const: dict[str, int] = {}
        const_vars = program.variables("const")
        self.const_size = _pack(self.const, const_vars)
        if self.const_size > CONST_LIMIT:
            raise InputError(f"kernel {program.kernel.name} declares {self.const_size:,} bytes "
                             f"of constant memory; no GPU has more than {CONST_LIMIT:,} (64 KiB)")
        self.globals: dict[str, Region] = {}
        global_vars = program.variables("global")
        for key, var in global_vars:
            if var.size is None:
                raise UnsupportedInstruction(f"global variable {var.name} has no size")
            self.globals[key] = gmem.add(key, nbytes=var.size)
        self.const_bytes = np.zeros(max(self.const_size, 1), np.uint8)
        for key, var in const_vars:
            if var.init is not None and key in self.const:
                raw = self.initial_bytes(var)
                self.const_bytes[self.const[key]:self.const[key] + len(raw)] = raw
        for key, var in global_vars:
            if var.init is not None:
                raw = self.initial_bytes(var)
                self.globals[key].store.data[:len(raw)] = raw

    def fill_constants(self, values: dict) -> None:
        """Write the caller's values into ``__constant__`` variables by name (Kernel Tuner's
        ``cmem_args``).

        Raises
        ------
        InputError
            For a name the module has no constant variable of, or values larger than it.
        """
        found = {var.name: (key, var) for key, var in self.program.variables("const")}
        for name, value in values.items():
            if name not in found:
                raise InputError(f"constant memory argument {name!r}: the kernel has no "
                                 f"__constant__ variable of that name; it has "
                                 f"{', '.join(sorted(found)) or 'none'}")
            key, var = found[name]
            raw = np.ascontiguousarray(value).view(np.uint8).reshape(-1)
            if var.size is not None and raw.size > var.size:
                raise InputError(f"constant memory argument {name!r} holds {raw.size} bytes, "
                                 f"more than the {var.size} of the __constant__ variable")
            at = self.const[key]
            self.const_bytes[at:at + raw.size] = raw

    def address(self, space: str, key: str) -> int:
        """The address of a variable in its space (global: its absolute address)."""
        table = {"shared": self.shared, "local": self.local, "const": self.const,
                 "kparam": self.kparam}.get(space)
        if space == "param":
            return PARAM_FRAME_BASE + self.param[key]
        if space == "global":
            return self.globals[key].base
        if table is None or key not in table:
            raise UnsupportedInstruction(f"cannot take the address of {key} in {space} space")
        return table[key]

    def generic_address(self, space: str, key: str) -> int:
        return _GENERIC[space] + self.address(space, key)

    def initial_bytes(self, var: Variable) -> np.ndarray:
        """The bytes of a variable's initializer (zeros after the listed elements)."""
        values: list = []
        _flatten(var.init, values)
        out = np.zeros(var.size or 0, np.uint8)
        size = var.element_size // var.vector
        raw = bytearray()
        for item in values:
            if isinstance(item, SymbolRef):
                space, key, _ = self.program.resolve(self.program.frames[0], item.name)
                addr = (self.generic_address(space, key) if item.generic
                        else self.address(space, key)) + item.offset
                raw += int(addr & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
            else:
                raw += imm_scalar(item, var.type).tobytes()
        n = min(len(raw), out.size)
        out[:n] = np.frombuffer(bytes(raw[:n]), np.uint8)
        return out


#: the largest a CUDA GPU allows: shared memory per block (the H100's and H200's opt-in
#: maximum), local memory per thread, the constant bank, kernel parameters (CUDA 12.1+)
SHARED_LIMIT = 227 * 1024
LOCAL_LIMIT = 512 * 1024
CONST_LIMIT = 64 * 1024
PARAM_LIMIT = 32764


def _check_limits(name: str, shared: int, local: int, params: int) -> None:
    """Refuse, before anything is allocated, a kernel no GPU could launch."""
    for what, have, limit, advice in (
            ("shared memory per block", shared, SHARED_LIMIT,
             "shrink its __shared__ arrays or the launch's dynamic shared memory"),
            ("local memory per thread", local, LOCAL_LIMIT, "shrink its local arrays"),
            ("kernel parameters", params, PARAM_LIMIT, "pass large data through a buffer")):
        if have > limit:
            raise InputError(f"kernel {name} needs {have:,} bytes of {what}, more than any GPU "
                             f"allows ({limit:,}); {advice}")


def _flatten(init, out: list) -> None:
    if isinstance(init, tuple):
        for item in init:
            _flatten(item, out)
    elif isinstance(init, (Imm, SymbolRef)):
        out.append(init)
