"""``qa``: Zhang & Owens's quantitative analysis, on kerncast's calibration of the device.

Paper: Y. Zhang, J. D. Owens, "A quantitative performance analysis model for GPU
architectures", HPCA 2011 (the survey's [38], its section 6). The GPU is measured with
micro-benchmarks ("everything"): the throughput of each class of instructions, shared
memory bandwidth and global memory bandwidth, each as the occupancy varies. A kernel is
a breakdown of its instructions; the time of each of the three components is its work
over the tabulated throughput at the kernel's occupancy, and the dominating component
is both the bottleneck and the time (a table look-up).

What kerncast computes, per launch (``share`` is the busiest SM's part of the blocks,
``W`` the achieved warps per SM, ``sm__warps_active`` over its peak, times the spec's
warps per SM; ``f`` the boost clock)::

    pipeline = sum over classes c of  N_c * share * 32 / (T_c(W) * f)
               + N_other * share / (S * f)
    shared   = wavefronts * share / (min(B_shared / 128, W / L_shared) * f)
    global   = max(DRAM bytes / B_DRAM(write share), L2 bytes / B_L2)
    time     = max(pipeline, shared, global)  (+ the calibrated launch cost)

Each Nsight Compute pipe is one class of the calibration (``kerncast calibrate``: a
dependent chain's latency ``L_c`` and a throughput ``T_c`` in results per clock per SM):
fma -> ``fp32``, alu -> ``int_logic``, fp64 -> ``fp64``, xu -> ``sfu``, lsu -> ``warp``
(shuffles, which Hopper issues to the load/store pipe); ``N_other`` is the instructions
on no counted pipe (branches, uniform datapath), issued at ``S`` per clock per SM. The
occupancy table of the instructions and of shared memory is not a measured one: kerncast
derives it from the calibrated latency and throughput by Little's law, each warp with
one instruction (or shared access) in flight: ``T_c(W) = min(T_c, W * 32 / L_c)``.
``B_DRAM`` is the calibrated read, copy or write bandwidth by the share of bytes written,
as in ``components``; ``B_L2`` the calibrated L2 bandwidth.

``launch=False`` leaves out the calibrated fixed cost of a launch (the paper's kernels
ran for milliseconds and it has none).

Needs: ``counters`` (the instruction mix, memory traffic and occupancy of the launch)
and ``spec`` (with its calibration). Insight: ETP and PBA (the survey's Table 2): the
time of the instruction pipeline, shared memory and global memory, and which dominates.

Not reproduced, and why: the paper's micro-benchmark suite (unavailable, as for the
survey: kerncast's calibration stands in for it, with the occupancy dependence derived,
not measured); the occupancy dependence of global memory bandwidth (the calibration has
no such table; derived by Little's law with one request per warp in flight, it charged
small launches over 700 times their time on the H100, because the L2 also serves
traffic that no global request of the kernel makes, and it was left out); its
instruction breakdown of native GT200 code by instruction type (Nsight Compute counts
instructions by pipe, so classes sharing a pipe share its throughput, and the sum over
classes charges pipes that on Hopper run side by side one after the other); its
transaction-size table for global memory (kerncast uses the DRAM and L2 bytes the
counters measured, so caches are accounted for, which the survey doubted QA could do);
atomics (not a class of the paper).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


from kerncast._errors import InputError
from kerncast.devices import occupancy
from kerncast.models._base import Prediction
from kerncast.models.registry import register
from kerncast.models.zoo._components import (
    CounterFormula,
    OCCUPANCY,
    SHARED_WAVEFRONT_BYTES,
    Machine,
    busiest_share,
    dram_seconds,
    metric,
    shared_wavefronts,
)

__all__ = ["CLASSES", "QuantitativeAnalysis", "achieved_warps", "qa_times"]

#: The calibrated instruction class of each Nsight Compute pipe.
CLASSES = {"fma": "fp32", "alu": "int_logic", "fp64": "fp64", "xu": "sfu", "lsu": "warp"}


def achieved_warps(c: Mapping[str, Any], m: Machine) -> float:
    """Warps resident per SM: achieved occupancy, else the theoretical one, else the most."""
    pct = metric(c, OCCUPANCY)
    if pct > 0:
        return pct / 100.0 * m.warps_per_sm
    try:
        occ = occupancy(m.device, int(metric(c, "threads_per_block", 1.0)),
                        int(metric(c, "registers", 0.0)),
                        int(metric(c, "static_shared") + metric(c, "dynamic_shared")))
    except InputError:
        return float(m.warps_per_sm)
    return float(occ.warps_per_sm) or float(m.warps_per_sm)


def _rate(throughput: float, latency: float, warps: float, warp_size: int) -> float:
    """Results per clock per SM at ``warps`` resident warps (Little's law)."""
    return min(throughput, warps * warp_size / latency) if latency > 0 else throughput


def _pipeline(c: Mapping[str, Any], m: Machine, share: float, warps: float) -> dict[str, float]:
    out = {}
    for pipe, cls in CLASSES.items():
        throughput, latency = m.instructions[cls]
        count = metric(c, f"smsp__inst_executed_pipe_{pipe}.sum")
        out[cls] = count * share * m.warp_size / (_rate(throughput, latency, warps, m.warp_size)
                                                  * m.clock_hz)
    counted = sum(metric(c, f"smsp__inst_executed_pipe_{pipe}.sum") for pipe in CLASSES)
    other = max(0.0, metric(c, "smsp__inst_executed.sum") - counted)
    out["other"] = other * share / (m.schedulers * m.clock_hz)
    return out


def _shared(c: Mapping[str, Any], m: Machine, share: float, warps: float) -> float:
    per_clock = min(m.shared_bytes_per_clk / SHARED_WAVEFRONT_BYTES, warps / m.latency["shared"])
    return shared_wavefronts(c) * share / (per_clock * m.clock_hz)


def _global(c: Mapping[str, Any], m: Machine) -> tuple[float, float]:
    dram = dram_seconds(metric(c, "dram__bytes_read.sum"), metric(c, "dram__bytes_write.sum"), m)
    return dram, metric(c, "lts__t_sectors.sum") * 32.0 / m.l2_bps


def qa_times(counters: Mapping[str, Any], m: Machine) -> dict[str, Any]:
    """Seconds of the three components (and of each instruction class) of one launch."""
    share = busiest_share(counters, m)
    warps = achieved_warps(counters, m)
    classes = _pipeline(counters, m, share, warps)
    dram, l2 = _global(counters, m)
    return {"pipeline": sum(classes.values()), "shared": _shared(counters, m, share, warps),
            "global": max(dram, l2), "dram": dram, "l2": l2, "classes": classes,
            "warps_per_sm": warps}


_COMPONENTS = {"pipeline": "compute", "shared": "memory", "global": "memory"}


def _prediction(name: str, counters: Mapping[str, Any] | None, m: Machine,
                launch: bool) -> Prediction:
    if counters is None:
        return Prediction(math.nan, name, based_on={"error": "no counters of this launch"})
    t = qa_times(counters, m)
    dominant = max(_COMPONENTS, key=lambda k: t[k])
    fixed = m.launch_s if launch else 0.0
    parts = {"compute": t["pipeline"], "memory": max(t["shared"], t["global"]),
             **({"launch": fixed} if launch else {})}
    bottleneck = "launch" if fixed > t[dominant] else _COMPONENTS[dominant]
    return Prediction(seconds=fixed + t[dominant], model=name, breakdown=parts,
                      bottleneck=bottleneck,
                      based_on={"components_s": {k: t[k] for k in ("pipeline", "shared", "global",
                                                                   "dram", "l2")},
                                "classes_s": t["classes"], "dominant": dominant,
                                "warps_per_sm": t["warps_per_sm"], "device": m.device,
                                "sm_count": m.sms})


@register
class QuantitativeAnalysis(CounterFormula):
    """Zhang & Owens's QA: instruction pipeline, shared and global memory at calibrated
    throughputs for the kernel's occupancy; the dominating one is the time.

    Parameters
    ----------
    launch
        Add the calibrated fixed cost of a launch (the paper's model has none).
    """

    name = "qa"
    description = ("Zhang & Owens (HPCA'11): instruction mix, shared and global traffic from "
                   "counters over calibrated throughputs at the achieved occupancy; the "
                   "dominating component")
    insight = "ETP and PBA: pipeline, shared and global memory time; the dominant one"
    def __init__(self, *, launch: bool = True):
        self.launch = launch

    def _row(self, counters: Mapping[str, Any] | None, m: Machine) -> Prediction:
        return _prediction(self.name, counters, m, self.launch)
