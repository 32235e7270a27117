"""Static prediction of one launch: compile, emulate one round, simulate, scale.

1. compile the kernel for the device (``kerncast.compile``) and read its registers
   and shared memory (ptxas); the occupancy calculator gives the blocks resident
   per SM (Psat);
2. emulate, with the launch's arguments, the blocks SM 0 holds in the first round
   (blocks 0, S, 2S, ... on S SMs: they sample the grid) and the probe blocks next to
   block 0 along each grid dimension. A kernel whose instruction stream and addresses
   cannot depend on memory values (see :mod:`kerncast.sim._inputs`) runs the same
   instructions in every block: block 0 alone is emulated and stands for the others,
   its global addresses moved by the block-to-block shifts the probes reveal. Unless
   blocks across the grid (at 1/4, 1/2, 3/4 of it) finish in half of block 0's
   instructions (:func:`short_blocks`): a grid launched past its data, whose blocks
   there skip their work, then traces blocks spread over the grid, as a data-dependent
   kernel does. Only
   the values the trace depends on are computed (``emulate(..., values="needed")``).
   Meanwhile ptxas and nvdisasm give the kernel's SASS: the issue slots of each PTX
   line (:mod:`kerncast.sim._sassissue`) and its register-bank conflicts
   (:mod:`kerncast.sim._regbanks`);
3. cost every memory request (bank conflicts, sectors, the share of DRAM fetches from
   :mod:`kerncast.sim._sharing`) and simulate the round on the warp pipeline (L1 and
   L2 modelled in issue order). Long rounds are traced and simulated over windows of
   every warp's stream and extrapolated; in a launch of several waves each block's
   windows sit at a phase of its own (the resident blocks of a long launch drift
   apart), and a round simulated whole starts each block at such a phase of its code
   (past as many of its barriers), wrapping round to its start
   (:func:`~kerncast.sim._pipeline.rotate_streams`). A round simulated whole is
   followed by up to :data:`GENERATIONS` more (as
   the budget allows, and the launch has waves), each block's slot taking the next
   block when it ends (after the calibrated turnaround and the block scheduler's rate):
   blocks drift apart as over a launch of many waves, and the round time is the steady
   spacing of the rounds' ends;
4. scale to the grid: ``full waves x round time + tail-wave time``, bounded below by
   the block scheduler's dispatch rate, by the L2's atomic units and by the grid's
   longest data-dependent loop (:mod:`kerncast.sim._straggler`: a thread that walks
   the longest row of a CSR matrix, which the emulated blocks rarely hold), plus the
   fixed launch cost.

Nothing here reads a measurement of the kernel: the only hardware inputs are the
device spec and the calibration.
"""

from __future__ import annotations

import gc
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import Any

import numpy as np

from kerncast._errors import InputError, KerncastError, ToolchainError
from kerncast.core import Array, Kernel, Launch
from kerncast.devices import Device, get_device, occupancy
from kerncast.sim._inputs import data_dependent, emulation_args, values_repeatable
from kerncast.sim._machine import Machine, machine_for
from kerncast.sim._memory import request_costs, static_vectors
from kerncast.sim._pipeline import (DEFAULT_BUDGET, RoundResult, build_table, constant_replays,
                                    memory_keys, sample_streams, segment_orders,
                                    simulate_round)
from kerncast.sim._regbanks import charge_conflicts, pc_conflicts
from kerncast.sim._sassissue import SassIssue, SassReading, charge_sass_issue, read_sass
from kerncast.sim._segments import grid_split, joined, segment_anchor
from kerncast.sim._sharing import (Sharing, probe_blocks, resident_shares, restored_warm,
                                   warm_l2, wave_sharing)
from kerncast.sim._straggler import LoopBound, loop_trip_bound
from kerncast.sim._whatif import check_fixes, fix_costs, fix_streams, fixed_blocks_per_sm
from kerncast.trace import KINDS, SPACES, flop_weights

__all__ = ["MEMORY_BUDGET", "StaticResult", "cached_program", "cached_unit", "check_fits",
           "choose_blocks", "predict_launch"]

MEMORY_BUDGET = 1_500_000   # lane accesses recorded per prediction
DEPENDENT_BLOCKS = 8         # least blocks emulated for a data-dependent round
DEPENDENT_WARPS = 64         # and least warps, where the round has them
PEEK_SHARE = 0.25          # the probe blocks run at most this share of their steps
#: Blocks across the grid checked for doing far less than block 0, the share of block
#: 0's steps within which such a block must finish to count as short, and the most steps
#: a check may take (what it costs where every block works alike). The blocks of a grid
#: launched past its data fail their bounds checks: a tiled transpose's run 520 steps
#: (the loop and the barrier) where a working one runs 1,128.
UNEVEN_CHECKS = 3
UNEVEN_SHARE = 0.5
UNEVEN_STEPS = 50_000


@dataclass
class StaticResult:
    """A static prediction with what it rests on."""

    seconds: float
    breakdown: dict[str, float]
    bottleneck: str
    based_on: dict[str, Any] = field(default_factory=dict)


_UNITS: dict[tuple, tuple] = {}


def _kernel_key(kernel: Kernel, arch: str) -> tuple:
    return (kernel.name, str(kernel.path) if kernel.path else kernel.text, kernel.language,
            kernel.compiler, kernel.options, tuple(sorted(kernel.defines.items())),
            kernel.include_dirs, arch)


def cached_unit(kernel: Kernel, arch: str) -> tuple:
    """(translation unit, parsed module) of ``kernel`` built for ``arch``; the last 64
    kept (a sweep compiles each define set once)."""
    from kerncast.frontend import build  # noqa: PLC0415 (on use: the compiler)

    key = _kernel_key(kernel, arch)
    if key not in _UNITS:
        if len(_UNITS) >= 64:
            _UNITS.pop(next(iter(_UNITS)))
        tu = build(kernel, arch)
        _UNITS[key] = (tu, tu.module)
    return _UNITS[key]


@lru_cache(maxsize=64)
def _program_cached(module_id: int, module, entry: str):
    from kerncast.emu import build_program  # noqa: PLC0415 (on use: the emulator)

    return build_program(module.kernel(entry), module)


def cached_program(module, entry: str):
    """The emulator's program of ``module``'s kernel ``entry``; the last 64 kept."""
    return _program_cached(id(module), module, entry)


_ASSEMBLER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kerncast-sass")


def assemble_sass(kernels: list[Kernel], device: str | Device) -> int:
    """Keep in the disk cache the SASS and the ptxas resources that predictions of
    ``kernels`` on ``device`` read, assembled in batches
    (:func:`kerncast.trace.assemble_many`, :func:`kerncast.frontend.assemble_resources`):
    a sweep's binaries, before it predicts them. A kernel that does not compile is left
    for its prediction to report. Returns how many modules' SASS was assembled."""
    from kerncast.frontend import assemble_resources  # noqa: PLC0415 (on use: ptxas)
    from kerncast.trace import assemble_many, printed_module  # noqa: PLC0415 (on use)

    dev = get_device(device)
    if dev.ptx_target is None:
        return 0
    texts, units = [], []
    for kernel in kernels:
        try:
            unit, module = cached_unit(kernel, dev.key)
        except KerncastError:
            continue
        texts.append(printed_module(module)[0])
        units.append(unit)
    assemble_resources(units, dev.ptx_target)
    return assemble_many(texts, dev.ptx_target)


def _conflicts_soon(program, arch: str | None) -> Future | None:
    """Start finding the program's register-bank conflicts (ptxas and nvdisasm, or the
    disk cache) on a worker thread, so that the tools run while the kernel is emulated;
    None when the device has no PTX target."""
    return None if arch is None else _ASSEMBLER.submit(pc_conflicts, program, arch)


def _charged(table: list, program, machine: Machine, ratios: dict[int, SassIssue] | None,
             conflicts: Future | None, arch: str | None) -> tuple[list, str]:
    """``table`` issued as its SASS (``ratios``, see :mod:`kerncast.sim._sassissue`)
    where known, with the register-bank conflicts that :func:`_conflicts_soon` found
    charged, and how the conflicts were found."""
    if ratios:
        table = charge_sass_issue(table, ratios, program, machine)
    if conflicts is None:
        return table, "not modelled: the device has no PTX target"
    try:
        found = conflicts.result()
    except (ToolchainError, ValueError, KeyError) as exc:
        return table, f"not modelled: {exc}"
    return charge_conflicts(table, found), (
        f"from the SASS (ptxas -arch={arch}): {len(found)} PTX instructions in conflict")


def _region_chains(orders: dict) -> list[tuple]:
    """The if-converted chains of :func:`~kerncast.sim._pipeline.segment_orders` whose
    guarded regions a warp that branches over them still issues, predicated off (see
    :func:`_predicated_runs`)."""
    return [chain for key, chain in orders.items()
            if isinstance(key, tuple) and len(chain) > 3 and chain[3]]


def _issued(trace, orders: dict) -> np.ndarray:
    """Per pc, how often the pipeline issues it over every traced warp: its executions
    plus the predicated-off copies of if-converted regions (see :func:`_expand`)."""
    n = len(trace.program.items)
    # the issue orders only permute the pcs a warp runs: its executions are the count,
    # and a run of a chain that branched over regions issues them as well
    counts = np.array(trace.pc_counts[0][:n], np.int64)
    chains = _region_chains(orders)
    # warps that ran the same segments add the same: each sequence is looked at once
    runs: dict[tuple, int] = {}
    for stream in trace.streams().values() if chains else ():
        starts, ends = np.asarray(stream.start, np.int64), np.asarray(stream.end, np.int64)
        key = (starts.tobytes(), ends.tobytes())
        runs[key] = runs.get(key, 0) + 1
    for (start_bytes, end_bytes), warps in runs.items():
        starts, ends = np.frombuffer(start_bytes, np.int64), np.frombuffer(end_bytes, np.int64)
        for seg_starts, seg_ends, _, regions in chains:
            _, _, present = _chain_runs(starts, ends, seg_starts, seg_ends, regions)
            for c, absent in enumerate((present < 0).sum(axis=0).tolist()):
                counts[seg_starts[c]:seg_ends[c]] += absent * warps
    return counts


def _sass_issue(trace, arch: str | None, orders: dict
                ) -> tuple[SassReading | None, str]:
    """Per pc, the SASS instructions it issues and where ptxas placed them
    (:mod:`kerncast.sim._sassissue`), and where they came from."""
    if arch is None:
        return None, "PTX: one issue per PTX instruction (the device has no PTX target)"
    try:
        reading = read_sass(trace, arch, _issued(trace, orders))
    except (ToolchainError, ValueError, KeyError) as exc:
        return None, f"PTX: one issue per PTX instruction ({exc})"
    return reading, (f"SASS (ptxas -arch={arch}): executed SASS per PTX instruction, by "
                     "line, issued in ptxas's order")


def _l1_bytes(dev: Device, shared_per_sm: int) -> int:
    total = int(dev.memory.l1_kib_per_sm * 1024)
    choices = sorted(int(k * 1024) for k in dev.allocation.shared_carveouts_kib)
    carve = next((c for c in choices if c >= shared_per_sm), shared_per_sm)
    return max(total - carve, 16 * 1024)


@dataclass
class _Round:
    """The warps of one simulated round: streams, their traced source, the block each
    stands for."""

    streams: list[tuple[np.ndarray, np.ndarray]]
    source: list[int]
    stands_for: list[tuple[int, int]]
    total: int   # instructions of the whole round
    traced: int  # instructions whose memory accesses were recorded
    #: per warp, the steps after which it went on elsewhere than where they end
    #: (:func:`taken_steps`)
    taken: list[np.ndarray] = field(default_factory=list)
    sampled: tuple[list, float] | None = None  # the streams simulated (sample_streams)

    def sample(self, table, budget: int,
               warps_per_block: int | None) -> tuple[np.ndarray, ...]:
        """Choose the streams to simulate within ``budget``; the memory requests they make
        (their keys' three columns, :func:`memory_keys`)."""
        self.sampled = sample_streams(self.streams, budget, warps_per_block, table)
        return memory_keys(self.sampled[0], self.source, table)


def _expand(stream, orders: dict, cutoff: int | None, shapes: dict | None = None) -> tuple:
    """A warp's (pcs, steps), each segment in its issue order, cut at ``cutoff``. Warps
    that ran the same segments issue the same pcs and take their steps from the same
    places: ``shapes`` keeps those per sequence of segments, for the other warps."""
    starts, ends, order = (np.asarray(a, np.int64) for a in (stream.start, stream.end,
                                                             stream.order))
    total = int((ends - starts).sum())
    keep = len(starts) if cutoff is None else int(np.searchsorted(order, cutoff))
    starts, ends, order = starts[:keep], ends[:keep], order[:keep]
    key = (starts.tobytes(), ends.tobytes())
    shape = None if shapes is None else shapes.get(key)
    if shape is None:
        shape = _expanded(starts, ends, orders)
        if shapes is not None:
            shapes[key] = shape
    pcs, taken_from, added = shape
    steps = np.repeat(order, ends - starts)[np.maximum(taken_from, 0)]
    steps[taken_from < 0] = -1
    return pcs, steps, total + added


def _expanded(starts: np.ndarray, ends: np.ndarray, orders: dict) -> tuple:
    """(pcs, the position in program order of the step each issues (-1: predicated off,
    no step), instructions added) of a warp that ran segments ``starts``..``ends``: what
    :func:`_expand` issues, whatever the steps (the issue orders only move them)."""
    keep = len(starts)
    lengths = ends - starts
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if keep else lengths
    # each segment's pcs count up from its start: position + (start - the segment's offset)
    pcs = np.repeat(starts - offsets, lengths)
    pcs += np.arange(len(pcs), dtype=np.int64)
    steps = np.arange(len(pcs), dtype=np.int64)
    for start in np.unique(starts).tolist() if orders else ():
        seq = orders.get(start)
        if seq is None:
            continue
        hit = (starts == start) & (lengths == len(seq))
        if hit.any():  # segments issued in the scheduler's order, not the program's
            pcs[offsets[hit][:, None] + np.arange(len(seq))] = np.asarray(seq, np.int64)
    for key, chain in orders.items() if keep else ():
        if isinstance(key, tuple) and len(chain[0]) <= len(starts):
            _chain_order(pcs, steps, starts, ends, offsets, *chain[:3])
    runs = []
    for chain in _region_chains(orders) if keep else ():
        runs += _predicated_runs(steps, starts, ends, offsets, *chain)
    if not runs:
        return _frozen(pcs), _frozen(steps), 0
    out_p, out_s, at, added = [], [], 0, 0
    for first, end, new_p, new_s in sorted(runs, key=lambda run: run[0]):
        out_p += [pcs[at:first], new_p]
        out_s += [steps[at:first], new_s]
        added += len(new_p) - (end - first)
        at = end
    out_p.append(pcs[at:])
    out_s.append(steps[at:])
    return _frozen(np.concatenate(out_p)), _frozen(np.concatenate(out_s)), added


def _frozen(array: np.ndarray) -> np.ndarray:
    """``array``, read-only: the warps that share it must not change it."""
    array.flags.writeable = False
    return array


def _predicated_runs(steps, starts, ends, offsets, seg_starts, seg_ends, seq,
                     regions) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """Where a warp ran a chain but branched over some of its guarded regions, it issues
    the whole chain in its scheduled order all the same: ptxas predicates the regions, so
    a lane whose guard fails issues their instructions predicated off instead of
    branching (``if (e < n) sum += x[e]`` unrolled, in the warps past ``n``: the loads
    that remain still issue together). The skipped regions' instructions get step -1
    (no memory request). Returns each such run: (its first and end positions in the
    warp's stream, the pcs and steps it issues instead)."""
    seq = np.asarray(seq, np.int64)
    seg_of = np.searchsorted(np.asarray(seg_starts, np.int64), seq, side="right") - 1
    first, last, present = _chain_runs(starts, ends, seg_starts, seg_ends, regions)
    if not len(first):
        return []
    # per run, the step of each chain segment it ran (-1 for a region it branched over)
    step_of = np.where(present >= 0, steps[offsets[np.maximum(present, 0)]], -1)[:, seg_of]
    ends_at = offsets[last - 1] + ends[last - 1] - starts[last - 1]
    return [(at, end, seq, run_steps) for at, end, run_steps
            in zip(offsets[first].tolist(), ends_at.tolist(), step_of)]


def _chain_runs(starts, ends, seg_starts, seg_ends, regions
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where a warp ran a chain but branched over some of its guarded ``regions``: per
    such run, the first and one past the last of its segment executions, and the
    execution of each segment of the chain it ran (by the segment's place in the chain;
    -1 where it branched over the segment): three arrays, the last of shape (runs,
    segments of the chain). A run takes each segment where the warp's next execution is
    that segment, else branches over it where it is a region, else is no run of this
    chain."""
    n = len(starts)
    whole = np.zeros(n, bool)
    hit = _chain_hits(starts, ends, seg_starts, seg_ends)
    whole[:len(hit)] = hit
    first = np.flatnonzero((starts == seg_starts[0]) & (ends == seg_ends[0]) & ~whole)
    at = first.copy()  # each candidate run's next execution
    alive = np.ones(len(first), bool)
    present = np.full((len(first), len(seg_starts)), -1, np.int64)
    skippable = set(regions)
    for c, (s0, e0) in enumerate(zip(seg_starts, seg_ends)):
        inside = np.minimum(at, n - 1)
        took = alive & (at < n) & (starts[inside] == s0) & (ends[inside] == e0)
        present[took, c] = at[took]
        at += took
        if c not in skippable:
            alive &= took
    return first[alive], at[alive], present[alive]


def _chain_hits(starts, ends, seg_starts, seg_ends) -> np.ndarray:
    """Per segment execution (up to the last that can start the chain), whether the chain
    runs whole from there."""
    span = max(len(starts) - len(seg_starts) + 1, 0)
    hit = np.ones(span, bool)
    for j, (s0, e0) in enumerate(zip(seg_starts, seg_ends)):
        hit &= (starts[j:j + span] == s0) & (ends[j:j + span] == e0)
    return hit


def _chain_order(pcs, steps, starts, ends, offsets, seg_starts, seg_ends, seq) -> None:
    """Issue a chain of segments joined by if-converted branches in its scheduled order,
    where a warp ran every segment of it one after the other; each instruction keeps the
    step (execution) it belongs to."""
    hit = _chain_hits(starts, ends, seg_starts, seg_ends)
    if not hit.any():
        return
    seq = np.asarray(seq, np.int64)
    at = offsets[:len(hit)][hit][:, None]
    moved = at + (seq - seg_starts[0])  # where each scheduled pc sat in program order
    steps[at + np.arange(len(seq))] = steps[moved]
    pcs[at + np.arange(len(seq))] = seq


#: rounds of blocks simulated following each other, where a launch has that many waves
#: and the instruction budget holds them (the steady spacing is taken past the first)
GENERATIONS = 4


def taken_steps(stream) -> np.ndarray:
    """The steps of a warp's stream after which it went on elsewhere than where the
    step's segment ends: the steps whose last instruction is a taken branch."""
    start, end = np.asarray(stream.start, np.int64), np.asarray(stream.end, np.int64)
    return np.asarray(stream.order, np.int64)[:-1][start[1:] != end[:-1]]


def _round_streams(trace, blocks: list[int], sources: list[int], orders,
                   by_warp: dict | None = None) -> _Round:
    wpb = trace.warps_per_block
    by_warp = trace.streams() if by_warp is None else by_warp
    cutoff = getattr(trace, "memory_cutoff", None)
    streams, source, stands, total, traced = [], [], [], 0, 0
    expanded: dict[int, tuple] = {}
    shapes: dict[tuple, tuple] = {}  # per sequence of segments (see _expand)
    taken: list[np.ndarray] = []
    for block, src in zip(blocks, sources):
        for w in range(wpb):
            g = src * wpb + w
            if g not in by_warp:
                continue
            if g not in expanded:
                expanded[g] = (*_expand(by_warp[g], orders, cutoff, shapes),
                               taken_steps(by_warp[g]))
            pcs, steps, full, after = expanded[g]
            streams.append((pcs, steps))
            taken.append(after)
            source.append(g)
            stands.append((block, src))
            total += full
            traced += len(pcs)
    return _Round(streams, source, stands, total, traced, taken=taken)


def _simulate(rnd: _Round, trace, table, nregs, machine, dev: Device, blocks_in_round: int,
              shared_per_block: int, active: int, sharing, costs, generations: int = 1,
              wave: int = 0, waves: int = 1) -> RoundResult:
    result = simulate_round(
        rnd.streams, table, nregs, costs, machine, active_sms=active,
        warps_per_block=trace.warps_per_block,
        l1_bytes=_l1_bytes(dev, shared_per_block * blocks_in_round),
        l2_share_bytes=int(dev.memory.l2_kib * 1024 / max(active, 1)),
        source=rnd.source, stands_for=rnd.stands_for, sharing=sharing, sampled=rnd.sampled,
        generations=generations, wave=wave, taken=rnd.taken, waves=waves)
    if rnd.traced and rnd.total > rnd.traced:
        factor = rnd.total / rnd.traced
        result.cycles *= factor
        result.scale *= factor
        result.dram_bytes *= factor
        result.l2_bytes *= factor
        result.barrier_wait *= factor
        result.lead *= factor
        result.busy = {k: v * factor for k, v in result.busy.items()}
    result.instructions = rnd.total
    return result


def choose_blocks(blocks: int, per_sm: int, n_sm: int, dependent: bool,
                  warps_per_block: int = 32) -> tuple[list, list]:
    """(blocks the round stands for, traced block each one takes its stream from).

    The round is SM 0's first blocks. A kernel whose work cannot depend on the data
    runs block 0's stream in each of them; a data-dependent one takes the streams of
    blocks spread evenly over the whole grid, so that work that differs from region to
    region of the input (an image, a graph's dense part) is represented: at least
    :data:`DEPENDENT_BLOCKS` blocks and :data:`DEPENDENT_WARPS` warps of
    ``warps_per_block``, as far as the round holds them (branch_divergence's
    data-dependent pattern at size large on an H200: blocks of one warp took 8 traced
    warps for the round's 32, and the time predicted was 1.6x the measured, against
    1.09x for blocks of eight warps; 32 traced warps and the round's blocks' mean
    (:func:`~kerncast.sim._pipeline.simulate_round`'s ``waves``) give 0.88x).

    Where the spread leaves blocks out, the grid's last block is traced by its
    neighbour: a grid rounded up to whole blocks leaves its last one partly idle, and it
    is one block of the grid, not one of a handful that stand for all of it."""
    chosen = [i * n_sm for i in range(per_sm) if i * n_sm < blocks]
    if not dependent:
        return chosen, [0] * len(chosen)
    count = min(blocks, len(chosen),
                max(DEPENDENT_BLOCKS, -(-DEPENDENT_WARPS // max(warps_per_block, 1))))
    spread = np.linspace(0, blocks - 1, count).round().astype(int).tolist()
    if count < blocks and count > 1:
        spread[-1] = blocks - 2
    traced = sorted(set(spread))
    return chosen, [traced[i % len(traced)] for i in range(len(chosen))]


def _peek_steps(result, emulated: int, probes: int) -> int:
    """Steps the probes may take: a quarter of what running them in full would, so that
    a kernel whose accesses come after a long computation does not run it again."""
    per_block = result.steps / max(emulated, 1)
    return max(int(PEEK_SHARE * per_block * probes), 1)


@dataclass
class Emulations:
    """The emulations of one launch whose trace does not depend on its data, or whose data
    are the same each time (:func:`~kerncast.sim._inputs.values_repeatable`), by blocks
    and options: predicted again (each fix of a what-if, another SM count), it runs the
    same blocks the same way, so they are not emulated again. The launch (held weakly: its
    arrays are the caller's) and the module are compared by identity: a launch changed or
    rebuilt is another launch."""

    launch: Any
    module: Any
    entry: str
    registers: int
    runs: dict = field(default_factory=dict)

    def holds(self, launch: Launch, module: Any, entry: str, registers: int) -> bool:
        return (self.launch() is launch and self.module is module and self.entry == entry
                and self.registers == registers)


#: the emulations of the launch predicted last (one: memory stays flat over a sweep)
_EMULATIONS: list[Emulations] = []


def emulations_of(launch: Launch, module: Any, entry: str, registers: int) -> Emulations:
    """The kept emulations of ``launch``, or a new, empty record that replaces the last."""
    for kept in _EMULATIONS:
        if kept.holds(launch, module, entry, registers):
            return kept
    record = Emulations(weakref.ref(launch), module, entry, registers)
    _EMULATIONS[:] = [record]
    return record


def _memo(launch: Launch, module: Any, entry: str, registers: int,
          dependent: bool) -> Emulations | None:
    """The kept emulations of ``launch`` (:func:`emulations_of`); None, with none kept,
    where its trace depends on values that may differ next time (a caller's arrays)."""
    if dependent and not values_repeatable(launch):
        _EMULATIONS.clear()
        return None
    return emulations_of(launch, module, entry, registers)


def short_blocks(run: Callable[[list[int], int], list[int]], blocks: int,
                 steps_per_block: float) -> list[int]:
    """Blocks across the grid (at 1/4, 1/2 and 3/4 of it) that finish within
    :data:`UNEVEN_SHARE` of block 0's steps (and :data:`UNEVEN_STEPS`): the work of such a
    grid differs from block to block even where no branch reads memory (the blocks past
    the data skip it). ``run(blocks, step_budget)`` emulates blocks together, each stopped
    at ``step_budget`` steps of its own, and returns those it stopped, so a check costs at
    most that budget per block in one emulation. Where that emulation fails (a fault past
    the buffers), each block is checked alone, and a block whose emulation fails is not
    counted: the prediction rests on the blocks it traces, and the check only looks for
    short ones."""
    from kerncast.emu import EmulationError  # noqa: PLC0415 (on use: the emulator)

    checks = sorted({round(blocks * (i + 1) / (UNEVEN_CHECKS + 1))
                     for i in range(UNEVEN_CHECKS)} - {0, blocks})
    budget = _check_budget(steps_per_block)
    if not checks:
        return []
    try:
        stopped = set(run(checks, budget))
        return [b for b in checks if b not in stopped]
    except EmulationError:
        pass
    short = []
    for b in checks:
        try:
            if not run([b], budget):
                short.append(b)
        except EmulationError:  # it failed otherwise
            continue
    return short


def _check_budget(steps_per_block: float) -> int:
    """Steps a block may take to count as short: :data:`UNEVEN_SHARE` of block 0's, at
    most :data:`UNEVEN_STEPS`."""
    return max(min(int(UNEVEN_SHARE * steps_per_block), UNEVEN_STEPS), 1)


def _long(stopped: Callable[[list[int], int], list[int]], budget: int,
          chosen: list[int]) -> set[int] | None:
    """Those of ``chosen`` that run past ``budget`` steps (``stopped`` emulates them
    together, each stopped there), or None where their emulation failed."""
    from kerncast.emu import EmulationError  # noqa: PLC0415 (on use: the emulator)

    try:
        return set(stopped(chosen, budget))
    except EmulationError:
        return None


def _in_run(chosen: tuple[list[int], list[int]], first: int,
            anchor: int) -> tuple[list[int], list[int]]:
    """:func:`choose_blocks`'s blocks of a run that starts at block ``first`` (the blocks
    the round stands for moved there), each taking its stream from the run's ``anchor``
    where they took block 0's."""
    stands, sources = chosen
    return [first + b for b in stands], [anchor if s == 0 else first + s for s in sources]


def _prefixed(progress: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    """``progress`` with each step said after ``prefix``."""
    return lambda step: progress(prefix + step)


def _quiet(step: str) -> None:
    """No progress report."""


_PAUSE = threading.Lock()
_PAUSED = [0, False]  # predictions running, whether they turned the collector off


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while predictions run (in any thread).

    A prediction allocates some hundred thousand small containers (closures, lane sets,
    the trace's records), and every so many the collector walks every object the
    process holds: in a sweep, the kept modules, programs and traces of the other
    launches. The garbage a prediction leaves is young, so the first collection after
    it frees it; where other predictions still run, the young objects are collected as
    it ends, so that predictions that overlap without end leave no garbage behind."""
    with _PAUSE:
        if _PAUSED[0] == 0:
            _PAUSED[1] = gc.isenabled()
            gc.disable()
        _PAUSED[0] += 1
    try:
        yield
    finally:
        with _PAUSE:
            _PAUSED[0] -= 1
            if _PAUSED[0] == 0:
                if _PAUSED[1]:
                    gc.enable()
            elif _PAUSED[1]:
                gc.collect(0)


def predict_launch(kernel: Kernel, launch: Launch, device: str | Device, *,
                   sm_count: int | None = None, machine: Machine | None = None,
                   progress: Callable[[str], None] | None = None,
                   budget: int = DEFAULT_BUDGET, fixes: frozenset[str] = frozenset()
                   ) -> StaticResult:
    """Predict the time of ``launch`` of ``kernel`` on ``device`` without running it;
    ``progress`` is told each step as it starts (compiling, generating inputs,
    emulating, simulating); ``budget`` is how many instructions of one SM's round the
    pipeline simulates (longer streams are sampled in windows); ``fixes`` names the
    limiters to remove (:data:`kerncast.sim._whatif.FIXES`: a what-if). A prediction
    that fails leaves no tool running behind it."""
    jobs: list[Future] = []
    try:
        with collector_paused():
            return _predict_launch(kernel, launch, device, jobs, sm_count=sm_count,
                                   machine=machine, progress=progress, budget=budget,
                                   fixes=fixes)
    except BaseException:
        wait(jobs)  # the SASS read beside the emulation
        raise


def _predict_launch(kernel: Kernel, launch: Launch, device: str | Device, jobs: list[Future],
                    *, sm_count: int | None, machine: Machine | None,
                    progress: Callable[[str], None] | None, budget: int,
                    fixes: frozenset[str], span: tuple[int, int] | None = None
                    ) -> StaticResult:
    """:func:`predict_launch`, noting in ``jobs`` the work it starts on other threads;
    with ``span`` (first block, count) the time of that run of the grid's blocks alone
    (see :mod:`kerncast.sim._segments`)."""
    from kerncast.emu import emulate  # noqa: PLC0415 (on use: the emulator)

    started = time.perf_counter()
    fixes = check_fixes(fixes)
    dev = get_device(device)
    machine = machine or machine_for(dev)
    progress = progress or _quiet
    if sm_count is not None and not 1 <= sm_count <= dev.compute.sm_count:
        raise InputError(f"sm_count {sm_count} is not an SM count of {dev.key}; give 1 to "
                         f"{dev.compute.sm_count}")
    progress(f"compiling {kernel.name} for {dev.key}")
    tu, module = cached_unit(kernel, dev.key)
    compiled = tu.kernel(kernel.name)
    if len(launch.args) != len(compiled.params):
        given = ", ".join(launch.names) or "none"
        raise InputError(f"{kernel.name} takes {len(compiled.params)} arguments; the launch "
                         f"gives {len(launch.args)} ({given}): pass one per parameter, in "
                         "order")
    program = cached_program(module, compiled.entry)
    conflicts = _conflicts_soon(program, dev.ptx_target)  # beside the ptxas for resources
    if conflicts is not None:
        jobs.append(conflicts)
    res = compiled.resources(dev.ptx_target)
    shared = res.shared_static + launch.dynamic_shared
    occ = occupancy(dev, launch.threads_per_block, res.registers, shared)
    if occ.blocks_per_sm == 0:
        raise InputError(f"{kernel.name} with {launch.label()} cannot run on {dev.key}: one "
                         f"block needs more {occ.limiting} than an SM has")
    check_fits(kernel, launch, dev)
    n_sm = sm_count or dev.compute.sm_count
    first, blocks = span if span is not None else (0, launch.blocks)
    psat = occ.blocks_per_sm
    if "occupancy" in fixes:
        psat = fixed_blocks_per_sm(dev, launch.threads_per_block, res.registers, psat)
    per_sm = min(psat, math.ceil(blocks / n_sm))
    active = min(n_sm, blocks)
    dependent = data_dependent(program)
    wpb = -(-launch.threads_per_block // 32)
    anchor = segment_anchor(first, blocks, launch.grid)  # the run's block 0
    stands, sources = _in_run(choose_blocks(blocks, per_sm, n_sm, dependent, wpb), first,
                              anchor)
    probes = [b for b in probe_blocks(launch.grid, anchor) if b < first + blocks]
    emulated = sorted(set(sources) | {anchor})
    if dependent:
        at = f" at size {launch.size}" if launch.size else ""
        progress(f"generating the inputs of {kernel.name}{at} (its trace depends on their "
                 "values)")
    # before the inputs are generated: another launch's kept emulations (and the inputs
    # they hold) are let go first
    memo = _memo(launch, module, compiled.entry, res.registers, dependent)
    values, inputs = emulation_args(launch, program)  # ours to write

    def run(chosen: list[int], **options: Any) -> Any:  # these blocks, as timing traces need
        key = (tuple(chosen), tuple(sorted(options.items())))
        if memo is not None and key in memo.runs:
            return memo.runs[key]
        result = emulate(program, launch, values, chosen,
                         registers=res.registers, inplace=True, exact=False, values="needed",
                         constants=launch.constants, labels=list(launch.names), **options)
        if memo is not None:
            memo.runs[key] = result
        return result

    progress(f"emulating {len(emulated)} of {blocks:,} blocks")
    result = run(emulated, memory_budget=MEMORY_BUDGET)

    def stopped(chosen: list[int], budget: int) -> list[int]:  # those that ran past budget
        return run(chosen, trace=False, block_step_budget=budget).over_budget

    steps = result.steps / len(emulated)
    uneven = [] if dependent or blocks < 2 or span is not None else short_blocks(
        stopped, blocks, steps)
    split = grid_split(partial(_long, stopped, _check_budget(steps)), blocks) if uneven \
        else None
    if split is not None:
        progress(f"blocks {split:,} to {blocks - 1:,} finish early, after the others: "
                 "predicting the two runs apart")
        spans = [(0, split), (split, blocks - split)]
        parts = [_predict_launch(kernel, launch, dev, jobs, sm_count=sm_count, machine=machine,
                                 progress=_prefixed(progress, f"blocks {a:,}-{a + n - 1:,}: "),
                                 budget=budget, fixes=fixes, span=(a, n)) for a, n in spans]
        out = joined(parts, spans, machine.launch_fixed_seconds())
        out.based_on.update(short_blocks=uneven, seconds_to_predict=time.perf_counter() - started)
        return out
    if uneven:
        # blocks that exit early stand for part of the grid: trace blocks spread over it,
        # as for a kernel whose work depends on its data
        progress(f"blocks {', '.join(map(str, uneven))} finish early: emulating blocks "
                 "spread over the grid")
        stands, sources = choose_blocks(blocks, per_sm, n_sm, True, wpb)
        emulated = sorted(set(sources) | {anchor})
        result = run(emulated, memory_budget=MEMORY_BUDGET)
    trace = result.trace
    # the probes only show how addresses move from block to block: their first accesses
    traces = [trace]
    if probes:
        traces.append(run(probes, memory_budget=MEMORY_BUDGET // 2 * len(probes),
                          step_budget=_peek_steps(result, len(emulated), len(probes)),
                          stop_when_traced=True).trace)
    loop = loop_trip_bound(trace, list(result._regions.values()), launch.threads_per_block,
                           values_repeatable(launch)) if dependent else None
    if loop is not None:
        sources = _common_sources(sources, loop.rare, trace.warps_per_block)
    # before anything that waits for the SASS (the worker thread's ptxas and nvdisasm):
    # how the wave's blocks share the L2 needs only the traces
    wave = psat * n_sm
    sharing = wave_sharing(traces, launch.grid, probes, emulated, wave=wave, total_blocks=blocks,
                           l2_bytes=dev.memory.l2_kib * 1024, anchor=anchor)
    vectors, accesses = static_vectors(trace, dev.ptx_target)
    table, nregs, orders = build_table(trace.program, machine, vectors)
    # the SASS (read on the worker thread while the kernel was emulated) says how long
    # instructions hold their pipes and in which order ptxas issues them; the order of
    # the if-converted chains' regions, which decides how often each pc issues, is the
    # list schedule's (the same regions in either order)
    reading, issue = _sass_issue(trace, dev.ptx_target, orders)
    if reading is not None:
        orders = segment_orders(trace.program, table, reading.places)
    by_warp = fix_streams(trace.streams()) if "divergence" in fixes else trace.streams()
    rnd = _round_streams(trace, stands, sources, orders, by_warp)
    grid_scale = blocks / len(emulated) * (rnd.total / rnd.traced if rnd.traced else 1.0)
    regions = list(result._regions.values())
    l2_bytes = dev.memory.l2_kib * 1024
    sharing = replace(sharing, resident=resident_shares(
        trace.memory, regions, scale=grid_scale, l2_bytes=l2_bytes),
        warm=warm_l2(sum(r.nbytes for r in regions), l2_bytes),
        restored=restored_warm(regions, _restored(launch), l2_bytes))
    waves, rest = divmod(blocks, wave) if per_sm == psat else (0, blocks)
    tail_per_sm = math.ceil(rest / n_sm)
    # a round of a launch of several waves has its blocks drifted apart: each block's
    # windows, or its whole streams, at a phase of its own
    drift = trace.warps_per_block if waves > 1 else None
    needed = rnd.sample(table, budget, drift)
    tail = None
    if rest and tail_per_sm < per_sm:
        # the tail's warps are simulated as far into their streams as the full round's
        tail = _round_streams(trace, stands[:tail_per_sm], sources[:tail_per_sm], orders,
                              by_warp)
        more = tail.sample(table, max(budget * tail_per_sm // per_sm, 1), drift)
        needed = tuple(np.concatenate(pair) for pair in zip(needed, more))
    costs = fix_costs(request_costs(trace, sharing=sharing, wpb=trace.warps_per_block,
                                    only=needed, accesses=accesses), fixes)
    table, banks = _charged(table, trace.program, machine,
                            None if reading is None else reading.issue, conflicts,
                            dev.ptx_target)
    table = constant_replays(table, trace)
    rounds = max(1, min(GENERATIONS, waves, budget // max(rnd.total, 1)))
    progress(f"simulating {'one round' if rounds == 1 else f'up to {rounds} rounds'} of "
             f"{per_sm} block{'s' * (per_sm != 1)} per SM")
    full = _simulate(rnd, trace, table, nregs, machine, dev, per_sm, shared, active, sharing,
                     costs, rounds, wave, max(waves, 1))
    cycles = waves * full.cycles + full.lead
    if rest:
        cycles += full.cycles if tail is None else _simulate(
            tail, trace, table, nregs, machine, dev, tail_per_sm, shared, min(n_sm, rest),
            sharing, costs).cycles
    execute = cycles / machine.clock_hz
    dispatch = machine.dispatch_seconds(blocks)
    # a wave's blocks that run side by side end together, and the block scheduler
    # takes them one after another at its calibrated rate: the launch ends that much
    # after its blocks do (tools/first_wave_probe.py: blocks that spin 10 µs, on an H200,
    # 0.63 ns a block over a wave of 32-thread blocks, against 0.60 calibrated; their
    # starts spread over 0.4 µs)
    retiring = machine.dispatch_seconds(min(blocks, wave))
    fixed = machine.launch_fixed_seconds()
    neighbour = None
    if len(set(sources)) == 1 and blocks > 1 and len(_global_atomics(trace)[2]):
        # one traced block cannot tell a grid-wide address from its own: trace the next
        neighbour = run([anchor + 1 if anchor + 1 < first + blocks else anchor - 1],
                        memory_budget=MEMORY_BUDGET).trace
    atomics = _atomic_seconds(trace, machine, blocks, sorted(set(sources)), rnd, neighbour)
    straggler = _straggler_seconds(loop, rnd, full, machine)
    execute = max(execute, atomics, straggler)
    seconds = fixed + max(execute + retiring, dispatch)
    return _result(seconds, cycles, full, machine, fixed + max(retiring, dispatch - execute), {
        "device": dev.key, "calibration": machine.calibration.device,
        "adapted_from": machine.adapted_from, "adaptation": list(machine.assumptions),
        "store_rates_from": machine.store_curve_source(),
        "compiler": f"{tu.toolchain.name} {tu.toolchain.version}",
        "registers": res.registers, "register_bank_conflicts": banks, "issue_slots": issue,
        "shared_bytes": shared, "blocks_per_sm": psat, "limiting": occ.limiting,
        "sm_count": n_sm, "blocks": blocks, "waves": waves + (1 if rest else 0),
        "round_blocks": per_sm, "round_warps": len(rnd.streams), "round_cycles": full.cycles,
        "rounds_simulated": full.generations,
        "block_phases": "together" if drift is None else "spread",
        "block_turnaround": _turnaround(machine, full, trace.warps_per_block),
        "dram_load_latency": _load_latency(machine),
        "dram_spread": _spread(machine),
        "round_instructions": full.instructions, "extrapolated": full.scale,
        "emulated_blocks": len(emulated) + len(probes), "data_dependent": dependent,
        "short_blocks": uneven, "inputs": inputs,
        "l2_sharing": {"affine_instances": sharing.affine, "instances": sharing.instances,
                       "wave_footprint_bytes": sharing.wave_footprint_bytes,
                       "scope": sharing.scope,
                       "at_start": _at_start(sharing, regions)},
        "straggler": None if loop is None else {
            "seconds": float(straggler), "trips": loop.trips, "traced_trips": loop.traced_trips,
            "offsets": _argument(launch, loop.buffer), "stride": loop.stride},
        "dram_bytes_per_round": full.dram_bytes, "l2_bytes_per_round": full.l2_bytes,
        "caches_per_round": full.caches, "busy_per_round": full.busy,
        "work": _launch_work(trace, full, cycles, blocks / len(emulated), active),
        "fixes": sorted(fixes), "seconds_to_predict": time.perf_counter() - started,
    })


def _restored(launch: Launch) -> set[str]:
    """Names of the arrays the ``times`` protocol copies back before every launch: the
    ``inout`` ones, and those of no stated intent."""
    return {name for name, arg in zip(launch.names, launch.args)
            if isinstance(arg, Array) and arg.intent in (None, "inout")}


def _at_start(sharing: Sharing, regions: list) -> str:
    """What the L2 holds when the launch starts, in words."""
    if sharing.warm:
        return "warm: the buffers are in the L2, as launches repeated on them find them"
    held = [r.name for r in regions
            if any(lo <= r.base >> 5 < hi for lo, hi in sharing.restored.tolist())]
    if held:
        return (f"{', '.join(held)} in the L2: copied back to their first contents before "
                "every launch, as the measurements were")
    return "cold"


def _turnaround(machine: Machine, full: RoundResult, warps: int) -> dict | None:
    """The turnaround of a block of ``warps`` warps the rounds that followed each other
    waited for, and whose calibration it comes from; None where one round was simulated."""
    if full.generations < 2:
        return None
    cycles, source = machine.block_turnaround(warps)
    return {"cycles": cycles, "calibration": source}


def _spread(machine: Machine) -> dict | None:
    """How far single DRAM reads' latencies spread about their mean in the simulation
    (each read its own draw: a block waits for its last warp), and whose calibration that
    comes from; None where no calibration of the architecture has the spread probe."""
    found = machine.dram_spread()
    if found is None:
        return None
    cycles, source = found
    return {"std_cycles": round(float(np.std(cycles)), 1), "calibration": source}


def _load_latency(machine: Machine) -> dict | None:
    """The most the simulation lets the DRAM's latency grow with its load (the growth at
    the highest share of its peak calibrated below saturation), and whose calibration that
    comes from; None where the device's calibration has no loaded-latency probe."""
    found = machine.dram_load_latency()
    if found is None:
        return None
    shares, cycles, source = found
    return {"most_cycles": cycles[-1], "at_share": round(shares[-1], 3), "calibration": source}


def _launch_work(trace, full: RoundResult, cycles: float, per_emulated: float,
                 active: int) -> dict[str, float]:
    """The launch's floating-point operations (the emulated blocks' thread executions,
    scaled to the grid) and the DRAM bytes the simulation moved (the round's, times the
    SMs in use and the rounds): where a roofline chart places the launch."""
    fp32, fp64 = flop_weights(trace.program) @ trace.pc_counts[1]
    rounds = cycles / max(full.cycles, 1e-9)
    return {"flops_fp32": float(fp32) * per_emulated, "flops_fp64": float(fp64) * per_emulated,
            "dram_bytes": float(full.dram_bytes) * rounds * active}


def _straggler_seconds(loop: LoopBound | None, rnd, full: RoundResult,
                       machine: Machine) -> float:
    """The time of the grid's longest data-dependent loop (see
    :mod:`kerncast.sim._straggler`): its iterations, each as many instructions as the
    round's warp that ran it most issued per iteration, at that warp's pace in the
    simulated round."""
    if loop is None:
        return 0.0
    at, w = max(((np.flatnonzero(np.asarray(rnd.streams[w][0]) == loop.pc), w)
                 for w in full.pace), key=lambda item: len(item[0]), default=((), -1))
    if len(at) < 2:
        return 0.0
    per_iteration = (at[-1] - at[0]) / (len(at) - 1)
    return loop.trips * per_iteration * full.pace[w] / machine.clock_hz


def _argument(launch: Launch, region: str) -> str:
    """The kernel argument a buffer was passed as (the emulator names buffers after the
    PTX parameters, ``<entry>_param_<i>``, in the order of the launch's arguments)."""
    head, _, index = region.rpartition("_param_")
    if head and index.isdigit() and int(index) < len(launch.names):
        return launch.names[int(index)]
    return region


def _common_sources(sources: list[int], rare: frozenset, wpb: int) -> list[int]:
    """The traced blocks the round's blocks take their streams from, a block holding
    a rare warp (see :mod:`kerncast.sim._straggler`) swapped for the others in turn;
    unchanged when every traced block holds one."""
    heavy = {w // wpb for w in rare}
    common = [b for b in dict.fromkeys(sources) if b not in heavy]
    if not heavy or not common:
        return sources
    return [b if b not in heavy else common[i % len(common)] for i, b in enumerate(sources)]


def check_fits(kernel: Kernel, launch: Launch, dev: Device) -> None:
    """Refuse a launch whose buffers would not fit in the device's memory."""
    need = launch.buffer_bytes()
    have = dev.memory.size_gib * 2**30
    if need > have:
        raise InputError(f"{kernel.name} with {launch.label()} needs {need / 2**30:.1f} GiB of "
                         f"buffers, more than the {dev.memory.size_gib:g} GiB of {dev.key}; "
                         "choose a smaller size or params")


def _global_atomics(trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(warp, request, address) of each lane access of ``trace`` that is a global atomic."""
    acc = trace.memory
    atomic = (acc.kind == KINDS.index("atomic")) & (acc.space == SPACES.index("global"))
    return acc.warp[atomic], acc.request[atomic], acc.address[atomic]


def _atomic_seconds(trace, machine: Machine, blocks: int, traced: list[int], rnd,
                    neighbour=None) -> float:
    """The least time the L2's atomic units need: operations on one address serialise
    (calibrated contended rate), all of them share the uncontended rate, and operations
    spread over few addresses go at the calibrated rate for that many random addresses
    (256 words take 3.9 G/s on the H100, 4,096 take 37 G/s: the units those words map
    to are shared), the number estimated from how often the traced lanes hit the same
    word. Requests whose lanes add to consecutive words of one line (blocks merging
    their private histograms) go at the calibrated rate for the lines the grid shares:
    the L2 applies a line's operations one after another, and lines share its units
    (the H200: 12.5 G/s on one line, 27 G/s on 8). An address the traced blocks share is
    one the whole grid shares; counts scale to the grid. Where one block is traced, the
    trace of another (``neighbour``) tells which of its addresses other blocks hit too."""
    warp, request, address = _global_atomics(trace)
    if not len(address):
        return 0.0
    block = warp // trace.warps_per_block
    scattered = _scattered(request, address)
    keep = np.isin(block, traced)
    block, address, scattered = block[keep], address[keep], scattered[keep]
    if not len(address):
        return 0.0
    memory_scale = rnd.total / rnd.traced if rnd.traced else 1.0
    grid_scale = blocks / max(len(traced), 1) * memory_scale
    others = None if len(traced) > 1 or neighbour is None else _global_atomics(neighbour)[2]
    scaled, _ = _scaled_counts(address, block, grid_scale, memory_scale, others)
    contended, uncontended = machine.atomic_rates()
    total = len(address) * grid_scale
    bound = max(float(scaled.max()) / contended, total / uncontended)
    # lanes on consecutive words of a line, at the rate for the lines the grid shares
    merged = ~scattered
    if merged.any():
        lines, shared = _scaled_counts(
            address[merged] // LINE_BYTES, block[merged], grid_scale, memory_scale,
            None if others is None else others // LINE_BYTES)
        rate = machine.atomic_rate_over_lines(int(shared.sum())) if shared.any() else None
        if rate is not None:
            bound = max(bound, float(lines[shared].sum()) / rate)
    # scattered lanes, at the rate for as many addresses as they draw from
    drawn = _addresses_drawn(int(scattered.sum()), len(np.unique(address[scattered])))
    region = machine.atomic_rate_over(drawn) if drawn else None
    if region is not None:
        bound = max(bound, float(scattered.sum()) * grid_scale / region)
    return bound


#: bytes of an L2 line
LINE_BYTES = 128


def _scaled_counts(keys: np.ndarray, block: np.ndarray, grid_scale: float, memory_scale: float,
                   others: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct key (an address or a line) of the traced lanes: the lanes the whole
    grid puts on it, and whether the blocks share it. A key that two traced blocks hit
    is hit by every block, and so is one that the traced block and another block's trace
    (``others``) both hit: its count scales to the grid. A key of one block alone stands
    for other keys in the other blocks: its count scales only to the round."""
    distinct, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    spread = np.zeros(len(counts), np.int64)
    pairs = np.unique(np.stack([inverse.reshape(-1), block]), axis=1)
    np.add.at(spread, pairs[0], 1)
    if others is not None:  # shared with another block: with all
        spread += np.isin(distinct, others).astype(np.int64)
    shared = spread > 1
    return np.where(shared, counts * grid_scale, counts * memory_scale), shared


def _addresses_drawn(lanes: int, distinct: int) -> int | None:
    """How many addresses ``lanes`` random draws that hit ``distinct`` of them come
    from: N solving distinct = N (1 - exp(-lanes / N)) (the traced blocks see part of
    a histogram's bins); None when every draw was distinct (too many to tell)."""
    if distinct >= lanes or distinct == 0:
        return None
    from scipy.optimize import brentq  # noqa: PLC0415 (only for kernels with atomics)

    def unseen(log_n: float) -> float:  # grows with N: below zero at N = distinct
        n = math.exp(log_n)
        return n * -math.expm1(-lanes / n) - distinct

    low = math.log(distinct)
    if unseen(low) >= 0:  # so many draws that every address was seen (exp(log d) rounds up)
        return distinct
    return int(round(math.exp(brentq(unseen, low, low + 30))))


def _scattered(request: np.ndarray, address: np.ndarray) -> np.ndarray:
    """Per lane access: whether its request's lanes hit several words, and not one
    distinct word each within one 128-byte line (coalesced). Lanes that all hit one
    word are the per-address bound's."""
    ids, inverse, lanes = np.unique(request, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    lo = np.full(len(ids), np.iinfo(np.int64).max)
    hi = np.full(len(ids), np.iinfo(np.int64).min)
    addr = address.astype(np.int64)
    np.minimum.at(lo, inverse, addr)
    np.maximum.at(hi, inverse, addr)
    pairs = np.unique(np.stack([inverse, addr]), axis=1)
    distinct = np.bincount(pairs[0], minlength=len(ids))
    coalesced = (distinct == lanes) & (hi - lo < 128)
    return ((distinct > 1) & ~coalesced)[inverse]


#: what the breakdown calls each pipe of :data:`kerncast.sim._machine.PIPES`
PIPE_LABELS = {"alu": "integer ALU", "fma": "FP32 pipes",
               "fma_heavy": "FP32 heavy half (integer multiply-adds)", "fp64": "FP64 pipe",
               "sfu": "special-function unit", "cvt": "conversion and shuffle pipe",
               "ctrl": "control"}


def _result(seconds: float, cycles: float, full: RoundResult, machine: Machine, launch: float,
            based_on: dict) -> StaticResult:
    """The breakdown: each part is the time the round's busiest resource of that kind
    needs over the whole launch, synchronisation the time an average warp waits at
    barriers; latency is what the busiest part leaves unexplained."""
    clock = machine.clock_hz
    rounds = cycles / max(full.cycles, 1e-9)
    pipe = max((k for k in full.busy if k != "lsu"), key=full.busy.__getitem__, default=None)
    compute = full.busy[pipe] if pipe is not None else 0.0
    dram = full.dram_bytes / (machine.dram_bytes_per_cycle() / based_on["sm_count"])
    memory = max(full.busy.get("lsu", 0.0), dram)
    parts = {"compute": compute * rounds / clock, "memory": memory * rounds / clock,
             "synchronisation": full.barrier_wait / max(based_on["round_warps"], 1)
             * rounds / clock, "launch": launch}
    busiest = max(parts["compute"], parts["memory"])
    parts["latency"] = max(seconds - launch - busiest, 0.0)
    if compute > 0.0:
        based_on["compute_pipe"] = {"pipe": pipe, "label": PIPE_LABELS.get(pipe, pipe),
                                    "busy": round(min(compute / max(full.cycles, 1e-9), 1.0), 3)}
    bottleneck = max(("compute", "memory", "latency", "synchronisation", "launch"),
                     key=lambda k: parts[k])
    return StaticResult(seconds, parts, bottleneck, based_on)
