"""The SIMT machine: warps, reconvergence stacks, grouping, barriers and exits.

Every warp has a reconvergence stack as in GPGPU-Sim: its top entry is the warp's
current ``(pc, reconvergence pc, lane mask)`` (kept in the arrays ``wpc``,
``wrpc`` and ``wmask``, masks as 32-bit integers), the entries below in the
``[warps, depth]`` arrays ``spc``, ``srpc`` and ``smask``, so that pushes, pops
and exits run vectorised over every warp that takes them. A divergent branch
replaces the top by a reconvergence entry at the branch's immediate
post-dominator (unless the top already reconverges there) and pushes one entry
per path, lowest pc on top; an entry is popped when its pc reaches its
reconvergence pc, or when its lanes have all exited.

Barriers count warps: a warp arrives when its top entry's lanes execute the
barrier, and the barrier completes when every warp of the block with live lanes
has arrived. (Lanes that returned early wait at their branch's reconvergence point
until their warp's other lanes get there, so counting threads would deadlock the
common ``if (i >= n) return; ... __syncthreads();``.)

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
from kerncast.emu._program import EXIT_PC
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


_FULL = np.uint32(0xFFFFFFFF)


def unpack(masks: np.ndarray) -> np.ndarray:
    """Per-lane booleans of per-warp 32-bit lane masks."""
    return np.unpackbits(np.ascontiguousarray(masks, np.uint32).view(np.uint8),
                         bitorder="little").view(bool)


def pack(lanes: np.ndarray) -> np.ndarray:
    """Per-warp 32-bit masks of per-lane booleans (a multiple of 32 of them)."""
    return np.packbits(np.ascontiguousarray(lanes).reshape(-1, 32), axis=1,
                       bitorder="little").view(np.uint32).ravel()


def lane_bits(idx: np.ndarray, warps: int) -> np.ndarray:
    """Per-warp masks with the bits of lanes ``idx`` set."""
    flags = np.zeros(warps * 32, bool)
    flags[idx] = True
    return pack(flags)


class Scheduler:
    """Runs batches of blocks on one :class:`Machine`'s lanes (see the module doc).

    The top stack entry of warp ``w`` is ``(wpc[w], wrpc[w], wmask[w])``; the
    entries below are ``spc/srpc/smask[w, :depth[w]]``. Masks are 32-bit lane masks,
    so stack operations run vectorised over all warps that take them.
    """

    def __init__(self, machine) -> None:
        self.m = machine
        lanes = machine.max_lanes
        warps = lanes // 32
        self.ids = np.arange(lanes, dtype=np.int64)
        self.wpc = np.full(warps, DONE, np.int64)
        self.wrpc = np.full(warps, EXIT_PC, np.int64)
        self.wmask = np.zeros(warps, np.uint32)
        self.walive = np.zeros(warps, np.uint32)
        self.depth = np.zeros(warps, np.int64)
        self.spc = np.zeros((warps, 4), np.int64)
        self.srpc = np.zeros((warps, 4), np.int64)
        self.smask = np.zeros((warps, 4), np.uint32)
        self.wresume = np.zeros(warps, np.int64)
        self.wbar = np.zeros(warps, np.int64)
        self.wbar_id = np.zeros(warps, np.int64)
        self.warps = warps
        self.wpb = machine.launch.warps_per_block
        self.tpad = machine.launch.padded_threads
        self.slot_of_warp = np.arange(warps) // self.wpb
        slots = max(warps // self.wpb, 1)
        self.block_alive = np.zeros(slots, np.int64)
        self.block_warps = np.zeros(slots, np.int64)
        self.arrived = np.zeros((slots, 16), np.int64)
        self.expected = np.zeros((slots, 16), np.int64)
        self.reductions: dict[tuple[int, int], list] = {}
        # steps each block of the batch took, where blocks have a budget of their own
        self.slot_steps = np.zeros(slots, np.int64)
        self.nprog = len(machine.program)
        self.moved: tuple | None = None  # (warps, pc) of the last move that popped nothing
        # whether a warp's top entry may reconverge before the exit (else no move pops)
        self.nested = False

    # -- batch set-up --------------------------------------------------------------

    def start(self, valid: np.ndarray) -> None:
        """Reset the warps for a batch; ``valid`` marks the lanes that are real threads."""
        masks = pack(valid)
        self.wmask[:] = masks
        self.walive[:] = masks
        self.wpc[:] = np.where(masks != 0, 0, DONE)
        self.wrpc[:] = EXIT_PC
        self.depth[:] = 0
        self.block_alive[:] = valid.reshape(-1, self.tpad).sum(axis=1)
        self.block_warps[:] = (masks != 0).reshape(-1, self.wpb).sum(axis=1)
        self.arrived[:] = 0
        self.expected[:] = 0
        self.slot_steps[:] = 0
        self.reductions.clear()
        self.nested = False

    # -- the loop ------------------------------------------------------------------

    def run(self) -> None:
        m = self.m
        wpc = self.wpc
        segments = m.segments
        record = m.record_segment
        budget = m.step_budget
        per_block = m.block_step_budget
        # a group of warps known to be the next step's: every live warp, sent by the
        # last step to one pc without divergence or reconvergence (a converged loop)
        group = None
        while True:
            grouped = group is not None  # this step's warps are every live warp
            if grouped:
                pc, warps, lanes = group
                group = None
            else:
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
                if m.stop_when_traced:  # a peek at the first accesses: stop, do not fail
                    m.truncated = True
                    return
                raise StepBudgetExceeded(
                    f"kernel {m.program.kernel.name} did not finish within {budget} "
                    "warp-instruction steps (an endless loop, or more work than the emulator "
                    "runs); if it is meant to run longer, emulate it with "
                    "kerncast.emulate(..., step_budget=N)")
            if record is not None:
                record(pc, seg.end, warps, lanes)
            self.moved = None
            self._finish(seg, warps, lanes)
            if m.stop_when_traced and m.recorder.memory_cutoff is not None:
                m.truncated = True
                return
            if per_block is not None and self._over_budget(warps, seg.length, per_block):
                continue  # blocks were stopped: the next step is looked for afresh
            moved = self.moved
            # the warps moved together by a fall-through or a branch, none of them ending:
            # still every live warp where they were at the step's start
            if moved is not None and moved[0] is warps and seg.term <= BRANCH and \
                    (grouped or len(warps) == np.count_nonzero(wpc < DONE)):
                group = (moved[1], warps, lanes)

    def _over_budget(self, warps: np.ndarray, length: int, per_block: int) -> bool:
        """Count a step of ``warps`` against their blocks' own budgets; stop (every warp
        of) the blocks that ran past it, noting their slots. Whether any was stopped."""
        np.add.at(self.slot_steps, self.slot_of_warp[warps], length)
        over = np.flatnonzero(self.slot_steps > per_block)
        if len(over) == 0:
            return False
        self.slot_steps[over] = np.iinfo(np.int64).min  # counted once
        self.m.over_budget_slots.extend(over.tolist())
        self.wpc[np.isin(self.slot_of_warp, over)] = DONE
        return True

    def _lanes(self, warps: np.ndarray, at: np.ndarray) -> Lanes:
        w0, w1 = int(warps[0]), int(warps[-1]) + 1
        lo, hi = w0 << 5, w1 << 5
        masks = self.wmask[w0:w1]
        if len(warps) != w1 - w0:
            masks = np.where(at[w0:w1], masks, np.uint32(0))
        elif (masks == _FULL).all():
            return Lanes(slice(lo, hi), self.ids, None, hi - lo)
        n = int(np.bitwise_count(masks).sum())
        mask = unpack(masks)
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
            self._kill_masks(warps, self.wmask[warps])
            self.moved = None
            return
        self.wpc[warps] = pc
        hit = warps[self.wrpc[warps] == pc] if self.nested else ()
        if len(hit):
            self.pop(hit)
            self.moved = None
        else:
            self.moved = (warps, pc)

    def _branch(self, seg: Segment, warps: np.ndarray, lanes: Lanes) -> None:
        sl = lanes.sl
        taken = np.asarray(seg.get_pred(sl), bool)
        if lanes.mask is not None:
            yes = int(np.count_nonzero(taken & lanes.mask))
        else:
            yes = int(np.count_nonzero(taken)) if taken.ndim else (lanes.n if taken else 0)
        target, fall = seg.targets[0], seg.end
        record = self.m.record_branch
        if yes == lanes.n:
            if record is not None:
                record(seg.term_pc, warps)
            self.move(warps, target)
            return
        if yes == 0:
            self.move(warps, fall)
            return
        if isinstance(sl, slice):
            bits = pack(np.broadcast_to(taken, (sl.stop - sl.start,)))[warps - (sl.start >> 5)]
        else:
            bits = lane_bits(sl[taken], self.warps)[warps]
        active = self.wmask[warps]
        bits &= active
        if record is not None:
            record(seg.term_pc, warps[bits == active])
        self.move(warps[bits == active], target)
        self.move(warps[bits == 0], fall)
        split = (bits != 0) & (bits != active)
        if split.any():
            if self.m.record_split is not None:
                self.m.record_split(seg.term_pc, seg.reconv, int(np.count_nonzero(split)))
            self.diverge(warps[split], [(target, bits[split]), (fall, active[split] & ~bits[split])],
                         seg.reconv)

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
        for w in warps.tolist():
            mine = (idx >> 5) == w
            values = np.unique(index[mine])
            if len(values) == 1:
                self.move(np.array([w]), targets[int(values[0])])
                continue
            paths = []
            for v in values.tolist():
                paths.append((targets[v], lane_bits(idx[mine & (index == v)], self.warps)[[w]]))
            if self.m.record_split is not None:
                self.m.record_split(seg.term_pc, seg.reconv, len(paths) - 1)
            self.diverge(np.array([w]), paths, seg.reconv)

    def _push(self, warps: np.ndarray, pc, rpc, mask) -> None:
        depth = self.depth[warps]
        if len(depth) and int(depth.max()) >= self.spc.shape[1]:
            grow = self.spc.shape[1]
            self.spc = np.concatenate([self.spc, np.zeros_like(self.spc[:, :grow])], axis=1)
            self.srpc = np.concatenate([self.srpc, np.zeros_like(self.srpc[:, :grow])], axis=1)
            self.smask = np.concatenate([self.smask, np.zeros_like(self.smask[:, :grow])],
                                        axis=1)
        self.spc[warps, depth] = pc
        self.srpc[warps, depth] = rpc
        self.smask[warps, depth] = mask
        self.depth[warps] = depth + 1

    def diverge(self, warps: np.ndarray, paths: list, reconv: int) -> None:
        """Split ``warps`` over ``paths`` [(pc, per-warp lane masks)], reconverging at
        ``reconv``: push a reconvergence entry (unless the top already reconverges
        there) and one entry per path, the lowest pc on top."""
        fresh = self.wrpc[warps] != reconv
        if fresh.any():
            w = warps[fresh]
            self._push(w, reconv, self.wrpc[w], self.wmask[w])
        kept = [(pc, mask) for pc, mask in paths if pc != reconv]
        kept.sort(key=lambda p: p[0], reverse=True)
        if not kept:
            self.pop(warps)
            return
        top_pc, top_mask = kept[-1]
        for pc, mask in kept[:-1]:
            some = mask != 0
            if some.any():
                self._push(warps[some], pc, reconv, mask[some])
        empty = top_mask == 0
        self.wpc[warps] = top_pc
        self.wrpc[warps] = reconv
        self.nested = True
        self.wmask[warps] = top_mask
        if empty.any():
            self.pop(warps[empty])
        if top_pc >= self.nprog:
            live = warps[~empty]
            self._kill_masks(live, self.wmask[live])

    def pop(self, warps: np.ndarray) -> None:
        """Discard the top entries of ``warps``; the next live entry becomes the top."""
        while len(warps):
            depth = self.depth[warps]
            none = depth == 0
            if none.any():
                gone = warps[none]
                self.wpc[gone] = DONE
                self.wmask[gone] = 0
                warps, depth = warps[~none], depth[~none]
                if not len(warps):
                    break
            depth = depth - 1
            self.depth[warps] = depth
            pc = self.spc[warps, depth]
            rpc = self.srpc[warps, depth]
            mask = self.smask[warps, depth] & self.walive[warps]
            good = (mask != 0) & (pc != rpc)
            took = warps[good]
            if len(took):
                if (pc[good] == EXIT_PC).any():
                    self.m.internal("a warp reconverged at the exit with live lanes")
                self.wpc[took] = pc[good]
                self.wrpc[took] = rpc[good]
                self.wmask[took] = mask[good]
                over = took[pc[good] >= self.nprog]
                if len(over):
                    self._kill_masks(over, self.wmask[over])
            warps = warps[~good]
        self.nested = bool((self.wrpc != EXIT_PC).any())

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
        bits = lane_bits(idx, self.warps)
        warps = np.flatnonzero(bits)
        self._kill_masks(warps, bits[warps])

    def _kill_masks(self, warps: np.ndarray, bits: np.ndarray) -> None:
        if len(warps) == 0:
            return
        had = self.walive[warps] != 0
        self.walive[warps] &= ~bits
        self.wmask[warps] &= ~bits
        counts = np.bitwise_count(bits).astype(np.int64)
        slots = self.slot_of_warp[warps]
        np.subtract.at(self.block_alive, slots, counts)
        ended = had & (self.walive[warps] == 0)
        if ended.any():
            np.subtract.at(self.block_warps, slots[ended], 1)
        empty = warps[(self.wmask[warps] == 0) & (self.wpc[warps] < DONE)]
        if len(empty):
            self.pop(empty)
        self.m.check_barriers(np.unique(slots))

    def _trap(self, seg: Segment, lanes: Lanes) -> None:
        idx = lanes.idx
        if seg.get_pred is not None:
            hit = np.broadcast_to(np.asarray(seg.get_pred(idx), bool), idx.shape)
            if not hit.any():
                self.move(np.unique(idx >> 5), seg.end)
                return
            idx = idx[hit]
        why = seg.extra or "executed trap"
        raise KernelTrap(self.m.describe(seg.term_pc, int(idx[0]), why))

    def _deadlock(self) -> None:
        waiting = np.flatnonzero(self.wpc == WAIT)
        w = int(waiting[0])
        slot, bid = int(self.slot_of_warp[w]), int(self.wbar_id[w])
        item = self.m.program.items[int(self.wbar[w])]
        expected = int(self.expected[slot, bid]) or int(self.block_warps[slot])
        block = self.m.block_of_slot(slot)
        raise Deadlock(
            f"kernel {self.m.program.kernel.name} deadlocked: block {block} waits at barrier "
            f"{bid} ('{item.instr}', PTX line {item.line}) with {int(self.arrived[slot, bid])} "
            f"of {expected} warps arrived; the other warps ended or wait elsewhere, so "
            "every warp of the block must reach the same barrier")


def barrier_ids(ins, access, frame) -> tuple:
    """Getters of a barrier instruction's id, thread count and (bar.red) predicate."""
    ops = ins.operands
    mode = ins.mode or "sync"
    if mode == "red":
        dest, rest = ops[0], ops[1:]
    else:
        dest, rest = None, ops
    if not rest:
        def get_id(sl):
            return 0
    elif isinstance(rest[0], Imm):
        value = int(rest[0].value)

        def get_id(sl):
            return value
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
