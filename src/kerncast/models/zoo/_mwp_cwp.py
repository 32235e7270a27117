"""``mwp-cwp``: Hong & Kim's analytical model of memory- and thread-level parallelism.

Paper: S. Hong, H. Kim, "An analytical model for a GPU architecture with memory-level and
thread-level parallelism awareness", ISCA 2009 (the survey's [10], its section 4.2; the
comparison of the sampling seed, which found 30% mean error on a GTX 280).

A kernel is a sequence of computation periods, each ended by a memory request. While one
warp waits for memory, the SM runs the others: ``MWP`` (memory warp parallelism) is how
many warps' requests the memory system overlaps in one waiting period, ``CWP``
(computation warp parallelism) how many warps compute during one such period. Which is
larger decides whether the memory or the computation of a warp is hidden:

=====================  ==============================================================
case                   execution cycles of one round of the resident warps
=====================  ==============================================================
MWP == N == CWP        ``Mem_cycles + Comp_cycles + Comp_p (MWP - 1)``: too few warps,
                       neither is hidden (bottleneck ``latency``)
CWP >= MWP (or         ``Mem_cycles N / MWP + Comp_p (MWP - 1)``: memory-bound
Comp > Mem)
MWP > CWP              ``Mem_L + Comp_cycles N``: compute-bound
=====================  ==============================================================

``N`` is the warps resident per SM, ``Comp_p = Comp_cycles / #Mem_insts`` the
computation period. The round is repeated ``#Rep`` times, barriers add ``Synch_cost``,
and the cycles are seconds at ``Freq``. Each equation is a function below, with the
paper's number: the numbering follows the paper's section 3 as far as it could be
reconstructed without the paper (it is not among the seeds), so each docstring also
quotes the equation, which is the authority.

Parameters, every one from kerncast, none fitted to measured times:

application (per warp, from the launch's trace: :func:`launch_parameters`)
    The launch is compiled for the device and the blocks the static model emulates for it
    (SM 0's first round of resident blocks, one block where the trace cannot depend on the
    data) are run by the SIMT emulator with the static model's arguments
    (:mod:`kerncast.sim`, :mod:`kerncast.emu`). From the trace, per warp:
    ``#Mem_insts`` the executed global and local memory instructions (loads, stores,
    atomics; generic ones that resolved to such memory), ``#Comp_insts`` every other
    executed PTX instruction (shared memory included, as the paper counts only global
    memory as memory), ``#Synch_insts`` the executed barriers. A request is coalesced
    when it touches no more 128-byte lines than its bytes fill
    (:func:`kerncast.trace.requests`); ``#Uncoal_per_mw`` is the mean lines of an
    uncoalesced one (a transaction is a line, as a GT200 segment was) and
    ``Load_bytes_per_warp`` the mean bytes of the 32-byte sectors a request moves. A
    memory instruction first reached after the recording of accesses stopped (long
    kernels) counts as coalesced; one that ran with every lane off issues no request and
    counts as computation.
    ``#Active_blocks_per_SM`` is the occupancy calculator's blocks per SM (at most the
    grid's share of an SM), ``N`` those times the warps per block, ``#Threads_per_warp``
    the spec's warp size.
hardware (the spec and the calibration of :func:`kerncast.sim.machine_for`)
    ``Freq`` the calibrated SM clock; ``#Active_SMs`` the row's SMs (or fewer, for a
    small grid); ``Mem_Bandwidth`` the calibrated DRAM bandwidth (mean of the read and
    write streams; the paper took the spec's peak); ``Mem_LD`` the calibrated DRAM
    latency (a pointer chase after an L2 flush; the paper's micro-benchmark measured the
    same); ``Departure_del_coal`` the cycles between two one-line requests of an SM and
    ``Departure_del_uncoal`` the cycles between the lines of a request of
    ``#Uncoal_per_mw`` lines, both the inverse of the calibrated L1 gather rate
    (``l1_gather_lines_per_clk_sm_vs_lines``, lines per cycle per SM by lines per
    request, interpolated); ``#Issue_cycles`` the SM's cycles per warp instruction: the
    calibrated pipe cycles of each instruction class on one scheduler (times the
    software sequence of divisions) over the schedulers per SM, weighted by the launch's
    instruction mix (one slot for memory, branches and the rest; GT200 took 4 cycles
    for every instruction).

``launch=False`` leaves out the calibrated fixed cost of a launch (the paper has none).

Needs: ``source`` (the kernel is emulated) and ``spec`` (with its calibration).
Insight: ETP and PBA (the survey's Table 2 rates it ETP; its section 8 places it among
the models for bottleneck analysis): per warp the memory and the computation cycles,
MWP against CWP and which case applies (memory-bound, compute-bound, too few warps).

Not reproduced, and why: the paper's micro-benchmarks (5 of the 17 parameters need them
and the suite is obsolete, as the survey found: kerncast's calibration stands in, with
the mapping above: a DRAM pointer chase for ``Mem_LD``, the L1 gather curve for the
departure delays, the measured pipe throughputs for the issue cycles, the measured DRAM
bandwidth); the GT200's coalescing rules (half-warp segments of 32, 64 or 128 bytes: a
line of the L1 replaces the segment); the paper's instruction counts from its PTX by
hand (the emulator executes it, so loops, branches and divergence are exact). Caches
are not in the model (the GT200 had none for global memory): every memory instruction
pays the DRAM latency and moves its sectors through DRAM, so kernels that reuse data in
L1 or L2 are predicted far too slow, as the survey found post-Fermi ("far off"). Atomics
are memory instructions like the others, and their contention is not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kerncast._errors import InputError, KerncastError
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models._rows import corpus_launch, tunables_of
from kerncast.models.registry import register
from kerncast.trace import SPACES, requests
from kerncast.models.work._emulator import _unrecorded_sectors
from kerncast.devices import get_device, occupancy

__all__ = [
    "CASES", "MwpApplication", "MwpCwp", "MwpHardware", "MwpResult", "bw_per_warp",
    "comp_cycles", "comp_period", "cpi", "cwp", "cwp_full", "departure_delay",
    "departure_delays", "exec_case", "exec_cycles_app", "exec_cycles_compute_bound",
    "exec_cycles_memory_bound", "exec_cycles_not_enough_warps", "exec_cycles_with_synch",
    "issue_cycles", "launch_parameters", "mem_cycles", "mem_l", "mem_l_coal", "mem_l_uncoal",
    "mwp", "mwp_cwp", "mwp_peak_bw", "mwp_without_bw", "mwp_without_bw_full", "repetitions",
    "seconds", "synch_cost", "trace_application", "weight_coal", "weight_uncoal",
]

#: The three cases of the model, with the equation of each and the bottleneck it means.
CASES = {
    1: ("MWP == N == CWP: too few warps to hide memory or computation", "latency"),
    2: ("CWP >= MWP: memory-bound, computation hidden under memory", "memory"),
    3: ("MWP > CWP: compute-bound, memory hidden under computation", "compute"),
}
#: Bytes of one line, the model's memory transaction.
LINE_BYTES = 128
_MEMORY_CLASSES = frozenset({"ld_global", "st_global", "ld_local", "st_local", "ld_generic",
                             "st_generic", "atomic_global", "atomic_generic", "texture"})
_MEMO: dict[tuple, Any] = {}
_MEMO_LIMIT = 4096


# -- the paper's equations ------------------------------------------------------------

def mem_l_uncoal(mem_ld: float, uncoal_per_mw: float, departure_del_uncoal: float) -> float:
    """Eq. (10): ``Mem_L_Uncoal = Mem_LD + (#Uncoal_per_mw - 1) x Departure_del_uncoal``,
    the latency of an uncoalesced memory warp: its last transaction leaves
    ``#Uncoal_per_mw - 1`` departure delays after the first."""
    return mem_ld + (uncoal_per_mw - 1.0) * departure_del_uncoal


def mem_l_coal(mem_ld: float) -> float:
    """Eq. (11): ``Mem_L_Coal = Mem_LD``, a coalesced memory warp is one transaction."""
    return mem_ld


def weight_uncoal(coal_mem_insts: float, uncoal_mem_insts: float) -> float:
    """Eq. (13): ``Weight_uncoal = #Uncoal_Mem_insts / (#Coal_Mem_insts +
    #Uncoal_Mem_insts)`` (0 without memory instructions)."""
    total = coal_mem_insts + uncoal_mem_insts
    return uncoal_mem_insts / total if total > 0 else 0.0


def weight_coal(coal_mem_insts: float, uncoal_mem_insts: float) -> float:
    """Eq. (14): ``Weight_coal = #Coal_Mem_insts / (#Coal_Mem_insts + #Uncoal_Mem_insts)``
    (1 without memory instructions, so that ``Mem_L`` is ``Mem_LD``)."""
    total = coal_mem_insts + uncoal_mem_insts
    return coal_mem_insts / total if total > 0 else 1.0


def mem_l(mem_l_uncoal_: float, mem_l_coal_: float, weight_uncoal_: float,
          weight_coal_: float) -> float:
    """Eq. (12): ``Mem_L = Mem_L_Uncoal x Weight_uncoal + Mem_L_Coal x Weight_coal``, the
    mean latency of a memory warp."""
    return mem_l_uncoal_ * weight_uncoal_ + mem_l_coal_ * weight_coal_


def departure_delay(departure_del_uncoal: float, uncoal_per_mw: float, weight_uncoal_: float,
                    departure_del_coal: float, weight_coal_: float) -> float:
    """Eq. (15): ``Departure_delay = (Departure_del_uncoal x #Uncoal_per_mw) x
    Weight_uncoal + Departure_del_coal x Weight_coal``, the cycles between the departures
    of two memory warps of one SM."""
    return departure_del_uncoal * uncoal_per_mw * weight_uncoal_ + departure_del_coal * weight_coal_


def mwp_without_bw_full(mem_l_: float, departure_delay_: float) -> float:
    """Eq. (8): ``MWP_Without_BW_full = Mem_L / Departure_delay``, the memory warps that
    depart within one memory latency."""
    return mem_l_ / departure_delay_ if departure_delay_ > 0 else math.inf


def mwp_without_bw(mwp_without_bw_full_: float, n: float) -> float:
    """Eq. (9): ``MWP_Without_BW = MIN(MWP_Without_BW_full, N)``."""
    return min(mwp_without_bw_full_, n)


def bw_per_warp(freq_hz: float, load_bytes_per_warp: float, mem_l_: float) -> float:
    """Eq. (7): ``BW_per_warp = Freq x Load_bytes_per_warp / Mem_L``, the bandwidth one
    memory warp draws (bytes per second)."""
    return freq_hz * load_bytes_per_warp / mem_l_ if mem_l_ > 0 else 0.0


def mwp_peak_bw(mem_bandwidth: float, bw_per_warp_: float, active_sms: float) -> float:
    """Eq. (6): ``MWP_peak_BW = Mem_Bandwidth / (BW_per_warp x #ActiveSM)``, the memory
    warps per SM the memory bandwidth serves at once."""
    demand = bw_per_warp_ * active_sms
    return mem_bandwidth / demand if demand > 0 else math.inf


def mwp(mwp_without_bw_: float, mwp_peak_bw_: float, n: float) -> float:
    """Eq. (5): ``MWP = MIN(MWP_Without_BW, MWP_peak_BW, N)``."""
    return min(mwp_without_bw_, mwp_peak_bw_, n)


def comp_cycles(issue_cycles_: float, total_insts: float) -> float:
    """Eq. (18): ``Comp_cycles = #Issue_cycles x #Total_insts``, one warp's computation."""
    return issue_cycles_ * total_insts


def mem_cycles(mem_l_uncoal_: float, uncoal_mem_insts: float, mem_l_coal_: float,
               coal_mem_insts: float) -> float:
    """Eq. (19): ``Mem_cycles = Mem_L_Uncoal x #Uncoal_Mem_insts + Mem_L_Coal x
    #Coal_Mem_insts``, one warp's memory waiting."""
    return mem_l_uncoal_ * uncoal_mem_insts + mem_l_coal_ * coal_mem_insts


def cwp_full(mem_cycles_: float, comp_cycles_: float) -> float:
    """Eq. (16): ``CWP_full = (Mem_cycles + Comp_cycles) / Comp_cycles``, the warps that
    compute during one warp's memory waiting, plus one."""
    return (mem_cycles_ + comp_cycles_) / comp_cycles_ if comp_cycles_ > 0 else math.inf


def cwp(cwp_full_: float, n: float) -> float:
    """Eq. (17): ``CWP = MIN(CWP_full, N)``."""
    return min(cwp_full_, n)


def comp_period(comp_cycles_: float, mem_insts: float) -> float:
    """Eq. (2): ``Comp_p = Comp_cycles / #Mem_insts``, the computation between two memory
    requests (a warp without memory instructions is one computation period)."""
    return comp_cycles_ / max(mem_insts, 1.0)


def exec_cycles_memory_bound(mem_cycles_: float, n: float, mwp_: float,
                             comp_period_: float) -> float:
    """Eq. (1), CWP >= MWP: ``Exec_cycles = Mem_cycles x N / MWP + Comp_p x (MWP - 1)``:
    the N warps' memory periods, MWP at a time, and the computation not hidden."""
    return mem_cycles_ * n / mwp_ + comp_period_ * (mwp_ - 1.0)


def exec_cycles_compute_bound(mem_l_: float, comp_cycles_: float, n: float) -> float:
    """Eq. (3), MWP > CWP: ``Exec_cycles = Mem_L + Comp_cycles x N``: every warp's
    computation, and the last memory latency."""
    return mem_l_ + comp_cycles_ * n


def exec_cycles_not_enough_warps(mem_cycles_: float, comp_cycles_: float, comp_period_: float,
                                 mwp_: float) -> float:
    """Eq. (4), MWP == N == CWP: ``Exec_cycles = Mem_cycles + Comp_cycles + Comp_p x
    (MWP - 1)``: one warp's memory and computation, plus the others' last period."""
    return mem_cycles_ + comp_cycles_ + comp_period_ * (mwp_ - 1.0)


def exec_case(mwp_: float, cwp_: float, n: float, comp_cycles_: float,
              mem_cycles_: float) -> int:
    """The case of the model (a key of :data:`CASES`), tested in the paper's order:
    ``MWP == N and CWP == N``; else ``CWP >= MWP or Comp_cycles > Mem_cycles``; else
    ``MWP > CWP``."""
    if mwp_ == n and cwp_ == n:
        return 1
    if cwp_ >= mwp_ or comp_cycles_ > mem_cycles_:
        return 2
    return 3


def repetitions(blocks: float, active_blocks_per_sm: float, active_sms: float) -> float:
    """Eq. (20): ``#Rep = #Blocks / (#Active_blocks_per_SM x #Active_SMs)``, the rounds of
    resident blocks each SM runs."""
    return blocks / (active_blocks_per_sm * active_sms)


def exec_cycles_app(exec_cycles: float, rep: float) -> float:
    """Eq. (21): ``Exec_cycles_app = Exec_cycles x #Rep`` (Exec_cycles of Eq. 1, 3 or 4)."""
    return exec_cycles * rep


def synch_cost(departure_delay_: float, mwp_: float, synch_insts: float,
               active_blocks_per_sm: float, rep: float) -> float:
    """Eq. (22): ``Synch_cost = Departure_delay x (MWP - 1) x #Synch_insts x
    #Active_blocks_per_SM x #Rep``: at each barrier the warps' memory requests, which
    would have overlapped, depart one after another."""
    return departure_delay_ * (mwp_ - 1.0) * synch_insts * active_blocks_per_sm * rep


def exec_cycles_with_synch(exec_cycles_app_: float, synch_cost_: float) -> float:
    """Eq. (23): ``Exec_cycles_with_synch = Exec_cycles_app + Synch_cost``."""
    return exec_cycles_app_ + synch_cost_


def cpi(exec_cycles: float, total_insts: float, threads_per_block: float,
        threads_per_warp: float, blocks: float, active_sms: float) -> float:
    """Eq. (24): ``CPI = Exec_cycles / (#Total_insts x #Threads_per_block /
    #Threads_per_warp x #Blocks / #Active_SMs)``, cycles per warp instruction of an SM."""
    work = total_insts * threads_per_block / threads_per_warp * blocks / active_sms
    return exec_cycles / work if work > 0 else math.nan


def seconds(cycles: float, freq_hz: float) -> float:
    """Cycles to seconds at the SM clock: ``Exec_cycles / Freq``."""
    return cycles / freq_hz


# -- the whole model ------------------------------------------------------------------

@dataclass(frozen=True)
class MwpApplication:
    """The paper's application parameters; instruction counts are per warp (a warp runs
    the instructions of each of its threads once)."""

    comp_insts: float
    coal_mem_insts: float
    uncoal_mem_insts: float
    synch_insts: float
    uncoal_per_mw: float
    load_bytes_per_warp: float
    blocks: int
    threads_per_block: int
    active_blocks_per_sm: int
    threads_per_warp: int = 32

    @property
    def mem_insts(self) -> float:
        """``#Mem_insts = #Coal_Mem_insts + #Uncoal_Mem_insts``."""
        return self.coal_mem_insts + self.uncoal_mem_insts

    @property
    def total_insts(self) -> float:
        """``#Total_insts = #Comp_insts + #Mem_insts``."""
        return self.comp_insts + self.mem_insts

    @property
    def warps_per_block(self) -> int:
        return math.ceil(self.threads_per_block / self.threads_per_warp)

    @property
    def active_warps_per_sm(self) -> int:
        """``N``: the warps resident per SM."""
        return self.active_blocks_per_sm * self.warps_per_block

    @property
    def total_warps(self) -> int:
        """``#Total_warps`` of the launch."""
        return self.blocks * self.warps_per_block


@dataclass(frozen=True)
class MwpHardware:
    """The paper's hardware parameters (cycles of the SM clock, bytes per second)."""

    issue_cycles: float
    freq_hz: float
    mem_bandwidth: float
    mem_ld: float
    departure_del_coal: float
    departure_del_uncoal: float
    active_sms: int


@dataclass(frozen=True)
class MwpResult:
    """Every intermediate quantity of the model for one launch (cycles unless named)."""

    n: int
    mem_l_uncoal: float
    mem_l_coal: float
    weight_uncoal: float
    weight_coal: float
    mem_l: float
    departure_delay: float
    mwp_without_bw_full: float
    mwp_without_bw: float
    bw_per_warp: float
    mwp_peak_bw: float
    mwp: float
    comp_cycles: float
    mem_cycles: float
    cwp_full: float
    cwp: float
    comp_period: float
    case: int
    exec_cycles: float
    rep: float
    exec_cycles_app: float
    synch_cost: float
    exec_cycles_with_synch: float
    cpi: float
    seconds: float


def _memory_side(app: MwpApplication, hw: MwpHardware) -> dict[str, float]:
    """Eqs. (5)-(15): the latencies, the departure delay and MWP."""
    n = app.active_warps_per_sm
    uncoal = mem_l_uncoal(hw.mem_ld, app.uncoal_per_mw, hw.departure_del_uncoal)
    coal = mem_l_coal(hw.mem_ld)
    wu = weight_uncoal(app.coal_mem_insts, app.uncoal_mem_insts)
    wc = weight_coal(app.coal_mem_insts, app.uncoal_mem_insts)
    latency = mem_l(uncoal, coal, wu, wc)
    delay = departure_delay(hw.departure_del_uncoal, app.uncoal_per_mw, wu,
                            hw.departure_del_coal, wc)
    full = mwp_without_bw_full(latency, delay)
    without = mwp_without_bw(full, n)
    per_warp = bw_per_warp(hw.freq_hz, app.load_bytes_per_warp, latency)
    peak = mwp_peak_bw(hw.mem_bandwidth, per_warp, hw.active_sms)
    return {"mem_l_uncoal": uncoal, "mem_l_coal": coal, "weight_uncoal": wu,
            "weight_coal": wc, "mem_l": latency, "departure_delay": delay,
            "mwp_without_bw_full": full, "mwp_without_bw": without, "bw_per_warp": per_warp,
            "mwp_peak_bw": peak, "mwp": mwp(without, peak, n)}


def _exec_cycles(case: int, m: Mapping[str, float], comp: float, mem: float, period: float,
                 n: float) -> float:
    """Eq. (1), (3) or (4), as ``case`` says."""
    if case == 1:
        return exec_cycles_not_enough_warps(mem, comp, period, m["mwp"])
    if case == 2:
        return exec_cycles_memory_bound(mem, n, m["mwp"], period)
    return exec_cycles_compute_bound(m["mem_l"], comp, n)


def mwp_cwp(app: MwpApplication, hw: MwpHardware) -> MwpResult:
    """The model for one launch: every equation, in the paper's order of use."""
    n = app.active_warps_per_sm
    m = _memory_side(app, hw)
    comp = comp_cycles(hw.issue_cycles, app.total_insts)
    mem = mem_cycles(m["mem_l_uncoal"], app.uncoal_mem_insts, m["mem_l_coal"],
                     app.coal_mem_insts)
    full = cwp_full(mem, comp)
    cwp_ = cwp(full, n)
    period = comp_period(comp, app.mem_insts)
    case = exec_case(m["mwp"], cwp_, n, comp, mem)
    cycles = _exec_cycles(case, m, comp, mem, period, n)
    rep = repetitions(app.blocks, app.active_blocks_per_sm, hw.active_sms)
    total = exec_cycles_app(cycles, rep)
    synch = synch_cost(m["departure_delay"], m["mwp"], app.synch_insts,
                       app.active_blocks_per_sm, rep)
    with_synch = exec_cycles_with_synch(total, synch)
    return MwpResult(
        n=n, **m, comp_cycles=comp, mem_cycles=mem, cwp_full=full, cwp=cwp_,
        comp_period=period, case=case, exec_cycles=cycles, rep=rep, exec_cycles_app=total,
        synch_cost=synch, exec_cycles_with_synch=with_synch,
        cpi=cpi(with_synch, app.total_insts, app.threads_per_block, app.threads_per_warp,
                app.blocks, hw.active_sms),
        seconds=seconds(with_synch, hw.freq_hz))


# -- parameters from kerncast -----------------------------------------------------------

def issue_cycles(machine: Any, classes: Any, executions: np.ndarray) -> float:
    """``#Issue_cycles``: the SM's cycles per warp instruction, over the instruction mix.

    Each class takes its calibrated pipe cycles on one scheduler (``machine.issue``, times
    its software sequence where the calibration timed one instruction of it) over the
    SM's schedulers; classes without a pipe (memory, branches, barriers) one issue slot.
    ``classes`` holds each pc's class, ``executions`` each pc's warp executions.
    """
    per_class: dict[str, float] = {}
    for cls, count in zip(classes, executions.tolist()):
        key = str(getattr(cls, "value", cls))
        per_class[key] = per_class.get(key, 0.0) + count
    total = sum(per_class.values())
    if total <= 0:
        return 1.0 / machine.schedulers
    cycles = sum(count * _class_cycles(machine, key) for key, count in per_class.items())
    return cycles / total


def _class_cycles(machine: Any, key: str) -> float:
    slots = machine.issue.get(key, 1.0)
    if key not in machine.measured_whole:
        slots *= machine.sequence.get(key, 1)
    return slots / machine.schedulers


def departure_delays(machine: Any, uncoal_per_mw: float) -> tuple[float, float]:
    """(``Departure_del_coal``, ``Departure_del_uncoal``) in cycles: the inverse of the
    calibrated L1 gather rate (lines per cycle per SM) for requests of one line, and for
    requests of ``uncoal_per_mw`` lines (log-log interpolation, clamped to the curve)."""
    curve = machine.calibration.curves.get("l1_gather_lines_per_clk_sm_vs_lines")
    if not curve:
        return 1.0, 1.0
    lines, rate = np.log(np.asarray(curve, float)).T
    coal = float(np.exp(np.interp(0.0, lines, rate)))
    uncoal = float(np.exp(np.interp(math.log(max(uncoal_per_mw, 1.0)), lines, rate)))
    return 1.0 / coal, 1.0 / uncoal


@dataclass(frozen=True)
class _Requests:
    """Global and local memory requests of a trace, per pc, scaled to every execution."""

    coal: float
    uncoal: float
    uncoal_lines: float
    sectors: float
    memory_executions: np.ndarray  # per pc: executions that are memory instructions


def _recorded(trace: Any) -> tuple[np.ndarray, ...]:
    """Per pc, over the recorded global and local requests: (requests, coalesced ones,
    lines of the uncoalesced ones, sectors, requests of other spaces)."""
    pcs = len(trace.classes)
    if not len(trace.memory):
        zero = np.zeros(pcs)
        return zero, zero, zero, zero, zero
    reqs = requests(trace.memory)
    memory = np.isin(reqs.space, [SPACES.index("global"), SPACES.index("local")])
    coalesced = reqs.lines <= np.ceil(reqs.bytes / LINE_BYTES)

    def per_pc(keep: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        w = None if weights is None else weights[keep]
        return np.bincount(reqs.pc[keep], weights=w, minlength=pcs)[:pcs].astype(float)

    return (per_pc(memory), per_pc(memory & coalesced),
            per_pc(memory & ~coalesced, reqs.lines.astype(float)),
            per_pc(memory, reqs.sectors.astype(float)), per_pc(~memory))


def _requests(trace: Any) -> _Requests:
    """Coalesced and uncoalesced requests, their lines and sectors over every execution:
    each pc's recorded requests stand for its executions. Where the recording stopped
    early, a memory instruction none of whose requests was recorded counts as coalesced;
    where it did not, such an instruction ran with no active lane (predicated off) and
    counts as computation."""
    runs, threads = (np.asarray(a, float) for a in trace.pc_counts)
    n, coal, uncoal_lines, sectors, other = _recorded(trace)
    scale = np.divide(runs, n + other, out=np.zeros_like(runs), where=(n + other) > 0)
    memory = n * scale
    totals = [float((coal * scale).sum()), float(((n - coal) * scale).sum()),
              float((uncoal_lines * scale).sum()), float((sectors * scale).sum())]
    unseen = (n + other == 0) & (runs > 0) & (trace.memory_cutoff is not None)
    for pc in np.flatnonzero(unseen).tolist():
        if str(getattr(trace.classes[pc], "value", trace.classes[pc])) not in _MEMORY_CLASSES:
            continue
        _, count = _unrecorded_sectors(trace.program.items[pc], int(threads[pc]))
        memory[pc] = runs[pc]
        totals[0] += runs[pc]
        totals[3] += count or runs[pc] * LINE_BYTES / 32
    coal_, uncoal_, lines_, sectors_ = totals
    return _Requests(coal_, uncoal_, lines_, sectors_, memory_executions=memory)


def trace_application(trace: Any, *, blocks: int, threads_per_block: int,
                      active_blocks_per_sm: int, warp_size: int = 32) -> MwpApplication:
    """The application parameters per warp from the trace of some of a launch's blocks
    (see the module docstring)."""
    warps = max(len(trace.warps), 1)
    runs = np.asarray(trace.pc_counts[0], float)
    reqs = _requests(trace)
    barrier = np.array([str(getattr(c, "value", c)) == "barrier" for c in trace.classes])
    mem = reqs.coal + reqs.uncoal
    return MwpApplication(
        comp_insts=float(runs.sum() - reqs.memory_executions.sum()) / warps,
        coal_mem_insts=reqs.coal / warps, uncoal_mem_insts=reqs.uncoal / warps,
        synch_insts=float(runs[barrier].sum()) / warps,
        uncoal_per_mw=reqs.uncoal_lines / reqs.uncoal if reqs.uncoal > 0 else 1.0,
        load_bytes_per_warp=reqs.sectors * 32.0 / mem if mem > 0 else 0.0,
        blocks=blocks, threads_per_block=threads_per_block,
        active_blocks_per_sm=active_blocks_per_sm, threads_per_warp=warp_size)


@dataclass(frozen=True)
class _Emulated:
    """A launch's emulated round and what the static model found about it."""

    trace: Any
    machine: Any
    round_blocks: int
    active_sms: int
    based_on: dict[str, Any]


def _emulate_round(kernel: Any, launch: Any, device: str, sm_count: int | None) -> _Emulated:
    """Compile ``launch`` for ``device`` and emulate the blocks the static model emulates
    for its round (:mod:`kerncast.sim`), with its arguments."""
    from kerncast.emu import emulate  # noqa: PLC0415 (on use: the emulator is heavy)
    from kerncast.sim import (  # noqa: PLC0415 (on use: simulator)
        MEMORY_BUDGET, cached_program, cached_unit, check_fits, choose_blocks, data_dependent,
        emulation_args, machine_for,
    )

    dev = get_device(device)
    n_sm = sm_count or dev.compute.sm_count
    tu, module = cached_unit(kernel, dev.key)
    compiled = tu.kernel(kernel.name)
    program = cached_program(module, compiled.entry)
    res = compiled.resources(dev.ptx_target)
    occ = occupancy(dev, launch.threads_per_block, res.registers,
                    res.shared_static + launch.dynamic_shared)
    if occ.blocks_per_sm == 0:
        raise InputError(f"{kernel.name} with {launch.label()} cannot run on {dev.key}: one "
                         f"block needs more {occ.limiting} than an SM has")
    check_fits(kernel, launch, dev)
    per_sm = min(occ.blocks_per_sm, math.ceil(launch.blocks / n_sm))
    dependent = data_dependent(program)
    _, sources = choose_blocks(launch.blocks, per_sm, n_sm, dependent,
                               -(-launch.threads_per_block // 32))
    values, inputs = emulation_args(launch, program)
    trace = emulate(module, launch, values, sorted(set(sources) | {0}), entry=compiled.entry,
                    registers=res.registers, memory_budget=MEMORY_BUDGET, inplace=True,
                    exact=False, values="needed", constants=launch.constants,
                    labels=list(launch.names)).trace
    based_on = {"device": dev.key, "sm_count": n_sm, "registers": res.registers,
                "blocks_per_sm": occ.blocks_per_sm, "limiting": occ.limiting,
                "emulated_blocks": len(set(sources) | {0}), "data_dependent": dependent,
                "inputs": inputs, "compiler": f"{tu.toolchain.name} {tu.toolchain.version}"}
    return _Emulated(trace, machine_for(dev), per_sm, min(n_sm, launch.blocks), based_on)


def launch_parameters(kernel: Any, launch: Any, device: str,
                      sm_count: int | None = None) -> tuple[MwpApplication, MwpHardware, dict]:
    """The model's application and hardware parameters of one launch, and what they rest
    on (see the module docstring)."""
    em = _emulate_round(kernel, launch, device, sm_count)
    m = em.machine
    app = trace_application(em.trace, blocks=launch.blocks,
                            threads_per_block=launch.threads_per_block,
                            active_blocks_per_sm=em.round_blocks,
                            warp_size=m.device.compute.warp_size)
    coal, uncoal = departure_delays(m, app.uncoal_per_mw)
    hw = MwpHardware(issue_cycles=issue_cycles(m, em.trace.classes, em.trace.pc_counts[0]),
                     freq_hz=m.clock_hz, mem_bandwidth=m.dram_bytes_per_cycle() * m.clock_hz,
                     mem_ld=m.dram_latency, departure_del_coal=coal,
                     departure_del_uncoal=uncoal, active_sms=em.active_sms)
    based_on = {**em.based_on, "calibration": m.calibration.device,
                "adapted_from": m.adapted_from, "launch_s": m.launch_fixed_seconds()}
    return app, hw, based_on


# -- the predictor --------------------------------------------------------------------

def _prediction(name: str, app: MwpApplication, hw: MwpHardware, based_on: dict,
                launch: bool) -> Prediction:
    """The prediction of one launch: seconds, memory and compute time, the case."""
    r = mwp_cwp(app, hw)
    fixed = float(based_on["launch_s"]) if launch else 0.0
    parts = {"compute": seconds(r.comp_cycles * r.n * r.rep, hw.freq_hz),
             "memory": seconds(r.mem_cycles * r.n / r.mwp * r.rep, hw.freq_hz),
             "synchronisation": seconds(r.synch_cost, hw.freq_hz)}
    if r.case == 1:
        parts["latency"] = seconds(r.exec_cycles_app, hw.freq_hz)
    if launch:
        parts["launch"] = fixed
    description, bottleneck = CASES[r.case]
    if max(parts["synchronisation"], fixed) > seconds(r.exec_cycles_app, hw.freq_hz):
        bottleneck = "synchronisation" if parts["synchronisation"] >= fixed else "launch"
    return Prediction(
        seconds=r.seconds + fixed, model=name, breakdown=parts, bottleneck=bottleneck,
        based_on={**based_on, "case": r.case, "case_description": description,
                  "equations": asdict(r), "application": asdict(app), "hardware": asdict(hw)})


def _row_key(row: Mapping[str, Any], seed: int) -> tuple:
    return (str(row["kernel"]), str(row.get("language") or "cuda"), str(row["size"]),
            tuple(sorted(tunables_of(row).items())), str(row["device"]),
            _sm_count(row.get("sm_count")), seed)


def _sm_count(value: Any) -> int | None:
    try:
        count = int(value)
    except (TypeError, ValueError):
        return None
    return count if count > 0 else None


def _row_parameters(row: Mapping[str, Any], seed: int) -> tuple | str:
    """(application, hardware, based_on) of a ``times`` row's corpus launch, or the
    reason it has none; remembered per launch."""
    key = _row_key(row, seed)
    if key not in _MEMO:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        try:
            kernel, config = corpus_launch(row)
            source, launch = kernel.instance(config, key[1], seed)
            _MEMO[key] = launch_parameters(source, launch, key[4], key[5])
        except KerncastError as exc:
            _MEMO[key] = f"{type(exc).__name__}: {exc}"
    return _MEMO[key]


@register
class MwpCwp(Predictor):
    """Hong & Kim's MWP-CWP model (ISCA 2009): see the module docstring.

    Parameters
    ----------
    launch
        Add the calibrated fixed cost of a launch (the paper's model has none).
    seed
        Seed of the generated inputs of kernels whose trace depends on their data.
    """

    name = "mwp-cwp"
    needs = frozenset({"source", "spec"})
    description = ("Hong & Kim (ISCA'09): memory warp parallelism (MWP) against computation "
                   "warp parallelism (CWP) per SM, from the emulator's per-warp instruction "
                   "and coalescing counts and the device's calibration")
    insight = ("ETP and PBA: memory and computation cycles per warp, MWP and CWP, and which "
               "case applies (memory-bound, compute-bound, too few warps)")
    learned = False
    columns = ("kernel", "language", "size", "tunables", "device", "sm_count")

    def __init__(self, *, launch: bool = True, seed: int = 0):
        self.launch = launch
        self.seed = seed

    def _one(self, row: Mapping[str, Any]) -> Prediction:
        found = _row_parameters(row, self.seed)
        if isinstance(found, str):
            return Prediction(math.nan, self.name, based_on={"error": found})
        app, hw, based_on = found
        return _prediction(self.name, app, hw, based_on, self.launch)

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """The launch compiled and its round emulated as the static model does, then the
        model's equations."""
        app, hw, based_on = launch_parameters(kernel, launch, inputs.device, inputs.sm_count)
        prediction = _prediction(self.name, app, hw, based_on, self.launch)
        prediction.based_on["configuration"] = launch.label()
        return prediction
