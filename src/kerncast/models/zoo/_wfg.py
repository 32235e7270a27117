"""``wfg``: the survey's approximation of Baghsorkhi et al.'s work-flow graph (its Eq. 3).

Paper: S. S. Baghsorkhi, M. Delahaye, S. J. Patel, W. D. Gropp, W. W. Hwu, "An adaptive
performance modeling tool for GPU architectures", PPoPP 2010 (the survey's [2], its
section 7). The tool builds a work-flow graph of the kernel with a compiler front end
that the survey could not obtain; the survey evaluates instead the paper's Eq. (4), its
own Eq. (3), the memory stall per memory operation of a warp when bandwidth runs short::

    Latency_BW = max(0, (CYC_mem - CYC_compute) / NUM_mem) + SIMD_work / SIMD_engine   (3)

with the metrics taken from counters and the spec (the survey's Fig. 6a). Today's Nsight
Compute counters for them (``warps`` = ``smsp__warps_launched.sum``)::

    NUM_mem     = gld_request + gst_request, per warp
                = (smsp__inst_executed_op_global_ld.sum + ..._global_st.sum) / warps
    CYC_compute = inst_per_warp x CPI
                = smsp__inst_executed.sum / warps x SIMD_work / SIMD_engine
    CYC_mem     = NUM_mem x WordSize / BWPerSM
    WordSize    = bytes one request moves: 32 x global sectors / global requests
                  (l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum over
                  l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum), coalescing
                  included
    BWPerSM     = the spec's DRAM bandwidth / SMs / boost clock, bytes per cycle
    SIMD_work / SIMD_engine = warp size / FP32 lanes per SM (the spec): 32 / 128 on an H100

CPI is the spec's cycles of the SM per warp instruction, ``SIMD_work / SIMD_engine``
(the survey takes CPI from the spec too). The survey's table writes ``CYC_mem = NUM_mem /
warps x WordSize x BWPerSM``; for cycles, bytes must be divided by a bandwidth in bytes
per cycle (or multiplied by cycles per byte), which is what kerncast does.

Seconds: the survey does not print its conversion; it says it "ended up using a
component-based approach" (its section 8). kerncast adds, per warp, the compute cycles
and the stall of each memory operation, and lets the busiest SM's warps take the SM's
cycles one after another (the CYC are throughput cycles of the whole SM)::

    cycles per warp = CYC_compute + NUM_mem x Latency_BW
    time = warps on the busiest SM x cycles per warp / f  (+ the calibrated launch cost)

(``warps on the busiest SM = warps x sm__ctas_launched.max / sm__ctas_launched.sum``).
Per warp this is ``max(CYC_compute, CYC_mem) + NUM_mem x SIMD_work / SIMD_engine``: a
roofline of the warp with an issue cycle per memory operation. ``launch=False`` leaves
out the launch cost (the survey has none); kerncast adds it by default because the
corpus's smallest launches take a few microseconds, most of them the launch.

Needs: ``counters`` and ``spec`` (the calibration only for the launch cost). Insight:
ETP and PBA (the survey's Table 2): whether a warp's memory traffic outruns its compute
(``Latency_BW`` above the SIMD term: bandwidth stalls), and by how much.

Not reproduced, and why: the work-flow graph itself (its compiler front end is not
available, as for the survey), so neither its per-path latencies, its bank-conflict
and divergence arcs nor the overlap of latency by other warps; caches (WFG ignores
them, and so does Eq. 3: every requested byte is charged at DRAM bandwidth, which is why
the survey found it inaccurate for small matrices that fit in caches); and the survey's
profiler side of Fig. 6a (``Latency_BW`` measured from ``sm_efficiency``, stalls and
elapsed cycles), which needs the run's cycles, a time kerncast never reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


from kerncast.models._base import Prediction
from kerncast.models.registry import register
from kerncast.models.zoo._components import (
    CounterFormula,
    Machine,
    busiest_share,
    bytes_per_request,
    metric,
    warps_per_block,
)

__all__ = ["WorkFlowGraph", "wfg_metrics"]


def _warps(c: Mapping[str, Any], m: Machine) -> float:
    launched = metric(c, "smsp__warps_launched.sum")
    return launched if launched > 0 else metric(c, "blocks", 1.0) * warps_per_block(c, m.warp_size)


def wfg_metrics(counters: Mapping[str, Any], m: Machine) -> dict[str, float]:
    """Eq. (3)'s metrics for one launch, per warp and in cycles of the SM."""
    warps = _warps(counters, m)
    requests = (metric(counters, "smsp__inst_executed_op_global_ld.sum")
                + metric(counters, "smsp__inst_executed_op_global_st.sum"))
    simd = m.warp_size / m.lanes["fma"]
    bw_per_sm = m.peak_dram_bps / m.sms / m.clock_hz
    num_mem = requests / warps
    cyc_compute = metric(counters, "smsp__inst_executed.sum") / warps * simd
    word = bytes_per_request(counters)
    cyc_mem = num_mem * word / bw_per_sm
    stall = max(0.0, (cyc_mem - cyc_compute) / num_mem) if num_mem > 0 else 0.0
    return {"warps": warps, "NUM_mem": num_mem, "CYC_compute": cyc_compute, "CYC_mem": cyc_mem,
            "WordSize": word, "BWPerSM": bw_per_sm, "CPI": simd, "SIMD_work/SIMD_engine": simd,
            "Latency_BW": stall + simd if num_mem > 0 else 0.0}


def _prediction(name: str, counters: Mapping[str, Any] | None, m: Machine,
                launch: bool) -> Prediction:
    if counters is None:
        return Prediction(math.nan, name, based_on={"error": "no counters of this launch"})
    w = wfg_metrics(counters, m)
    resident = w["warps"] * busiest_share(counters, m)
    compute = resident * w["CYC_compute"] / m.clock_hz
    memory = resident * w["NUM_mem"] * w["Latency_BW"] / m.clock_hz
    fixed = m.launch_s if launch else 0.0
    parts = {"compute": compute, "memory": memory, **({"launch": fixed} if launch else {})}
    bandwidth_bound = w["CYC_mem"] > w["CYC_compute"]
    return Prediction(seconds=compute + memory + fixed, model=name, breakdown=parts,
                      bottleneck="memory" if bandwidth_bound else "compute",
                      based_on={"wfg_per_warp": w, "warps_on_busiest_sm": resident,
                                "device": m.device, "sm_count": m.sms,
                                "caches": "ignored (every requested byte at DRAM bandwidth)"})


@register
class WorkFlowGraph(CounterFormula):
    """The survey's Eq. (3) for WFG, per warp from counters, in seconds (module docstring).

    Parameters
    ----------
    launch
        Add the calibrated fixed cost of a launch (the survey's model has none).
    """

    name = "wfg"
    description = ("Baghsorkhi et al.'s work-flow graph as the survey approximates it (Eq. 3): "
                   "bandwidth stalls per memory operation of a warp, from counters and the spec")
    insight = "ETP and PBA: compute cycles against memory cycles per warp, the stall per access"
    def __init__(self, *, launch: bool = True):
        self.launch = launch

    def _row(self, counters: Mapping[str, Any] | None, m: Machine) -> Prediction:
        return _prediction(self.name, counters, m, self.launch)
