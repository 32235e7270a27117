"""The warp-pipeline simulation of one round of resident blocks on one SM.

Event-driven, as the static-analysis seed's pipeline, extended for Hopper-class SMs:

* each warp belongs to one of the SM's schedulers (warp ``i`` of the SM to scheduler
  ``i mod schedulers``); a scheduler issues at most one instruction per cycle, and
  an instruction occupies its pipe (ALU, FMA, FP64, SFU, conversion/shuffle) for
  ``warp size / (results per clock per scheduler)`` cycles;
* a PTX instruction takes as many scheduler slots as ptxas's SASS executes for its
  line per execution (``_sassissue``: a folded ``mov`` none, a ``logf`` its sequence),
  and holds the pipes that SASS needs (``Op.also`` beside its own: the integer ALU at
  two cycles a warp instruction on Hopper, the heavy FP32 half for integer
  multiply-adds), its class's pipe less where ptxas removed part of its executions;
* an FP64 instruction holds its 16-lane pipe for two cycles a warp, and its scheduler
  for both of them, but about one in three of the second cycles is left to another
  instruction (:data:`FP64_SHADOW`, measured);
* a floating-point instruction whose SASS reads two distinct registers of one register
  bank (even or odd), not served by the operand reuse cache, holds its pipe a cycle
  longer per extra read (``_regbanks``; corpus arith_mixed's FFMAs run at half rate
  on an H100 for this reason);
* a warp issues in order; an instruction waits for the registers it reads (a
  scoreboard over the PTX registers, each ready at its producer's issue time plus
  the class latency, or the memory latency);
* the order is the one ptxas gave each straight-line segment, read from the SASS (each
  PTX line where its first SASS instruction lies: ``_sassissue.read_sass``), or without
  SASS the one its list scheduler would give (loads as early as their operands allow);
  segments joined by short guarded branches
  (``if (i < n) s += x[i]`` unrolled) are scheduled as one region, as ptxas predicates
  such branches and hoists the guarded loads, for warps that run every region;
* memory requests go through the SM's load/store path (one cycle per 128-byte line,
  one per shared-memory wavefront; the shared accesses that ptxas merges into one
  ``LDS.64``/``LDS.128`` (``_memory.static_vectors``) are one request; a store that
  writes part of one sector in each of four or more lines, as a naive transpose's
  column does, holds it for its sectors at
  the calibrated scattered-store rate, about 0.21 sectors a cycle on an H100) and then
  to the L1, the L2 or DRAM (see
  ``_memory``): their latency is the calibrated hit latency of the farthest level
  they reach, plus the queueing delay of this SM's fair share of the L2 and DRAM
  bandwidth (the GPU's achieved bandwidth divided among the SMs in use; DRAM reads and
  writes at their calibrated rates, an even mix of them at the calibrated copy rate);
  stores and reductions do not stall the warp but take their bandwidth;
* ``bar.sync`` holds a block's warps until all its live warps have arrived, then
  releases them after the calibrated barrier cost.

A round simulated whole can be followed by more (``generations``): each block's slot
takes the next block as it ends, after the calibrated turnaround and at the block
scheduler's rate, so that blocks drift apart as over a launch of many waves; the round's
time is then the steady spacing of the rounds' ends.

Long streams are simulated over a sample of every warp (the same fraction for all, in
evenly spaced windows so that density changing along a stream is seen) and
extrapolated by that fraction; the result says so.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field, replace

import numpy as np

from kerncast.ptx import InstrClass, read_registers, written_registers
from kerncast.sim._machine import PIPES, Machine
from kerncast.sim._memory import RequestCost, SMCaches, vector_carrier
from kerncast.trace import KINDS, SPACES

__all__ = ["FP64_SHADOW", "RoundResult", "build_table", "constant_replays", "memory_keys",
           "sample_streams", "segment_orders", "shadow_cycles", "simulate_round"]

_MEM_CLASSES = {
    InstrClass.LD_GLOBAL, InstrClass.ST_GLOBAL, InstrClass.LD_SHARED, InstrClass.ST_SHARED,
    InstrClass.LD_LOCAL, InstrClass.ST_LOCAL, InstrClass.LD_GENERIC, InstrClass.ST_GENERIC,
    InstrClass.ATOMIC_GLOBAL, InstrClass.ATOMIC_SHARED, InstrClass.ATOMIC_GENERIC,
}
_FAST_LOADS = {InstrClass.LD_PARAM: 4.0, InstrClass.ST_PARAM: 1.0, InstrClass.LD_CONST: 20.0}
K_ALU, K_MEM, K_BAR = 0, 1, 2
_SHARED, _CONST = SPACES.index("shared"), SPACES.index("const")
_ATOMIC, _STORE = KINDS.index("atomic"), KINDS.index("store")
_CACHED = (SPACES.index("global"), SPACES.index("local"))
_GLOBAL_SPACE = SPACES.index("global")
_LSU = PIPES.index("lsu")
_FP64 = PIPES.index("fp64")
DEFAULT_BUDGET = 60_000
_INF = float("inf")
#: The share of an FP64 instruction's pipe cycles past its issue in which its scheduler
#: can issue another instruction. tools/fp64_issue_probe.py on an H200
#: (data/probes/fp64_issue_h200.json): a loop trip of D DFMAs and N other instructions
#: takes 2D + max(0, N - 0.35 D) cycles (rms 0.31 cycles over 15 loops of 1, 2 and 4
#: chains and 0 to 8 extra integer adds), where a free second cycle would give
#: max(2D, D + N) (rms 2.8). Measured on Hopper; assumed on other architectures.
FP64_SHADOW = 0.35


@dataclass(frozen=True, slots=True)
class Op:
    """One pc of the program, as the pipeline sees it."""

    kind: int
    pipe: int
    issue: float
    slots: int
    latency: float
    srcs: tuple[int, ...]
    dsts: tuple[int, ...]
    #: other pipes the instruction's SASS holds meanwhile: (pipe, cycles) pairs
    also: tuple[tuple[int, float], ...] = ()


def shadow_cycles(op: Op) -> float:
    """The cycles an FP64 instruction holds its pipe past its scheduler slots: cycles
    that hold the scheduler too, but for :data:`FP64_SHADOW` of them, which another
    instruction can take (0 for other instructions)."""
    if op.kind == K_ALU and op.pipe == _FP64 and op.issue > op.slots:
        return float(op.issue - op.slots)
    return 0.0


@dataclass
class RoundResult:
    """The simulated time of one round and what it was made of (cycles)."""

    cycles: float
    instructions: int
    scale: float
    busy: dict[str, float] = field(default_factory=dict)
    barrier_wait: float = 0.0
    dram_bytes: float = 0.0
    l2_bytes: float = 0.0
    caches: dict[str, float] = field(default_factory=dict)
    #: per simulated warp, its steady pace (cycles per instruction, between a quarter and
    #: three quarters of its stream), where it issued enough to tell
    pace: dict[int, float] = field(default_factory=dict)
    #: cycles the first rounds of a launch take beyond ``cycles`` each (their start and
    #: drain), where rounds were simulated following each other; ``cycles`` is then the
    #: steady time of one round
    lead: float = 0.0
    #: rounds simulated one after the other in each block slot (1: one round, all of its
    #: blocks starting at once)
    generations: int = 1


def _registers(item) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if item.kind == "bind" and item.bind:
        dst, src = item.bind[0], item.bind[1]
        return (str(src),), (str(dst),)
    if item.kind != "op":
        return (), ()
    frame = item.frame
    return (tuple(frame.reg(r) for r in read_registers(item.instr)),
            tuple(frame.reg(r) for r in written_registers(item.instr)))


def _op(item, machine: Machine, ids: dict[str, int]) -> Op:
    reads, writes = _registers(item)
    srcs = tuple(ids.setdefault(r, len(ids)) for r in reads)
    dsts = tuple(ids.setdefault(r, len(ids)) for r in writes)
    cls = InstrClass(item.iclass) if item.kind == "op" else InstrClass.OTHER
    name = item.instr.opcode if item.kind == "op" else ""
    if item.kind == "op" and name in ("bar", "barrier") and item.instr.mode != "warp":
        return Op(K_BAR, PIPES.index("ctrl"), 1.0, 1, 1.0, srcs, dsts)
    if cls in _MEM_CLASSES:
        return Op(K_MEM, PIPES.index("lsu"), 1.0, 1, 0.0, srcs, dsts)
    if cls in _FAST_LOADS:
        return Op(K_ALU, PIPES.index("ctrl"), 1.0, 1, _FAST_LOADS[cls], srcs, dsts)
    key = cls.value
    if key in machine.issue:
        slots = machine.sequence.get(key, 1)
        if key in machine.measured_whole:  # calibrated as the whole PTX instruction
            return Op(K_ALU, PIPES.index(machine.pipe_of[key]), machine.issue[key], slots,
                      machine.latency[key], srcs, dsts)
        return Op(K_ALU, PIPES.index(machine.pipe_of[key]), machine.issue[key] * slots, slots,
                  machine.latency[key] * (1 + 0.5 * (slots - 1)), srcs, dsts)
    return Op(K_ALU, PIPES.index("ctrl"), 1.0, 1, 2.0, srcs, dsts)


# Scheduler cycles a constant load holds per distinct address its lanes read, with every
# scheduler of the SM loading: the SM's constant cache serves one address every two
# cycles (tools/constant_cache_probe.py on an H100, data/probes/constant_cache_h100.json:
# 16.1, 32.1, 64.2, 128.4 and 256.8 cycles a warp load for 2, 4, 8, 16 and 32 addresses).
CONSTANT_CYCLES_PER_ADDRESS = 8.0


def constant_replays(table: list[Op], trace) -> list[Op]:
    """``table`` with its divergent constant loads replayed: the constant cache serves one
    address at a time, so an ``ld.const`` whose lanes read N distinct addresses (N
    averaged over the traced requests of its pc) holds its pipe
    ``CONSTANT_CYCLES_PER_ADDRESS`` cycles per address for each SASS load it stands for
    (its issue: ptxas pairs dct8x8's loads into ``LDC.64``, half a SASS load each), and
    delivers that much later per address past the first than a load every lane shares
    (which ptxas folds into an operand). dct8x8's row pass reads
    ``basis[(lane & 7) * 8 + k]``: 8 addresses a warp."""
    acc = trace.memory
    const = acc.space == _CONST
    if not const.any():
        return table
    request, pc, address = acc.request[const], acc.pc[const], acc.address[const].astype(np.int64)
    _, first = np.unique(request, return_index=True)
    order = np.lexsort((address, request))
    request_sorted, address_sorted = request[order], address[order]
    new = np.r_[True, (request_sorted[1:] != request_sorted[:-1])
                | (address_sorted[1:] != address_sorted[:-1])]
    distinct = np.unique(request_sorted[new], return_counts=True)[1]  # per request, in order
    pc_of = pc[first].astype(np.int64)
    sums = np.bincount(pc_of, weights=distinct, minlength=len(table))
    counts = np.bincount(pc_of, minlength=len(table))
    out = list(table)
    for p in np.flatnonzero(counts).tolist():
        n = float(sums[p] / counts[p])
        if n > 1.0 and out[p].kind == K_ALU:
            out[p] = replace(out[p], issue=out[p].issue * CONSTANT_CYCLES_PER_ADDRESS * n,
                             latency=out[p].latency + CONSTANT_CYCLES_PER_ADDRESS * (n - 1.0))
    return out


def build_table(program, machine: Machine, vectors: list[tuple[int, ...]] = ()
                ) -> tuple[list[Op], int, dict[int, tuple[int, ...]]]:
    """One :class:`Op` per pc of the emulator's program, the register count, and the
    issue order of every segment (see :func:`segment_orders`). Each group of shared
    accesses in ``vectors`` (``kerncast.sim._memory.static_vectors``) is one request,
    as ptxas issues it: its carrier reads and writes the registers of all its members,
    the others issue nothing on the load/store path."""
    ids: dict[str, int] = {}
    table = [_op(item, machine, ids) for item in program.items]
    for group in vectors:
        carrier = vector_carrier(group, program)
        ops = [table[pc] for pc in group]
        table[carrier] = replace(table[carrier],
                                 srcs=tuple(dict.fromkeys(r for op in ops for r in op.srcs)),
                                 dsts=tuple(dict.fromkeys(r for op in ops for r in op.dsts)))
        for pc in group:
            if pc != carrier:
                table[pc] = Op(K_ALU, PIPES.index("ctrl"), 0.0, 0, 0.0, (), ())
    return table, len(ids), segment_orders(program, table)


def _schedule(pcs: list[int], table: list[Op], items,
              predicated: frozenset[int] = frozenset(),
              places: dict[int, int] | None = None) -> tuple[int, ...]:
    """List-schedule one straight-line segment as ptxas would: every instruction after the
    ones it depends on (registers read or written, memory order around stores, fences
    in place), loads as early as their operands allow; or, given ``places`` (per pc, the
    offset of its SASS: :func:`kerncast.sim._sassissue.read_sass`), in the order ptxas
    placed them. The branches in ``predicated`` are if-converted: not fences, and the
    region each skips reads its guard."""
    deps: dict[int, set[int]] = {pc: set() for pc in pcs}
    last_write: dict[int, int] = {}
    readers: dict[int, list[int]] = {}
    last_store, memory_ops, fence = None, [], None
    guard: int | None = None
    for pc in pcs:
        op = table[pc]
        need = deps[pc]
        need.update(last_write[r] for r in op.srcs if r in last_write)
        if guard is not None:
            need.add(guard)
        for r in op.dsts:
            need.update(readers.get(r, ()))
            if r in last_write:
                need.add(last_write[r])
        store = op.kind == K_MEM and _is_store(items[pc])
        if op.kind == K_MEM:
            if last_store is not None:
                need.add(last_store)
            if store:
                need.update(memory_ops)
                last_store = pc
            memory_ops.append(pc)
        if fence is not None:
            need.add(fence)
        if pc in predicated:
            guard = pc  # the region after it issues under its predicate
        elif op.kind == K_BAR or _is_fence(items[pc]):
            need.update(p for p in pcs if p < pc)
            fence = pc
        if guard is not None and pc + 1 >= items[guard].targets[0]:
            guard = None  # the region ends here
        for r in op.srcs:
            readers.setdefault(r, []).append(pc)
        for r in op.dsts:
            last_write[r] = pc
            readers[r] = []
        need.discard(pc)
    if places:
        at = _sass_places(pcs, deps, table, places)
        priority = {pc: (-at[pc], -pc) for pc in pcs}
    else:
        height = _heights(pcs, deps, table, items)
        priority = {pc: (height[pc], -pc) for pc in pcs}
    order, placed = [], set()
    pending = list(pcs)
    while pending:
        ready = [pc for pc in pending if deps[pc] <= placed]
        pick = max(ready, key=priority.__getitem__)
        order.append(pick)
        placed.add(pick)
        pending.remove(pick)
    return tuple(order)


def _sass_places(pcs: list[int], deps: dict[int, set[int]], table: list[Op],
                 places: dict[int, int]) -> dict[int, float]:
    """Per pc of a segment, where it issues among the others: its SASS's offset. A pc
    without SASS of its own issues with a placed pc of its kind that reads the same
    registers (ptxas made one instruction of both: two ``ld.const`` one ``LDC.64``,
    ``mul.lo`` and ``mul.hi`` one ``IMAD.WIDE``), else just before its first user (folded
    into it), else just after the last instruction it depends on (hoisted), else first."""
    users: dict[int, list[int]] = {pc: [] for pc in pcs}
    for pc in pcs:
        for d in deps[pc]:
            users[d].append(pc)
    merged = {(table[pc].kind, frozenset(table[pc].srcs)): float(places[pc])
              for pc in reversed(pcs) if pc in places and table[pc].srcs}
    at: dict[int, float] = {}
    for pc in reversed(pcs):
        if pc in places:
            at[pc] = float(places[pc])
        elif (key := (table[pc].kind, frozenset(table[pc].srcs))) in merged:
            at[pc] = merged[key] + 0.25
        elif after := [at[u] for u in users[pc] if u in at]:
            at[pc] = min(after) - 0.5
    for pc in pcs:
        if pc not in at:
            before = [at[d] for d in deps[pc] if d in at]
            at[pc] = max(before) + 0.5 if before else -1.0
    return at


_LOAD_LATENCY = 400.0  # what a list scheduler expects of a global load


def _heights(pcs: list[int], deps: dict[int, set[int]], table: list[Op], items) -> dict[int, float]:
    """Longest latency path from each instruction to the end of the segment: the list
    scheduler's priority, which starts address arithmetic and loads early and leaves
    their consumers late (as ptxas schedules)."""
    users: dict[int, list[int]] = {pc: [] for pc in pcs}
    for pc in pcs:
        for d in deps[pc]:
            users[d].append(pc)
    height: dict[int, float] = {}
    for pc in reversed(pcs):
        op = table[pc]
        own = _LOAD_LATENCY if op.kind == K_MEM and not _is_store(items[pc]) else op.latency
        height[pc] = own + max((height[u] for u in users[pc]), default=0.0)
    return height


def _has_load(items, table: list[Op], start: int, end: int) -> bool:
    """Whether pcs ``start`` to ``end`` hold a memory load: a guarded region ptxas is known
    to predicate (its SASS issues the region's ``@P LDG`` with the others, whether or not
    the guard holds), unlike branches over arithmetic such as sinf's slow path."""
    return any(table[pc].kind == K_MEM and not _is_store(items[pc]) for pc in range(start, end))


def _is_store(item) -> bool:
    return item.kind == "op" and item.instr.opcode in ("st", "red", "atom")


def _is_fence(item) -> bool:
    if item.kind != "op":
        return item.kind in ("call", "ret", "trap")
    return item.instr.opcode in ("bra", "brx", "ret", "exit", "membar", "fence", "call",
                                 "shfl", "vote", "match", "activemask", "redux", "bar",
                                 "barrier")


IF_CONVERT_LIMIT = 16  # PTX instructions ptxas predicates rather than branches over
CHAIN_LIMIT = 256       # instructions one if-converted chain is scheduled over


def _convertible(program, pc: int, targets: set[int]) -> bool:
    """A guarded forward branch over a short straight region (ALU work, loads and stores,
    no label, barrier, atomic or other control flow): ptxas predicates the region (its
    SASS shows ``@!P LDG`` batches hoisted above the adds of earlier regions)."""
    item = program.items[pc]
    if item.kind != "op" or item.instr.opcode != "bra" or item.instr.guard is None \
            or len(item.targets) != 1:
        return False
    end = item.targets[0]
    if not pc + 1 < end <= pc + 1 + IF_CONVERT_LIMIT:
        return False
    for k in range(pc + 1, end):
        other = program.items[k]
        if k > pc + 1 and k in targets:
            return False
        if other.kind != "op" or _is_fence(other) or other.instr.opcode in ("atom", "red"):
            return False
    return True


def _chains(program) -> list[tuple[list[int], list[int], frozenset[int]]]:
    """Runs of segments joined by if-convertible branches: (segment starts, segment ends,
    the branches); a warp that falls through every branch runs the whole chain."""
    targets = {t for item in program.items for t in item.targets}
    starts = program.segment_starts
    out, i = [], 0
    while i < len(starts):
        seg_starts, seg_ends, branches = [starts[i]], [program.segment_end(starts[i])], set()
        joins: set[int] = set()  # where the regions of the chain's branches end
        j = i
        while j + 1 < len(starts) and seg_ends[-1] - seg_starts[0] < CHAIN_LIMIT:
            last = seg_ends[-1] - 1
            if _convertible(program, last, targets):
                branches.add(last)
                joins.add(program.items[last].targets[0])
            elif seg_ends[-1] not in joins:
                break
            j += 1
            seg_starts.append(starts[j])
            seg_ends.append(program.segment_end(starts[j]))
        if branches:
            out.append((seg_starts, seg_ends, frozenset(branches)))
        i = j + 1
    return out


def segment_orders(program, table: list[Op], places: dict[int, int] | None = None) -> dict:
    """Issue order of every segment whose order differs from the PTX order (keyed by its
    first pc); and, keyed ``("chain", first pc)``, ``(segment starts, segment ends,
    order, regions)`` of every chain of segments joined by if-converted branches: the
    order of a warp that runs all of it (ptxas predicates the regions and hoists their
    loads), and which segments are guarded regions holding a load (which a warp whose
    guard fails issues predicated off rather than branching over). Given ``places`` (see
    :func:`_schedule`), the orders are ptxas's."""
    orders: dict = {}
    for start in program.segment_starts:
        end = program.segment_end(start)
        pcs = list(range(start, end))
        if len(pcs) > 2:
            order = _schedule(pcs, table, program.items, places=places)
            if list(order) != pcs:
                orders[start] = order
    for seg_starts, seg_ends, branches in _chains(program):
        pcs = list(range(seg_starts[0], seg_ends[-1]))
        regions = tuple(c for c in range(1, len(seg_starts))
                        if seg_ends[c - 1] - 1 in branches
                        and _has_load(program.items, table, seg_starts[c], seg_ends[c]))
        orders[("chain", seg_starts[0])] = (tuple(seg_starts), tuple(seg_ends),
                                            _schedule(pcs, table, program.items, branches, places),
                                            regions)
    return orders


class _Bandwidth:
    """A FIFO server: each transfer holds it for bytes / (bytes per cycle)."""

    __slots__ = ("free", "per_byte", "busy", "bytes")

    def __init__(self, bytes_per_cycle: float):
        self.free, self.per_byte, self.busy, self.bytes = 0.0, 1.0 / bytes_per_cycle, 0.0, 0.0

    def transfer(self, now: float, nbytes: float) -> float:
        """The delay beyond ``now`` until the transfer completes."""
        hold = nbytes * self.per_byte
        start = self.free if self.free > now else now
        self.free = start + hold
        self.busy += hold
        self.bytes += nbytes
        return self.free - now


def _interp(xs: tuple[float, ...], ys: tuple[float, ...], x: float) -> float:
    """``ys`` at ``x``, linear between the points ``xs`` (ascending), held flat past
    either end: a calibrated curve looked up on the event loop's path, where
    ``np.interp`` on one value costs more than the whole lookup."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    k = bisect.bisect_right(xs, x)
    return ys[k - 1] + (x - xs[k - 1]) / (xs[k] - xs[k - 1]) * (ys[k] - ys[k - 1])


class _Dram(_Bandwidth):
    """The SM's share of DRAM: reads and writes each at their calibrated rate, and the
    turnarounds between them at the cost that makes an even mix run at the calibrated
    copy rate (charged by the mix of the bytes moved so far). With the loaded-latency
    curve (``load``: shares of the peak, cycles added at each), a read's latency grows
    with the share of the time the server was busy over the last ``window`` cycles (a
    decaying sum), as the calibrated DRAM's grows with its load."""

    __slots__ = ("read", "write", "turn", "written", "load", "window", "recent", "seen")

    def __init__(self, read: float, write: float, copy: float,
                 load: tuple[tuple[float, ...], tuple[float, ...]] | None = None,
                 window: float = 1.0):
        super().__init__(read)
        self.read, self.write = 1.0 / read, 1.0 / write
        self.turn = max(0.0, 1.0 / copy - 0.5 * (self.read + self.write))
        self.written = 0.0
        self.load, self.window = load, max(window, 1.0)
        self.recent, self.seen = 0.0, 0.0

    def transfer(self, now: float, nbytes: float, store: bool = False) -> float:
        if store:
            self.written += nbytes
        f = self.written / (self.bytes + nbytes)
        self.per_byte = (1 - f) * self.read + f * self.write + 4 * f * (1 - f) * self.turn
        if self.load is not None:
            if now > self.seen:
                self.recent *= math.exp((self.seen - now) / self.window)
                self.seen = now
            self.recent += nbytes * self.per_byte
        return super().transfer(now, nbytes)

    def added_latency(self) -> float:
        """Cycles the DRAM's latency has grown by under its present load."""
        if self.load is None:
            return 0.0
        return _interp(*self.load, self.recent / self.window)


#: lines from which a store whose every sector lies in its own line is a scatter (the
#: calibration's scattered stores span 4 to 32 lines)
SCATTERED = 4


def _partial_store_cycles(rates: tuple[tuple[float, ...], tuple[float, ...]], sectors: int,
                          piece: float) -> float:
    """Cycles the SM's store path takes for ``sectors`` sectors that each receive ``piece``
    bytes, at the calibrated rate of such stores (interpolated in the piece size)."""
    return sectors / _interp(*rates, piece)


class _Sim:
    """State of one simulated round (see the module docstring)."""

    def __init__(self, table, nregs, streams, costs, machine: Machine, active_sms: int,
                 warps_per_block: int, caches: SMCaches, source: list[int] | None = None,
                 stands_for: list[tuple[int, int]] | None = None, sharing=None,
                 generations: int = 1, wave: int = 0):
        self.table, self.costs, self.m = table, costs, machine
        self.caches = caches
        one = len(streams)
        source = source or list(range(one))
        # (the block each warp stands for, the traced block its stream comes from): a
        # replica moves its global addresses by the block-to-block shift of every instance
        stands_for = stands_for or [(0, 0)] * one
        # generation g of the round's blocks: the blocks that take their SM's slots next,
        # each as its predecessor in the slot ends (``wave`` blocks later in the grid)
        self.generations, self.round_warps = generations, one
        self.streams = list(streams) * generations
        self.source = list(source) * generations
        self.stands_for = [(block + g * wave, origin) for g in range(generations)
                           for block, origin in stands_for]
        self.sharing = sharing
        self._shifts: dict[tuple, int] = {}
        n = len(self.streams)
        self.pos = [0] * n
        self.ready = [[0.0] * nregs for _ in range(n)]
        sched = machine.schedulers
        self.sched_of = [(i % one) % sched for i in range(n)]
        self.sched_free = [0.0] * sched
        self.pipe_free = [[0.0] * len(PIPES) for _ in range(sched)]
        self.busy = [0.0] * len(PIPES)
        self.lsu_free = 0.0
        share = 1.0 / max(active_sms, 1)
        per_sm = machine.l1_fill_bytes_per_cycle()
        cap = machine.sm_dram_bytes_per_cycle()
        read, write, copy = (min(rate * share, cap) for rate in machine.dram_rates())
        loaded = machine.dram_load_latency()
        self.dram = _Dram(read, write, copy, None if loaded is None else loaded[:2],
                          machine.dram_latency)
        self.l2 = _Bandwidth(min(machine.l2_bytes_per_cycle() * share, per_sm))
        self.warps_per_block = warps_per_block
        self.next_in_slot = -(-one // warps_per_block)  # blocks of one generation
        self.block_of = [w // one * self.next_in_slot + w % one // warps_per_block
                         for w in range(n)]
        self.waiting: dict[int, list[tuple[int, float]]] = {}
        self.live = {}
        self.warps_of: dict[int, list[int]] = {}
        for w, b in enumerate(self.block_of):
            self.live[b] = self.live.get(b, 0) + 1
            self.warps_of.setdefault(b, []).append(w)
        self.finish = [0.0] * n
        self.dispatch_free = 0.0
        self.dispatch_gap = machine.dispatch_seconds(1) * machine.clock_hz * max(active_sms, 1)
        self.turnaround = machine.block_turnaround(warps_per_block)[0] \
            if generations > 1 else 0.0
        # issue times at a quarter and three quarters of each warp's stream: its pace
        # in steady state, past start-up latencies and before the drain
        self.marks = [(len(p) // 4, (3 * len(p)) // 4) for p, _ in self.streams]
        self.marked = [[0.0, 0.0] for _ in self.streams]
        # the same for the whole SM: its pace when warps compete for the same pipes
        total = sum(len(p) for p, _ in self.streams)
        self.issued, self.sm_marks, self.sm_marked = 0, (total // 4, (3 * total) // 4), [0.0, 0.0]
        self.barrier_wait = 0.0
        self.bar_cost = machine.barrier_cycles(warps_per_block)
        self.lat = (machine.l1_latency, machine.l2_latency, machine.dram_latency,
                    machine.shared_latency, machine.atomic_latency)
        self.store_rates = machine.partial_store_rates()

    def generation_ends(self) -> list[float]:
        """The cycle the last warp of each generation ends."""
        one = self.round_warps
        return [max(self.finish[g * one:(g + 1) * one], default=0.0)
                for g in range(self.generations)]

    def memory(self, w: int, pc: int, step: int, now: float) -> tuple[float, float]:
        """(latency seen by the warp, cycles the load/store path is held)."""
        cost: RequestCost | None = self.costs.get((self.source[w], step, pc))
        if cost is None:  # predicated off in every lane: issued, nothing moves
            return 1.0, 1.0
        l1, l2, dram, shared, atomic = self.lat
        if cost.space == _CONST:
            return 20.0, 1.0
        if cost.space == _SHARED:
            return shared + cost.wavefronts - 1, float(cost.wavefronts)
        if cost.space not in _CACHED:
            return 4.0, 1.0
        hold = float(max(1, cost.lines))
        sectors = cost.sectors
        block, origin = self.stands_for[w]
        if block != origin and self.sharing is not None:
            key = (block, origin, cost.instance)
            offset = self._shifts.get(key)
            if offset is None:
                offset = self._shifts[key] = self.sharing.shift(cost.instance, block, origin) \
                    if cost.space == _GLOBAL_SPACE else block << 40
            if offset:  # the replica's own sectors
                sectors = tuple([s + offset for s in sectors])
        if cost.kind == _ATOMIC:
            delay = self.l2.transfer(now, 32.0 * len(sectors))
            return atomic + delay, hold
        traffic = cost.traffic
        if cost.kind == _STORE:
            if self.store_rates is not None and cost.lines == len(sectors) >= SCATTERED \
                    and cost.nbytes < 32 * len(sectors) and traffic == 1.0:
                hold = max(hold, _partial_store_cycles(self.store_rates, len(sectors),
                                                       cost.nbytes / len(sectors)))
            below, to_dram = self.caches.store(sectors, cost.share)
            self.l2.transfer(now, 32.0 * below * traffic)
            if to_dram:
                self.dram.transfer(now, 32.0 * to_dram, True)
            return 1.0, hold
        ready, below, to_dram = self.caches.load(sectors, cost.share, now, (l1, l2, dram))
        delay = 0.0
        if below:
            delay = self.l2.transfer(now, 32.0 * below * traffic)
        if to_dram:
            # the calibrated growth of the latency under load is the whole queue there; the
            # server's own queue (bursts past its rate) is part of it, not added to it
            delay = max(delay, self.dram.transfer(now, 32.0 * to_dram * traffic),
                        self.dram.added_latency())
        return ready - now + delay, hold

    def run(self) -> float:
        """Issue every warp's stream; return the cycle the round ends."""
        heaps: list[list[tuple[float, int]]] = [[] for _ in self.sched_free]
        for w in range(self.round_warps):
            heaps[self.sched_of[w]].append((0.0, w))
        for h in heaps:
            heapq.heapify(h)
        self._heaps = heaps
        # plain lists and tuples: the loop below runs once per issued instruction
        table = [(op.kind, op.pipe, op.issue, op.slots, op.latency, op.srcs, op.dsts, op.also,
                  shadow_cycles(op)) for op in self.table]
        pos = self.pos
        pcs_of = [p.tolist() if isinstance(p, np.ndarray) else list(p) for p, _ in self.streams]
        steps_of = [s for _, s in self.streams]
        lengths = [len(p) for p in pcs_of]
        sched_free, pipe_free, busy = self.sched_free, self.pipe_free, self.busy
        order = range(len(heaps))
        push, pop, replace = heapq.heappush, heapq.heappop, heapq.heapreplace
        readies, marks, marked, sm_marked = self.ready, self.marks, self.marked, self.sm_marked
        issued, (sm_first, sm_last) = self.issued, self.sm_marks
        memory, lsu_free = self.memory, self.lsu_free
        # warps whose next instruction waits for the busy load/store path: per scheduler,
        # one of them (armed) waits in the scheduler's queue for the path to free, the
        # others are parked in arrival order, so that a busy path does not wake them all
        parked: list[list[tuple[float, int]]] = [[] for _ in heaps]
        armed = [-1] * len(heaps)
        # per scheduler, the first cycle it could issue: its earliest queued warp, once
        # the scheduler is free (kept current wherever a queue or a scheduler changes)
        first = [0.0] * len(heaps)
        shadow_credit = [0.0] * len(heaps)

        def arm_next(k: int) -> None:  # the first parked warp of scheduler k waits next
            t, armed[k] = pop(parked[k])
            push(heaps[k], (max(t, lsu_free), armed[k]))

        def refresh(k: int) -> None:
            h = heaps[k]
            first[k] = (h[0][0] if h[0][0] > sched_free[k] else sched_free[k]) if h else _INF

        def refresh_all() -> None:
            for k in order:
                refresh(k)
        refresh_all()
        while True:
            now = min(first)  # the scheduler that can issue first (the lowest on a tie)
            if now == _INF:
                waiting = [k for k in order if parked[k]]
                if waiting:
                    for k in waiting:
                        arm_next(k)
                    refresh_all()
                    continue
                if not self.waiting:
                    break
                for b in list(self.waiting):  # the emulator ran these: release
                    self._release(b)
                refresh_all()
                continue
            s = first.index(now)
            h = heaps[s]
            t, w = h[0]
            i = pos[w]
            if i >= lengths[w]:
                pop(h)
                self._finish(w, t)
                refresh_all()
                continue
            pc = pcs_of[w][i]
            kind, pipe, issue, slots, latency, srcs, dsts, also, shadow = table[pc]
            ready = readies[w]
            free = pipe_free[s]
            start = free[pipe]
            if start < now:
                start = now
            if also:
                for p, _ in also:
                    if free[p] > start:
                        start = free[p]
            for r in srcs:
                if ready[r] > start:
                    start = ready[r]
            if kind == K_MEM and lsu_free > start:
                if armed[s] < 0 or armed[s] == w:
                    armed[s] = w
                    replace(h, (lsu_free, w))
                else:
                    pop(h)
                    push(parked[s], (start, w))
                refresh(s)
                continue
            if start > now:
                replace(h, (start, w))
                t = h[0][0]
                first[s] = t if t > sched_free[s] else sched_free[s]
                continue
            if shadow:
                # the FP64 pipe's cycles past the slots hold the scheduler, but for the
                # whole cycles its shadow credit has earned: those another warp can take
                credit = shadow_credit[s] + FP64_SHADOW * shadow
                granted = min(shadow, float(int(credit)))
                shadow_credit[s] = credit - granted
                sched_free[s] = now + slots + shadow - granted
            else:
                sched_free[s] = now + slots
            free[pipe] = now + issue
            busy[pipe] += issue
            if also:
                for p, held in also:
                    free[p] = now + held
                    busy[p] += held
            pos[w] = i + 1
            mark = marks[w]
            if i == mark[0] or i == mark[1]:
                marked[w][i == mark[1]] = now
            issued += 1
            if issued == sm_first or issued == sm_last:
                sm_marked[issued == sm_last] = now
            if kind == K_MEM:
                latency, hold = memory(w, pc, steps_of[w][i], now)
                lsu_free = now + hold
                if armed[s] == w:
                    armed[s] = -1
                    if parked[s]:
                        arm_next(s)  # queued after w: w stays first
                busy[_LSU] += hold - issue
                for r in dsts:
                    ready[r] = now + latency
            elif kind == K_BAR:
                pop(h)
                self._arrive(w, now + 1.0)
                refresh_all()
                continue
            else:
                done = now + latency
                for r in dsts:
                    ready[r] = done
            replace(h, (now + 1.0, w))
            t = h[0][0]
            first[s] = t if t > sched_free[s] else sched_free[s]
        self.issued, self.lsu_free = issued, lsu_free
        done = max(self.finish) if self.finish else 0.0
        # stores and reductions do not stall warps, but the round ends when the memory
        # system has moved every byte it was given
        return max(done, self.dram.free, self.l2.free, lsu_free)

    def _push(self, w: int, t: float) -> None:
        heapq.heappush(self._heaps[self.sched_of[w]], (t, w))

    def _arrive(self, w: int, t: float) -> None:
        b = self.block_of[w]
        arrived = self.waiting.setdefault(b, [])
        arrived.append((w, t))
        if len(arrived) >= self.live[b]:
            self._release(b)

    def _release(self, b: int) -> None:
        arrived = self.waiting.pop(b, [])
        if not arrived:
            return
        go = max(t for _, t in arrived) + self.bar_cost
        for w, t in arrived:
            self.barrier_wait += go - t
            self._push(w, go)

    def _finish(self, w: int, t: float) -> None:
        self.finish[w] = max(t, max(self.ready[w], default=0.0))
        b = self.block_of[w]
        self.live[b] -= 1
        if not self.live[b] and b + self.next_in_slot in self.warps_of:
            # the slot's next block starts the calibrated turnaround later, once the block
            # scheduler gets to it (one block every ``dispatch_gap`` cycles on this SM)
            start = max(t + self.turnaround, self.dispatch_free)
            self.dispatch_free = start + self.dispatch_gap
            for v in self.warps_of[b + self.next_in_slot]:
                self._push(v, start)
        if self.waiting.get(b) and len(self.waiting[b]) >= self.live[b]:
            self._release(b)


WINDOWS = 8  # windows a long stream is sampled in


def _windows(pcs: np.ndarray, steps: np.ndarray, fraction: float,
             phase: float = 0.0) -> tuple[list, list]:
    """``WINDOWS`` evenly spaced pieces of one warp's stream, ``fraction`` of it in all:
    density that changes along a stream (lanes that finish early, a prologue, an
    epilogue) is sampled where it occurs, not only at the start. ``phase`` (0 to 1) moves
    every window by that share of the spacing between windows."""
    n = len(pcs)
    width = max(1, int(n * fraction / WINDOWS))
    if width * WINDOWS >= n:
        return pcs.tolist(), steps.tolist()
    spacing = (n - width) / (WINDOWS - 1)
    starts = np.minimum(np.linspace(0, n - width, WINDOWS) + phase * spacing,
                        n - width).astype(np.int64)
    take = (starts[:, None] + np.arange(width)[None, :]).reshape(-1)
    return pcs[take].tolist(), steps[take].tolist()


def sample_streams(streams: list[tuple[np.ndarray, np.ndarray]],
                   budget: int = DEFAULT_BUDGET,
                   warps_per_block: int | None = None) -> tuple[list, float]:
    """The streams to simulate (sampled in windows when longer than ``budget`` in all)
    and the factor that scales their time to the whole streams.

    With ``warps_per_block``, the round's blocks are sampled at phases spread over the
    spacing between windows (block ``b`` of ``B`` at ``b / B`` of it; a block's warps
    alike): over a launch of many waves the resident blocks drift apart and are not at
    the same point of their code at once, as blocks that would all start together in
    the sample would be."""
    total = sum(len(p) for p, _ in streams)
    if total <= budget:
        return [(p.tolist(), s.tolist()) for p, s in streams], 1.0
    fraction = budget / total
    wpb = warps_per_block or len(streams)
    blocks = -(-len(streams) // wpb)
    cut = [_windows(np.asarray(p), np.asarray(s), fraction, (w // wpb) / blocks)
           for w, (p, s) in enumerate(streams)]
    done = sum(len(p) for p, _ in cut)
    return cut, total / done


def memory_keys(cut: list, source: list[int], table: list[Op]) -> set[tuple[int, int, int]]:
    """The ``(traced warp, step, pc)`` of every memory request the sampled streams
    ``cut`` (as :func:`sample_streams` gives them) will issue: the requests whose costs
    the simulation looks up."""
    mem = {pc for pc, op in enumerate(table) if op.kind == K_MEM}
    keys: set[tuple[int, int, int]] = set()
    for (pcs, steps), src in zip(cut, source):
        keys.update((src, step, pc) for pc, step in zip(pcs, steps) if pc in mem)
    return keys


def simulate_round(streams: list[tuple[np.ndarray, np.ndarray]], table: list[Op], nregs: int,
                   costs: dict, machine: Machine, *, active_sms: int, warps_per_block: int,
                   l1_bytes: int, l2_share_bytes: int, source: list[int] | None = None,
                   stands_for: list[tuple[int, int]] | None = None, sharing=None,
                   budget: int = DEFAULT_BUDGET, sampled: tuple[list, float] | None = None,
                   generations: int = 1, wave: int = 0) -> RoundResult:
    """Simulate one SM's round: per warp, the pcs it issued and the step of each.

    ``source[w]`` names the traced warp whose memory requests warp ``w`` makes (warps
    of replicated blocks share their original's requests). ``sampled`` is what
    :func:`sample_streams` gave for these streams and ``budget``, if already known.

    With ``generations`` above one (streams simulated whole only), each block's slot
    takes the round's block ``wave`` blocks later in the grid as soon as it ends, that
    many times: blocks then drift apart as they do over a launch of many waves, one's
    barrier tree overlapping another's loads, and the result's ``cycles`` is the steady
    time of a round (the mean spacing of the generations' ends past the first) and
    ``lead`` what the first rounds take beyond it."""
    cut, scale = sampled or sample_streams(streams, budget)
    generations = generations if scale == 1.0 and sharing is not None else 1
    caches = SMCaches(l1_bytes, l2_share_bytes, warm=bool(sharing is not None and sharing.warm))
    sim = _Sim(table, nregs, cut, costs, machine, active_sms, warps_per_block, caches, source,
               stands_for, sharing, generations, wave)
    cycles = sim.run()
    pace = _paces(sim)
    lead = 0.0
    if generations > 1:
        ends = sim.generation_ends()
        # past the first generation, which all blocks start at once
        first = 1 if generations > 2 else 0
        cycles = (ends[-1] - ends[first]) / (generations - 1 - first)
        # no faster than the busiest memory path moves a round's bytes (the last
        # generation's stores drain after its warps end)
        cycles = max(cycles, max(sim.dram.busy, sim.l2.busy, sim.busy[_LSU]) / generations)
        lead = max(ends[-1], sim.dram.free, sim.l2.free) - generations * cycles
        pace = {w: p for w, p in pace.items() if w < sim.round_warps}
    if scale > 1.0:
        cycles = _extrapolate(sim, pace, streams, cut, scale, cycles)
    per = scale / generations
    busy = {name: sim.busy[i] * per / machine.schedulers if name != "lsu" else sim.busy[i] * per
            for i, name in enumerate(PIPES)}
    return RoundResult(cycles=cycles, instructions=sum(len(p) for p, _ in streams), scale=scale,
                       busy=busy, barrier_wait=sim.barrier_wait * per,
                       dram_bytes=sim.dram.bytes * per, l2_bytes=sim.l2.bytes * per,
                       caches={k: v * per for k, v in sim.caches.stats.items()},
                       pace=pace, lead=lead, generations=generations)


def _paces(sim: _Sim) -> dict[int, float]:
    """Each warp's steady pace, where it issued enough between its marks to tell."""
    out = {}
    for w, ((first, last), (t0, t1)) in enumerate(zip(sim.marks, sim.marked)):
        if last > first and t1 > t0:
            out[w] = (t1 - t0) / (last - first)
    return out


def _shared_paces(sim: _Sim, pace: dict[int, float], streams) -> dict[int, float]:
    """Each warp's pace as the median over the warps whose streams are as long (warps of
    one program that issue as many instructions progress alike): one warp's pace over a
    short sampled span is mostly where the scheduler happened to leave it. arith_sfu at
    size large, 64 warps of 125,000 instructions sampled in windows of 117: single
    warps' paces ranged up to five times the median. The median over the copies of one
    traced warp was not enough: with 8 warps a block, each of the round's 64 warps was
    a traced warp of its own, and the slowest one's pace made the round 4x longer than
    the SM's own pace (and 4.4-5.2x the measured time; with 2 warps a block, 1.1x).

    Where the blocks meet at barriers, the warps of one traced block whose streams are
    as long progress alike too: none gets more than a barrier's interval ahead of the
    others, so over a long stream their paces are one. Their paces over the sampled span
    differ only by where in a barrier's interval each warp's marks fell. The tiled matrix
    multiply at size large (8 warps a block, barriers twice a tile step) showed warp
    paces of 35.7 to 39.2 cycles an instruction; the slowest one's bound made the round
    8% longer than the SM's own pace does."""
    coupled = any(op.kind == K_BAR for op in sim.table)
    groups: dict[tuple[int, int], list[float]] = {}
    key = {w: (sim.source[w] // sim.warps_per_block if coupled else -1, len(streams[w][0]))
           for w in pace}
    for w, p in pace.items():
        groups.setdefault(key[w], []).append(p)
    median = {k: float(np.median(values)) for k, values in groups.items()}
    return {w: median[key[w]] for w in pace}


def _extrapolate(sim: _Sim, pace: dict[int, float], streams, cut, scale: float,
                 cycles: float) -> float:
    """The round's time when only a sample of each stream was simulated.

    The instructions not simulated run at the SM's steady pace (issue times between a
    quarter and three quarters of the sampled instructions), so that start-up latency
    and the drain count once; no warp finishes sooner than its own remaining
    instructions at its own steady pace allow (a long warp's dependent chain), a warp's
    pace being shared with the warps that progress alike (:func:`_shared_paces`); and no sooner
    than the busiest memory path needs for all the round's bytes."""
    pace = _shared_paces(sim, pace, streams)
    done = sum(len(p) for p, _ in cut)
    total = sum(len(p) for p, _ in streams)
    first, last = sim.sm_marks
    t0, t1 = sim.sm_marked
    if last > first and t1 > t0:
        end = cycles + (total - done) * (t1 - t0) / (last - first)
    else:
        end = cycles * scale
    for w, ((full, _), (part, _)) in enumerate(zip(streams, cut)):
        rest = len(full) - len(part)
        if rest > 0 and w in pace:
            end = max(end, sim.finish[w] + rest * pace[w])
    memory = max(sim.dram.busy, sim.l2.busy, sim.busy[_LSU]) * scale
    return max(end, memory)
