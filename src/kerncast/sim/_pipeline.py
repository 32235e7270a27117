"""The warp-pipeline simulation of one round of resident blocks on one SM.

Event-driven, as the static-analysis seed's pipeline, extended for Hopper-class SMs:

* each warp belongs to one of the SM's schedulers (warp ``i`` of the SM to scheduler
  ``i mod schedulers``); a scheduler issues at most one instruction per cycle, and
  an instruction occupies its pipe (ALU, FMA, FP64, SFU, conversion/shuffle) for
  ``warp size / (results per clock per scheduler)`` cycles;
* a warp issues in order; an instruction waits for the registers it reads (a
  scoreboard over the PTX registers, each ready at its producer's issue time plus
  the class latency, or the memory latency);
* memory requests go through the SM's load/store path (one cycle per 128-byte line,
  one per shared-memory wavefront) and then to the L1, the L2 or DRAM (see
  ``_memory``): their latency is the calibrated hit latency of the farthest level
  they reach, plus the queueing delay of this SM's fair share of the L2 and DRAM
  bandwidth (the GPU's achieved bandwidth divided among the SMs in use); stores and
  reductions do not stall the warp but take their bandwidth;
* ``bar.sync`` holds a block's warps until all its live warps have arrived, then
  releases them after the calibrated barrier cost.

Long streams are simulated over a prefix of every warp (the same fraction for all)
and extrapolated by that fraction; the result says so.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from kerncast.ptx import InstrClass, read_registers, written_registers
from kerncast.sim._machine import PIPES, Machine
from kerncast.sim._memory import RequestCost
from kerncast.trace import KINDS, SPACES

__all__ = ["RoundResult", "build_table", "simulate_round"]

_MEM_CLASSES = {
    InstrClass.LD_GLOBAL, InstrClass.ST_GLOBAL, InstrClass.LD_SHARED, InstrClass.ST_SHARED,
    InstrClass.LD_LOCAL, InstrClass.ST_LOCAL, InstrClass.LD_GENERIC, InstrClass.ST_GENERIC,
    InstrClass.ATOMIC_GLOBAL, InstrClass.ATOMIC_SHARED, InstrClass.ATOMIC_GENERIC,
}
_FAST_LOADS = {InstrClass.LD_PARAM: 4.0, InstrClass.ST_PARAM: 1.0, InstrClass.LD_CONST: 20.0}
K_ALU, K_MEM, K_BAR = 0, 1, 2
_SHARED, _CONST, _ATOMIC = SPACES.index("shared"), SPACES.index("const"), KINDS.index("atomic")
_CACHED = (SPACES.index("global"), SPACES.index("local"))
_LSU = PIPES.index("lsu")
DEFAULT_BUDGET = 400_000


@dataclass(frozen=True)
class Op:
    """One pc of the program, as the pipeline sees it."""

    kind: int
    pipe: int
    issue: float
    slots: int
    latency: float
    srcs: tuple[int, ...]
    dsts: tuple[int, ...]


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
        return Op(K_ALU, PIPES.index(machine.pipe_of[key]), machine.issue[key] * slots, slots,
                  machine.latency[key] * (1 + 0.5 * (slots - 1)), srcs, dsts)
    return Op(K_ALU, PIPES.index("ctrl"), 1.0, 1, 2.0, srcs, dsts)


def build_table(program, machine: Machine) -> tuple[list[Op], int]:
    """One :class:`Op` per pc of the emulator's program, and the register count."""
    ids: dict[str, int] = {}
    table = [_op(item, machine, ids) for item in program.items]
    return table, len(ids)


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


class _Sim:
    """State of one simulated round (see the module docstring)."""

    def __init__(self, table, nregs, streams, costs, machine: Machine, active_sms: int,
                 warps_per_block: int):
        self.table, self.costs, self.m = table, costs, machine
        self.streams = streams
        n = len(streams)
        self.pos = [0] * n
        self.ready = [[0.0] * nregs for _ in range(n)]
        sched = machine.schedulers
        self.sched_of = [i % sched for i in range(n)]
        self.sched_free = [0.0] * sched
        self.pipe_free = [[0.0] * len(PIPES) for _ in range(sched)]
        self.busy = [0.0] * len(PIPES)
        self.lsu_free = 0.0
        share = 1.0 / max(active_sms, 1)
        self.dram = _Bandwidth(machine.dram_bytes_per_cycle() * share)
        self.l2 = _Bandwidth(min(machine.l2_bytes_per_cycle() * share, 64.0))
        self.block_of = [w // warps_per_block for w in range(n)]
        self.waiting: dict[int, list[tuple[int, float]]] = {}
        self.live = {}
        for b in self.block_of:
            self.live[b] = self.live.get(b, 0) + 1
        self.finish = [0.0] * n
        self.barrier_wait = 0.0
        self.bar_cost = machine.barrier_cycles(warps_per_block)
        self.lat = (machine.l1_latency, machine.l2_latency, machine.dram_latency,
                    machine.shared_latency, machine.atomic_latency)

    def memory(self, w: int, pc: int, step: int, now: float) -> tuple[float, float]:
        """(latency seen by the warp, cycles the load/store path is held)."""
        cost: RequestCost | None = self.costs.get((w, step, pc))
        if cost is None:  # predicated off in every lane: issued, nothing moves
            return 1.0, 1.0
        l1, l2, dram, shared, atomic = self.lat
        if cost.space == _CONST:
            return 20.0, 1.0
        if cost.space == _SHARED:
            return shared + cost.wavefronts - 1, float(cost.wavefronts)
        if cost.space not in _CACHED:
            return 4.0, 1.0
        hold = max(1.0, cost.sectors / 4.0)
        delay = 0.0
        if cost.l2 or cost.dram:
            delay = self.l2.transfer(now, 32.0 * (cost.l2 + cost.dram))
        if cost.dram:
            delay = max(delay, self.dram.transfer(now, 32.0 * cost.dram))
        if cost.kind == _ATOMIC:
            base = atomic
        elif cost.dram:
            base = dram
        elif cost.l2:
            base = l2
        else:
            base = l1
        return base + delay, hold

    def run(self) -> float:
        heap = [(0.0, w) for w in range(len(self.streams))]
        heapq.heapify(heap)
        table, pos, streams = self.table, self.pos, self.streams
        while heap or self.waiting:
            if not heap:  # only barrier waiters left: the emulator ran them, release
                for b in list(self.waiting):
                    self._release(b, heap)
                continue
            t, w = heapq.heappop(heap)
            pcs, steps = streams[w]
            i = pos[w]
            if i >= len(pcs):
                self._finish(w, t, heap)
                continue
            pc = pcs[i]
            op = table[pc]
            ready = self.ready[w]
            deps = max((ready[r] for r in op.srcs), default=0.0)
            s = self.sched_of[w]
            start = max(t, deps, self.sched_free[s], self.pipe_free[s][op.pipe])
            if op.kind == K_MEM:
                start = max(start, self.lsu_free)
            if start > t:
                heapq.heappush(heap, (start, w))
                continue
            self.sched_free[s] = t + op.slots
            self.pipe_free[s][op.pipe] = t + op.issue
            self.busy[op.pipe] += op.issue
            pos[w] = i + 1
            if op.kind == K_MEM:
                latency, hold = self.memory(w, pc, steps[i], t)
                self.lsu_free = t + hold
                self.busy[_LSU] += hold
                for r in op.dsts:
                    ready[r] = t + latency
                heapq.heappush(heap, (t + 1.0, w))
            elif op.kind == K_BAR:
                self._arrive(w, t + 1.0, heap)
            else:
                done = t + op.latency
                for r in op.dsts:
                    ready[r] = done
                heapq.heappush(heap, (t + 1.0, w))
        return max(self.finish) if self.finish else 0.0

    def _arrive(self, w: int, t: float, heap) -> None:
        b = self.block_of[w]
        arrived = self.waiting.setdefault(b, [])
        arrived.append((w, t))
        if len(arrived) >= self.live[b]:
            self._release(b, heap)

    def _release(self, b: int, heap) -> None:
        arrived = self.waiting.pop(b, [])
        if not arrived:
            return
        go = max(t for _, t in arrived) + self.bar_cost
        for w, t in arrived:
            self.barrier_wait += go - t
            heapq.heappush(heap, (go, w))

    def _finish(self, w: int, t: float, heap) -> None:
        self.finish[w] = max(t, max(self.ready[w], default=0.0))
        b = self.block_of[w]
        self.live[b] -= 1
        if self.waiting.get(b) and len(self.waiting[b]) >= self.live[b]:
            self._release(b, heap)


def _prefix(streams: list[tuple[np.ndarray, np.ndarray]], budget: int) -> tuple[list, float]:
    total = sum(len(p) for p, _ in streams)
    if total <= budget:
        return [(p.tolist(), s.tolist()) for p, s in streams], 1.0
    fraction = budget / total
    cut = [(p[: max(1, int(len(p) * fraction))], s[: max(1, int(len(s) * fraction))])
           for p, s in streams]
    done = sum(len(p) for p, _ in cut)
    return [(p.tolist(), s.tolist()) for p, s in cut], total / done


def simulate_round(streams: list[tuple[np.ndarray, np.ndarray]], table: list[Op], nregs: int,
                   costs: dict, machine: Machine, *, active_sms: int, warps_per_block: int,
                   budget: int = DEFAULT_BUDGET) -> RoundResult:
    """Simulate one SM's round: per warp, the pcs it issued and the step of each."""
    cut, scale = _prefix(streams, budget)
    sim = _Sim(table, nregs, cut, costs, machine, active_sms, warps_per_block)
    cycles = sim.run() * scale
    busy = {name: sim.busy[i] * scale / machine.schedulers if name != "lsu" else sim.busy[i] * scale
            for i, name in enumerate(PIPES)}
    return RoundResult(cycles=cycles, instructions=sum(len(p) for p, _ in streams), scale=scale,
                       busy=busy, barrier_wait=sim.barrier_wait * scale,
                       dram_bytes=sim.dram.bytes * scale, l2_bytes=sim.l2.bytes * scale)
