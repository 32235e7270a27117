"""Warp traces of an emulated launch.

The emulator runs a *segment* (a straight run of instructions ``[pc0, pc1)``) for
a group of warps at a time; the trace records each such step (which warps, how
many active lanes each), every memory instruction's per-lane addresses, and
barrier arrivals. From these compact records it derives, on demand, each warp's
instruction stream (``(pc, active lanes)`` runs), per-class instruction counts,
and the per-lane memory accesses that the coalescing, bank-conflict and cache
analyses read.

Warps are numbered globally: warp ``w`` is warp ``w % warps_per_block`` of block
``w // warps_per_block`` (linear block index). Addresses are absolute for global
memory and relative to the space for the others (shared: the block's byte
offset; local: the thread's byte offset; const: the bank offset).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from kerncast.ptx import InstrClass

__all__ = ["Trace", "TraceBuilder", "WarpStream", "MemoryAccesses", "SPACES", "KINDS"]

SPACES = ("global", "shared", "local", "const", "param")
KINDS = ("load", "store", "atomic")
_SPACE_CODE = {name: k for k, name in enumerate(SPACES)}
_WINDOW_IDS = {"shared": 0x50, "local": 0x51, "const": 0x52, "param": 0x53}
_WINDOW_SHIFT = np.uint64(40)
# the window id of each space code (-1: global and other spaces have none)
_WINDOWED = np.array([_WINDOW_IDS.get(space, -1) for space in SPACES], np.int64)


@dataclass(frozen=True)
class WarpStream:
    """One warp's executed instructions, as runs of consecutive pcs.

    Run ``k`` covers pcs ``start[k]`` to ``end[k] - 1``, all with ``active[k]``
    active lanes; ``order[k]`` is its step number in the whole launch.
    """

    warp: int
    start: np.ndarray
    end: np.ndarray
    active: np.ndarray
    order: np.ndarray

    def pcs(self) -> np.ndarray:
        """Every issued instruction's pc, in order."""
        if len(self.start) == 0:
            return np.zeros(0, np.int64)
        lengths = self.end - self.start
        offsets = np.repeat(self.start - np.cumsum(lengths) + lengths, lengths)
        return offsets + np.arange(int(lengths.sum()))

    def lanes(self) -> np.ndarray:
        """Active lanes of every issued instruction, in order."""
        return np.repeat(self.active, self.end - self.start)

    @property
    def instructions(self) -> int:
        return int((self.end - self.start).sum())


@dataclass(frozen=True)
class MemoryAccesses:
    """Per-lane memory accesses, in execution order (one row per lane and access).

    ``event`` numbers the executed memory instructions (one per group step);
    ``request`` numbers warp-level requests (an event splits into one request per
    warp it covers); ``width`` is bytes per lane (a whole v2/v4 vector); ``step``
    is the segment execution the access belongs to.
    """

    event: np.ndarray
    request: np.ndarray
    pc: np.ndarray
    warp: np.ndarray
    lane: np.ndarray
    address: np.ndarray
    width: np.ndarray
    kind: np.ndarray
    space: np.ndarray
    step: np.ndarray

    def __len__(self) -> int:
        return len(self.event)

    def select(self, space: str | None = None, kind: str | None = None) -> MemoryAccesses:
        keep = np.ones(len(self.event), bool)
        if space is not None:
            keep &= self.space == _SPACE_CODE[space]
        if kind is not None:
            keep &= self.kind == KINDS.index(kind)
        return MemoryAccesses(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))


class TraceBuilder:
    """What the emulator calls while it runs; :meth:`finish` gives the :class:`Trace`."""

    def __init__(self, kernel: str, program, launch, memory_budget: int | None = None) -> None:
        self.kernel, self.launch, self.program = kernel, launch, program
        # Record the lanes' addresses only until this many have been recorded; the
        # instruction streams are always complete. ``memory_cutoff`` is then the first
        # step whose accesses are missing.
        self.memory_budget = memory_budget
        self.recorded = 0
        self.memory_cutoff: int | None = None
        items = program.items
        self.classes = tuple(InstrClass(i.instr.iclass) if i.kind == "op" else
                             _pseudo_class(i) for i in items)
        self.lines = np.array([i.line for i in items], np.int32)
        self.names = tuple(_name(i) for i in items)
        self.wpb = launch.warps_per_block
        self.batches: list[np.ndarray] = []
        self.seg = ([], [], [], [], [])  # pc0, pc1, batch, warps, counts
        self.mem: list[tuple] = []
        self.bar: list[tuple] = []
        self.skips: dict[int, int] = {}
        self.splits: dict[tuple[int, int], int] = {}

    def begin_batch(self, blocks: np.ndarray) -> None:
        self.batches.append(np.asarray(blocks, np.int64))

    def segment(self, pc: int, end: int, warps: np.ndarray, lanes) -> None:
        pc0, pc1, batch, ws, counts = self.seg
        pc0.append(pc)
        pc1.append(end)
        batch.append(len(self.batches) - 1)
        ws.append(warps)
        if lanes.full:
            counts.append(None)
        else:
            per = np.bincount(lanes.idx >> 5, minlength=int(warps[-1]) + 1)
            counts.append(per[warps])

    def memory(self, pc: int, sel, address, width: int, chunks, kind: int) -> None:
        if self.memory_cutoff is not None:
            return
        if self.memory_budget is not None:
            lanes = (sel.stop - sel.start) if isinstance(sel, slice) else len(sel)
            if self.recorded + lanes > self.memory_budget:
                self.memory_cutoff = len(self.seg[0]) - 1
                return
            self.recorded += lanes
        batch = len(self.batches) - 1
        if isinstance(address, np.ndarray) and address.base is not None:
            address = address.copy()  # a view of a register the kernel may change later
        step = len(self.seg[0])
        if len(chunks) == 1 and chunks[0][2] is None:
            self.mem.append((pc, batch, sel, address, width, chunks[0][3], kind, step))
            return
        idx = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else sel
        for _, _, pos, space in chunks:
            part = idx if pos is None else idx[pos]
            addr = address if pos is None else address[pos]
            self.mem.append((pc, batch, part, addr, width, space, kind, step))

    def branch(self, pc: int, warps: np.ndarray) -> None:
        """Warps that took a conditional branch with all their active lanes."""
        if len(warps):
            self.skips[pc] = self.skips.get(pc, 0) + len(warps)

    def split(self, pc: int, reconv: int, groups: int) -> None:
        """Warp executions of the branch at ``pc`` that split their lanes: ``groups``
        more paths than warps, to reconverge at ``reconv``."""
        key = (pc, reconv)
        self.splits[key] = self.splits.get(key, 0) + groups

    def barrier(self, pc: int, slots, warps, counts) -> None:
        self.bar.append((pc, len(self.batches) - 1, np.asarray(warps), np.asarray(counts)))

    def finish(self, steps: int, thread_steps: int) -> Trace:
        return Trace(self, steps, thread_steps)


def _pseudo_class(item) -> InstrClass:
    if item.kind in ("call", "noop", "trap"):
        return InstrClass.CONTROL
    if item.kind == "ret":
        return InstrClass.CONTROL
    return InstrClass.MOVE


def _name(item) -> str:
    if item.kind == "bind":
        return "mov(call binding)"
    return item.instr.name


class Trace:
    """The recorded execution of one emulated launch (see the module doc).

    Attributes
    ----------
    kernel : str
    grid, block : tuple of int
    warps_per_block : int
    blocks : numpy.ndarray
        Linear indices of the blocks that ran.
    classes : tuple of InstrClass
        The class of every pc of the (inlined) program.
    lines : numpy.ndarray
        PTX line of every pc.
    names : tuple of str
        Dotted instruction name of every pc (``ld.global.nc.f32``).
    steps, thread_steps : int
        Warp instructions and thread instructions executed.
    program : kerncast.emu.Program
        The (inlined) program the pcs index.
    """

    def __init__(self, b: TraceBuilder, steps: int, thread_steps: int) -> None:
        self.kernel, self.program = b.kernel, b.program
        self.grid, self.block = b.launch.grid, b.launch.block
        self.warps_per_block = b.wpb
        self.classes, self.lines, self.names = b.classes, b.lines, b.names
        self.steps, self.thread_steps = steps, thread_steps
        self.blocks = np.concatenate(b.batches) if b.batches else np.zeros(0, np.int64)
        self._batches = b.batches
        pc0, pc1, batch, warps, counts = b.seg
        self.step_pc0 = np.asarray(pc0, np.int64)
        self.step_pc1 = np.asarray(pc1, np.int64)
        sizes = np.array([len(w) for w in warps], np.int64)
        self.step_offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.step_batch = np.asarray(batch, np.int64)
        local = np.concatenate(warps) if warps else np.zeros(0, np.int64)
        owner = np.repeat(self.step_batch, sizes)
        self.step_warps = self._global_warps(owner, local)
        # a step's active lanes per warp: 32 where its lanes were all active (None)
        self.step_active = np.full(int(self.step_offsets[-1]), 32, np.int64)
        for i in [i for i, c in enumerate(counts) if c is not None]:
            self.step_active[self.step_offsets[i]:self.step_offsets[i + 1]] = counts[i]
        self._mem = b.mem
        self._bar = b.bar
        self.memory_cutoff = b.memory_cutoff
        """First step whose memory accesses were not recorded (None: all were)."""
        self.skipped = dict(b.skips)
        """Per conditional branch pc: warp executions that jumped with every active lane."""
        self.splits = dict(b.splits)
        """Per ``(branch pc, reconvergence pc)``: the extra paths its divergent warp
        executions made (one per warp split in two; an indirect branch to ``n``
        targets makes ``n - 1``); reconvergence -1 is the exit."""

    def _global_warps(self, batch: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Global warp ids of batch-local warp numbers."""
        wpb = self.warps_per_block
        if len(local) == 0 or not self._batches:
            return np.zeros(len(local), np.int64)
        sizes = np.array([len(b) for b in self._batches], np.int64)
        offsets = np.cumsum(sizes) - sizes
        blocks = np.concatenate(self._batches)
        slot = np.asarray(local, np.int64) // wpb
        return blocks[offsets[np.asarray(batch, np.int64)] + slot] * wpb + \
            np.asarray(local, np.int64) % wpb

    # -- instruction streams -------------------------------------------------------

    @property
    def warps(self) -> np.ndarray:
        """Global ids of every warp that executed at least one instruction."""
        return np.unique(self.step_warps)

    def warp(self, warp: int) -> WarpStream:
        """The instruction stream of one warp (by global id)."""
        rows = np.flatnonzero(self.step_warps == warp)
        step = np.searchsorted(self.step_offsets, rows, side="right") - 1
        return WarpStream(warp, self.step_pc0[step], self.step_pc1[step],
                          self.step_active[rows], step)

    def streams(self) -> dict[int, WarpStream]:
        """Every warp's stream (derived in one pass, once)."""
        return dict(self._streams)

    @cached_property
    def row_steps(self) -> np.ndarray:
        """The step each row of ``step_warps`` belongs to."""
        return np.repeat(np.arange(len(self.step_pc0)), np.diff(self.step_offsets))

    @cached_property
    def _streams(self) -> dict[int, WarpStream]:
        step = self.row_steps
        order = self.warp_order
        warps = self.step_warps[order]
        bounds = np.flatnonzero(np.diff(warps)) + 1
        out = {}
        for rows in np.split(order, bounds):
            if len(rows):
                s = step[rows]
                out[int(self.step_warps[rows[0]])] = WarpStream(
                    int(self.step_warps[rows[0]]), self.step_pc0[s], self.step_pc1[s],
                    self.step_active[rows], s)
        return out

    def _class_table(self) -> tuple[list[InstrClass], np.ndarray]:
        kinds = sorted(set(self.classes), key=lambda c: c.value)
        table = np.zeros((len(kinds), len(self.classes) + 1), np.int64)
        for k, kind in enumerate(kinds):
            hits = np.array([c == kind for c in self.classes], np.int64)
            table[k, 1:] = np.cumsum(hits)
        return kinds, table

    @cached_property
    def warp_order(self) -> np.ndarray:
        """The rows of ``step_warps`` ordered by warp, each warp's in issue order (a
        stable sort: by radix where the warp ids fit 16 bits)."""
        warps = self.step_warps
        if len(warps) and 0 <= warps.min() and warps.max() < 1 << 16:
            warps = warps.astype(np.uint16)
        return np.argsort(warps, kind="stable")

    @cached_property
    def pc_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Executions of every pc: (warp-level, thread-level) arrays."""
        n = len(self.classes)
        warp_delta = np.zeros(n + 1, np.int64)
        thread_delta = np.zeros(n + 1, np.int64)
        nw = np.diff(self.step_offsets)
        lanes = np.add.reduceat(self.step_active, self.step_offsets[:-1]) if len(nw) else nw
        lanes = np.where(nw > 0, lanes, 0)
        np.add.at(warp_delta, self.step_pc0, nw)
        np.add.at(warp_delta, self.step_pc1, -nw)
        np.add.at(thread_delta, self.step_pc0, lanes)
        np.add.at(thread_delta, self.step_pc1, -lanes)
        return np.cumsum(warp_delta)[:n], np.cumsum(thread_delta)[:n]

    def instruction_counts(self) -> dict[InstrClass, tuple[int, int]]:
        """``{class: (warp instructions, thread instructions)}`` executed."""
        warp, thread = self.pc_counts
        out: dict[InstrClass, list[int]] = {}
        for pc, cls in enumerate(self.classes):
            entry = out.setdefault(cls, [0, 0])
            entry[0] += int(warp[pc])
            entry[1] += int(thread[pc])
        return {k: (v[0], v[1]) for k, v in out.items() if v[0]}

    # -- memory --------------------------------------------------------------------

    @cached_property
    def memory(self) -> MemoryAccesses:
        """Every lane's memory access, flattened (see :class:`MemoryAccesses`)."""
        if not self._mem:
            empty = np.zeros(0, np.int64)
            return MemoryAccesses(empty, empty, empty, empty, empty.astype(np.uint8),
                                  empty.astype(np.uint64), empty, empty.astype(np.int8),
                                  empty.astype(np.int8), empty)
        events = self._mem
        lanes, counts = _event_lanes([e[2] for e in events])
        address_list = []
        for (_, _, _, address, _, _, _, _), count in zip(events, counts.tolist()):
            if not isinstance(address, np.ndarray) or address.dtype != np.uint64:
                address = np.asarray(address, np.uint64)
            if address.shape != (count,):  # one address for every lane
                address = np.full(count, address.reshape(-1)[0], np.uint64) \
                    if address.size == 1 else np.broadcast_to(address, (count,))
            address_list.append(address)
        per_event = {
            "event": np.arange(len(events), dtype=np.int64),
            "pc": np.fromiter((e[0] for e in events), np.int64, len(events)),
            "batch": np.fromiter((e[1] for e in events), np.int64, len(events)),
            "width": np.fromiter((e[4] for e in events), np.int64, len(events)),
            "space": np.fromiter((_SPACE_CODE[e[5]] for e in events), np.int8, len(events)),
            "kind": np.fromiter((e[6] for e in events), np.int8, len(events)),
            "step": np.fromiter((e[7] for e in events), np.int64, len(events)),
        }
        address = np.concatenate(address_list)
        _unwindow(address, per_event["space"], counts)
        flat = {k: np.repeat(v, counts) for k, v in per_event.items()}
        flat["address"] = address
        warp = self._global_warps(flat.pop("batch"), lanes >> 5)
        # rows are in event order and, within an event, in lane (so warp) order: a
        # request is a run of rows with the same event and warp
        event = flat["event"]
        change = np.ones(len(event), bool)
        change[1:] = (event[1:] != event[:-1]) | (warp[1:] != warp[:-1])
        request = np.cumsum(change) - 1
        return MemoryAccesses(flat["event"], request, flat["pc"], warp,
                              (lanes & 31).astype(np.uint8), flat["address"], flat["width"],
                              flat["kind"], flat["space"], flat["step"])

    @property
    def barriers(self) -> list[tuple[int, int, int]]:
        """Barrier arrivals: ``(pc, global warp, threads arrived)`` in order."""
        out = []
        for pc, batch, warps, counts in self._bar:
            glob = self._global_warps(np.full(len(warps), batch), warps)
            out += [(pc, int(w), int(c)) for w, c in zip(glob, counts)]
        return out

    def totals(self) -> dict[str, int]:
        """Per-kernel totals comparable with Nsight Compute (see :func:`kernel_totals`)."""
        from kerncast.trace._totals import kernel_totals

        return kernel_totals(self)

    def __repr__(self) -> str:
        return (f"Trace({self.kernel}: {len(self.blocks)} blocks, {self.steps} warp "
                f"instructions, {len(self._mem)} memory instructions)")


def _event_lanes(sels: list) -> tuple[np.ndarray, np.ndarray]:
    """The lanes of every memory event, flattened, and each event's lane count; an
    event's lanes are a slice (a contiguous run) or an index array."""
    if all(type(sel) is slice for sel in sels):
        starts = np.fromiter((sel.start for sel in sels), np.int64, len(sels))
        counts = np.fromiter((sel.stop for sel in sels), np.int64, len(sels)) - starts
        first = np.cumsum(counts) - counts  # where each event's lanes begin
        return np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(first - starts,
                                                                          counts), counts
    parts = [np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)
             for sel in sels]
    counts = np.fromiter((len(p) for p in parts), np.int64, len(parts))
    return (np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)), counts


def _unwindow(address: np.ndarray, space: np.ndarray, counts: np.ndarray) -> None:
    """Make the shared, local, const and param addresses of each event window-relative
    (in place) where its first lane's address lies in its space's window."""
    window = _WINDOWED[space]
    first = np.cumsum(counts) - counts
    has = (window >= 0) & (counts > 0)
    if not has.any():
        return
    inside = np.zeros(len(counts), bool)
    inside[has] = (address[first[has]] >> _WINDOW_SHIFT).astype(np.int64) == window[has]
    if inside.any():
        rows = np.repeat(inside, counts)
        address[rows] -= (np.repeat(window, counts)[rows].astype(np.uint64) << _WINDOW_SHIFT)
