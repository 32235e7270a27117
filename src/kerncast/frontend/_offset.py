"""A kernel that runs a slice of its grid: block offsets for PTX and OpenCL C.

:func:`offset_kernel` and :func:`offset_launch` give a backend the kernel and the launch
of such a slice: ``kerncast.split`` runs each device's share through them, and the
sampled runs of ``kerncast.measure`` run their samples through them, so that a sample's
blocks see the whole grid's size (a grid-stride loop does its share of the work, not
all of it).

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

import numpy as np

from kerncast._errors import InputError
from kerncast.core import Kernel, Launch, Scalar
from kerncast.ptx import (Address, Function, Instruction, Module, Param, Reg, RegisterDecl,
                          SpecialReg, Symbol, parse, to_ptx)

__all__ = ["OFFSET_PARAMS", "offset_kernel", "offset_launch", "offset_ptx", "opencl_prelude"]

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


def offset_kernel(kernel: Kernel, launch: Launch, language: str, arch: str) -> Kernel:
    """The kernel as a backend of ``language`` (``cuda`` or ``opencl``) runs a slice of
    ``launch``: PTX with block offsets, compiled for ``arch``, or OpenCL C with the
    prelude."""
    if language == "cuda":
        from kerncast.frontend._build import build  # noqa: PLC0415 (cycle: _build's compiler)

        tu = build(kernel, arch)
        entry = tu.kernel(kernel.name).entry
        return Kernel(entry, text=offset_ptx(tu.ptx, entry), language="ptx")
    if kernel.language != "opencl":
        raise InputError(f"an OpenCL device runs OpenCL C and {kernel.name} is {kernel.language}; "
                         "run it on a CUDA device (cupy), or give its OpenCL version")
    dirs = (*kernel.include_dirs, *((kernel.path.parent,) if kernel.path else ()))
    return replace(kernel, text=opencl_prelude(launch.grid) + kernel.source, path=None,
                   include_dirs=dirs)


def offset_launch(launch: Launch, first: tuple[int, int, int], grid: tuple[int, int, int],
                  cuda: bool) -> Launch:
    """The launch of the blocks ``first`` to ``first + grid`` (per dimension) of ``launch``
    through :func:`offset_kernel`: for CUDA the offset and the whole grid's size follow
    the kernel's own arguments; an OpenCL launch passes ``first`` times the block as its
    global work offset instead (the caller's backend does)."""
    sliced = launch.with_grid(tuple(grid))
    if not cuda:
        return sliced
    values = [*first, *launch.grid]
    return replace(sliced, args=(*launch.args, *(Scalar(v, np.dtype(np.uint32)) for v in values)),
                   names=(*launch.names, *OFFSET_PARAMS))
