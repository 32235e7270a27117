"""Emulator work counts: the operations and sectors a launch executes, from its trace.

:func:`emulator_counts` compiles a corpus kernel, runs a sample of its blocks on the
SIMT emulator (:mod:`kerncast.emu`) with the arguments the static predictor uses
(:func:`kerncast.sim._inputs.emulation_args`: zero-filled buffers when the trace cannot
depend on memory values, the generated inputs otherwise) and counts, from the trace:

* **flops**: every executed thread-level fp32/fp64 arithmetic instruction (the
  instruction's active lanes): ``fma``/``mad`` 2 operations, every other arithmetic
  instruction (add, sub, mul, div, rcp, sqrt, rsqrt, min, max, sin, cos, ex2, lg2,
  tanh) 1. Compares (``setp``, ``set``, ``testp``), sign operations (``abs``, ``neg``,
  ``copysign``), moves and conversions are not operations; half precision is not
  counted (a guarded instruction would count every active lane: the corpus's PTX
  guards only branches);
* **bytes**: the 32-byte sectors of every warp-level global load and store request
  after coalescing (:func:`kerncast.trace.requests`, Nsight Compute's
  ``l1tex__t_sectors_pipe_lsu_mem_global_op_ld``/``_st``), times 32; a global atomic's
  sectors count as read and as written. Nothing is cached: data that threads re-read
  counts every time, so this is what reaches DRAM for a streaming kernel and an upper
  bound where caches catch reuse;
* **instructions**: thread-level PTX instructions executed.

Sampling: block 0 runs first; from its cost the sample grows to at most
:data:`MAX_BLOCKS` blocks spread evenly over the grid (``{"strided": n}``), as many as
fit in :data:`SAMPLE_STEPS` warp instructions and :data:`ACCESS_BUDGET` recorded lane
accesses. The counts of the emulated blocks are scaled by ``blocks / emulated blocks``;
a grid of no more blocks than the sample is emulated whole and counted exactly. When a
block's accesses outgrow the recording budget, each global memory instruction's sectors
per request in the recorded part stand for its later executions; one first reached
after recording stopped counts as perfectly coalesced (lanes x bytes / 32).

The emulator cannot answer (:class:`WorkUnavailable`, naming the reason and the
``algorithmic`` provider) when the kernel does not compile here, uses an instruction the
emulator lacks or fails in it (a fault, a deadlock), runs more than :data:`BLOCK_STEPS`
warp instructions in block 0 or in the rest of the sample, or needs generated inputs
larger than :data:`INPUT_BYTES` (generating them would take many seconds). A call at a
corpus kernel's largest size takes under a second for most kernels, 2-3 s for a few and
5-6 s for the slowest (``nbody_forces``: one block; ``bfs_*``: generating their inputs).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import astuple, dataclass
from typing import TYPE_CHECKING

import numpy as np

from kerncast._errors import InputError, ToolchainError
from kerncast.models.work._counts import WorkCounts, WorkUnavailable, register_provider
from kerncast.trace import flop_weights
from kerncast.trace import KINDS, SECTOR, SPACES, requests
from kerncast.ptx import type_size

if TYPE_CHECKING:
    from kerncast.corpus import CorpusKernel, LaunchConfig

__all__ = ["ACCESS_BUDGET", "BLOCK_STEPS", "INPUT_BYTES", "MAX_BLOCKS", "SAMPLE_STEPS",
           "EmulatorProvider", "emulator_counts"]

MAX_BLOCKS = 64
"""Most blocks emulated for one launch."""
SAMPLE_STEPS = 1_000_000
"""Warp instructions the sample may execute (about a second of emulation)."""
BLOCK_STEPS = 8_000_000
"""Warp instructions block 0, and then the rest of the sample, may execute before the
emulator gives up on the launch (block 0 of ``nbody_forces`` at size large, the heaviest
in the corpus, runs 7.9 million: about 6 s)."""
ACCESS_BUDGET = 1_500_000
"""Lane accesses (all memory spaces) recorded per emulation."""
INPUT_BYTES = 256 * 2**20
"""Largest generated inputs a data-dependent kernel is emulated with."""

_INSTEAD = "use work='algorithmic' (the algorithm's operation count) instead"
_MEMORY_KINDS = {"ld": 0, "ldu": 0, "st": 1, "atom": 2, "red": 2}  # kerncast.trace.KINDS
_CACHE: dict[tuple, WorkCounts] = {}


@dataclass(frozen=True)
class _Tally:
    """Sums over the emulated blocks of one or more traces."""

    blocks: int
    flops_fp32: float
    flops_fp64: float
    bytes_read: float
    bytes_write: float
    instructions: float

    def __add__(self, other: _Tally) -> _Tally:
        return _Tally(*(a + b for a, b in zip(astuple(self), astuple(other))))


def _recorded_sectors(trace, reqs) -> np.ndarray:
    """Global sectors per pc and access kind (load, store, atomic): ``[3, pcs]``."""
    pcs = len(trace.classes)
    out = np.zeros((len(KINDS), pcs))
    glob = reqs.space == SPACES.index("global")
    for kind in range(len(KINDS)):
        keep = glob & (reqs.kind == kind)
        out[kind] = np.bincount(reqs.pc[keep], weights=reqs.sectors[keep], minlength=pcs)
    return out


def _unrecorded_sectors(item, threads: int) -> tuple[int | None, float]:
    """(access kind, sectors) of a global or generic memory instruction none of whose
    executions were recorded, as if perfectly coalesced (kind None: not one)."""
    ins = item.instr if item.kind == "op" else None
    if ins is None or ins.opcode not in _MEMORY_KINDS or ins.space not in ("global", None) \
            or not ins.types:
        return None, 0.0
    return _MEMORY_KINDS[ins.opcode], threads * type_size(ins.types[-1]) * ins.vector / SECTOR


def _extrapolated(trace, reqs, sectors: np.ndarray) -> np.ndarray:
    """Per-pc sectors of a trace whose access recording stopped early: each pc's
    recorded sectors per request times its executions (see the module doc)."""
    warp_runs, thread_runs = trace.pc_counts
    recorded = np.bincount(reqs.pc, minlength=len(warp_runs))
    scale = np.divide(warp_runs, recorded, out=np.zeros(len(warp_runs)), where=recorded > 0)
    sectors = sectors * scale
    for pc in np.flatnonzero((recorded == 0) & (warp_runs > 0)).tolist():
        kind, count = _unrecorded_sectors(trace.program.items[pc], int(thread_runs[pc]))
        if kind is not None:
            sectors[kind, pc] = count
    return sectors


def _sector_bytes(trace) -> tuple[float, float]:
    """(read, written) global bytes of a trace: sectors x 32, atomics both ways."""
    if len(trace.memory):
        reqs = requests(trace.memory)
        sectors = _recorded_sectors(trace, reqs)
        if trace.memory_cutoff is not None:
            sectors = _extrapolated(trace, reqs, sectors)
        load, store, atomic = sectors.sum(axis=1) * SECTOR
    else:
        load = store = atomic = 0.0
    return float(load + atomic), float(store + atomic)


def _tally_trace(trace) -> _Tally:
    """The work of the blocks a trace holds (unscaled)."""
    threads = trace.pc_counts[1]
    fp32, fp64 = flop_weights(trace.program) @ threads
    read, write = _sector_bytes(trace)
    return _Tally(len(trace.blocks), float(fp32), float(fp64), read, write,
                  float(trace.thread_steps))


def _prepared(kernel: CorpusKernel, config: LaunchConfig, language: str) -> tuple:
    """(module, entry, argument values, emulation options) of a corpus launch, with the
    compilation and arguments of the static predictor (:mod:`kerncast.sim`)."""
    from kerncast.frontend import DEFAULT_ARCH  # noqa: PLC0415 (on use: the compiler is heavy)
    from kerncast.sim import (  # noqa: PLC0415 (on use: simulator)
        cached_program, cached_unit, data_dependent, emulation_args,
    )

    try:
        source, launch = kernel.instance(config, language)
        tu, module = cached_unit(source, DEFAULT_ARCH)
        entry = tu.kernel(source.name).entry
    except (ToolchainError, InputError) as exc:
        raise WorkUnavailable(f"the emulator cannot run {kernel.name}: its {language} source "
                              f"does not compile here ({exc}); {_INSTEAD}") from None
    with _emulator_failures(kernel):
        program = cached_program(module, entry)
    if data_dependent(program) and kernel.buffer_bytes(config) > INPUT_BYTES:
        raise WorkUnavailable(
            f"{kernel.name}'s memory accesses depend on its inputs, so it is emulated on its "
            f"generated inputs, and at size {config.size!r} they take "
            f"{kernel.buffer_bytes(config) / 2**20:,.0f} MiB, more than the emulator's "
            f"limit of {INPUT_BYTES / 2**20:,.0f} MiB; choose a smaller size or {_INSTEAD}")
    values, inputs = emulation_args(launch, program)
    return module, entry, values, {"inplace": True, "exact": inputs != "zeros"}


@contextmanager
def _emulator_failures(kernel: CorpusKernel, blocks: tuple | list = (), step_budget: int = 0):
    """Turn the emulator's failures into :class:`WorkUnavailable` (says why)."""
    from kerncast.emu import (  # noqa: PLC0415 (on use: the emulator is heavy)
        EmulationError, StepBudgetExceeded, UnsupportedInstruction,
    )

    try:
        yield
    except StepBudgetExceeded:
        what = "block 0" if list(blocks) == [0] else f"{len(blocks)} sampled blocks"
        raise WorkUnavailable(
            f"emulating {what} of {kernel.name} takes more than {step_budget:,} warp "
            f"instructions, the emulator work source's limit (BLOCK_STEPS); {_INSTEAD}") \
            from None
    except (UnsupportedInstruction, EmulationError) as exc:
        raise WorkUnavailable(f"the emulator cannot run {kernel.name}: {exc}; {_INSTEAD}") \
            from None


def _trace(kernel: CorpusKernel, config: LaunchConfig, prepared: tuple, blocks: list[int],
           step_budget: int, access_budget: int):
    """The trace of ``blocks`` of the launch."""
    from kerncast.emu import emulate  # noqa: PLC0415 (on use: the emulator is heavy)

    module, entry, values, options = prepared
    with _emulator_failures(kernel, blocks, step_budget):
        return emulate(module, config, values, blocks, entry=entry, step_budget=step_budget,
                       memory_budget=access_budget, **options).trace


def _sample_size(pilot, blocks: int, max_blocks: int, sample_steps: int,
                 access_budget: int) -> int:
    """How many blocks to emulate, from block 0's trace (``pilot``)."""
    if pilot.memory_cutoff is not None:
        return 1
    by_steps = sample_steps // max(pilot.steps, 1)
    by_accesses = access_budget // max(len(pilot.memory), 1)
    return max(1, min(blocks, max_blocks, by_steps, by_accesses))


def _cache_key(kernel: CorpusKernel, config: LaunchConfig, language: str, budgets: tuple) -> tuple:
    return (str(kernel.app.directory), kernel.name, language, config.size, tuple(config.grid),
            tuple(config.block), config.dynamic_shared, tuple(sorted(config.params.items())),
            tuple(sorted(config.tunables.items())), tuple(sorted(config.defines.items())),
            budgets)


def emulator_counts(kernel: CorpusKernel, config: LaunchConfig, language: str = "cuda", *,
                    max_blocks: int | None = None, sample_steps: int | None = None,
                    block_steps: int | None = None,
                    access_budget: int | None = None) -> WorkCounts:
    """Work of one launch from the emulator's trace of a sample of its blocks.

    Block 0 runs first; the sample then spreads at most ``max_blocks`` blocks evenly over
    the grid, as many as fit in ``sample_steps`` warp instructions and ``access_budget``
    recorded lane accesses, and its counts are scaled to the grid (see the module doc).
    Budgets left at ``None`` take the module's constants (:data:`MAX_BLOCKS`,
    :data:`SAMPLE_STEPS`, :data:`BLOCK_STEPS`, :data:`ACCESS_BUDGET`). Results are
    remembered per launch and budgets.

    Raises
    ------
    WorkUnavailable
        If the kernel does not compile here, the emulator cannot run it, block 0 or the
        rest of the sample runs more than ``block_steps`` warp instructions, or its
        generated inputs are larger than :data:`INPUT_BYTES`.
    """
    budgets = (MAX_BLOCKS if max_blocks is None else max_blocks,
               SAMPLE_STEPS if sample_steps is None else sample_steps,
               BLOCK_STEPS if block_steps is None else block_steps,
               ACCESS_BUDGET if access_budget is None else access_budget)
    key = _cache_key(kernel, config, language, budgets)
    if key not in _CACHE:
        if len(_CACHE) >= 512:
            _CACHE.clear()
        _CACHE[key] = _sampled_counts(kernel, config, language, budgets)
    return _CACHE[key]


def _sampled_counts(kernel: CorpusKernel, config: LaunchConfig, language: str,
                    budgets: tuple) -> WorkCounts:
    from kerncast.emu import as_launch, select_blocks  # noqa: PLC0415 (on use: the emulator is heavy)

    max_blocks, sample_steps, block_steps, access_budget = budgets
    prepared = _prepared(kernel, config, language)
    pilot = _trace(kernel, config, prepared, [0], block_steps, access_budget)
    tally = _tally_trace(pilot)
    count = _sample_size(pilot, config.blocks, max_blocks, sample_steps, access_budget)
    if count > 1:
        chosen = select_blocks({"strided": count}, as_launch(config)).tolist()
        others = [b for b in chosen if b != 0]
        tally = tally + _tally_trace(_trace(kernel, config, prepared, others, block_steps,
                                            access_budget))
    scale = config.blocks / tally.blocks
    return WorkCounts(
        flops_fp32=tally.flops_fp32 * scale, flops_fp64=tally.flops_fp64 * scale,
        bytes_global_read=tally.bytes_read * scale, bytes_global_write=tally.bytes_write * scale,
        instructions=tally.instructions * scale, source="emulator",
    )


class EmulatorProvider:
    """The ``emulator`` work provider (see :func:`emulator_counts`)."""

    name = "emulator"
    priority = 0
    description = ("the SIMT emulator's trace of a strided sample of blocks, scaled to the "
                   "grid: executed fp32/fp64 operations and coalesced global sectors")

    def counts(self, kernel: CorpusKernel, config: LaunchConfig,
               language: str = "cuda") -> WorkCounts:
        return emulator_counts(kernel, config, language)


register_provider(EmulatorProvider())
