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
* a branch that is taken holds its warp until the target is fetched
  (:data:`TAKEN_BRANCH_CYCLES` from its issue to the warp's next instruction; other
  warps issue meanwhile), and a branch reads its predicate
  :data:`BRANCH_PREDICATE_CYCLES` after the compare's result is ready: a short loop
  alone on its scheduler takes about 29 cycles a trip on an H200, whatever its body up
  to 19 SASS instructions; if-converted branches (below) are neither;
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
  releases them after the calibrated release cost
  (:meth:`~kerncast.sim._machine.Machine.barrier_cycles`).

A round simulated whole can be followed by more (``generations``): each block's slot
takes the next block as it ends, after the calibrated turnaround and at the block
scheduler's rate, so that blocks drift apart as over a launch of many waves; the round's
time is then the steady spacing of the rounds' ends.

Long streams are simulated over a sample of every warp (the same fraction for all, in
evenly spaced windows so that density changing along a stream is seen) and
extrapolated by that fraction; the result says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from kerncast.ptx import InstrClass, read_registers, written_registers
from kerncast.sim._machine import PIPES, Machine
from kerncast.sim._loop import compiled, for_round, round_scratch
from kerncast.sim._memory import RequestCosts, SMCaches, vector_carrier
from kerncast.sim._sharing import ALL_WARM, NONE_WARM
from kerncast.trace import KINDS, SPACES

__all__ = ["FP64_SHADOW", "RoundResult", "build_table", "constant_replays", "memory_keys",
           "rotate_streams", "sample_streams", "segment_orders", "shadow_cycles",
           "simulate_round"]

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
    #: a branch's cycles from its issue to its warp's next instruction where it is
    #: taken (0: the next cycle, as any other instruction)
    redirect: float = 0.0
    #: cycles past its sources' results that the instruction can read them: a branch
    #: reads its predicate late
    late: float = 0.0


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


# Cycles from a taken branch's issue to its warp's next instruction: the fetch of the
# target. tools/loop_trip_probe.py --warps on an H200 (data/probes/loop_trip_warps_h200.json):
# a warp alone on its scheduler takes 10.0-10.3 cycles a trip beyond its SASS
# instructions in loops of 35 and 67, where the FFMA chains do not bound the trip.
# Hopper's figure, and the one below, assumed on other architectures.
TAKEN_BRANCH_CYCLES = 10.0
# Cycles a branch reads its predicate after the compare's result is ready (to the
# other instructions): the same probe's loops of 7 and 11 SASS instructions, alone on
# their scheduler, take 29.2 and 29.4 cycles a trip where the counter's add, the compare
# and the fetch above make 20.1 and 21.2.
BRANCH_PREDICATE_CYCLES = 9.0

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
    converted = {pc for _, _, branches in _chains(program) for pc in branches}
    for pc, item in enumerate(program.items):
        if item.kind == "op" and item.instr.opcode == "bra" and pc not in converted:
            table[pc] = replace(table[pc], redirect=TAKEN_BRANCH_CYCLES,
                                late=BRANCH_PREDICATE_CYCLES)
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
    """A FIFO server: each transfer holds it for bytes / (bytes per cycle). Its state is
    ``state``: [free, per byte, busy, bytes], as the compiled event loop updates it."""

    __slots__ = ("state",)

    def __init__(self, bytes_per_cycle: float):
        self.state = np.array([0.0, 1.0 / bytes_per_cycle, 0.0, 0.0])

    free = property(lambda self: float(self.state[0]))
    busy = property(lambda self: float(self.state[2]))
    bytes = property(lambda self: float(self.state[3]))

    def transfer(self, now: float, nbytes: float) -> float:
        """The delay beyond ``now`` until the transfer completes."""
        return float(compiled().bandwidth_transfer(self.state, float(now), float(nbytes)))


class _Dram(_Bandwidth):
    """The SM's share of DRAM: reads and writes each at their calibrated rate, and the
    turnarounds between them at the cost that makes an even mix run at the calibrated
    copy rate (charged by the mix of the bytes moved so far). With the loaded-latency
    curve (``load``: shares of the peak, cycles added at each), a read's latency grows
    with the share of the time the server was busy over the last ``window`` cycles (a
    decaying sum), as the calibrated DRAM's grows with its load. ``state`` goes on with
    [read, write and turnaround cycles per byte, bytes written, window, recent busy
    time, the cycle it was last decayed to]. With the calibrated spread of single reads'
    latencies, ``spread`` holds the expected order statistics of a block's warps' reads
    (:func:`order_statistics`): each warp's read lies off the mean by its rank's."""

    __slots__ = ("load_x", "load_y", "spread")

    def __init__(self, read: float, write: float, copy: float,
                 load: tuple[tuple[float, ...], tuple[float, ...]] | None = None,
                 window: float = 1.0, spread: np.ndarray | None = None):
        read_c, write_c = 1.0 / read, 1.0 / write
        turn = max(0.0, 1.0 / copy - 0.5 * (read_c + write_c))
        self.state = np.array([0.0, read_c, 0.0, 0.0, read_c, write_c, turn, 0.0,
                               max(window, 1.0), 0.0, 0.0])
        self.load_x = np.asarray(load[0] if load is not None else (), np.float64)
        self.load_y = np.asarray(load[1] if load is not None else (), np.float64)
        self.spread = np.zeros((0, 0)) if spread is None else spread

    def transfer(self, now: float, nbytes: float, store: bool = False) -> float:
        return float(compiled().dram_transfer(self.state, self.load_x, float(now), float(nbytes),
                                             store))

    def added_latency(self) -> float:
        """Cycles the DRAM's latency has grown by under its present load."""
        return float(compiled().dram_added(self.state, self.load_x, self.load_y))


#: the most DRAM pages of one request whose latest page's order statistics are tabled (a
#: request of more waits as one of that many; see :func:`kerncast.sim._loop.dram_pages`)
SPREAD_PAGES = 32
#: points of the quantile grid the order statistics are integrated over
_SPREAD_GRID = 1024


@lru_cache(maxsize=64)
def _order_statistics(quantiles: tuple[float, ...], warps: int) -> np.ndarray:
    k = len(quantiles)
    u = (np.arange(_SPREAD_GRID) + 0.5) / _SPREAD_GRID
    points = (np.arange(k) + 0.5) / k
    mean = float(np.mean(np.interp(u, points, quantiles)))
    ranks = np.arange(1, warps + 1)
    # the density of the rank-th of ``warps`` uniform draws (a beta density), on the grid
    log_beta = np.array([math.lgamma(r) + math.lgamma(warps - r + 1) - math.lgamma(warps + 1)
                         for r in ranks])
    with np.errstate(divide="ignore"):
        log_u, log_v = np.log(u), np.log1p(-u)
    weights = np.exp((ranks[:, None] - 1) * log_u + (warps - ranks[:, None]) * log_v
                     - log_beta[:, None])
    weights /= weights.sum(axis=1, keepdims=True)
    out = np.empty((SPREAD_PAGES, warps))
    for pages in range(1, SPREAD_PAGES + 1):
        # the latest of ``pages`` draws: a uniform quantile to the power 1 / pages
        cycles = np.interp(u ** (1.0 / pages), points, quantiles)
        out[pages - 1] = weights @ cycles - mean
    return out


def order_statistics(spread: tuple[float, ...], warps: int) -> np.ndarray:
    """Per DRAM pages of a request (1 to :data:`SPREAD_PAGES`, rows) and rank among a
    block's ``warps`` warps (columns), the expected cycles that read lies off the mean
    latency: the rank-th smallest of ``warps`` draws from the calibrated spread (cycles at
    evenly spaced quantiles, flat past the outermost), each the latest of its request's
    pages (the lines of one page arrive together).
    A block's warps take every rank at each read, so the block waits for the expected
    latest of its warps' reads, and one page's ranks average the mean."""
    return _order_statistics(tuple(float(c) for c in spread), max(int(warps), 1))


#: lines from which a store whose every sector lies in its own line is a scatter (the
#: calibration's scattered stores span 4 to 32 lines)
SCATTERED = 4


def _partial_store_cycles(rates: tuple[tuple[float, ...], tuple[float, ...]], sectors: int,
                          piece: float) -> float:
    """Cycles the SM's store path takes for ``sectors`` sectors that each receive ``piece``
    bytes, at the calibrated rate of such stores (interpolated in the piece size)."""
    return float(compiled().partial_store_cycles(np.asarray(rates[0], np.float64),
                                                 np.asarray(rates[1], np.float64), sectors,
                                                 float(piece)))


class _Sim:
    """State of one simulated round (see the module docstring); :meth:`run` lays it out
    in arrays for the compiled event loop (:func:`kerncast.sim._loop.run_round`)."""

    def __init__(self, table, nregs, streams, costs, machine: Machine, active_sms: int,
                 warps_per_block: int, caches: SMCaches, source: list[int] | None = None,
                 stands_for: list[tuple[int, int]] | None = None, sharing=None,
                 generations: int = 1, wave: int = 0, taken: list[np.ndarray] | None = None):
        self.table, self.costs, self.m, self.nregs = table, costs, machine, nregs
        self.taken = taken
        self.caches = caches
        one = len(streams)
        self.source = list(source or range(one))
        # (the block each warp stands for, the traced block its stream comes from): a
        # replica moves its global addresses by the block-to-block shift of every instance
        stands_for = stands_for or [(0, 0)] * one
        # generation g of the round's blocks: the blocks that take their SM's slots next,
        # each as its predecessor in the slot ends (``wave`` blocks later in the grid)
        self.generations, self.round_warps = generations, one
        self.round_streams = list(streams)
        self.streams = self.round_streams * generations
        self.stands_for = [(block + g * wave, origin) for g in range(generations)
                           for block, origin in stands_for]
        self.sharing = sharing
        n = len(self.streams)
        sched = machine.schedulers
        self.sched_of = [(i % one) % sched for i in range(n)]
        self.busy = [0.0] * len(PIPES)
        share = 1.0 / max(active_sms, 1)
        per_sm = machine.l1_fill_bytes_per_cycle()
        cap = machine.sm_dram_bytes_per_cycle()
        read, write, copy = (min(rate * share, cap) for rate in machine.dram_rates())
        loaded, spread = machine.dram_load_latency(), machine.dram_spread()
        self.dram = _Dram(read, write, copy, None if loaded is None else loaded[:2],
                          machine.dram_latency,
                          None if spread is None else order_statistics(spread[0],
                                                                       warps_per_block))
        self.l2 = _Bandwidth(min(machine.l2_bytes_per_cycle() * share, per_sm))
        self.warps_per_block = warps_per_block
        self.next_in_slot = -(-one // warps_per_block)  # blocks of one generation
        self.block_of = [w // one * self.next_in_slot + w % one // warps_per_block
                         for w in range(n)]
        self.finish = [0.0] * n
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
                    machine.shared_latency, machine.atomic_latency,
                    *machine.shared_path_cycles())
        self.store_rates = machine.partial_store_rates()
        self.lsu_free = 0.0

    def generation_ends(self) -> list[float]:
        """The cycle the last warp of each generation ends."""
        one = self.round_warps
        return [max(self.finish[g * one:(g + 1) * one], default=0.0)
                for g in range(self.generations)]

    def _table_arrays(self) -> tuple:
        """The program's table as arrays: per pc its fields, and its sources,
        destinations and other pipes held as (offsets, values) pairs."""
        table = self.table

        def ragged(parts, dtype):
            ptr = np.zeros(len(parts) + 1, np.int64)
            np.cumsum([len(p) for p in parts], out=ptr[1:])
            return ptr, np.array([x for p in parts for x in p], dtype)

        src_ptr, src_idx = ragged([op.srcs for op in table], np.int64)
        dst_ptr, dst_idx = ragged([op.dsts for op in table], np.int64)
        also_ptr, also_pipe = ragged([[p for p, _ in op.also] for op in table], np.int64)
        also_held = np.array([h for op in table for _, h in op.also], np.float64)
        return (np.array([op.kind for op in table], np.int64),
                np.array([op.late for op in table], np.float64),
                np.array([op.pipe for op in table], np.int64),
                np.array([op.issue for op in table], np.float64),
                np.array([op.slots for op in table], np.float64),
                np.array([op.latency for op in table], np.float64),
                np.array([shadow_cycles(op) for op in table], np.float64),
                src_ptr, src_idx, dst_ptr, dst_idx, also_ptr, also_pipe, also_held)

    def _redirects(self, s_ptr, s_pcs, s_steps) -> np.ndarray:
        """Per stream position, the cycles its warp waits for a taken branch's target
        (0 where the position is no taken branch)."""
        out = np.zeros(len(s_pcs), np.float64)
        redirect = np.array([op.redirect for op in self.table], np.float64)
        if self.taken is None or not redirect.any():
            return out
        for w, after in enumerate(self.taken[:self.round_warps]):
            lo, hi = s_ptr[w], s_ptr[w + 1]
            pcs, steps = s_pcs[lo:hi], s_steps[lo:hi]
            hit = np.flatnonzero((redirect[pcs] > 0) & np.isin(steps, after))
            out[lo + hit] = redirect[pcs[hit]]
        return out

    def _requests(self, mem: np.ndarray, s_ptr, s_pcs, s_steps) -> tuple:
        """Per stream position, the memory request it makes (-1 for none: a request
        predicated off in every lane moves nothing), the requests' columns, and per warp
        of every generation and stream position the sector shift of a replica's request
        (empty where no warp is a replica). ``mem`` marks the pcs of memory requests."""
        costs = RequestCosts.of(self.costs)
        s_cost = np.full(len(s_pcs), -1, np.int64)
        at = np.flatnonzero(mem[s_pcs]) if len(s_pcs) else np.zeros(0, np.int64)
        stream = np.searchsorted(s_ptr, at, side="right") - 1
        s_cost[at] = costs.rows_of(np.asarray(self.source, np.int64)[stream], s_steps[at],
                                   s_pcs[at])
        fields = (costs.kind, costs.space, costs.lines, costs.wavefronts, costs.share,
                  costs.nbytes.astype(np.float64), costs.traffic, costs.sec_ptr, costs.sec_idx)
        return s_cost, fields, self._shifts(s_cost, costs, stream, at)

    def _shifts(self, s_cost, costs, stream, at) -> np.ndarray:
        """Per warp of every generation and stream position, the sectors its request
        moves by: a replica's own (0 for the traced blocks themselves)."""
        one, sharing = self.round_warps, self.sharing
        replicas = [w for w, (block, origin) in enumerate(self.stands_for) if block != origin]
        if sharing is None or not replicas or not len(s_cost):
            return np.zeros(0, np.int64)
        out = np.zeros(self.generations * len(s_cost), np.int64)
        made = s_cost[at] >= 0
        at, stream = at[made], stream[made]
        bounds = np.searchsorted(stream, np.arange(one + 1))
        where, blocks, origins = [], [], []
        for w in replicas:
            k = at[bounds[w % one]:bounds[w % one + 1]]
            where.append(w // one * len(s_cost) + k)
            block, origin = self.stands_for[w]
            blocks.append(np.full(len(k), block, np.int64))
            origins.append(np.full(len(k), origin, np.int64))
        where_a = np.concatenate(where)
        row = s_cost[where_a % len(s_cost)]
        block_a, origin_a = np.concatenate(blocks), np.concatenate(origins)
        glob = costs.space[row] == _GLOBAL_SPACE
        with np.errstate(over="ignore"):
            offsets = block_a << 40  # a warp's local data: its own
        offsets[glob] = sharing.shifts_of(costs.instance[row[glob]], block_a[glob],
                                          origin_a[glob])
        out[where_a] = offsets
        return out

    def run(self) -> float:
        """Issue every warp's stream; return the cycle the round ends."""
        one = self.round_warps
        lengths = [len(p) for p, _ in self.round_streams]
        s_ptr = np.zeros(one + 1, np.int64)
        np.cumsum(lengths, out=s_ptr[1:])
        s_pcs = np.concatenate([np.asarray(p, np.int64) for p, _ in self.round_streams]) \
            if one else np.zeros(0, np.int64)
        s_steps = np.concatenate([np.asarray(s, np.int64) for _, s in self.round_streams]) \
            if one else np.zeros(0, np.int64)
        ops = self._table_arrays()
        s_cost, fields, s_off = self._requests(ops[0] == K_MEM, s_ptr, s_pcs, s_steps)
        s_redirect = self._redirects(s_ptr, s_pcs, s_steps)
        n = len(self.streams)
        n_blocks = self.generations * self.next_in_slot
        bw_ptr = np.zeros(n_blocks + 1, np.int64)
        np.cumsum(np.bincount(self.block_of, minlength=n_blocks), out=bw_ptr[1:])
        bw_idx = np.argsort(np.asarray(self.block_of, np.int64), kind="stable")
        rates = self.store_rates
        store_x, store_y = (np.asarray(rates[0], np.float64), np.asarray(rates[1], np.float64)) \
            if rates is not None else (np.zeros(0), np.zeros(0))
        caches = self.caches
        sec_ptr = fields[-2]
        used = s_cost[s_cost >= 0]
        caches.reserve_pages(int((sec_ptr[used + 1] - sec_ptr[used]).sum()) * self.generations)
        scratch = round_scratch(n, self.nregs, self.m.schedulers, len(PIPES), n_blocks,
                                self.warps_per_block, int(np.diff(sec_ptr).max(initial=1)))
        loop = for_round(sum(len(p) for p, _ in self.streams))
        with np.errstate(over="ignore"):  # interpreted, a private shift wraps as compiled
            loop.run_round(
                scratch, *ops, s_ptr, s_pcs, s_steps, s_cost, s_redirect, one, n,
                np.asarray(self.sched_of, np.int64), np.asarray(self.block_of, np.int64),
                bw_ptr, bw_idx, self.next_in_slot, n_blocks,
                *fields, s_off, SCATTERED, FP64_SHADOW,
                caches.l1, caches.l2, caches.pages, caches.warm, caches.counts, caches.dram,
                self.dram.state, self.dram.load_x, self.dram.load_y, self.dram.spread,
                self.l2.state,
                store_x, store_y, np.asarray(self.lat, np.float64), self.nregs,
                self.m.schedulers, _LSU,
                np.array([self.dispatch_gap, self.turnaround, self.bar_cost], np.float64),
                np.asarray(self.marks, np.int64).reshape(n, 2),
                np.asarray(self.sm_marks, np.int64))
        busy, finish, marked, sm_marked, totals = scratch[4:9]
        self.finish, self.marked = finish.tolist(), marked.tolist()
        self.sm_marked, self.busy = sm_marked.tolist(), busy.tolist()
        self.barrier_wait, issued, self.lsu_free = totals.tolist()
        self.issued = int(issued)
        done = max(self.finish) if self.finish else 0.0
        # stores and reductions do not stall warps, but the round ends when the memory
        # system has moved every byte it was given
        return max(done, self.dram.free, self.l2.free, self.lsu_free)


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


def _phase_cuts(warps: list[tuple[np.ndarray, np.ndarray]], phase: float,
                barrier: np.ndarray) -> list[int]:
    """Where each warp of one block starts when the block is ``phase`` (0 to 1) into
    its code: that share of each warp's stream, or where the block's barriers are
    (``barrier`` marks their pcs) past that share of them, so that its warps still meet
    at every barrier. A block whose warps pass different numbers of barriers starts at
    the beginning."""
    at = [np.flatnonzero(barrier[pcs]) for pcs, _ in warps]
    counts = {len(a) for a in at}
    if len(counts) > 1:
        return [0] * len(warps)
    if counts == {0}:
        return [int(phase * len(pcs)) for pcs, _ in warps]
    passed = int(phase * (len(at[0]) + 1))
    return [0 if passed == 0 else int(a[passed - 1]) + 1 for a in at]


def rotate_streams(streams: list[tuple[np.ndarray, np.ndarray]], warps_per_block: int,
                   table: list[Op]) -> list[tuple[list, list]]:
    """The streams of a round simulated whole, each block's at a phase of its own (block
    ``b`` of ``B`` at ``b / B`` of its code, :func:`_phase_cuts`), wrapping round to its
    start: in a launch of many waves the resident blocks have drifted apart, each at
    another point of the code, where blocks started together would load together,
    compute together and meet their barriers together round after round (a
    deterministic simulation never lets identical blocks drift). Every warp still issues
    its whole stream."""
    barrier = np.array([op.kind == K_BAR for op in table], bool)
    blocks = -(-len(streams) // warps_per_block)
    out = []
    for b in range(blocks):
        warps = [(np.asarray(p, np.int64), np.asarray(s, np.int64))
                 for p, s in streams[b * warps_per_block:(b + 1) * warps_per_block]]
        for (pcs, steps), k in zip(warps, _phase_cuts(warps, b / blocks, barrier)):
            out.append((np.concatenate([pcs[k:], pcs[:k]]).tolist(),
                        np.concatenate([steps[k:], steps[:k]]).tolist()))
    return out


def sample_streams(streams: list[tuple[np.ndarray, np.ndarray]],
                   budget: int = DEFAULT_BUDGET,
                   warps_per_block: int | None = None,
                   table: list[Op] | None = None) -> tuple[list, float]:
    """The streams to simulate (sampled in windows when longer than ``budget`` in all)
    and the factor that scales their time to the whole streams.

    With ``warps_per_block``, the round's blocks are sampled at phases spread over the
    spacing between windows (block ``b`` of ``B`` at ``b / B`` of it; a block's warps
    alike): over a launch of many waves the resident blocks drift apart and are not at
    the same point of their code at once, as blocks that would all start together in
    the sample would be. Streams simulated whole are then rotated to such phases
    (:func:`rotate_streams`, which needs the program's ``table``)."""
    total = sum(len(p) for p, _ in streams)
    if total <= budget:
        if warps_per_block and table is not None:
            return rotate_streams(streams, warps_per_block, table), 1.0
        return [(p.tolist(), s.tolist()) for p, s in streams], 1.0
    fraction = budget / total
    wpb = warps_per_block or len(streams)
    blocks = -(-len(streams) // wpb)
    cut = [_windows(np.asarray(p), np.asarray(s), fraction, (w // wpb) / blocks)
           for w, (p, s) in enumerate(streams)]
    done = sum(len(p) for p, _ in cut)
    return cut, total / done


def memory_keys(cut: list, source: list[int], table: list[Op]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``(traced warp, step, pc)`` of every memory request the sampled streams
    ``cut`` (as :func:`sample_streams` gives them) will issue, as three columns: the
    requests whose costs the simulation looks up."""
    mem = np.array([op.kind == K_MEM for op in table], bool)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for (pcs, steps), src in zip(cut, source):
        pcs_a = np.asarray(pcs, np.int64)
        hit = mem[pcs_a] if len(pcs_a) else np.zeros(0, bool)
        parts.append((np.full(int(hit.sum()), src, np.int64), np.asarray(steps, np.int64)[hit],
                      pcs_a[hit]))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return tuple(np.concatenate(col) for col in zip(*parts))  # type: ignore[return-value]


def simulate_round(streams: list[tuple[np.ndarray, np.ndarray]], table: list[Op], nregs: int,
                   costs: dict, machine: Machine, *, active_sms: int, warps_per_block: int,
                   l1_bytes: int, l2_share_bytes: int, source: list[int] | None = None,
                   stands_for: list[tuple[int, int]] | None = None, sharing=None,
                   budget: int = DEFAULT_BUDGET, sampled: tuple[list, float] | None = None,
                   generations: int = 1, wave: int = 0,
                   taken: list[np.ndarray] | None = None, waves: int = 1) -> RoundResult:
    """Simulate one SM's round: per warp, the pcs it issued and the step of each.

    ``source[w]`` names the traced warp whose memory requests warp ``w`` makes (warps
    of replicated blocks share their original's requests). ``sampled`` is what
    :func:`sample_streams` gave for these streams and ``budget``, if already known.

    With ``generations`` above one (streams simulated whole only), each block's slot
    takes the round's block ``wave`` blocks later in the grid as soon as it ends, that
    many times: blocks then drift apart as they do over a launch of many waves, one's
    barrier tree overlapping another's loads, and the result's ``cycles`` is the steady
    time of a round (the mean spacing of the generations' ends past the first) and
    ``lead`` what the first rounds take beyond it.

    ``taken[w]`` lists the steps after which warp ``w`` went on elsewhere than where
    they end: their branches were taken (:func:`kerncast.sim._predict.taken_steps`);
    without it no branch is. ``waves`` is how many rounds of these blocks
    the launch runs one after another on the SM (see :func:`_extrapolate`)."""
    cut, scale = sampled or sample_streams(streams, budget)
    generations = generations if scale == 1.0 and sharing is not None else 1
    warm = NONE_WARM if sharing is None else ALL_WARM if sharing.warm else sharing.restored
    caches = SMCaches(l1_bytes, l2_share_bytes, warm=warm)
    sim = _Sim(table, nregs, cut, costs, machine, active_sms, warps_per_block, caches, source,
               stands_for, sharing, generations, wave, taken)
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
        cycles = _extrapolate(sim, pace, streams, cut, scale, cycles, waves)
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
                 cycles: float, waves: int = 1) -> float:
    """The round's time when only a sample of each stream was simulated.

    The instructions not simulated run at the SM's steady pace (issue times between a
    quarter and three quarters of the sampled instructions), so that start-up latency
    and the drain count once; no warp finishes sooner than its own remaining
    instructions at its own steady pace allow (a long warp's dependent chain), a warp's
    pace being shared with the warps that progress alike (:func:`_shared_paces`); and no sooner
    than the busiest memory path needs for all the round's bytes.

    A block holds its slot until its last warp ends. Over a launch of ``waves`` rounds a
    slot takes its next block as soon as its block ends, so where the blocks' work
    differs (a data-dependent branch or loop), a round lasts the mean of its blocks' ends
    and the longest block's excess over that mean counts once over the launch: with
    ``waves`` of one, the longest block ends the round. branch_divergence's
    data-dependent pattern at size large on an H200, 16 waves of one-warp blocks: the
    longest of the round's blocks made the predicted time 1.6x the measured; with the
    blocks' mean, 1.16x (and 0.88x with a block traced for each of the round's)."""
    pace = _shared_paces(sim, pace, streams)
    done = sum(len(p) for p, _ in cut)
    total = sum(len(p) for p, _ in streams)
    first, last = sim.sm_marks
    t0, t1 = sim.sm_marked
    if last > first and t1 > t0:
        end = cycles + (total - done) * (t1 - t0) / (last - first)
    else:
        end = cycles * scale
    blocks: dict[int, float] = {}
    for w, ((full, _), (part, _)) in enumerate(zip(streams, cut)):
        rest = len(full) - len(part)
        own = sim.finish[w] + rest * pace[w] if rest > 0 and w in pace else sim.finish[w]
        blocks[sim.block_of[w]] = max(blocks.get(sim.block_of[w], 0.0), own)
    if blocks:
        ends = np.fromiter(blocks.values(), float)
        # over a launch of many waves a slot takes its next block when its block ends:
        # a round lasts its blocks' mean, and the slowest block's excess counts once
        end = max(end, ends.mean() + (ends.max() - ends.mean()) / max(waves, 1))
    memory = max(sim.dram.busy, sim.l2.busy, sim.busy[_LSU]) * scale
    return max(end, memory)
