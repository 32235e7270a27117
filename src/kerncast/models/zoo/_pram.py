"""``gpu-pram``: Kothapalli et al.'s GPU à la (QRQW) PRAM model.

K. Kothapalli, R. Mukherjee, M. S. Rehman, S. Patidar, P. J. Narayanan and K. Srinathan,
"A performance prediction model for the CUDA GPGPU platform", HiPC 2009; evaluated by
the survey (Madougou et al. 2016, section 4.3, ``../shared/seeds/survey-gpgpu-performance-models.txt``).

The survey describes the model as a mix of BSP, PRAM and QRQW PRAM that maps the data
set on the threads and sums the cycles of the execution, from 7 platform parameters (5
from the spec, 2 from the occupancy calculator) and 6 application parameters (the
geometry, the compute load of a thread, the data size). It does not reproduce the
paper's equations, and the paper is not among the seeds, so the equations below are
kerncast's reading of that description, with every parameter named:

platform (7)
    ``N_SM`` SMs (the spec, or the row's SM count), ``N_C`` fp32 lanes per SM (spec),
    ``f`` SM clock (spec, boost), ``B`` DRAM bandwidth (spec), ``L`` global-memory
    latency in cycles (the device's calibration, ``dram_latency_cycles``; the paper took
    the CUDA guide's 400-600 cycles, and 600 is used where no calibration exists);
    ``b`` resident blocks and ``w`` resident warps per SM (the occupancy calculator,
    :func:`kerncast.devices.occupancy`, from the registers and shared memory);
application (6)
    ``N_B`` blocks and ``N_T`` threads per block (the geometry), ``I`` instructions per
    thread and ``CPI`` cycles per instruction (the compute load: ``C_T = I x CPI``),
    ``S_r`` and ``S_w`` bytes read and written (the data size).

Equations, one BSP superstep per round of resident blocks::

    (P1) N_B' = ceil(N_B / N_SM)                      blocks each SM runs in sequence
    (P2) R    = ceil(N_B' / b)                        rounds (supersteps)
    (P3) W    = (N_B' N_T / R) C_T / N_C              compute cycles of a round (PRAM: the
                                                      round's threads on N_C lanes)
    (P4) Q    = ((S_r + S_w) / R) f / B               QRQW: the round's global transactions
                                                      queue at DRAM, served at B
    (P5) Λ    = L max(1, (S_r + S_w) / (R A w' 128))  latency: memory steps of the round on
                                                      one SM (w' = min(w, warps of the round)
                                                      resident warps, each with one 4-byte
                                                      access per thread in flight), each L
    (P6) T    = R (W + max(Q, Λ)) / f + t_launch      cumulated cycles over the rounds

with ``A = min(N_SM, N_B)`` active SMs. Contention (the QRQW part) enters through the
bytes: the emulator counts the 32-byte sectors each warp request touches, so an
uncoalesced access queues more sectors than a coalesced one.

``I`` is the mean number of thread-level PTX instructions a thread executes, from the
``emulator`` work provider (the SIMT emulator's trace of a sample of the launch's
blocks); ``CPI`` defaults to 1 issue cycle per instruction and lane. ``t_launch`` is the
calibrated launch overhead; the paper has no such term (its kernels ran for
milliseconds), and ``launch_overhead_s=0`` leaves it out.

needs: ``source`` (instructions and bytes come from emulating the kernel) and ``spec``.
insight: ETP (the survey's Table 2); the breakdown says whether compute, the memory
queue or the memory latency dominates.

Not reproduced: the paper's own equations and cycle estimates (not in the seeds; the
survey found 50% error on MM with them and about 3% after tuning the cycles per
operation, which kerncast does not tune); the maximum over threads of the cycles per
thread (the emulator gives the mean); shared memory, caches and synchronisation, which
the model leaves out (the survey says so). Kernels whose addresses depend on their data
(BFS, SpMV, histograms, sorting) at sizes the emulator does not run have no cycles per
thread: NaN, as the survey found BFS infeasible; so have launches whose blocks run past
the emulator's step limit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any


from kerncast._errors import InputError
from kerncast.devices import get_device, occupancy
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models._rows import corpus_launch, tunables_of
from kerncast.models.registry import register
from kerncast.models.work import WorkCounts, WorkUnavailable, work_counts
from kerncast.calibrate import load_calibration

__all__ = ["DEFAULT_LATENCY_CYCLES", "GpuPram", "PramApp", "PramCycles", "PramPlatform",
           "launch_work", "pram_app", "pram_cycles", "pram_platform"]

#: Global-memory latency where a device has no calibration (CUDA guide: 400-600 cycles).
DEFAULT_LATENCY_CYCLES = 600.0
#: Launch overhead where a device has no calibration (the roofline's H100 figure).
DEFAULT_LAUNCH_S = 3.8e-6
#: Bytes one warp has in flight in a memory step (one 4-byte access per thread).
WARP_ACCESS_BYTES = 128.0
_MEMO: dict[tuple, WorkCounts | str] = {}
_MEMO_LIMIT = 50_000


def launch_work(row: Mapping[str, Any], provider: str = "emulator") -> WorkCounts:
    """The work counts of a ``times`` row's corpus launch, remembered per launch.

    Raises
    ------
    WorkUnavailable
        If the provider cannot count the launch, or the row's kernel is not in the corpus.
    """
    language = str(row.get("language") or "cuda")
    key = (str(row["kernel"]), language, str(row["size"]),
           tuple(sorted(tunables_of(row).items())), provider)
    if key not in _MEMO:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        try:
            kernel, config = corpus_launch(row)
            _MEMO[key] = work_counts(kernel, config, provider, language)
        except (WorkUnavailable, InputError) as exc:
            _MEMO[key] = f"{type(exc).__name__}: {exc}"
    value = _MEMO[key]
    if isinstance(value, str):
        raise WorkUnavailable(value)
    return value


@dataclass(frozen=True)
class PramPlatform:
    """The model's 7 platform parameters (see the module docstring)."""

    sm_count: int
    lanes_per_sm: float
    clock_hz: float
    bandwidth_bps: float
    latency_cycles: float
    blocks_per_sm: int
    warps_per_sm: int


@dataclass(frozen=True)
class PramApp:
    """The model's 6 application parameters (see the module docstring)."""

    blocks: int
    threads_per_block: int
    instructions_per_thread: float
    cpi: float
    bytes_read: float
    bytes_written: float


@dataclass(frozen=True)
class PramCycles:
    """Rounds and the cycles of one round: compute (P3), queue (P4), latency (P5)."""

    rounds: int
    compute: float
    queue: float
    latency: float

    @property
    def total(self) -> float:
        """Cycles of the launch (P6 without the launch overhead)."""
        return self.rounds * (self.compute + max(self.queue, self.latency))


def pram_cycles(app: PramApp, hw: PramPlatform) -> PramCycles:
    """Equations (P1)-(P5) of the module docstring."""
    per_sm = math.ceil(app.blocks / hw.sm_count)
    rounds = math.ceil(per_sm / hw.blocks_per_sm)
    threads = per_sm * app.threads_per_block / rounds
    compute = threads * app.instructions_per_thread * app.cpi / hw.lanes_per_sm
    data = (app.bytes_read + app.bytes_written) / rounds
    queue = data * hw.clock_hz / hw.bandwidth_bps
    warps = min(hw.warps_per_sm, math.ceil(threads / 32))
    active = min(hw.sm_count, app.blocks)
    steps = data / (active * warps * WARP_ACCESS_BYTES)
    latency = hw.latency_cycles * max(1.0, steps) if data > 0 else 0.0
    return PramCycles(rounds, compute, queue, latency)


@lru_cache(maxsize=16)
def _calibrated(device_key: str) -> tuple[float, float]:
    """(global-memory latency in cycles, launch overhead in seconds) of the device."""
    try:
        cal = load_calibration(device_key)
    except InputError:
        return DEFAULT_LATENCY_CYCLES, DEFAULT_LAUNCH_S
    latency = cal.memory.get("dram_latency_cycles", DEFAULT_LATENCY_CYCLES)
    launch = cal.launch.get("launch_overhead_s", DEFAULT_LAUNCH_S)
    return float(latency), float(launch)


def pram_platform(row: Mapping[str, Any]) -> PramPlatform:
    """The platform parameters of a ``times`` row: spec, calibration and occupancy."""
    device = get_device(str(row["device"]))
    sm_count = _positive_int(row.get("sm_count"), device.compute.sm_count)
    registers = _positive_int(row.get("registers"), 32)
    shared = _count(row.get("static_shared")) + _count(row.get("dynamic_shared"))
    occ = occupancy(device, int(row["threads_per_block"]), registers, shared)
    if occ.blocks_per_sm == 0:
        raise InputError(f"{row['kernel']}: one block does not fit on an SM of {device.key} "
                         f"(limited by {occ.limiting})")
    return PramPlatform(sm_count=sm_count, lanes_per_sm=float(device.throughput.fp32),
                        clock_hz=device.compute.boost_clock_mhz * 1e6,
                        bandwidth_bps=device.memory.peak_bandwidth_gbs * 1e9,
                        latency_cycles=_calibrated(device.key)[0],
                        blocks_per_sm=occ.blocks_per_sm, warps_per_sm=occ.warps_per_sm)


def pram_app(row: Mapping[str, Any], work: WorkCounts, cpi: float) -> PramApp:
    """The application parameters of a ``times`` row from its work counts.

    Raises
    ------
    WorkUnavailable
        If the work source does not count instructions (cycles per thread unknown).
    """
    if work.instructions is None:
        raise WorkUnavailable(f"the {work.source} work source counts no instructions, so the "
                              "cycles per thread are unknown; use work='emulator'")
    blocks, threads = int(row["blocks"]), int(row["threads_per_block"])
    return PramApp(blocks=blocks, threads_per_block=threads,
                   instructions_per_thread=work.instructions / (blocks * threads), cpi=cpi,
                   bytes_read=work.bytes_global_read, bytes_written=work.bytes_global_write)


@register
class GpuPram(Predictor):
    """GPU à la (QRQW) PRAM (Kothapalli et al. 2009): see the module docstring.

    Parameters
    ----------
    work
        Work provider for instructions and bytes (``emulator``: the only one that counts
        instructions).
    cpi
        Cycles per instruction on one lane (the paper's cycles per operation).
    launch_overhead_s
        Fixed cost of a launch; ``None`` takes the device's calibration, 0 leaves it out.
    """

    name = "gpu-pram"
    needs = frozenset({"source", "spec"})
    description = ("Kothapalli et al.'s GPU a la QRQW PRAM: rounds of resident blocks x (cycles "
                   "per thread on the SM's lanes + the QRQW queue of global memory)")
    insight = ("ETP: time from 7 platform and 6 application parameters; the breakdown says "
               "whether compute, the memory queue or the memory latency dominates")
    learned = False
    columns = ("kernel", "language", "size", "tunables", "device", "sm_count", "blocks",
               "threads_per_block", "registers", "static_shared", "dynamic_shared")

    def __init__(self, *, work: str = "emulator", cpi: float = 1.0,
                 launch_overhead_s: float | None = None):
        self.work = work
        self.cpi = cpi
        self.launch_overhead_s = launch_overhead_s

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """A corpus launch (the work providers count corpus kernels only)."""
        if inputs.corpus is None:
            raise InputError("gpu-pram takes the cycles per thread from kerncast's work "
                             "providers, which count corpus kernels only; predict your own "
                             "kernel with --model static")
        row = _launch_row(kernel, launch, inputs.corpus, inputs)
        prediction = self._one(row)
        if not math.isfinite(prediction.seconds):
            raise InputError(f"gpu-pram cannot predict {kernel.name}: "
                             f"{prediction.based_on.get('error')}; use --model static")
        prediction.based_on["configuration"] = launch.label()
        return prediction

    def _one(self, row: Mapping[str, Any]) -> Prediction:
        try:
            hw = pram_platform(row)
            work = launch_work(row, self.work)
            app = pram_app(row, work, self.cpi)
        except (WorkUnavailable, InputError) as exc:
            return Prediction(math.nan, self.name, based_on={"error": str(exc)})
        cycles = pram_cycles(app, hw)
        launch = self._launch_s(str(row["device"]))
        seconds = cycles.total / hw.clock_hz + launch
        parts = {"compute": cycles.rounds * cycles.compute / hw.clock_hz,
                 "memory": cycles.rounds * cycles.queue / hw.clock_hz,
                 "latency": cycles.rounds * cycles.latency / hw.clock_hz, "launch": launch}
        return Prediction(seconds, self.name, breakdown=parts,
                          bottleneck=max(("compute", "memory", "latency"), key=parts.__getitem__),
                          based_on={"work": work.source, "platform": asdict(hw),
                                    "application": asdict(app), "rounds": cycles.rounds,
                                    "device": str(row["device"]), "sm_count": hw.sm_count})

    def _launch_s(self, device: str) -> float:
        if self.launch_overhead_s is not None:
            return float(self.launch_overhead_s)
        return _calibrated(get_device(device).key)[1]


def _launch_row(kernel: Any, launch: Any, corpus: tuple, inputs: LaunchInputs) -> dict[str, Any]:
    """A ``times``-like row of a corpus launch, with the registers ptxas gives its build."""
    from kerncast.frontend import build  # noqa: PLC0415 (the compiler loads on use)

    corpus_kernel, config = corpus
    device = get_device(inputs.device)
    res = build(kernel, device.ptx_target).kernel(kernel.name).resources(device.ptx_target)
    return {"kernel": corpus_kernel.name, "language": kernel.language, "size": config.size,
            "tunables": dict(config.tunables), "device": device.key,
            "sm_count": inputs.sm_count or device.compute.sm_count, "blocks": launch.blocks,
            "threads_per_block": launch.threads_per_block, "registers": res.registers,
            "static_shared": res.shared_static, "dynamic_shared": launch.dynamic_shared}


def _positive_int(value: Any, default: int) -> int:
    try:
        result = int(value)
    except (TypeError, ValueError):
        return default
    return result if result > 0 else default


def _count(value: Any) -> int:
    try:
        result = int(value)
    except (TypeError, ValueError):
        return 0
    return max(result, 0)
