"""A kernel that runs a slice of its grid: block offsets for PTX and OpenCL C.

A device that takes blocks ``[offset, offset + count)`` of a launch along one grid
dimension launches a grid of ``count`` blocks there; the kernel must still see the block
indices and grid size of the whole launch.

* **PTX** (:func:`offset_ptx`): the entry gets six ``.u32`` parameters after its own,
  ``kc_block_offset_{x,y,z}`` and ``kc_grid_{x,y,z}``; at its start it computes
  ``%ctaid + offset`` and loads the whole grid's size, and every read of ``%ctaid`` and
  ``%nctaid`` in its body reads those instead. A device function (``.func``) that reads
  them cannot be given the offset and is refused.
* **OpenCL C** (:func:`opencl_prelude`): the launch passes the slice's first work-item
  as the global work offset, so ``get_global_id`` already counts from it; a prelude of
  macros adds it to ``get_group_id`` (``get_global_offset(d) / get_local_size(d)``) and
  makes ``get_num_groups`` and ``get_global_size`` answer for the whole grid.
"""

from __future__ import annotations

from dataclasses import replace

from kerncast._errors import InputError
from kerncast.ptx import (Address, Function, Instruction, Module, Param, Reg, RegisterDecl,
                          SpecialReg, Symbol, parse, to_ptx)

__all__ = ["OFFSET_PARAMS", "offset_ptx", "opencl_prelude"]

AXES = ("x", "y", "z")
#: The parameters :func:`offset_ptx` appends, in order.
OFFSET_PARAMS = (*(f"kc_block_offset_{a}" for a in AXES), *(f"kc_grid_{a}" for a in AXES))
_BLOCK, _GRID = "%kc_ctaid_", "%kc_nctaid_"


def offset_ptx(text: str, entry: str) -> str:
    """``text`` with the kernel ``entry`` reading its block indices as ``%ctaid`` plus
    the ``kc_block_offset_*`` parameters and its grid size from ``kc_grid_*``."""
    module = parse(text)
    kernel = module.kernel(entry)
    _refuse_functions_reading_blocks(module, kernel)
    if any(p.name in OFFSET_PARAMS for p in kernel.params):
        raise InputError(f"{entry} already takes block-offset parameters; give the original "
                         "kernel")
    rewritten = replace(kernel, params=(*kernel.params,
                                        *(Param(name, "u32") for name in OFFSET_PARAMS)),
                        body=_body(kernel))
    items = tuple(rewritten if item is kernel else item for item in module.items)
    return to_ptx(replace(module, items=items, text=None))


def _reads(instr: Instruction, bases: tuple[str, ...]) -> bool:
    return any(isinstance(op, SpecialReg) and op.base in bases for op in instr.operands)


def _refuse_functions_reading_blocks(module: Module, kernel: Function) -> None:
    for func in module.functions:
        if func.is_entry or func.is_declaration:  # another kernel runs on its own
            continue
        if any(_reads(i, ("%ctaid", "%nctaid")) for i in func.instructions):
            raise InputError(f"device function {func.name} reads the block index (%ctaid); "
                             "kerncast can give a block offset to the kernel only: inline it "
                             "(__forceinline__) to split this kernel")


def _replaced(instr: Instruction) -> Instruction:
    ops = []
    for op in instr.operands:
        if isinstance(op, SpecialReg) and op.base in ("%ctaid", "%nctaid"):
            prefix = _BLOCK if op.base == "%ctaid" else _GRID
            op = Reg(prefix + (op.component or "x"))
        ops.append(op)
    return replace(instr, operands=tuple(ops))


def _prologue() -> list:
    """Declarations and the instructions that compute the whole grid's indices."""
    items: list = [RegisterDecl("u32", 1, tuple(p + a for p in (_BLOCK, _GRID) for a in AXES))]
    for axis in AXES:
        block, grid = Reg(_BLOCK + axis), Reg(_GRID + axis)
        items += [
            Instruction.build("ld", ("param", "u32"),
                              (grid, Address(Symbol(f"kc_block_offset_{axis}")))),
            Instruction.build("mov", ("u32",), (block, SpecialReg(f"%ctaid.{axis}"))),
            Instruction.build("add", ("u32",), (block, block, grid)),
            Instruction.build("ld", ("param", "u32"),
                              (grid, Address(Symbol(f"kc_grid_{axis}")))),
        ]
    return items


def _body(kernel: Function) -> tuple:
    """The kernel's body with the prologue after its leading declarations."""
    body = list(kernel.body or ())
    at = 0
    while at < len(body) and isinstance(body[at], RegisterDecl):
        at += 1
    rest = [_replaced(i) if isinstance(i, Instruction) else i for i in body[at:]]
    return tuple(body[:at] + _prologue() + rest)


def opencl_prelude(grid: tuple[int, int, int]) -> str:
    """Macros that make an OpenCL C kernel launched on a slice of ``grid`` (with the
    slice's global work offset) see the block indices and sizes of the whole grid."""
    gx, gy, gz = grid
    groups = f"((d) == 0 ? {gx}u : (d) == 1 ? {gy}u : {gz}u)"
    return "\n".join([
        "#define get_group_id(d) (get_group_id(d) + get_global_offset(d) / get_local_size(d))",
        f"#define get_num_groups(d) {groups}",
        f"#define get_global_size(d) ({groups} * get_local_size(d))",
        "",
    ])
