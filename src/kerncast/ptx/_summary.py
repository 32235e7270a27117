"""Static instruction mix and the per-function summary behind ``kerncast inspect``."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

from kerncast.ptx._cfg import build_cfg
from kerncast.ptx._classes import InstrClass
from kerncast.ptx._ir import Function, Instruction, Module

__all__ = ["FunctionSummary", "LoopSummary", "instruction_class", "static_mix", "summarize",
           "summarize_module"]


def instruction_class(instr: Instruction) -> InstrClass:
    """The :class:`InstrClass` of an instruction (decided when it was parsed)."""
    return instr.iclass


def static_mix(function: Function) -> dict[InstrClass, int]:
    """Instructions per class in the function's text (not weighted by execution).

    Classes with no instruction are left out; keys follow :class:`InstrClass` order.
    """
    counts = Counter(instr.iclass for instr in function.instructions)
    return {cls: counts[cls] for cls in InstrClass if counts[cls]}


@dataclass(frozen=True, slots=True)
class LoopSummary:
    """One loop for display: header block and label, nesting depth, size."""

    header_block: int
    header_label: str | None
    depth: int
    blocks: int
    parent: int | None


@dataclass(frozen=True, slots=True)
class FunctionSummary:
    """Static facts about one function (see :func:`summarize`)."""

    name: str
    is_entry: bool
    params: int
    instructions: int
    blocks: int
    edges: int
    loops: tuple[LoopSummary, ...]
    max_loop_depth: int
    conditional_branches: int
    divergent_branches: tuple[int, ...]
    registers: dict[str, int]
    shared_bytes: int
    local_bytes: int
    mix: dict[str, int]

    def to_dict(self) -> dict:
        """Plain data for ``--json`` output."""
        data = asdict(self)
        data["divergent_branches"] = list(self.divergent_branches)
        return data


def summarize(function: Function) -> FunctionSummary:
    """Blocks, edges, loops (with depth), divergent-branch candidates and the mix.

    ``registers`` counts the declared virtual registers by type (ptxas allocates
    the hardware registers); ``shared_bytes`` and ``local_bytes`` add up the
    sized ``.shared`` and ``.local`` variables declared in the body.
    """
    cfg = build_cfg(function)
    loops = tuple(LoopSummary(loop.header, (cfg.blocks[loop.header].labels or (None,))[0],
                              loop.depth, len(loop.blocks), loop.parent) for loop in cfg.loops)
    registers = Counter(reg.type for reg in function.registers.values())
    sizes = {"shared": 0, "local": 0}
    for var in function.variables:
        if var.space in sizes and var.size is not None:
            sizes[var.space] += var.size
    return FunctionSummary(
        name=function.name, is_entry=function.is_entry, params=len(function.params),
        instructions=len(function.instructions), blocks=len(cfg.blocks),
        edges=len(cfg.edges), loops=loops,
        max_loop_depth=max((loop.depth for loop in loops), default=0),
        conditional_branches=len(cfg.reconvergence),
        divergent_branches=cfg.divergent_branches,
        registers=dict(sorted(registers.items())), shared_bytes=sizes["shared"],
        local_bytes=sizes["local"],
        mix={cls.value: n for cls, n in static_mix(function).items()})


def summarize_module(module: Module) -> list[FunctionSummary]:
    """A summary of every function with a body, kernels first."""
    funcs = [f for f in module.functions if not f.is_declaration]
    funcs.sort(key=lambda f: not f.is_entry)
    return [summarize(f) for f in funcs]
