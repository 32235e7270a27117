"""The SIMT machine: warps, reconvergence stacks, grouping, barriers and exits.

Every warp has a reconvergence stack as in GPGPU-Sim: its top entry is the warp's
current ``(pc, reconvergence pc, lane mask)`` (kept in the arrays ``wpc``,
``wrpc`` and ``active``), the entries below wait in ``stacks[w]``. A divergent
branch replaces the top by a reconvergence entry at the branch's immediate
post-dominator (unless the top already reconverges there) and pushes one entry
per path, lowest pc on top; an entry is popped when its pc reaches its
reconvergence pc, or when its lanes have all exited.

Scheduling: each step picks the lowest pc any warp stands at and runs that pc's
segment once for *all* warps standing there, over the union of their active lanes
(one NumPy call per instruction). Lowest-pc-first keeps warps together: warps
that fall behind catch up, and warps that took a short path wait at the
reconvergence point for the others. A fully converged group is a plain slice of
the lane arrays (no gather, no scatter, results written in place).
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._errors import Deadlock, KernelTrap, StepBudgetExceeded
from kerncast.emu._lanes import Lanes
from kerncast.emu._program import EXIT_PC, Program
from kerncast.ptx import Imm

__all__ = ["Segment", "Scheduler", "DONE", "WAIT"]

DONE = 1 << 40
WAIT = 1 << 41
FALL, BRANCH, MULTI, EXIT, BARRIER, TRAP = range(6)


class Segment:
    """A straight run of instructions ``[start, end)`` and how it ends."""

    __slots__ = ("start", "end", "fns", "length", "term", "term_pc", "targets", "get_pred",
                 "reconv", "extra")

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end, self.length = start, end, end - start
        self.fns: list = []
        self.term, self.term_pc, self.targets = FALL, end - 1, (end,)
        self.get_pred = None
        self.reconv = EXIT_PC
        self.extra = None


class Scheduler:
    """Runs batches of blocks on one :class:`Machine`'s lanes (see the module doc)."""

    def __init__(self, machine) -> None:
        self.m = machine
        lanes = machine.max_lanes
        warps = lanes // 32
        self.ids = np.arange(lanes, dtype=np.int64)
        self.wpc = np.full(warps, DONE, np.int64)
        self.wrpc = np.full(warps, EXIT_PC, np.int64)
        self.wresume = np.zeros(warps, np.int64)
        self.wbar = np.zeros(warps, np.int64)
        self.wbar_id = np.zeros(warps, np.int64)
        self.active = np.zeros(lanes, bool)
        self.alive = np.zeros(lanes, bool)
        self.stacks: list[list] = [[] for _ in range(warps)]
        self.warps = warps
        self.wpb = machine.launch.warps_per_block
        self.tpad = machine.launch.padded_threads
        self.slot_of_warp = np.arange(warps) // self.wpb
        slots = max(warps // self.wpb, 1)
        self.block_alive = np.zeros(slots, np.int64)
        self.arrived = np.zeros((slots, 16), np.int64)
        self.expected = np.zeros((slots, 16), np.int64)
        self.reductions: dict[tuple[int, int], list] = {}
        self.nprog = len(machine.program)

    # -- batch set-up --------------------------------------------------------------

    def start(self, valid: np.ndarray) -> None:
        """Reset the warps for a batch; ``valid`` marks the lanes that are real threads."""
        self.alive[:] = valid
        self.active[:] = valid
        has = valid.reshape(-1, 32).any(axis=1)
        self.wpc[:] = np.where(has, 0, DONE)
        self.wrpc[:] = EXIT_PC
        for stack in self.stacks:
            stack.clear()
        self.block_alive[:] = valid.reshape(-1, self.tpad).sum(axis=1)
        self.arrived[:] = 0
        self.expected[:] = 0
        self.reductions.clear()

    # -- the loop ------------------------------------------------------------------

    def run(self) -> None:
        m = self.m
        wpc = self.wpc
        segments = m.segments
        record = m.record_segment
        budget = m.step_budget
        while True:
            pc = int(wpc.min())
            if pc >= DONE:
                if (wpc == WAIT).any():
                    self._deadlock()
                return
            at = wpc == pc
            warps = np.flatnonzero(at)
            lanes = self._lanes(warps, at)
            seg = segments[pc]
            for fn in seg.fns:
                fn(lanes)
            m.steps += len(warps) * seg.length
            m.thread_steps += lanes.n * seg.length
            if m.steps > budget:
                raise StepBudgetExceeded(
                    f"kernel {m.program.kernel.name} did not finish within {budget} "
                    "warp-instruction steps; raise step_budget if it is meant to run longer")
            if record is not None:
                record(pc, seg.end, warps, lanes)
            self._finish(seg, warps, lanes)

    def _lanes(self, warps: np.ndarray, at: np.ndarray) -> Lanes:
        w0, w1 = int(warps[0]), int(warps[-1]) + 1
        lo, hi = w0 << 5, w1 << 5
        act = self.active[lo:hi]
        if len(warps) == w1 - w0:
            if act.all():
                return Lanes(slice(lo, hi), self.ids, None, hi - lo)
            mask = act.copy()
        else:
            mask = act & np.repeat(at[w0:w1], 32)
        n = int(np.count_nonzero(mask))
        if n * 4 >= hi - lo:
            return Lanes(slice(lo, hi), self.ids, mask, n)
        return Lanes(np.flatnonzero(mask) + lo, self.ids, None, n)

    # -- segment ends --------------------------------------------------------------

    def _finish(self, seg: Segment, warps: np.ndarray, lanes: Lanes) -> None:
        term = seg.term
        if term == FALL:
            self.move(warps, seg.end)
        elif term == BRANCH:
            if seg.get_pred is None:
                self.move(warps, seg.targets[0])
            else:
                self._branch(seg, warps, lanes)
        elif term == EXIT:
            self._exit(seg, warps, lanes)
        elif term == BARRIER:
            self.m.barrier(seg, warps, lanes)
        elif term == MULTI:
            self._multi(seg, warps, lanes)
        else:
            self._trap(seg, lanes)

    def move(self, warps: np.ndarray, pc: int) -> None:
        """Send whole warps (their top entries) to ``pc``; pop those that reconverge."""
        if len(warps) == 0:
            return
        if pc >= self.nprog:
            self.kill(np.flatnonzero(np.repeat(np.isin(np.arange(self.warps), warps), 32)
                                     & self.active))
            return
        self.wpc[warps] = pc
        hit = warps[self.wrpc[warps] == pc]
        for w in hit.tolist():
            self._pop(w)

    def _branch(self, seg: Segment, warps: np.ndarray, lanes: Lanes) -> None:
        idx = lanes.idx
        taken = np.broadcast_to(np.asarray(seg.get_pred(idx), bool), idx.shape)
        count = int(np.count_nonzero(taken))
        target, fall = seg.targets[0], seg.end
        if count == lanes.n:
            self.move(warps, target)
            return
        if count == 0:
            self.move(warps, fall)
            return
        where = idx >> 5
        yes = np.bincount(where, weights=taken, minlength=self.warps)[warps]
        total = np.bincount(where, minlength=self.warps)[warps]
        self.move(warps[yes == total], target)
        self.move(warps[yes == 0], fall)
        split = warps[(yes > 0) & (yes < total)]
        if len(split):
            chosen = np.zeros(len(self.active), np.int8)
            chosen[idx] = np.where(taken, 1, 2)
            for w in split.tolist():
                row = chosen[w << 5:(w + 1) << 5]
                self.diverge(w, [(target, row == 1), (fall, row == 2)], seg.reconv)

    def _multi(self, seg: Segment, warps: np.ndarray, lanes: Lanes) -> None:
        """brx.idx: one path per target index value."""
        idx = lanes.idx
        index = np.broadcast_to(np.asarray(seg.get_pred(idx), np.int64), idx.shape)
        targets = seg.targets
        if (index < 0).any() or (index >= len(targets)).any():
            bad = int(np.flatnonzero((index < 0) | (index >= len(targets)))[0])
            self.m.fail_lane(seg.term_pc, int(idx[bad]),
                             f"brx.idx index {int(index[bad])} is outside its "
                             f"{len(targets)}-entry table")
        chosen = np.full(len(self.active), -1, np.int64)
        chosen[idx] = index
        for w in warps.tolist():
            row = chosen[w << 5:(w + 1) << 5]
            values = np.unique(row[row >= 0])
            if len(values) == 1:
                self.move(np.array([w]), targets[int(values[0])])
            else:
                self.diverge(w, [(targets[int(v)], row == v) for v in values], seg.reconv)

    def diverge(self, w: int, paths: list, reconv: int) -> None:
        """Split warp ``w`` over ``paths`` [(pc, lane mask)] reconverging at ``reconv``."""
        stack = self.stacks[w]
        lo, hi = w << 5, (w + 1) << 5
        if reconv != self.wrpc[w]:
            stack.append((reconv, int(self.wrpc[w]), self.active[lo:hi].copy()))
        merged: dict[int, np.ndarray] = {}
        for pc, mask in paths:
            if pc != reconv and mask.any():
                merged[pc] = merged[pc] | mask if pc in merged else mask
        if not merged:
            self._pop(w)
            return
        order = sorted(merged, reverse=True)
        for pc in order[:-1]:
            stack.append((pc, reconv, merged[pc]))
        top = order[-1]
        self.wpc[w] = top
        self.wrpc[w] = reconv
        self.active[lo:hi] = merged[top]
        if top >= self.nprog:
            self.kill(np.flatnonzero(merged[top]) + lo)

    def _pop(self, w: int) -> None:
        stack = self.stacks[w]
        lo, hi = w << 5, (w + 1) << 5
        alive = self.alive[lo:hi]
        while stack:
            pc, rpc, mask = stack.pop()
            mask = mask & alive
            if pc == rpc or not mask.any():
                continue
            if pc == EXIT_PC:
                self.m.internal(f"warp {w} reconverged at the exit with live lanes")
            self.wpc[w], self.wrpc[w] = pc, rpc
            self.active[lo:hi] = mask
            if pc >= self.nprog:
                self.kill(np.flatnonzero(mask) + lo)
            return
        self.wpc[w] = DONE
        self.active[lo:hi] = False

    # -- exits ---------------------------------------------------------------------

    def _exit(self, seg: Segment, warps: np.ndarray, lanes: Lanes) -> None:
        idx = lanes.idx
        if seg.get_pred is None:
            self.kill(idx)
            return
        leaving = np.broadcast_to(np.asarray(seg.get_pred(idx), bool), idx.shape)
        staying = np.unique(idx[~leaving] >> 5)
        self.kill(idx[leaving])
        self.move(staying, seg.end)

    def kill(self, idx: np.ndarray) -> None:
        """Lanes ``idx`` exit: drop them from every stack entry; pop emptied warps."""
        if len(idx) == 0:
            return
        self.alive[idx] = False
        self.active[idx] = False
        slots = idx // self.tpad
        self.block_alive -= np.bincount(slots, minlength=len(self.block_alive))
        for w in np.unique(idx >> 5).tolist():
            if not self.active[w << 5:(w + 1) << 5].any() and self.wpc[w] < DONE:
                self._pop(w)
        for slot in np.unique(slots).tolist():
            self.m.check_barriers(slot)

    def _trap(self, seg: Segment, lanes: Lanes) -> None:
        lane = int(lanes.idx[0])
        why = seg.extra or "executed trap"
        raise KernelTrap(self.m.describe(seg.term_pc, lane, why))

    def _deadlock(self) -> None:
        waiting = np.flatnonzero(self.wpc == WAIT)
        w = int(waiting[0])
        slot, bid = int(self.slot_of_warp[w]), int(self.wbar_id[w])
        item = self.m.program.items[int(self.wbar[w])]
        expected = int(self.expected[slot, bid]) or int(self.block_alive[slot])
        block = self.m.block_of_slot(slot)
        raise Deadlock(
            f"kernel {self.m.program.kernel.name} deadlocked: block {block} waits at barrier "
            f"{bid} ('{item.instr}', PTX line {item.line}) with {int(self.arrived[slot, bid])} "
            f"of {expected} threads arrived; the other threads ended or wait elsewhere, so "
            "every thread of the block must reach the same barrier")


def barrier_ids(seg: Segment, access, frame) -> tuple:
    """Getters of a barrier instruction's id, thread count and (bar.red) predicate."""
    ins = seg.extra
    ops = ins.operands
    mode = ins.mode or "sync"
    if mode == "red":
        dest, rest = ops[0], ops[1:]
    else:
        dest, rest = None, ops
    if not rest:
        get_id = (lambda sl: 0)
    elif isinstance(rest[0], Imm):
        value = int(rest[0].value)
        get_id = (lambda sl: value)
    else:
        get_id = access.src(frame, rest[0], "u32")
    get_count = None
    pred = None
    tail = list(rest[1:])
    if mode == "red":
        pred = access.pred(frame, tail.pop())
    if tail:
        get_count = (lambda sl, v=int(tail[0].value): v) if isinstance(tail[0], Imm) else \
            access.src(frame, tail[0], "u32")
    return mode, dest, get_id, get_count, pred
