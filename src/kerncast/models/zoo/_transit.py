"""Transit (Li et al.): a bottleneck figure from counters. Not a time model.

Paper: A. Li, Y. C. Tay, A. Kumar, H. Corporaal, "Transit: a visual analytical model for
multithreaded machines", HPDC 2015 (the survey's [19], its section 4.5). The machine is a
computation system (CS: a single queue with one server per execution slot) and a memory
system (MS: an aggregate queue), with threads as the users of an interactive queueing
network. The CS's demand for memory service and the MS's supply of it are two
throughput curves; drawn together (the transit figure) they meet at the equilibrium,
which shows the bottleneck and the direction to optimise.

kerncast's reading, per SM, in memory requests (a warp's global load or store) per
cycle, with ``k`` requests in the MS and ``n`` resident warps (achieved occupancy)::

    demand(k) = min((n - k) / Z, C)      Z = instructions per request (a warp's cycles
                                             of issue between two requests),
                                         C = min over the CS's resources (issue: c / Z
                                             with c schedulers per SM, its servers; each
                                             pipe; shared memory) of supply_r / demand_r
    supply(k) = min(k / L, B)            L = latency of a request (calibrated L1, L2 and
                                             DRAM latencies weighted by the hit rates),
                                         B = min over L1, L2 and DRAM of
                                             supply_r / demand_r (each resource's
                                             throughput over its use per request; DRAM's
                                             as in ``components``, by the write share)
    X* = min(n / (Z + L), B, C)          the equilibrium (where the curves meet)
    n* = B * (Z + L)                     the warps that would saturate the MS

``regime`` is ``latency`` where ``X* = n / (Z + L)`` (too few warps or too little memory
parallelism: the curves meet on the MS's latency slope; more warps, ILP or MLP help),
``memory`` where ``X* = B`` (the MS saturates; the limiting resource is named; fewer
bytes per request help: coalescing, caching), ``compute`` where ``X* = C`` (the CS
saturates: the issue slots, a pipe or shared memory; fewer instructions help). Every
resource's demand per request, supply per cycle and the requests per cycle it allows
are in ``resources``; the bottleneck is the one that sets ``X*`` (``latency`` in the
latency regime). Shared memory is counted with the CS: Transit's MS is the path to
global memory.

Why it is not a registered time predictor: Transit is a throughput analysis, and the
survey concludes it "cannot be used ... for execution time prediction" (its section
4.5). ``requests / X*`` would be a number of seconds, but Transit draws no such line:
it has no model of how many requests a kernel makes in what order, of waves of blocks,
or of the launch, and such a time would be ``components`` with a latency term, not
Transit. So kerncast gives the figure: :func:`transit_figures`.

Needs: the counters of the launch and the device (spec and calibration). Insight: PBA
(the survey's Table 2). Not reproduced, and why: the paper's per-platform measured
MS throughput function (kerncast draws it from calibrated latency and bandwidths); the
survey's criticisms stand (no caches in the paper's model, no SIMD width, no
divergence): kerncast's L uses the hit rates, the rest is left out as in the paper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kerncast.models.zoo._components import (
    SECTORS_PER_LINE,
    SHARED_WAVEFRONT_BYTES,
    Machine,
    dram_bandwidth,
    machine,
    metric,
    shared_wavefronts,
)
from kerncast.models.zoo._qa import achieved_warps

__all__ = ["transit_figures"]

_DIRECTIONS = {
    "latency": "too few requests in flight to use the memory system: more resident warps, "
               "more independent loads per warp (ILP, MLP)",
    "memory": "the memory system saturates: fewer bytes per request (coalescing, caching, "
              "shared memory)",
    "compute": "the computation side saturates (issue slots, a pipe or shared memory): "
               "fewer instructions or shared accesses per request",
}


def _requests(c: Mapping[str, Any]) -> float:
    return (metric(c, "smsp__inst_executed_op_global_ld.sum")
            + metric(c, "smsp__inst_executed_op_global_st.sum"))


def _latency(c: Mapping[str, Any], m: Machine) -> float:
    """Cycles of one request: L1 hits, L2 hits and DRAM at their calibrated latencies."""
    h1 = metric(c, "l1tex__t_sector_hit_rate.pct") / 100.0
    h2 = metric(c, "lts__t_sector_hit_rate.pct") / 100.0
    beyond = h2 * m.latency["l2"] + (1.0 - h2) * m.latency["dram"]
    return h1 * m.latency["l1"] + (1.0 - h1) * beyond


def _resource(demand: float, supply: float, kind: str) -> dict[str, Any]:
    allows = supply / demand if demand > 0 else float("inf")
    return {"kind": kind, "demand_per_request": demand, "supply_per_cycle": supply,
            "requests_per_cycle": allows}


def _resources(c: Mapping[str, Any], m: Machine, requests: float) -> dict[str, dict[str, Any]]:
    """Each resource's use per request and throughput per cycle per SM."""
    per = 1.0 / requests
    read, write = metric(c, "dram__bytes_read.sum"), metric(c, "dram__bytes_write.sum")
    out = {
        "dram": _resource((read + write) * per,
                          dram_bandwidth(read, write, m) / m.sms / m.clock_hz, "memory"),
        "l2": _resource(metric(c, "lts__t_sectors.sum") * 32.0 * per,
                        m.l2_bps / m.sms / m.clock_hz, "memory"),
        "l1": _resource(metric(c, "l1tex__t_sectors.sum") / SECTORS_PER_LINE * per,
                        max(y for _, y in m.l1_curve), "memory"),
        "shared": _resource(shared_wavefronts(c) * per,
                            m.shared_bytes_per_clk / SHARED_WAVEFRONT_BYTES, "compute"),
        "issue": _resource(metric(c, "smsp__inst_executed.sum") * per, m.schedulers, "compute"),
    }
    for pipe, lanes in m.lanes.items():
        out[f"pipe_{pipe}"] = _resource(
            metric(c, f"smsp__inst_executed_pipe_{pipe}.sum") * m.warp_size * per, lanes,
            "compute")
    return out


def _curves(n: float, z: float, cs: float, latency: float, ms: float) -> dict[str, list[float]]:
    ks = [n * i / 32 for i in range(33)]
    return {"k": ks, "demand": [min((n - k) / z, cs) for k in ks],
            "supply": [min(k / latency, ms) for k in ks]}


def _slowest(resources: dict[str, dict[str, Any]], kind: str) -> str:
    return min((k for k, v in resources.items() if v["kind"] == kind),
               key=lambda k: resources[k]["requests_per_cycle"])


def transit_figures(counters_row: Mapping[str, Any], device: str | Machine) -> dict[str, Any]:
    """The transit figure of one launch from its counters: demand and supply of each
    resource, the equilibrium, the bottleneck and the direction to optimise.

    Parameters
    ----------
    counters_row
        One row of a ``counters`` table (the whole launch, ``sample_k`` 0).
    device
        The device's name (its spec and calibration are loaded) or a :class:`Machine`.

    Returns
    -------
    dict
        ``n_warps`` (n), ``think_cycles`` (Z), ``latency_cycles`` (L), ``supply`` (B),
        ``compute_supply`` (C), ``equilibrium`` (X*, requests per cycle per SM),
        ``n_saturate`` (n*), ``regime``, ``bottleneck``, ``direction``, ``resources``
        and ``curves`` (the figure: demand and supply against k). A launch without
        global requests has no memory side: regime ``compute``, no curves.
    """
    m = device if isinstance(device, Machine) else machine(device, counters_row.get("sm_count"))
    requests = _requests(counters_row)
    n = achieved_warps(counters_row, m)
    if requests <= 0:
        return {"n_warps": n, "regime": "compute", "bottleneck": "issue",
                "direction": _DIRECTIONS["compute"], "resources": {}, "curves": {}}
    resources = _resources(counters_row, m, requests)
    z = resources["issue"]["demand_per_request"]
    limit, slowest = _slowest(resources, "memory"), _slowest(resources, "compute")
    b = resources[limit]["requests_per_cycle"]
    cs = resources[slowest]["requests_per_cycle"]
    latency = _latency(counters_row, m)
    candidates = {"latency": n / (z + latency), "memory": b, "compute": cs}
    regime = min(candidates, key=lambda k: candidates[k])
    bottleneck = {"latency": "latency", "memory": limit, "compute": slowest}[regime]
    return {"n_warps": n, "think_cycles": z, "latency_cycles": latency, "supply": b,
            "compute_supply": cs, "equilibrium": candidates[regime],
            "n_saturate": b * (z + latency), "regime": regime, "bottleneck": bottleneck,
            "direction": _DIRECTIONS[regime], "resources": resources,
            "curves": _curves(n, z, cs, latency, b)}
