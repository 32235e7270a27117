"""``components``: Song et al.'s component model, from Nsight Compute counters.

Paper: S. Song, C. Su, B. Rountree, K. W. Cameron, "A simplified and accurate model of
power-performance efficiency on emergent GPU architectures", IPDPS 2013 (the survey's
[33], its section 4.4). Song et al. isolate the time a kernel spends on each major
component of the GPU (global memory, shared memory, computation, texture) from 13
performance counters and more than 30 parameters (code analysis, micro-benchmarks,
the spec), and call the largest component the bottleneck.

What kerncast computes, per launch, in seconds (``share`` is the busiest SM's part of
the launch, ``sm__ctas_launched.max / sm__ctas_launched.sum``: the SM-local components
are the busiest SM's, which also counts a last, partial wave of blocks)::

    compute  = max(issue, pipe_p)                    issue  = inst_issued * share / (S * f)
                                                     pipe_p = inst_p * share * 32 / (lanes_p * f)
    shared   = wavefronts_shared * share / (B_shared / 128 * f)
    l1tex    = lines_global * share / (r_L1(lines per request) * f)    (the texture component)
    global   = max(DRAM bytes / B_DRAM(write share), L2 sectors * 32 / B_L2)
    blocks   = t_block * blocks                      (block scheduling)
    time     = t_launch + max(compute, shared, l1tex, global, blocks)

``S`` is the schedulers per SM and ``lanes_p`` the results per clock per SM of pipe ``p``
(fma: fp32, alu: int32, fp64, xu: sfu, lsu: load/store) from the device spec; ``f`` the
spec's boost clock. From kerncast's calibration of the device (``kerncast calibrate``,
never fitted on the kernels predicted): ``B_shared`` (shared bytes per clock per SM; a
wavefront moves 32 banks x 4 bytes), ``r_L1`` (L1 lines per clock per SM against lines per
request, interpolated on the measured curve), ``B_DRAM`` (read, copy and write bandwidth,
interpolated by the share of bytes written: 0, 1/2, 1), ``B_L2``, the fixed cost of a
launch ``t_launch`` (an empty kernel) and the cost per block ``t_block`` (empty blocks). A
block's scheduling overlaps the work of the blocks before it, so it is a component that
may limit the launch, not a cost in series.

Combination: Song et al. compose the components along an execution-time pipeline drawn
by hand for each kernel; the survey found no systematic way to do so (its section 4.4)
and kerncast takes the largest component, which is also the paper's bottleneck rule,
with the fixed launch cost added in series. The bottleneck is the largest of the
components and the fixed launch cost.

Needs: ``counters`` (the whole launch's counters, ``sample_k`` 0) and ``spec`` (with its
calibration). Insight: ETP and PBA (the survey's Table 2): the time of each component
and the bottleneck component.

Not reproduced, and why: the per-kernel pipeline composition (hand-drawn, no rule to
automate); the paper's departure delay between global memory transactions (a Fermi
micro-benchmark; kerncast uses calibrated bandwidths instead); a texture component in
the paper's sense (Hopper unifies L1 and texture: the ``l1tex`` component stands for
it); power and energy (the paper's other two models; kerncast predicts time). No
counter normalised by the run's own time is read (see :data:`TIME_DERIVED`): with the
work counts those would give the measured time back.

This module also holds what the other counter models of the survey share: the counters
of a row's launch (:func:`launch_counters`), a metric read (:func:`metric`), the device's
figures (:func:`machine`) and the counter models' answer to a single launch
(:func:`counters_needed`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.calibrate import load_calibration
from kerncast.data import KEY_COLUMNS, Dataset
from kerncast.devices import get_device
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models.registry import register

__all__ = ["OCCUPANCY", "SECTORS_PER_LINE", "SHARED_WAVEFRONT_BYTES", "TIME_DERIVED",
           "Components", "Machine", "block_seconds", "busiest_share", "bytes_per_request",
           "component_times", "counters_needed", "dram_bandwidth", "dram_seconds",
           "launch_counters", "machine", "metric", "shared_wavefronts", "warps_per_block"]

#: Parts of a metric's name that mark it as the run's time, its cycles, or a rate or
#: percentage normalised by the run's elapsed or active cycles: counter models never read
#: them (with the work counts, any of them gives the measured time back).
TIME_DERIVED = ("gpu__time_duration", "cycles_elapsed", "cycles_active", "per_cycle_active",
                "pct_of_peak_sustained", "per_issue_active")
#: Achieved occupancy (resident warps per active cycle, over the maximum) is a ratio
#: that does not grow with the run's length; it is kept.
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
#: Bytes of one shared-memory wavefront: 32 banks of 4 bytes (CUDA guide, CC 5.0 on).
SHARED_WAVEFRONT_BYTES = 128.0
#: Sectors of one 128-byte L1 line.
SECTORS_PER_LINE = 4.0
PIPES = {"fma": "fp32", "alu": "int32", "fp64": "fp64", "xu": "sfu", "lsu": "load_store"}


# -- the counters of a row's launch --------------------------------------------------------

def _time_derived(name: str) -> bool:
    return name != OCCUPANCY and any(part in name for part in TIME_DERIVED)


def launch_counters(dataset: Dataset) -> list[dict[str, Any] | None]:
    """The counters of each ``times`` row's whole launch (``sample_k`` 0, status ok), in the
    order of ``dataset.times``, without the time-derived metrics; None where none exist."""
    rows, table = dataset.times, dataset.counters
    if table is None or not len(table) or not len(rows):
        return [None] * len(rows)
    if "sample_k" in table:
        table = table[table["sample_k"] == 0]
    if "status" in table:
        table = table[table["status"] == "ok"]
    keys = [k for k in KEY_COLUMNS if k in table.columns and k in rows.columns]
    keep = [c for c in table.columns if not _time_derived(str(c))]
    index = {tuple(r[k] for k in keys): r for r in table[keep].to_dict("records")}
    return [index.get(tuple(r[k] for k in keys)) for r in rows[keys].to_dict("records")]


def metric(counters: Mapping[str, Any], name: str, default: float = 0.0) -> float:
    """``counters[name]`` as a float; ``default`` where it is absent or not a number."""
    try:
        value = float(counters.get(name))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) else default


def warps_per_block(counters: Mapping[str, Any], warp_size: int = 32) -> int:
    """Warps in one block of the launch."""
    return max(1, -(-int(metric(counters, "threads_per_block", 1.0)) // warp_size))


def counters_needed(name: str) -> InputError:
    """The error a counter model gives for a single launch: it needs that launch's run."""
    return InputError(f"{name} predicts from Nsight Compute counters of the launch itself, so it "
                      "cannot predict a launch before it has run; predict it with --model static "
                      "(from the source) or --model sampling, or score "
                      f"{name} on a measured dataset with 'kerncast evaluate --models {name}'")


# -- the device: spec and calibration ---------------------------------------------------------

@dataclass(frozen=True)
class Machine:
    """The figures of one device that the counter models use (spec and calibration)."""

    device: str
    sms: int
    clock_hz: float
    schedulers: int
    warp_size: int
    warps_per_sm: int
    lanes: Mapping[str, float]
    instructions: Mapping[str, tuple[float, float]]
    dram_bps: tuple[float, float, float]
    l2_bps: float
    shared_bytes_per_clk: float
    l1_curve: tuple[tuple[float, float], ...]
    launch_s: float
    per_block_s: float
    latency: Mapping[str, float]
    peak_dram_bps: float


@lru_cache(maxsize=16)
def _machine(device: str) -> Machine:
    spec = get_device(device)
    cal = load_calibration(spec.key)
    mem = cal.memory
    return Machine(
        device=spec.key, sms=spec.compute.sm_count, clock_hz=spec.compute.boost_clock_mhz * 1e6,
        schedulers=spec.compute.schedulers_per_sm, warp_size=spec.compute.warp_size,
        warps_per_sm=spec.limits.warps_per_sm,
        lanes={pipe: float(getattr(spec.throughput, field)) for pipe, field in PIPES.items()},
        instructions={k: (v.throughput_per_clk_sm, v.latency_cycles)
                      for k, v in cal.instructions.items()},
        dram_bps=(mem["dram_read_gbs"] * 1e9, mem["dram_copy_gbs"] * 1e9,
                  mem["dram_write_gbs"] * 1e9),
        l2_bps=mem["l2_read_gbs"] * 1e9, shared_bytes_per_clk=mem["shared_bytes_per_clk_sm"],
        l1_curve=tuple((float(x), float(y)) for x, y in
                       cal.curves.get("l1_gather_lines_per_clk_sm_vs_lines", [[1.0, 1.0]])),
        launch_s=cal.launch["launch_overhead_s"], per_block_s=cal.launch.get("per_block_s", 0.0),
        latency={"dram": mem["dram_latency_cycles"], "l2": mem["l2_hit_latency_cycles"],
                 "l1": mem["l1_hit_latency_cycles"], "shared": mem["shared_latency_cycles"]},
        peak_dram_bps=spec.memory.peak_bandwidth_gbs * 1e9,
    )


def machine(device: str, sm_count: Any = None) -> Machine:
    """The figures of ``device`` with ``sm_count`` SMs (default: all of them).

    Raises
    ------
    InputError
        For an unknown device, or one without a calibration (``kerncast calibrate``).
    """
    base = _machine(str(device))
    try:
        sms = int(sm_count)
    except (TypeError, ValueError):
        return base
    return base if sms <= 0 or sms == base.sms else replace(base, sms=sms)


def busiest_share(counters: Mapping[str, Any], m: Machine) -> float:
    """The busiest SM's share of the launch's blocks (``1 / SMs`` when perfectly even)."""
    blocks = max(metric(counters, "blocks", 1.0), 1.0)
    total = metric(counters, "sm__ctas_launched.sum", blocks) or blocks
    most = metric(counters, "sm__ctas_launched.max", 0.0) or math.ceil(total / m.sms)
    return min(1.0, most / total)


def dram_bandwidth(read: float, write: float, m: Machine) -> float:
    """The calibrated DRAM bandwidth (bytes per second) of a mix of ``read`` and ``write``
    bytes: read, copy and write bandwidth at a share of writes of 0, 1/2 and 1."""
    total = read + write
    share = write / total if total > 0 else 0.0
    return float(np.interp(share, (0.0, 0.5, 1.0), m.dram_bps))


def dram_seconds(read: float, write: float, m: Machine) -> float:
    """DRAM time of ``read`` and ``write`` bytes at the calibrated bandwidth of their mix."""
    total = read + write
    return total / dram_bandwidth(read, write, m) if total > 0 else 0.0


def block_seconds(counters: Mapping[str, Any], m: Machine) -> float:
    """The calibrated time to schedule the launch's blocks (empty blocks, one after another)."""
    return m.per_block_s * metric(counters, "blocks", 0.0)


# -- the components -----------------------------------------------------------------------

def _compute(c: Mapping[str, Any], m: Machine, share: float) -> float:
    issue = metric(c, "smsp__inst_issued.sum", metric(c, "smsp__inst_executed.sum"))
    times = [issue * share / (m.schedulers * m.clock_hz)]
    for pipe, lanes in m.lanes.items():
        count = metric(c, f"smsp__inst_executed_pipe_{pipe}.sum")
        times.append(count * share * m.warp_size / (lanes * m.clock_hz))
    return max(times)


def shared_wavefronts(c: Mapping[str, Any]) -> float:
    """Shared-memory wavefronts of the launch (bank conflicts included)."""
    wavefronts = (metric(c, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
                  + metric(c, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"))
    if wavefronts > 0:
        return wavefronts
    # not counted: one per instruction plus one per bank conflict
    return sum(metric(c, name) for name in (
        "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"))


def bytes_per_request(c: Mapping[str, Any]) -> float:
    """Bytes one global load or store request moves (32-byte sectors per request)."""
    sectors = (metric(c, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
               + metric(c, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"))
    requests = (metric(c, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
                + metric(c, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"))
    if sectors <= 0 or requests <= 0:  # not counted by pipe: all L1 sectors over the
        sectors = metric(c, "l1tex__t_sectors.sum")  # global load and store instructions
        requests = (metric(c, "smsp__inst_executed_op_global_ld.sum")
                    + metric(c, "smsp__inst_executed_op_global_st.sum"))
    return 32.0 * sectors / requests if requests > 0 else 0.0


def _shared(c: Mapping[str, Any], m: Machine, share: float) -> float:
    per_clock = m.shared_bytes_per_clk / SHARED_WAVEFRONT_BYTES
    return shared_wavefronts(c) * share / (per_clock * m.clock_hz)


def _l1tex(c: Mapping[str, Any], m: Machine, share: float) -> float:
    sectors = metric(c, "l1tex__t_sectors.sum")
    requests = metric(c, "l1tex__t_requests.sum")
    if sectors <= 0:
        return 0.0
    lines = sectors / SECTORS_PER_LINE
    per_request = max(1.0, lines / requests) if requests > 0 else 1.0
    xs, ys = zip(*m.l1_curve)
    rate = float(np.interp(per_request, xs, ys))
    return lines * share / (rate * m.clock_hz)


def _global(c: Mapping[str, Any], m: Machine) -> tuple[float, float]:
    dram = dram_seconds(metric(c, "dram__bytes_read.sum"), metric(c, "dram__bytes_write.sum"), m)
    l2 = metric(c, "lts__t_sectors.sum") * 32.0 / m.l2_bps
    return dram, l2


def component_times(counters: Mapping[str, Any], m: Machine) -> dict[str, float]:
    """Seconds of each component of one launch: ``compute``, ``shared``, ``l1tex``,
    ``dram``, ``l2`` (``global`` is the larger of the two), ``blocks`` (scheduling them)
    and ``launch`` (the fixed cost)."""
    share = busiest_share(counters, m)
    dram, l2 = _global(counters, m)
    return {"compute": _compute(counters, m, share), "shared": _shared(counters, m, share),
            "l1tex": _l1tex(counters, m, share), "dram": dram, "l2": l2,
            "global": max(dram, l2), "blocks": block_seconds(counters, m), "launch": m.launch_s}


_COMPONENTS = ("compute", "shared", "l1tex", "global", "blocks")
_NAMES = {"compute": "computation (issue and pipes)", "shared": "shared memory",
          "l1tex": "L1/texture", "global": "global memory (DRAM, L2)",
          "blocks": "block scheduling", "launch": "launch (fixed cost)"}
_BOTTLENECK = {"compute": "compute", "blocks": "launch", "launch": "launch"}


def _prediction(name: str, counters: Mapping[str, Any] | None, m: Machine) -> Prediction:
    if counters is None:
        return Prediction(math.nan, name, based_on={"error": "no counters of this launch"})
    parts = component_times(counters, m)
    largest = max(_COMPONENTS, key=lambda k: parts[k])
    bottleneck = max((*_COMPONENTS, "launch"), key=lambda k: parts[k])
    memory = max(parts["shared"], parts["l1tex"], parts["global"])
    return Prediction(
        seconds=parts["launch"] + parts[largest], model=name,
        breakdown={"compute": parts["compute"], "memory": memory,
                   "launch": parts["launch"] + parts["blocks"]},
        bottleneck=_BOTTLENECK.get(bottleneck, "memory"),
        based_on={"components_s": parts, "bottleneck_component": _NAMES[bottleneck],
                  "device": m.device, "sm_count": m.sms,
                  "busiest_sm_share": busiest_share(counters, m)})


class CounterFormula(Predictor):
    """A model that computes each row's time from the counters of its run and the device;
    a subclass gives :meth:`_row`. It cannot predict a launch that has not run."""

    needs = frozenset({"counters", "spec"})
    learned = False
    columns = KEY_COLUMNS

    def _row(self, counters: Mapping[str, Any] | None, m: Machine) -> Prediction:
        raise NotImplementedError

    def explain(self, dataset: Dataset) -> list[Prediction]:
        """Each row's prediction with the figures behind it (NaN: no counters of the row)."""
        self._check_fitted()
        rows = dataset.times.to_dict("records")
        return [self._row(c, machine(r["device"], r.get("sm_count")))
                for r, c in zip(rows, launch_counters(dataset))]

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """Not possible: the counters are those of the launch's own run."""
        raise counters_needed(self.name)


@register
class Components(CounterFormula):
    """Song et al.'s components (global, L1/texture, shared memory, compute) from counters;
    time = launch + the largest; the largest is the bottleneck (see the module docstring)."""

    name = "components"
    description = ("Song et al. (IPDPS'13): per-component times from Nsight Compute counters at "
                   "the spec's and the calibration's throughputs; launch + the largest")
    insight = "ETP and PBA: the time of each GPU component, the largest is the bottleneck"

    def __init__(self) -> None:
        """No parameters: every figure comes from the counters, the spec and the calibration."""

    def _row(self, counters: Mapping[str, Any] | None, m: Machine) -> Prediction:
        return _prediction(self.name, counters, m)
