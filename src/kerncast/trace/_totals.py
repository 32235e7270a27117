"""Per-kernel totals of a trace, named like Nsight Compute's metrics.

The keys (for the blocks that ran; scale by ``blocks / traced blocks`` for a
sample):

============================================================  ================================
key                                                           meaning
============================================================  ================================
``smsp__inst_executed.sum``                                    warp-level PTX instructions
``smsp__thread_inst_executed.sum``                             thread-level PTX instructions
``l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum``            global load requests
``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum``             global load sectors
``l1tex__t_requests_pipe_lsu_mem_global_op_st.sum``            global store requests
``l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum``             global store sectors
``l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum``          global ``atom`` requests
``l1tex__t_requests_pipe_lsu_mem_global_op_red.sum``           global ``red`` requests (and
                                                              ``atom`` with an unused result)
``l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum`` / ``_st``    local sectors
``smsp__inst_executed_op_shared_ld.sum`` / ``_st``             shared load/store requests
``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum``/``st``  shared wavefronts
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum``/``st``  shared bank conflicts
``smsp__inst_executed_op_shared_atom.sum``                     shared atomics
============================================================  ================================

PTX and SASS instruction counts differ (see :func:`kerncast.trace.estimate_sass`).
Memory requests correspond one to one where ptxas keeps the PTX memory operations:
on an H100 the requests, sectors, wavefronts and bank conflicts of strided 32-,
64- and 128-bit global and shared accesses equal the measured counters exactly
(``tests/trace/fixtures/counters_h100.csv``). They differ where ptxas transforms
the code: small local arrays promoted to registers, short branches if-converted
to predicated code (every warp then issues the predicated loads and stores),
neighbouring shared loads merged into vector loads. Generic accesses count in
the space they resolved to.
"""

from __future__ import annotations

import numpy as np

from kerncast.trace._banks import bank_conflicts
from kerncast.trace._coalesce import requests
from kerncast.trace._predicate import predicated_issues
from kerncast.trace._trace import KINDS, SPACES
from kerncast.trace._vectorize import merge_shared_vectors

__all__ = ["flop_weights", "kernel_totals"]

_FMA = frozenset({"fma", "mad"})
_NOT_OPERATIONS = frozenset({"setp", "set", "testp", "abs", "neg", "copysign"})
_FLOAT_CLASSES = frozenset({"fp32", "fp32_div", "fp64", "fp64_div", "sfu"})


def _reductions(trace) -> np.ndarray:
    """Per pc: a ``red``, or an ``atom`` whose result no instruction reads (ptxas turns
    those into reductions, and Nsight counts them as such)."""
    from kerncast.ptx import Reg, read_registers

    program = trace.program
    read: set[str] = set()
    for item in program.items:
        if item.kind == "op":
            read.update(item.frame.reg(name) for name in read_registers(item.instr))
        elif item.kind == "bind":
            src_frame, src = item.bind[2], item.bind[3]
            if isinstance(src, Reg):
                read.add(src_frame.reg(src.name))
    out = np.zeros(len(program.items), bool)
    for pc, item in enumerate(program.items):
        ins = item.instr
        if item.kind != "op" or ins.opcode not in ("atom", "red"):
            continue
        dest = ins.operands[0]
        out[pc] = ins.opcode == "red" or not (isinstance(dest, Reg) and
                                              item.frame.reg(dest.name) in read)
    return out


def _extra_requests(trace, extra: np.ndarray, space: str, kind: str) -> int:
    """Requests of predicated-off memory instructions (see :func:`predicated_issues`)."""
    total = 0
    for pc in np.flatnonzero(extra).tolist():
        item = trace.program.items[pc]
        ins = item.instr
        if item.kind != "op" or ins.opcode not in ("ld", "ldu", "st"):
            continue
        if (ins.opcode == "st") != (kind == "store"):
            continue
        if (ins.space or "global") == space:
            total += int(extra[pc])
    return total


def kernel_totals(trace, *, ptxas: bool = True) -> dict[str, int]:
    """Totals of ``trace`` (see the module doc for the keys); also per instruction class
    as ``inst_executed.<class>`` and ``thread_inst_executed.<class>``.

    With ``ptxas`` (the default) shared-memory accesses that ptxas merges into
    vector accesses count as it issues them (:func:`merge_shared_vectors`), and
    the memory instructions of short branches that ptxas if-converts count once
    more for every warp that skipped them (:func:`predicated_issues`; their total
    is ``predicated_issues``); ``ptxas=False`` counts the PTX instructions as they
    ran.
    """
    out: dict[str, int] = {
        "smsp__inst_executed.sum": int(trace.steps),
        "smsp__thread_inst_executed.sum": int(trace.thread_steps),
    }
    for cls, (warps, threads) in sorted(trace.instruction_counts().items(),
                                        key=lambda kv: kv[0].value):
        out[f"inst_executed.{cls.value}"] = warps
        out[f"thread_inst_executed.{cls.value}"] = threads
    accesses = trace.memory
    extra = np.zeros(len(trace.classes), np.int64)
    if ptxas:
        accesses = merge_shared_vectors(accesses, trace.program)
        extra = predicated_issues(trace)
    out["predicated_issues"] = int(extra.sum())
    reqs = requests(accesses)
    glob = SPACES.index("global")
    for kind, tag in (("load", "ld"), ("store", "st")):
        part = reqs.select(space="global", kind=kind)
        out[f"l1tex__t_requests_pipe_lsu_mem_global_op_{tag}.sum"] = len(part)
        out[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{tag}.sum"] = part.total("sectors")
        local = reqs.select(space="local", kind=kind)
        out[f"l1tex__t_requests_pipe_lsu_mem_local_op_{tag}.sum"] = len(local)
        out[f"l1tex__t_sectors_pipe_lsu_mem_local_op_{tag}.sum"] = local.total("sectors")
        shared = reqs.select(space="shared", kind=kind)
        out[f"smsp__inst_executed_op_shared_{tag}.sum"] = len(shared)
        for space in ("global", "local", "shared"):
            added = _extra_requests(trace, extra, space, kind)
            if not added:
                continue
            key = f"smsp__inst_executed_op_shared_{tag}.sum" if space == "shared" else \
                f"l1tex__t_requests_pipe_lsu_mem_{space}_op_{tag}.sum"
            out[key] += added
    atomic = (reqs.space == glob) & (reqs.kind == KINDS.index("atomic"))
    red = atomic & _reductions(trace)[reqs.pc] if len(reqs) else atomic
    out["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] = int((atomic & ~red).sum())
    out["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] = int(red.sum())
    out["smsp__inst_executed_op_shared_atom.sum"] = len(reqs.select(space="shared",
                                                                    kind="atomic"))
    banks = bank_conflicts(accesses)
    for kind, tag in (("load", "ld"), ("store", "st")):
        wavefronts, conflicts = banks.total(kind)
        out[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{tag}.sum"] = wavefronts
        out[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{tag}.sum"] = conflicts
    out["barrier_arrivals"] = len(trace.barriers)
    return out


def flop_weights(program) -> np.ndarray:
    """Floating-point operations per thread execution of every pc of an emulator program:
    ``[2, pcs]``, fp32 then fp64. ``fma``/``mad`` count 2, every other fp32/fp64
    arithmetic instruction 1; compares, sign operations, moves and conversions none."""
    weights = np.zeros((2, len(program.items)))
    for pc, item in enumerate(program.items):
        ins = item.instr if item.kind == "op" else None
        if ins is None or str(ins.iclass) not in _FLOAT_CLASSES or not ins.types \
                or ins.opcode in _NOT_OPERATIONS:
            continue
        precision = {"f32": 0, "f64": 1}.get(ins.types[-1])
        if precision is not None:
            weights[precision, pc] = 2.0 if ins.opcode in _FMA else 1.0
    return weights
