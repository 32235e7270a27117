"""One emulated launch: memory, registers, translated program, batches of blocks.

Blocks are emulated in batches: all blocks of a batch share one set of lane arrays
(``batch blocks x padded threads`` lanes) and run together, so regular kernels
run at array speed; batches run one after the other (their global memory
persists), which gives the same outputs as running every block at once for
kernels whose blocks do not wait on each other.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, unsupported
from kerncast.emu._errors import Fault, MemoryFault, UnsupportedInstruction
from kerncast.emu._launch import Launch, bind_arguments
from kerncast.emu._layout import Layout
from kerncast.emu._machine import (
    BARRIER, BRANCH, EXIT, MULTI, TRAP, WAIT, Scheduler, Segment, barrier_ids,
)
from kerncast.emu._memory import PARAM_FRAME_BASE, GlobalMemory, LaneSpace, UniformSpace
from kerncast.emu._operands import Access, RegFile, Specials
from kerncast.emu._program import EXIT_PC, Program
from kerncast.emu._slice import value_slice
from kerncast.emu._spaces import AddressSpaces
from kerncast.emu._translate import translate_program

__all__ = ["Machine"]


class Machine:
    """Everything one launch needs to run (see the module doc)."""

    def __init__(self, program: Program, launch: Launch, args, *, batch_blocks: int,
                 step_budget: int, recorder=None, labels=None, num_sms: int = 132,
                 inplace: bool = False, stop_when_traced: bool = False,
                 values: str = "all", constants: dict | None = None,
                 block_step_budget: int | None = None) -> None:
        if program.module is not None and program.module.address_size != 64:
            raise UnsupportedInstruction("only 64-bit PTX (.address_size 64) can be emulated")
        self.program, self.launch = program, launch
        self.step_budget = step_budget
        self.block_step_budget = block_step_budget
        self.over_budget_slots: list[int] = []  # of the batch running
        self.over_budget: list[int] = []        # blocks stopped at their own budget
        self.steps = self.thread_steps = 0
        self.num_sms = num_sms
        self.gmem = GlobalMemory(inplace)
        self.recorder = recorder
        self.stop_when_traced = stop_when_traced and recorder is not None
        self.truncated = False
        self.kparam_bytes, self.buffers = bind_arguments(program.kernel, args, self.gmem,
                                                         labels)
        self.layout = layout = Layout(program, self.gmem, launch.dynamic_shared)
        if constants:
            layout.fill_constants(constants)
        self.const_bytes = layout.const_bytes.tobytes()
        self.batch_blocks = batch_blocks
        self.max_lanes = lanes = batch_blocks * launch.padded_threads
        self.ids = ids = np.arange(lanes, dtype=np.int64)
        tpad = launch.padded_threads
        shared = LaneSpace("shared", layout.shared_size, np.zeros(lanes, np.uint64),
                           batch_blocks)
        shared.lane_base = ((ids // tpad) * shared.stride).astype(np.uint64)
        local = LaneSpace("local", layout.local_size, np.zeros(lanes, np.uint64), lanes)
        local.lane_base = (ids * local.stride).astype(np.uint64)
        frames = LaneSpace("param", layout.param_size, np.zeros(lanes, np.uint64), lanes,
                           origin=PARAM_FRAME_BASE)
        frames.lane_base = (ids * frames.stride).astype(np.uint64)
        self.spaces = AddressSpaces(self.gmem, shared, local, frames,
                                    UniformSpace("param", self.kparam_bytes),
                                    UniformSpace("const", layout.const_bytes))
        self.regs = RegFile(program, lanes)
        self.specials = Specials(lanes)
        self.specials.clock = lambda: self.steps
        self._set_constants()
        self._lane_geometry()
        self.access = Access(program, self.regs, self.specials, layout)
        self.recorder = recorder
        self.record_segment = recorder.segment if recorder is not None else None
        self.record_memory = recorder.memory if recorder is not None else None
        self.record_branch = recorder.branch if recorder is not None else None
        self.record_split = recorder.split if recorder is not None else None
        self.ctx = Ctx(self.access, self)
        self.slice = value_slice(program) if values == "needed" else None
        self.closures = translate_program(program, self.ctx,
                                          self.slice.modes if self.slice else None)
        self.segments = self._segments()
        self.scheduler = Scheduler(self)
        self.blocks_run: list[np.ndarray] = []
        self.slot_blocks = np.zeros(batch_blocks, np.int64)

    # -- set-up --------------------------------------------------------------------

    def _set_constants(self) -> None:
        launch, layout = self.launch, self.layout
        c = self.specials.constants
        for axis, name in enumerate("xyz"):
            c[f"ntid.{name}"] = launch.block[axis]
            c[f"nctaid.{name}"] = launch.grid[axis]
        c.update({"nwarpid": 64, "nsmid": self.num_sms, "gridid": 0,
                  "dynamic_smem_size": launch.dynamic_shared,
                  "total_smem_size": layout.shared_size, "aggr_smem_size": layout.shared_size,
                  "is_explicit_cluster": 0, "cluster_ctarank": 0, "cluster_nctarank": 1})
        for k in range(32):
            c[f"envreg{k}"] = 0

    def _segments(self) -> dict[int, Segment]:
        program, closures = self.program, self.closures
        segments = {}
        for start in program.segment_starts:
            end = program.segment_end(start)
            seg = Segment(start, end)
            last = program.items[end - 1]
            self._terminator(seg, last, end - 1)
            stop = end - 1 if seg.term != 0 else end
            seg.fns = [fn for fn in closures[start:stop] if fn is not None]
            segments[start] = seg
        return segments

    def _terminator(self, seg: Segment, item, pc: int) -> None:
        ins, access, frame = item.instr, self.access, item.frame
        guard = access.pred(frame, ins.guard) if ins.guard is not None else None
        op = ins.opcode
        if item.kind == "ret" or (item.kind == "op" and op == "bra"):
            seg.term, seg.targets, seg.get_pred = BRANCH, item.targets, guard
            seg.reconv = self.program.reconvergence.get(pc, EXIT_PC)
        elif item.kind == "trap" or (item.kind == "op" and op == "trap"):
            seg.term, seg.get_pred = TRAP, guard
            seg.extra = "failed an assertion (__assertfail)" if item.kind == "trap" else None
        elif item.kind != "op":
            return
        elif op in ("ret", "exit"):
            seg.term, seg.get_pred = EXIT, guard
        elif op == "brx":
            if guard is not None:
                raise unsupported(ins, "guarded brx")
            seg.term, seg.targets = MULTI, item.targets
            seg.get_pred = access.src(frame, ins.operands[0], "u32")
            seg.reconv = self.program.reconvergence.get(pc, EXIT_PC)
        elif op in ("bar", "barrier") and ins.mode != "warp":
            if guard is not None:
                raise unsupported(ins, "guarded barriers")
            if ins.mode not in (None, "sync", "arrive", "red") or "cluster" in ins.flags:
                raise unsupported(ins)
            seg.term = BARRIER
            seg.extra = (barrier_ids(ins, access, frame), ins, frame)
        seg.term_pc = pc

    def _lane_geometry(self) -> None:
        """Per-lane values that are the same in every batch: thread and lane indices."""
        launch = self.launch
        tpad, threads = launch.padded_threads, launch.threads_per_block
        ids = self.ids
        self.lane_slot, t = ids // tpad, ids % tpad
        self.lane_thread_valid = t < threads
        bx, by, _ = launch.block
        a = self.specials.arrays
        a["tid.x"][:], a["tid.y"][:], a["tid.z"][:] = t % bx, (t // bx) % by, t // (bx * by)
        lane = t & 31
        a["laneid"][:], a["warpid"][:] = lane, t >> 5
        bit = (np.uint64(1) << lane.astype(np.uint64)).astype(np.uint32)
        below = bit - np.uint32(1)
        a["lanemask_eq"][:] = bit
        a["lanemask_lt"][:] = below
        a["lanemask_le"][:] = below | bit
        a["lanemask_ge"][:] = ~below
        a["lanemask_gt"][:] = ~(below | bit)

    def _start_batch(self, blocks: np.ndarray) -> np.ndarray:
        """Reset state for ``blocks``; returns the mask of lanes that are real threads."""
        launch = self.launch
        tpad = launch.padded_threads
        count = len(blocks)
        per_slot = np.zeros(self.batch_blocks, np.int64)
        per_slot[:count] = blocks
        per_slot[count:] = blocks[-1]
        self.slot_blocks[:] = per_slot
        gx, gy, _ = launch.grid
        a = self.specials.arrays
        for name, values in (("ctaid.x", per_slot % gx), ("ctaid.y", (per_slot // gx) % gy),
                             ("ctaid.z", per_slot // (gx * gy)),
                             ("smid", per_slot % self.num_sms)):
            a[name][:] = np.repeat(values.astype(np.uint32), tpad)
        valid = self.lane_thread_valid & (self.lane_slot < count)
        self.regs.reset()
        for space in (self.spaces.shared, self.spaces.local, self.spaces.frames):
            space.reset()
        return valid

    # -- running -------------------------------------------------------------------

    def run(self, blocks: np.ndarray) -> None:
        """Emulate ``blocks`` (linear indices) in batches, in order."""
        per = self.batch_blocks
        with np.errstate(all="ignore"):
            for first in range(0, len(blocks), per):
                chunk = np.asarray(blocks[first:first + per], np.int64)
                valid = self._start_batch(chunk)
                if self.recorder is not None:
                    self.recorder.begin_batch(chunk)
                self.blocks_run.append(chunk)
                self.scheduler.start(valid)
                self.over_budget_slots = []
                try:
                    self.scheduler.run()
                except Fault as fault:
                    raise self._memory_fault(fault) from None
                self.over_budget.extend(chunk[self.over_budget_slots].tolist())
                if self.truncated:
                    return

    # -- barriers ------------------------------------------------------------------

    def barrier(self, seg: Segment, warps: np.ndarray, lanes) -> None:
        (mode, dest, get_id, get_count, pred), ins, frame = seg.extra
        s = self.scheduler
        idx = lanes.idx
        where = idx >> 5
        counts = np.bincount(where, minlength=s.warps)[warps]
        first = np.searchsorted(where, warps)
        ids = np.broadcast_to(np.asarray(get_id(idx), np.int64), idx.shape)[first] & 15
        slots = s.slot_of_warp[warps]
        np.add.at(s.arrived, (slots, ids), 1)
        if get_count is not None:
            wanted = np.broadcast_to(np.asarray(get_count(idx), np.int64), idx.shape)[first]
            s.expected[slots, ids] = -(-wanted // 32)
        if mode == "red":
            self._reduce_arrival((ins, dest, frame), pred, idx, where, warps, slots, ids)
        if self.recorder is not None:
            self.recorder.barrier(seg.term_pc, slots, warps, counts)
        if mode == "arrive":
            s.move(warps, seg.end)
        else:
            s.wpc[warps] = WAIT
            s.wresume[warps] = seg.end
            s.wbar[warps] = seg.term_pc
            s.wbar_id[warps] = ids
        self._release(slots, ids)

    def _reduce_arrival(self, target, pred, idx, where, warps, slots, ids) -> None:
        """bar.red: add the arriving lanes' predicates to their barrier's reduction."""
        values = np.broadcast_to(np.asarray(pred(idx), bool), idx.shape)
        for k, (slot, bid) in enumerate(zip(slots.tolist(), ids.tolist())):
            mine = where == warps[k]
            entry = self.scheduler.reductions.setdefault((slot, bid), [0, 0, [], target])
            entry[0] += int(np.count_nonzero(values[mine]))
            entry[1] += int(np.count_nonzero(mine))
            entry[2].append(idx[mine])

    def check_barriers(self, slots: np.ndarray) -> None:
        """Complete barriers of ``slots`` that threads leaving have made complete."""
        s = self.scheduler
        pending = s.arrived[slots]
        if not pending.any():
            return
        rows, ids = np.nonzero(pending)
        self._release(np.asarray(slots)[rows], ids)

    def _release(self, slots: np.ndarray, ids: np.ndarray) -> None:
        """Complete the barriers ``(slot, id)`` that every expected thread has reached."""
        s = self.scheduler
        need = s.expected[slots, ids]
        need = np.where(need > 0, need, s.block_warps[slots])
        arrived = s.arrived[slots, ids]
        done = (arrived >= need) & (arrived > 0)
        if not done.any():
            return
        ds, di = slots[done], ids[done]
        s.arrived[ds, di] = 0
        s.expected[ds, di] = 0
        flag = np.zeros(s.arrived.shape, bool)
        flag[ds, di] = True
        waiting = np.flatnonzero((s.wpc == WAIT) & flag[s.slot_of_warp, s.wbar_id])
        if s.reductions:
            for key in set(zip(ds.tolist(), di.tolist())):
                entry = s.reductions.pop(key, None)
                if entry is not None:
                    self._reduce_release(entry)
        resume = s.wresume[waiting]
        first = int(resume[0]) if len(resume) else 0
        if len(resume) and (resume == first).all():
            s.move(waiting, first)
            return
        for pc in np.unique(resume).tolist():
            s.move(waiting[resume == pc], pc)

    def _reduce_release(self, entry) -> None:
        true, total, lanes, (ins, dest, frame) = entry
        op = ins.atomic_op
        if op == "popc":
            put = self.access.dst(frame, dest, "u32")[1]
            value = np.uint32(true)
        else:
            put = self.access.dst(frame, dest, "pred")[1]
            value = np.bool_(true == total) if op == "and" else np.bool_(true > 0)
        for idx in lanes:
            put(idx, np.full(len(idx), value))

    # -- reporting -----------------------------------------------------------------

    def block_of_slot(self, slot: int) -> tuple[int, int, int]:
        return self.launch.block_index(int(self.slot_blocks[slot]))

    def where(self, lane: int) -> tuple[tuple, tuple]:
        tpad = self.launch.padded_threads
        return self.block_of_slot(lane // tpad), self.launch.thread_index(lane % tpad)

    def describe(self, pc: int, lane: int, why: str) -> str:
        item = self.program.items[pc]
        block, thread = self.where(lane)
        return (f"kernel {self.program.kernel.name}: {why} at PTX line {item.line} "
                f"('{item.instr}'), block {block}, thread {thread}")

    def fail_lane(self, pc: int, lane: int, why: str) -> None:
        from kerncast.emu._errors import EmulationError

        raise EmulationError(self.describe(pc, lane, why))

    def internal(self, why: str) -> None:
        from kerncast._errors import KerncastError

        raise KerncastError(f"emulator error in kernel {self.program.kernel.name}: {why}")

    def _memory_fault(self, fault: Fault) -> MemoryFault:
        sel = fault.lanes
        lane = (sel.start + fault.position) if isinstance(sel, slice) else \
            int(np.asarray(sel)[fault.position])
        address = fault.address
        if fault.space == "global":
            near = f"; {self.gmem.nearest(address)}"
        else:
            near = ""
        why = f"{fault.reason} to {fault.space} address {address:#x}{near}"
        pc = fault.pc if fault.pc >= 0 else 0
        block, thread = self.where(lane)
        return MemoryFault(self.describe(pc, lane, why), line=self.program.items[pc].line,
                           block=block, thread=thread, address=address)
