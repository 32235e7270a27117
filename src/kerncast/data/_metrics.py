"""The Nsight Compute metric set that the ``counters`` table records.

It covers the features of the sampling seed's Table 1 (GTX 280/580 counters for the
SVR model) and the scaling seed's Table II (CodeXL counters for the cluster
classifier), translated to Hopper's metric names. Names follow Nsight Compute's
``<unit>__<counter>.<rollup>[.<submetric>]`` form; before profiling, the names are
checked against ``ncu --query-metrics`` on the GPU at hand and unknown ones are
dropped (and recorded), so a newer or older Nsight Compute never fails a campaign.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["METRICS", "Metric", "metric_names"]


@dataclass(frozen=True)
class Metric:
    name: str
    group: str
    meaning: str
    seed: str = ""


T1 = "sampling T1"
T2 = "scaling T2"

METRICS: tuple[Metric, ...] = (
    # time and cycles
    Metric("gpu__time_duration.sum", "time", "kernel duration (seconds)", f"{T1}: execution time"),
    Metric("sm__cycles_elapsed.avg", "time", "elapsed cycles per SM"),
    Metric("sm__cycles_elapsed.max", "time", "elapsed cycles of the busiest SM"),
    Metric("sm__cycles_active.avg", "time", "cycles with at least one warp resident, per SM"),
    # instructions
    Metric("smsp__inst_issued.sum", "instructions", "warp instructions issued (with replays)",
           f"{T1}: issued instructions"),
    Metric("smsp__inst_executed.sum", "instructions", "warp instructions executed",
           f"{T1}: executed instructions"),
    Metric("smsp__thread_inst_executed.sum", "instructions", "thread instructions executed",
           f"{T1}: work-items x instructions"),
    Metric("sm__inst_executed.avg.per_cycle_active", "instructions", "IPC per SM (active cycles)",
           f"{T2}: V IPC"),
    Metric("smsp__issue_active.avg.pct_of_peak_sustained_active", "instructions",
           "issue slots used, %"),
    Metric("smsp__thread_inst_executed_per_inst_executed.ratio", "instructions",
           "active threads per executed warp instruction", f"{T2}: VALUUtilization"),
    Metric("smsp__inst_executed_pipe_alu.sum", "mix", "instructions on the ALU pipe",
           f"{T2}: VALUInsts"),
    Metric("smsp__inst_executed_pipe_fma.sum", "mix", "instructions on the FMA pipe",
           f"{T2}: VALUInsts"),
    Metric("smsp__inst_executed_pipe_fp64.sum", "mix", "instructions on the FP64 pipe"),
    Metric("smsp__inst_executed_pipe_xu.sum", "mix", "instructions on the transcendental pipe"),
    Metric("smsp__inst_executed_pipe_lsu.sum", "mix", "instructions on the load/store pipe",
           f"{T2}: VFetchInsts + VWriteInsts"),
    Metric("smsp__inst_executed_op_global_ld.sum", "mix", "global load instructions",
           f"{T1}: global loads; {T2}: VFetchInsts"),
    Metric("smsp__inst_executed_op_global_st.sum", "mix", "global store instructions",
           f"{T2}: VWriteInsts"),
    Metric("smsp__inst_executed_op_local_ld.sum", "mix", "local (spill) load instructions"),
    Metric("smsp__inst_executed_op_local_st.sum", "mix", "local (spill) store instructions"),
    Metric("smsp__inst_executed_op_shared_ld.sum", "shared", "shared-memory load instructions",
           f"{T1}: shared loads; {T2}: LDSInsts"),
    Metric("smsp__inst_executed_op_shared_st.sum", "shared", "shared-memory store instructions",
           f"{T1}: shared stores; {T2}: LDSInsts"),
    Metric("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "flops", "FP32 adds (threads)"),
    Metric("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "flops", "FP32 multiplies"),
    Metric("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "flops", "FP32 FMAs"),
    Metric("smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", "flops", "FP64 adds"),
    Metric("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", "flops", "FP64 multiplies"),
    Metric("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", "flops", "FP64 FMAs"),
    # branches
    Metric("smsp__sass_branch_targets.sum", "branches", "branch targets executed",
           f"{T1}: branches"),
    Metric("smsp__sass_branch_targets_threads_divergent.sum", "branches",
           "divergent branch targets", f"{T1}: divergent branches"),
    Metric("smsp__sass_average_branch_targets_threads_uniform.pct", "branches",
           "branch targets taken uniformly by the warp, %"),
    Metric("smsp__inst_executed_op_branch.sum", "branches", "branch instructions executed",
           f"{T1}: branches"),
    # occupancy and blocks
    Metric("sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy",
           "achieved occupancy, %", f"{T1}: active work-groups; {T2}: Occupancy"),
    Metric("sm__maximum_warps_per_active_cycle_pct", "occupancy", "theoretical occupancy, %"),
    Metric("sm__ctas_launched.sum", "occupancy", "blocks launched", f"{T2}: NumWorkGroups"),
    Metric("sm__ctas_launched.max", "occupancy", "blocks launched on the busiest SM"),
    Metric("smsp__warps_launched.sum", "occupancy", "warps launched"),
    Metric("launch__waves_per_multiprocessor", "occupancy", "waves of resident blocks"),
    # caches and DRAM
    Metric("l1tex__t_sector_hit_rate.pct", "memory", "L1 sector hit rate, %",
           f"{T1}: L1 miss rate"),
    Metric("l1tex__t_sectors.sum", "memory", "L1 sectors accessed", f"{T1}: total L1 accesses"),
    Metric("l1tex__t_requests.sum", "memory", "L1 requests"),
    Metric("lts__t_sector_hit_rate.pct", "memory", "L2 sector hit rate, %",
           f"{T1}: L2 miss rate; {T2}: CacheHit"),
    Metric("lts__t_sectors.sum", "memory", "L2 sectors accessed"),
    Metric("lts__t_sectors_op_read.sum", "memory", "L2 sectors read"),
    Metric("lts__t_sectors_op_write.sum", "memory", "L2 sectors written"),
    Metric("dram__bytes_read.sum", "memory", "DRAM bytes read", f"{T2}: ReadBandwidth"),
    Metric("dram__bytes_write.sum", "memory", "DRAM bytes written", f"{T2}: WriteBandwidth"),
    Metric("dram__throughput.avg.pct_of_peak_sustained_elapsed", "memory",
           "DRAM throughput, % of peak", f"{T2}: MemTime"),
    # global and local requests
    Metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global", "global load requests",
           f"{T1}: global loads"),
    Metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global", "global load sectors",
           f"{T1}: coalesced loads; {T2}: FetchPerLoadByte"),
    Metric("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "global", "global store requests"),
    Metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "global", "global store sectors",
           f"{T2}: WritePerStoreByte"),
    Metric("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "global", "global atomic requests"),
    Metric("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "global",
           "global reduction requests"),
    Metric("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "global", "local load sectors"),
    Metric("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", "global", "local store sectors"),
    # shared-memory banks
    Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared",
           "bank conflicts of shared loads", f"{T1}: bank conflicts; {T2}: LDSBankConflict"),
    Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "shared",
           "bank conflicts of shared stores", f"{T1}: bank conflicts"),
    Metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared",
           "shared load wavefronts (replays when above instructions)", f"{T1}: warp serializes"),
    Metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared",
           "shared store wavefronts", f"{T1}: warp serializes"),
    # unit utilisation and stalls
    Metric("sm__throughput.avg.pct_of_peak_sustained_elapsed", "units", "SM throughput, %",
           f"{T2}: VALUBusy"),
    Metric("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", "units",
           "ALU pipe busy, %", f"{T2}: VALUBusy"),
    Metric("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "units",
           "FMA pipe busy, %", f"{T2}: VALUBusy"),
    Metric("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "units",
           "LSU pipe busy, %", f"{T2}: MemUnitBusy"),
    Metric("l1tex__throughput.avg.pct_of_peak_sustained_active", "units", "L1 throughput, %",
           f"{T2}: MemUnitBusy"),
    Metric("lts__throughput.avg.pct_of_peak_sustained_elapsed", "units", "L2 throughput, %"),
    Metric("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "units",
           "memory throughput, % (max over units)", f"{T2}: MemUnitBusy"),
    Metric("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "stalls",
           "warps waiting on L1TEX (global, local) data per issue", f"{T2}: MemUnitStalled"),
    Metric("smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio", "stalls",
           "warps waiting on the local/global queue per issue", f"{T2}: WriteUnitStalled"),
    Metric("smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio", "stalls",
           "warps waiting on the MIO queue (shared memory) per issue"),
    Metric("smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio", "stalls",
           "warps waiting on MIO data (shared memory, XU) per issue"),
    Metric("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "stalls",
           "warps waiting at a barrier per issue"),
    Metric("smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio", "stalls",
           "warps waiting on a busy math pipe per issue"),
    Metric("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "stalls",
           "warps waiting on a fixed-latency dependency per issue"),
    Metric("smsp__average_warps_issue_stalled_drain_per_issue_active.ratio", "stalls",
           "warps draining memory stores at exit per issue", f"{T2}: WriteUnitStalled"),
)


def metric_names() -> list[str]:
    """The names of :data:`METRICS`, in order."""
    return [m.name for m in METRICS]
