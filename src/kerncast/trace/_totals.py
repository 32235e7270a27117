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
``l1tex__t_requests_pipe_lsu_mem_global_op_red.sum``           global ``red`` requests
``l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum`` / ``_st``    local sectors
``smsp__inst_executed_op_shared_ld.sum`` / ``_st``             shared load/store requests
``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum``/``st``  shared wavefronts
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum``/``st``  shared bank conflicts
``smsp__inst_executed_op_shared_atom.sum``                     shared atomics
============================================================  ================================

PTX and SASS instruction counts differ (see :func:`kerncast.trace.estimate_sass`);
memory requests correspond one to one, as each PTX load, store or atomic becomes
one SASS memory instruction. Generic accesses count in the space they resolved to.
"""

from __future__ import annotations

import numpy as np

from kerncast.trace._banks import bank_conflicts
from kerncast.trace._coalesce import requests
from kerncast.trace._trace import KINDS, SPACES

__all__ = ["kernel_totals"]


def _opcodes(trace) -> np.ndarray:
    return np.array([name.split(".")[0] for name in trace.names])


def kernel_totals(trace) -> dict[str, int]:
    """Totals of ``trace`` (see the module doc for the keys); also per instruction class
    as ``inst_executed.<class>`` and ``thread_inst_executed.<class>``."""
    out: dict[str, int] = {
        "smsp__inst_executed.sum": int(trace.steps),
        "smsp__thread_inst_executed.sum": int(trace.thread_steps),
    }
    for cls, (warps, threads) in sorted(trace.instruction_counts().items(),
                                        key=lambda kv: kv[0].value):
        out[f"inst_executed.{cls.value}"] = warps
        out[f"thread_inst_executed.{cls.value}"] = threads
    reqs = requests(trace.memory)
    opcode = _opcodes(trace)
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
    atomic = (reqs.space == glob) & (reqs.kind == KINDS.index("atomic"))
    red = atomic & (opcode[reqs.pc] == "red") if len(reqs) else atomic
    out["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] = int((atomic & ~red).sum())
    out["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] = int(red.sum())
    out["smsp__inst_executed_op_shared_atom.sum"] = len(reqs.select(space="shared",
                                                                    kind="atomic"))
    banks = bank_conflicts(trace.memory)
    for kind, tag in (("load", "ld"), ("store", "st")):
        wavefronts, conflicts = banks.total(kind)
        out[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{tag}.sum"] = wavefronts
        out[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{tag}.sum"] = conflicts
    out["barrier_arrivals"] = len(trace.barriers)
    return out
