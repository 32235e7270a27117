"""``scaling-surfaces``: time and power across SM counts and devices from one base run.

The scaling-surfaces seed (Wu et al., HPCA 2015) on kerncast's hardware axes. A kernel
instance's measurements over the configurations (device x SM count) form a surface;
the model never learns a surface directly but its *scaling values*:

* SM scaling, on the base device: ``c_i = q(s_{i+1}) / q(s_i)`` between adjacent SM
  counts of the measured axis (8, 16, ..., 132);
* device scaling, at every SM count ``s``: ``d_s = q(other device, s) / q(base device, s)``
  (the H100's 3.35 TB/s against the H200's 4.8 TB/s; clocks are never changed).

K-means groups the training kernels' values into cluster sets (one on the SM scaling,
one per SM count on the device scaling); each centroid is a representative surface. A
classifier per cluster set (one sigmoid hidden layer, as many hidden nodes as clusters)
chooses a centroid from the base run's counters, min-max normalised with the training
minima and maxima (the analogues of the seed's Table II; counters that restate the
measured time, cycle counts and percentages of peak are left out). A prediction starts
from the base run's measured value, applies the SM scaling up to the target SM count,
then the device scaling at the target SM count.

The same pipeline serves three quantities: time per launch, dynamic power (average
board power minus the device's idle power) and energy per launch. ``classifier="oracle"``
picks the centroid nearest to the kernel's own measured values (for studies: it needs
the measurements the model is meant to predict). ``space="log"`` clusters the logarithms
of the scaling values instead of the values (``"ratio"`` is the published one).

``method="regression"`` (kerncast's variant, the default: it predicts held-out kernels
best) replaces the clusters and the classifier by one regression per quantity: extremely
randomised trees on (base run, target) pairs learn ``log(q(target) / q(base))`` from how
the base run is bound (its throughputs as percentages of peak, achieved occupancy, the
waves of blocks per SM, its time), where the target lies (the SM-count ratio, the
device, the wave-quantised ratio ``ceil(waves at the target) / ceil(waves at the base)``)
and what each SM would be asked for there (the busiest unit's throughput times the
SM-count ratio). Power's trees also read the time's ratio (measured in training, the
time trees' prediction when predicting) and the power that ratio gives if the launch's
dynamic energy stays the same (idle power plus the base's dynamic power over the time
ratio): a launch drawn out over fewer SMs spreads the same work over a longer time.
They learn the dynamic power's ratio (board power less the device's idle power), and
the prediction adds the target device's idle power back. Time's and power's trees both
read how busy the base run's energy loop kept the GPU (its median launch time times the
launches over the loop's length: base time x base power / base energy per launch): a
launch of a few microseconds has a median (event-timed, one launch at a time) that
holds a launch latency the loop's back-to-back launches hide, so the share rises above
one near the launch floor and tells such a launch from a longer one.
Every training instance with any measured target counts, also those measured on one
device only. Energy is the base energy times the time and power factors.
``method="clusters"`` is the published model.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerncast._errors import InputError
from kerncast.data import Dataset
from kerncast.devices import get_device, occupancy
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models.registry import register

__all__ = ["FEATURES", "METHODS", "PHYSICAL", "QUANTITIES", "SM_AXIS", "ScalingSurfaces",
           "classifier_inputs", "fit_surfaces", "merge_datasets", "parse_configuration",
           "physical_inputs", "predict_surface", "scaling_values", "surface_frame",
           "surface_grid"]

#: SM counts of the measured surfaces (green contexts below 132, the whole GPU at 132).
SM_AXIS: tuple[int, ...] = (8, 16, 24, 32, 48, 64, 96, 132)
#: Quantities with surfaces, and the column of :func:`surface_frame` each is read from.
QUANTITIES: dict[str, str] = {"time": "time_s", "power": "dynamic_w", "energy": "energy_j"}
INSTANCE = ["kernel", "size", "config"]
DEFAULT_BASE = "h100:132"
#: Dynamic power below this is read as this: the NVML reading just before a loop is at
#: times still warm from the previous one, so average minus idle can be near zero or below.
DYNAMIC_FLOOR_W = 5.0
#: The device's idle power: this quantile of the readings taken just before each loop.
IDLE_QUANTILE = 0.05
#: The seed's NumWorkGroups saturates at 320 work-groups on 32 CUs: 10 per CU.
WORKGROUPS_PER_SM_CAP = 10
#: The analogues of the seed's Table II (names follow the seed, in its order).
FEATURES: tuple[str, ...] = (
    "VALUInsts", "SALUInsts", "VFetchInsts", "LocalInsts", "VWriteInsts", "LDSInsts",
    "VALUUtilization", "CacheHit", "L1CacheHit", "MemUnitStalled", "WriteUnitStalled",
    "LDSBankConflict", "Occupancy", "FetchPerLoadByte", "WritePerStoreByte",
    "NumWorkGroups", "ReadBandwidth", "WriteBandwidth",
)
_VALU = ("smsp__inst_executed_pipe_alu.sum", "smsp__inst_executed_pipe_fma.sum",
         "smsp__inst_executed_pipe_fp64.sum", "smsp__inst_executed_pipe_xu.sum")
_MEM_STALLS = ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio")
#: Random starts of K-means and iterations of the network's L-BFGS training (with as many
#: hidden nodes as clusters and a few kernels per cluster it fits its training set well
#: before that and then only sharpens its outputs; the warning that it stopped is muted).
KMEANS_STARTS = 4
MLP_ITERATIONS = 300
#: ``method="regression"``: its inputs, read from the base run (throughputs are percentages
#: of peak over the run; Waves and BlocksPerSM are log2; BaseTime is log10 seconds).
PHYSICAL: tuple[str, ...] = (
    "SMThroughput", "DRAMThroughput", "L2Throughput", "L1Throughput", "IssueActive",
    "AchievedOccupancy", "SMBusy", "Waves", "BlocksPerSM", "BaseTime",
)
_PHYSICAL_COUNTERS = {
    "SMThroughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAMThroughput": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "L2Throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "L1Throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "IssueActive": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "AchievedOccupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
}
#: The regression's two model choices, fixed beforehand and not tuned on the held-out
#: kernels: trees per forest, and the fewest (base, target) pairs per leaf.
REGRESSION_TREES = 200
REGRESSION_LEAF = 2
METHODS = ("regression", "clusters")
#: The SM-local units of :func:`_pair_features`' demand, and the least demand it reads.
_LOCAL_UNITS = ("SMThroughput", "L1Throughput", "IssueActive")
DEMAND_FLOOR = 1e-3
_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
_SECTOR = 32


# -- configurations ------------------------------------------------------------------------

def parse_configuration(text: str, devices: Iterable[str] | None = None) -> tuple[str, int]:
    """``"h100:132"`` (or ``"h200"``, the whole GPU) as (device key, SM count).

    Raises
    ------
    InputError
        For an unknown device, an SM count that is not a number, or one off the measured
        axis (:data:`SM_AXIS`), or a device not among ``devices``.
    """

    name, _, sms = str(text).strip().partition(":")
    device = get_device(name).key
    try:
        sm_count = int(sms) if sms else SM_AXIS[-1]
    except ValueError:
        raise InputError(f"{text!r}: the SM count {sms!r} is not a whole number; write "
                         "DEVICE:SMS, e.g. h100:32") from None
    if sm_count not in SM_AXIS:
        raise InputError(f"{text!r}: {sm_count} SMs is outside the measured configurations; "
                         f"choose one of {', '.join(map(str, SM_AXIS))} SMs")
    known = list(devices) if devices is not None else None
    if known is not None and device not in known:
        raise InputError(f"{text!r}: no measured surfaces on {device}; the surfaces cover "
                         f"{', '.join(known)}")
    return device, sm_count


# -- the measured surfaces -----------------------------------------------------------------

def merge_datasets(datasets: Iterable[Dataset]) -> Dataset:
    """One dataset of several devices' tables (rows keep their ``device``)."""
    parts = list(datasets)
    tables = {}
    for name in parts[0].tables():
        frames = [getattr(d, name) for d in parts if len(getattr(d, name))]
        tables[name] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Dataset(**tables, name="+".join(d.name for d in parts))


def _swept_instances(times: pd.DataFrame) -> pd.DataFrame:
    if "experiment" not in times or not len(times):
        return pd.DataFrame(columns=INSTANCE)
    return times.loc[times["experiment"] == "sm-sweep", INSTANCE].drop_duplicates()


def _time_column(times: pd.DataFrame) -> pd.Series:
    if "time_median_s" in times:
        return times["time_median_s"].astype(float)
    return pd.Series(np.nan, index=times.index)


def surface_frame(dataset: Dataset) -> pd.DataFrame:
    """One row per (swept instance, device, SM count): ``time_s`` (median launch),
    ``power_w`` (average board power), ``idle_w``, ``dynamic_w`` and ``energy_j`` (per
    launch). Instances are the (kernel, size, config) with an ``sm-sweep``; their
    whole-GPU ``times`` rows are the 132-SM points."""
    times = dataset.times
    keys = [*INSTANCE, "device", "sm_count"]
    if not len(times) or "status" not in times:
        return pd.DataFrame(columns=[*keys, "time_s", "power_w", "idle_w", "energy_j"])
    ok = times[times["status"] == "ok"].assign(time_s=lambda t: _time_column(t))
    ok = ok.merge(_swept_instances(times), on=INSTANCE)[[*keys, "time_s"]]
    energy = dataset.energy
    if len(energy) and "avg_power_w" in energy:
        e = energy.loc[energy["status"] == "ok",
                       [*keys, "avg_power_w", "idle_power_w", "energy_per_launch_j"]]
        e.columns = [*keys, "power_w", "idle_w", "energy_j"]
        ok = ok.merge(e, on=keys, how="outer")
    for column in ("power_w", "idle_w", "energy_j"):
        if column not in ok:
            ok[column] = np.nan
    return ok.drop_duplicates(keys).reset_index(drop=True)


def idle_power(frame: pd.DataFrame) -> dict[str, float]:
    """Each device's idle power: a low quantile of the readings before each loop."""
    idle = frame.dropna(subset=["idle_w"])
    return {str(dev): float(g["idle_w"].quantile(IDLE_QUANTILE)) for dev, g in idle.groupby("device")}


def _with_dynamic(frame: pd.DataFrame, idle: Mapping[str, float]) -> pd.DataFrame:
    base = frame["device"].map(lambda d: idle.get(str(d), np.nan)).astype(float)
    return frame.assign(dynamic_w=np.maximum(frame["power_w"].astype(float) - base, DYNAMIC_FLOOR_W))


def surface_grid(frame: pd.DataFrame, column: str, devices: list[str]) -> tuple[list[tuple], np.ndarray]:
    """The instances and their values of ``column`` as an array [instance, device, SM]."""
    index = pd.MultiIndex.from_product([devices, list(SM_AXIS)], names=["device", "sm_count"])
    wide = (frame.pivot_table(index=INSTANCE, columns=["device", "sm_count"], values=column,
                              aggfunc="first", dropna=False)
            .reindex(columns=index))
    grid = wide.to_numpy(dtype=float).reshape(len(wide), len(devices), len(SM_AXIS))
    return [tuple(k) for k in wide.index], grid


def scaling_values(grid: np.ndarray) -> dict[str, np.ndarray]:
    """Scaling values of surfaces [instance, device, SM] (device 0 is the base device):
    ``"sm"`` [instance, SM step] along the base device, and ``"<d>@<s>"`` [instance, 1]:
    device ``d`` over the base device at the ``s``-th SM count."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {"sm": grid[:, 0, 1:] / grid[:, 0, :-1]}
        for d in range(1, grid.shape[1]):
            for s in range(grid.shape[2]):
                out[f"{d}@{s}"] = (grid[:, d, s] / grid[:, 0, s])[:, None]
    return out


# -- classifier inputs ---------------------------------------------------------------------

def _num(row: Mapping[str, Any], name: str) -> float:
    value = row.get(name, np.nan)
    try:
        return float(value) if value is not None else np.nan
    except (TypeError, ValueError):
        return np.nan


def _ratio(num: float, den: float) -> float:
    return num / den if np.isfinite(num) and np.isfinite(den) and den > 0 else np.nan


def _occupancy(row: Mapping[str, Any], device: str) -> Any:
    """The launch's theoretical occupancy on ``device`` (None where the row cannot say)."""
    try:
        return occupancy(device, int(row["threads_per_block"]), int(row.get("registers") or 32),
                         int(row.get("static_shared") or 0) + int(row.get("dynamic_shared") or 0))
    except (KeyError, TypeError, ValueError, InputError):
        return None


def classifier_inputs(counters: Mapping[str, Any], base_time_s: float, device: str = "h100",
                      sm_count: int = SM_AXIS[-1]) -> dict[str, float]:
    """The analogues of the seed's Table II from one run's Nsight Compute counters.

    Instruction counts are per warp (the seed's are per work-item); bandwidths are DRAM
    bytes over the run's measured time ``base_time_s``. Left out as restating the time:
    the duration, cycle counts, IPC and every percentage of peak (VALUBusy, SALUBusy,
    MemUnitBusy, VIPC, MemTime).
    """
    n = counters
    warps = _num(n, "smsp__warps_launched.sum")
    conflicts = (_num(n, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
                 + _num(n, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"))
    wavefronts = (_num(n, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
                  + _num(n, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"))
    read, write = _num(n, "dram__bytes_read.sum"), _num(n, "dram__bytes_write.sum")
    occ = _occupancy(n, device)
    return {
        "VALUInsts": _ratio(sum(_num(n, c) for c in _VALU), warps),
        "SALUInsts": _ratio(_num(n, "smsp__inst_executed_op_branch.sum"), warps),
        "VFetchInsts": _ratio(_num(n, "smsp__inst_executed_op_global_ld.sum"), warps),
        "LocalInsts": _ratio(_num(n, "smsp__inst_executed_op_local_ld.sum")
                             + _num(n, "smsp__inst_executed_op_local_st.sum"), warps),
        "VWriteInsts": _ratio(_num(n, "smsp__inst_executed_op_global_st.sum"), warps),
        "LDSInsts": _ratio(_num(n, "smsp__inst_executed_op_shared_ld.sum")
                           + _num(n, "smsp__inst_executed_op_shared_st.sum"), warps),
        "VALUUtilization": _num(n, "smsp__thread_inst_executed_per_inst_executed.ratio") / 32 * 100,
        "CacheHit": _num(n, "lts__t_sector_hit_rate.pct"),
        "L1CacheHit": _num(n, "l1tex__t_sector_hit_rate.pct"),
        "MemUnitStalled": sum(_num(n, c) for c in _MEM_STALLS),
        "WriteUnitStalled": _num(n, "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio"),
        "LDSBankConflict": _ratio(conflicts, wavefronts) if wavefronts > 0 else 0.0,
        "Occupancy": float(occ.occupancy) if occ is not None else np.nan,
        "FetchPerLoadByte": _ratio(read, _SECTOR * _num(n, _LD_SECTORS)),
        "WritePerStoreByte": _ratio(write, _SECTOR * _num(n, _ST_SECTORS)),
        "NumWorkGroups": min(_num(n, "blocks"), WORKGROUPS_PER_SM_CAP * sm_count),
        "ReadBandwidth": _ratio(read, base_time_s),
        "WriteBandwidth": _ratio(write, base_time_s),
    }


def physical_inputs(counters: Mapping[str, Any], base_time_s: float, device: str = "h100",
                    sm_count: int = SM_AXIS[-1]) -> dict[str, float]:
    """What ``method="regression"`` reads from one base run (:data:`PHYSICAL`): how the
    run is bound (throughputs as percentages of peak, achieved occupancy, the share of
    the run the SMs were active), its waves (blocks over the resident blocks of
    ``sm_count`` SMs, log2), its blocks per SM (log2) and its time (log10 s)."""
    n = counters
    out = {name: _num(n, metric) for name, metric in _PHYSICAL_COUNTERS.items()}
    out["SMBusy"] = _ratio(_num(n, "sm__cycles_active.avg"), _num(n, "sm__cycles_elapsed.avg")) * 100
    blocks = _num(n, "blocks")
    occ = _occupancy(n, device)
    resident = occ.blocks_per_sm if occ is not None and occ.blocks_per_sm > 0 else np.nan
    waves = _ratio(blocks, sm_count * resident)
    out["Waves"] = np.log2(waves) if waves > 0 else np.nan
    out["BlocksPerSM"] = np.log2(blocks / sm_count) if blocks > 0 else np.nan
    out["BaseTime"] = np.log10(base_time_s) if base_time_s > 0 else np.nan
    return out


def _pair_features(x: np.ndarray, base_sm: int, target: tuple[int, int]) -> np.ndarray:
    """A (base run, target) row: the base run's :data:`PHYSICAL` inputs (NaN read as 0),
    then log2 of the SM-count ratio, the target device (0: the base device), log2 of
    the wave-quantised ratio ceil(waves at the target) / ceil(waves at the base), and
    the demand each SM would see at the target: log2 of the base run's busiest SM-local
    unit (SM pipes, L1, issue), its DRAM and its L2 throughput (fractions of peak) times
    the SM-count ratio. A unit at 90% of peak on 132 SMs asks 4.95x its peak of 24."""
    device, sm_count = target
    ratio = base_sm / sm_count
    waves = 2.0 ** x[PHYSICAL.index("Waves")]
    if np.isfinite(waves):
        quantised = np.log2(np.ceil(waves * ratio) / np.ceil(waves))
    else:
        quantised = np.log2(ratio)
    busy = (_busiest(x, _LOCAL_UNITS), _busiest(x, ("DRAMThroughput",)), _busiest(x, ("L2Throughput",)))
    demand = [np.log2(max(b * ratio, DEMAND_FLOOR)) if np.isfinite(b) else 0.0 for b in busy]
    return np.r_[np.nan_to_num(x), np.log2(ratio), float(device), quantised, demand]


def _busiest(x: np.ndarray, units: tuple[str, ...]) -> float:
    """The highest of ``units``' throughputs in ``x``, as a fraction of peak (NaN: none)."""
    values = [x[PHYSICAL.index(u)] for u in units]
    finite = [v for v in values if np.isfinite(v)]
    return max(finite) / 100.0 if finite else np.nan


def _dynamic(board: float, idle: float) -> float:
    """Dynamic power: board power less the device's idle power, at least
    :data:`DYNAMIC_FLOOR_W` (NaN where either is missing)."""
    if not (np.isfinite(board) and np.isfinite(idle)):
        return np.nan
    return max(board - idle, DYNAMIC_FLOOR_W)


def _constant_energy(base_power: float, slower: float, idle: list[float] | None, device: int) -> float:
    """log of the board power at the target over the base's if the launch's dynamic
    energy stayed the same: the target device's idle power plus the base's dynamic power
    spread over ``slower`` times the base's time (0 where a figure is missing)."""
    if idle is None or not (np.isfinite(slower) and slower > 0 and np.isfinite(base_power)):
        return 0.0
    power = idle[device] + _dynamic(base_power, idle[0]) / slower
    return float(np.log(power / base_power)) if np.isfinite(power) and power > 0 else 0.0


def _loop_busy(base_time: Any, base_power: Any, base_energy: Any) -> Any:
    """log of how busy the base run's energy loop kept the GPU: its median launch time
    over the loop's time per launch (energy per launch over average power); 0 (busy)
    where a figure is missing."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(np.log(np.asarray(base_time) * base_power / base_energy),
                             nan=0.0, posinf=0.0, neginf=0.0)


def _fit_regression(x: np.ndarray, grid: np.ndarray, base: tuple[int, int], seed: int,
                    extra: np.ndarray, times: np.ndarray | None = None,
                    idle: list[float] | None = None) -> Any:
    """Trees on every (training instance, measured target) pair: ``log(q(target) /
    q(base))`` from :func:`_pair_features` and ``extra``, per instance columns (the base
    loop's :func:`_loop_busy`, and for power the log base power). ``times`` (the time
    grid) makes it power's: ``grid`` is the board power, the time's log ratio at the
    pair joins the row with :func:`_constant_energy` from ``idle`` (each device's idle
    power), and the target is the log ratio of the dynamic powers (:func:`_dynamic`).
    ``base`` is (device index, SM index) in ``grid``. A power pair without a measured
    time or an idle power is left out."""
    from sklearn.ensemble import ExtraTreesRegressor  # noqa: PLC0415 (on use: scikit-learn)

    rows, ys = [], []
    start = grid[:, base[0], base[1]]
    for i in range(len(grid)):
        if not (np.isfinite(x[i]).any() and np.isfinite(start[i]) and start[i] > 0):
            continue
        base_dynamic = _dynamic(start[i], idle[base[0]]) if idle is not None else np.nan
        for d in range(grid.shape[1]):
            for j, s in enumerate(SM_AXIS):
                value = grid[i, d, j]
                if (d, j) == base or not (np.isfinite(value) and value > 0):
                    continue
                feats = _pair_features(x[i], SM_AXIS[base[1]], (d, s))
                y = np.log(value / start[i])
                if times is not None:
                    slower = times[i, d, j] / times[i, base[0], base[1]]
                    if not (np.isfinite(slower) and slower > 0) or idle is None:
                        continue
                    y = np.log(_dynamic(value, idle[d]) / base_dynamic)
                    if not np.isfinite(y):
                        continue
                    feats = np.r_[feats, np.log(slower),
                                  _constant_energy(float(start[i]), slower, idle, d)]
                rows.append(np.r_[feats, np.nan_to_num(extra[i])])
                ys.append(y)
    if len(rows) < 2:
        return None
    trees = ExtraTreesRegressor(n_estimators=REGRESSION_TREES, min_samples_leaf=REGRESSION_LEAF,
                                random_state=seed)
    return trees.fit(np.array(rows), np.array(ys))


# -- fitting ---------------------------------------------------------------------------------

def _to_space(values: np.ndarray, space: str) -> np.ndarray:
    return np.log(values) if space == "log" else values


def _normalise(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    span = np.where(hi > lo, hi - lo, 1.0)
    out = (x - lo) / span
    return np.where(np.isfinite(out), out, 0.0)


def _cluster(values: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """K-means centroids and labels of ``values`` [n, d] (k clamped to the distinct rows)."""
    from sklearn.cluster import KMeans  # noqa: PLC0415 (on use: scikit-learn)

    k = max(1, min(k, len(np.unique(values.round(12), axis=0))))
    km = KMeans(n_clusters=k, n_init=KMEANS_STARTS, random_state=seed).fit(values)
    return km.cluster_centers_, km.labels_


def _classifier(x: np.ndarray, labels: np.ndarray, seed: int) -> Any:
    """The seed's network: one sigmoid hidden layer with as many nodes as clusters."""
    from sklearn.exceptions import ConvergenceWarning  # noqa: PLC0415 (on use: scikit-learn)
    from sklearn.neural_network import MLPClassifier  # noqa: PLC0415 (on use: scikit-learn)

    classes = np.unique(labels)
    if len(classes) < 2:
        return None
    net = MLPClassifier(hidden_layer_sizes=(int(labels.max()) + 1,), activation="logistic",
                        solver="lbfgs", max_iter=MLP_ITERATIONS, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return net.fit(x, labels)


def _fit_set(values: np.ndarray, x: np.ndarray, k: int, seed: int, space: str) -> dict[str, Any] | None:
    keep = np.all(np.isfinite(values), axis=1) & np.all(values > 0, axis=1)
    if keep.sum() < 2:
        return None
    centroids, labels = _cluster(_to_space(values[keep], space), k, seed)
    have_x = np.isfinite(x[keep]).all(axis=1)
    net = _classifier(x[keep][have_x], labels[have_x], seed) if have_x.sum() >= 2 else None
    majority = int(np.bincount(labels).argmax())
    return {"centroids": centroids, "classifier": net, "majority": majority,
            "members": int(keep.sum())}


def fit_surfaces(frame: pd.DataFrame, inputs: pd.DataFrame, *, base: tuple[str, int],
                 n_clusters: int = 12, seed: int = 0, space: str = "ratio",
                 quantities: Iterable[str] = tuple(QUANTITIES), method: str = "clusters",
                 physical: pd.DataFrame | None = None, clusters: bool | None = None
                 ) -> dict[str, Any]:
    """Fit the cluster sets and classifiers of every quantity (and, with
    ``method="regression"``, the regressions of time and power).

    Parameters
    ----------
    frame
        :func:`surface_frame` of the training instances.
    inputs
        :func:`classifier_inputs` of each training instance's base run, indexed by the
        instance (kernel, size, config).
    base
        The base configuration (device key, SM count).
    n_clusters
        Clusters per set (the seed chose 12 of 2..20); fewer where the set has fewer
        distinct kernels.
    space
        ``"ratio"`` clusters the scaling values (as published), ``"log"`` their logarithms.
    method
        ``"clusters"`` (published) or ``"regression"`` (kerncast's; see the module).
    physical
        :func:`physical_inputs` of each training instance's base run, indexed like
        ``inputs`` (``method="regression"`` only).
    clusters
        Whether to fit the cluster sets and their classifiers; by default only where the
        method predicts with them (``"clusters"``). The regression uses them only to
        predict with an oracle classifier (the kernel's own scaling), so it fits them
        only when asked: they are most of its fitting time.
    """
    if space not in ("ratio", "log"):
        raise InputError(f"space must be 'ratio' or 'log', not {space!r}")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    if method == "regression" and physical is None:
        raise InputError("method='regression' needs the base runs' physical inputs "
                         "(physical_inputs of each base run)")
    devices = [base[0], *sorted(set(frame["device"].astype(str)) - {base[0]})]
    idle = idle_power(frame)
    frame = _with_dynamic(frame, idle)
    inst, time_grid = surface_grid(frame, "time_s", devices)
    x_raw = inputs.reindex(pd.MultiIndex.from_tuples(inst, names=INSTANCE))[list(FEATURES)]
    x_raw = x_raw.to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanmin(x_raw, axis=0), np.nanmax(x_raw, axis=0)
    has_run = np.isfinite(x_raw).any(axis=1)
    x = np.where(has_run[:, None], _normalise(x_raw, lo, hi), np.nan)
    sets, regressions = {}, {}
    index = pd.MultiIndex.from_tuples(inst, names=INSTANCE)
    x_phys = (physical.reindex(index)[list(PHYSICAL)].to_numpy(dtype=float)
              if physical is not None else None)
    start = (0, SM_AXIS.index(int(base[1])))
    fit_sets = method == "clusters" if clusters is None else clusters
    for quantity in quantities:
        _, grid = surface_grid(frame, QUANTITIES[quantity], devices)
        if fit_sets:
            fitted = {name: _fit_set(v, x, n_clusters, seed, space)
                      for name, v in scaling_values(grid).items()}
            sets[quantity] = {name: s for name, s in fitted.items() if s is not None}
        if method == "regression" and quantity in ("time", "power") and x_phys is not None:
            _, board = surface_grid(frame, "power_w", devices)
            _, energy = surface_grid(frame, "energy_j", devices)
            at_base = [g[:, start[0], start[1]] for g in (time_grid, board, energy)]
            extra = _loop_busy(*at_base)[:, None]
            power = quantity == "power"
            if power:
                grid, extra = board, np.column_stack([extra, np.log(at_base[1])])
            regressions[quantity] = _fit_regression(
                x_phys, grid, start, seed, extra, time_grid if power else None,
                [idle.get(dv, np.nan) for dv in devices])
    return {"base": [base[0], int(base[1])], "devices": devices, "axis": list(SM_AXIS),
            "features": list(FEATURES), "lo": lo, "hi": hi, "idle_w": idle, "space": space,
            "n_clusters": int(n_clusters), "sets": sets, "method": method,
            "regressions": regressions, "kernels": sorted({k[0] for k in inst})}


# -- prediction ------------------------------------------------------------------------------

def _label(cluster_set: Mapping[str, Any], x: np.ndarray | None, truth: np.ndarray | None,
           space: str) -> int:
    centroids = np.asarray(cluster_set["centroids"])
    if truth is not None:
        if not np.all(np.isfinite(truth)) or not np.all(truth > 0):
            return -1
        return int(np.argmin(((centroids - _to_space(truth, space)) ** 2).sum(axis=1)))
    net = cluster_set["classifier"]
    if net is None or x is None:
        return int(cluster_set["majority"])
    return int(net.predict(x[None, :])[0])


def _values(cluster_set: Mapping[str, Any], label: int, space: str) -> np.ndarray:
    if label < 0:
        return np.full(np.asarray(cluster_set["centroids"]).shape[1], np.nan)
    row = np.asarray(cluster_set["centroids"])[label]
    return np.exp(row) if space == "log" else row


def _sm_factor(steps: np.ndarray, i_from: int, i_to: int) -> float:
    if i_to >= i_from:
        return float(np.prod(steps[i_from:i_to]))
    return float(1.0 / np.prod(steps[i_to:i_from]))


def _quantity_path(surfaces: Mapping[str, Any], quantity: str, x: np.ndarray | None,
                   truth: Mapping[str, np.ndarray] | None, target: tuple[str, int]) -> tuple[float, dict]:
    """The factor from the base to ``target`` for ``quantity``, and the clusters chosen."""
    sets, space = surfaces["sets"].get(quantity, {}), surfaces["space"]
    devices = list(surfaces["devices"])
    i_b, i_t = SM_AXIS.index(int(surfaces["base"][1])), SM_AXIS.index(int(target[1]))
    if "sm" not in sets:
        return np.nan, {}
    chosen = {"sm": _label(sets["sm"], x, None if truth is None else truth["sm"][0], space)}
    factor = _sm_factor(_values(sets["sm"], chosen["sm"], space), i_b, i_t)
    if target[0] != devices[0]:
        name = f"{devices.index(target[0])}@{i_t}" if target[0] in devices else ""
        if name not in sets:
            return np.nan, chosen
        chosen[name] = _label(sets[name], x, None if truth is None else truth[name][0], space)
        factor *= float(_values(sets[name], chosen[name], space)[0])
    return factor, chosen


def _normalised_inputs(surfaces: Mapping[str, Any], inputs: Mapping[str, float] | None) -> np.ndarray | None:
    if inputs is None:
        return None
    raw = np.array([float(inputs.get(f, np.nan)) for f in surfaces["features"]])
    lo, hi = np.asarray(surfaces["lo"], float), np.asarray(surfaces["hi"], float)
    return np.where(np.isfinite(raw), _normalise(raw, lo, hi), 0.0)


def predict_surface(surfaces: Mapping[str, Any], base_time: float,
                    base_counters: Mapping[str, Any] | None, targets: Iterable[tuple[str, int]], *,
                    base_power_w: float = np.nan, base_energy_j: float = np.nan,
                    truth: Mapping[str, Mapping[str, np.ndarray]] | None = None) -> pd.DataFrame:
    """Time, power and energy per launch at each target configuration from one base run.

    Parameters
    ----------
    surfaces
        What :func:`fit_surfaces` returned.
    base_time, base_power_w, base_energy_j
        The base run's measured median launch time, average board power and energy per
        launch (power and energy: NaN where the base run has none).
    base_counters
        The base run's counters (a ``counters`` row), or None with ``truth`` given.
    targets
        (device key, SM count) pairs on :data:`SM_AXIS`.
    truth
        The kernel's own scaling values per quantity: the oracle classifier.
    """
    base_dev = surfaces["base"][0]
    x = None
    if base_counters is not None:
        x = _normalised_inputs(surfaces, classifier_inputs(base_counters, base_time, base_dev,
                                                           int(surfaces["base"][1])))
    if surfaces.get("method") == "regression" and truth is None:
        return _predict_regression(surfaces, base_time, base_counters, list(targets),
                                   base_power_w, base_energy_j)
    idle = surfaces["idle_w"]
    base_dyn = _dynamic(base_power_w, idle.get(base_dev, np.nan))
    starts = {"time": base_time, "power": base_dyn, "energy": base_energy_j}
    rows = []
    for device, sm_count in targets:
        row: dict[str, Any] = {"device": device, "sm_count": int(sm_count)}
        for quantity, start in starts.items():
            factor, chosen = _quantity_path(surfaces, quantity, x,
                                            None if truth is None else truth.get(quantity),
                                            (device, sm_count))
            row[quantity] = start * factor
            row[f"{quantity}_clusters"] = chosen
        row["power_w"] = row.pop("power") + idle.get(device, np.nan)
        row["time_s"], row["energy_j"] = row.pop("time"), row.pop("energy")
        rows.append(row)
    return pd.DataFrame(rows)


def _predict_regression(surfaces: Mapping[str, Any], base_time: float,
                        base_counters: Mapping[str, Any] | None, targets: list[tuple[str, int]],
                        base_power_w: float, base_energy_j: float) -> pd.DataFrame:
    base_dev, base_sm = surfaces["base"][0], int(surfaces["base"][1])
    devices = list(surfaces["devices"])
    idle = [surfaces["idle_w"].get(dv, np.nan) for dv in devices]
    phys = (physical_inputs(base_counters, base_time, base_dev, base_sm)
            if base_counters is not None else {})
    x = np.array([phys.get(f, np.nan) for f in PHYSICAL], dtype=float)
    on = [device in devices for device, _ in targets]  # targets on the surfaces' devices
    factors = {q: np.full(len(targets), np.nan) for q in ("time", "power")}
    if np.isfinite(x).any() and any(on):
        feats = np.vstack([_pair_features(x, base_sm, (devices.index(device), int(sm_count)))
                           for (device, sm_count), ok in zip(targets, on) if ok])
        busy = float(_loop_busy(base_time, base_power_w, base_energy_j))
        for quantity in ("time", "power"):
            trees = surfaces["regressions"].get(quantity)
            if trees is None:
                continue
            rows = np.column_stack([feats, np.full(len(feats), busy)])
            if quantity == "power":
                rows = np.column_stack(
                    [feats, np.nan_to_num(np.log(factors["time"][np.asarray(on)])),
                     [_constant_energy(base_power_w, float(f), idle, devices.index(dv))
                      for f, (dv, _), ok in zip(factors["time"], targets, on) if ok],
                     np.full(len(feats), busy),
                     np.full(len(feats), np.nan_to_num(np.log(base_power_w)))])
            ratio = np.exp(trees.predict(rows))  # one call, all targets
            if quantity == "power":  # dynamic power's ratio: the target's idle power back
                idle_at = np.array([idle[devices.index(dv)] for (dv, _), ok in zip(targets, on) if ok])
                ratio = (idle_at + _dynamic(base_power_w, idle[0]) * ratio) / base_power_w
            factors[quantity][np.asarray(on)] = ratio
    return pd.DataFrame({"device": [d for d, _ in targets],
                         "sm_count": [int(s) for _, s in targets],
                         "time_s": base_time * factors["time"],
                         "power_w": base_power_w * factors["power"],
                         "energy_j": base_energy_j * factors["time"] * factors["power"],
                         "time_clusters": [{} for _ in targets],
                         "power_clusters": [{} for _ in targets],
                         "energy_clusters": [{} for _ in targets]})


def oracle_truth(frame: pd.DataFrame, instance: tuple, surfaces: Mapping[str, Any]) -> dict[str, dict]:
    """The instance's own scaling values (for ``classifier="oracle"``)."""
    part = _with_dynamic(frame, surfaces["idle_w"])
    part = part[(part[INSTANCE] == pd.Series(instance, index=INSTANCE)).all(axis=1)]
    out = {}
    for quantity, column in QUANTITIES.items():
        _, grid = surface_grid(part, column, list(surfaces["devices"]))
        if len(grid):
            out[quantity] = scaling_values(grid)
    return out


# -- base runs in a dataset --------------------------------------------------------------------

def _at(table: pd.DataFrame, device: str, sm_count: int) -> pd.DataFrame:
    if not len(table) or "device" not in table:
        return table
    sel = (table["device"] == device) & (table["sm_count"] == sm_count) & (table["status"] == "ok")
    return table[sel]


def base_runs(dataset: Dataset, base: tuple[str, int]) -> pd.DataFrame:
    """Each instance's base run: time, power, energy and counters row, indexed by instance.

    The time is the ``times`` row's median; where the harness has hidden it (its ``time_``
    columns), the median launch time the base run's energy measurement recorded.
    """
    times = _at(dataset.times, *base)
    keys = INSTANCE
    runs = times[keys].assign(time_s=_time_column(times).to_numpy())
    energy = _at(dataset.energy, *base)
    if len(energy):
        e = energy[keys].assign(power_w=energy["avg_power_w"].to_numpy(),
                                energy_j=energy["energy_per_launch_j"].to_numpy(),
                                energy_time_s=(energy["time_per_launch_s"]
                                               * energy["gpu_busy_fraction"]).to_numpy())
        runs = runs.merge(e, on=keys, how="left")
        runs["time_s"] = runs["time_s"].fillna(runs.pop("energy_time_s"))
    for column in ("power_w", "energy_j"):
        if column not in runs:
            runs[column] = np.nan
    counters = _at(dataset.counters, *base)
    if len(counters) and "sample_k" in counters:
        counters = counters[counters["sample_k"] == 0]
    found = {tuple(r[k] for k in keys): r.to_dict() for _, r in counters.iterrows()}
    runs["counters"] = [found.get(tuple(r)) for r in runs[keys].itertuples(index=False)]
    return runs.drop_duplicates(keys).set_index(keys)


def _per_base_run(runs: pd.DataFrame, base: tuple[str, int], inputs: Any,
                  columns: Iterable[str]) -> pd.DataFrame:
    """``inputs(counters, time, device, sm_count)`` of every base run that has counters."""
    rows = {key: inputs(r["counters"], r["time_s"], base[0], base[1])
            for key, r in runs.iterrows() if r["counters"] is not None}
    out = pd.DataFrame.from_dict(rows, orient="index", columns=list(columns))
    if len(out):
        out.index = pd.MultiIndex.from_tuples(out.index, names=INSTANCE)
    return out


def base_inputs(runs: pd.DataFrame, base: tuple[str, int]) -> pd.DataFrame:
    """:func:`classifier_inputs` of every base run that has counters."""
    return _per_base_run(runs, base, classifier_inputs, FEATURES)


def base_physical(runs: pd.DataFrame, base: tuple[str, int]) -> pd.DataFrame:
    """:func:`physical_inputs` of every base run that has counters."""
    return _per_base_run(runs, base, physical_inputs, PHYSICAL)


# -- the predictor -----------------------------------------------------------------------------

@lru_cache(maxsize=2)
def _read_dataset(path: str) -> Dataset:
    """A dataset directory, read once per process (``base_dataset``)."""
    if not Path(path).is_dir():
        raise InputError(f"base_dataset {path!r} is not a dataset directory; give the directory "
                         "of the base GPU's measurements, e.g. data/h100")
    return Dataset.read(path)


@register
class ScalingSurfaces(Predictor):
    """Scaling surfaces across SM counts and devices, chosen by a classifier on counters.

    ``base`` is the base configuration (``device:sm_count``); ``base_dataset``, a dataset
    directory that holds the base runs (with counters) and sweeps of the base GPU, for a
    dataset of another GPU's launches (``data/h200`` predicted from ``data/h100``'s base
    runs): its rows of the same kernels join those of devices the dataset lacks.
    """

    name = "scaling-surfaces"
    needs = frozenset({"base_config_run", "counters"})
    learned = True
    description = ("The scaling-surfaces seed (Wu et al.) from one base run with counters: by "
                   "default kerncast's variant (trees on how the base run is bound and its waves "
                   "learn the time and power ratio to each target); method='clusters' is the "
                   "published model (K-means cluster sets of SM-count and device scaling values, "
                   "a one-hidden-layer sigmoid network on the counters chooses each).")
    insight = ("Which scaling family a kernel belongs to (compute-bound, bandwidth-bound, latency "
               "or launch limited) and its time and power at other SM counts and devices.")
    columns = ("kernel", "size", "config", "device", "sm_count")

    def __init__(self, *, base: str = DEFAULT_BASE, n_clusters: int = 12,
                 classifier: str = "network", space: str = "ratio", method: str = "regression",
                 base_dataset: str | None = None, seed: int = 0):
        self.base = base
        self.n_clusters = n_clusters
        self.classifier = classifier
        self.space = space
        self.method = method
        self.base_dataset = base_dataset
        self.seed = seed

    def _base(self) -> tuple[str, int]:
        return parse_configuration(self.base)

    def _with_base_dataset(self, dataset: Dataset) -> Dataset:
        """``dataset`` with the rows of ``base_dataset`` (a dataset directory, e.g. data/h100)
        for the same kernels, of the devices ``dataset`` lacks: where the targets are
        another GPU's launches and the base runs were measured on the base GPU. In fit the
        base GPU's sweeps of the training kernels train too; in predict only the base runs
        are read (of the kernels predicted, none of whose targets it holds)."""
        if self.base_dataset is None:
            return dataset
        extra = _read_dataset(str(self.base_dataset))
        have = set(dataset.times["device"].astype(str)) if len(dataset.times) else set()
        extra = extra.subset(dataset.kernels())
        cut = {name: (t[~t["device"].astype(str).isin(have)].reset_index(drop=True)
                      if "device" in t else t) for name, t in extra.tables().items()}
        return merge_datasets([dataset, replace(extra, **cut)])

    def _fit(self, dataset: Dataset) -> None:
        if self.classifier not in ("network", "oracle"):
            raise InputError(f"classifier must be 'network' or 'oracle', not {self.classifier!r}")
        dataset = self._with_base_dataset(dataset)
        base = self._base()
        frame = surface_frame(dataset)
        runs = base_runs(dataset, base)
        inputs = base_inputs(runs, base)
        if not len(inputs):
            raise InputError(f"scaling-surfaces needs base runs with counters at {self.base} and "
                             "an sm-sweep; give a dataset with both (data/h100 and data/h200 merged)")
        self.surfaces_ = fit_surfaces(frame, inputs, base=base, n_clusters=self.n_clusters,
                                      seed=self.seed, space=self.space, method=self.method,
                                      clusters=(self.method == "clusters"
                                                or self.classifier == "oracle"),
                                      physical=base_physical(runs, base))

    def _predict(self, dataset: Dataset) -> np.ndarray:
        return self.predict_table(dataset)["time_s"].to_numpy(dtype=float)

    def predict_table(self, dataset: Dataset) -> pd.DataFrame:
        """Time, power and energy predicted for each row of ``dataset.times`` (NaN where
        the base run or its counters are missing, off the surfaces, and at the base
        configuration itself, which is the input and not a prediction)."""
        self._check_fitted()
        surfaces, base = self.surfaces_, self._base()
        rows = dataset.times[list(self.columns)]
        dataset = self._with_base_dataset(dataset)
        runs = base_runs(dataset, base)
        frame = surface_frame(dataset) if self.classifier == "oracle" else None
        out = np.full((len(rows), 3), np.nan)
        wanted: dict[tuple, dict[tuple[str, int], list[int]]] = {}
        for i, row in enumerate(rows.itertuples(index=False)):
            key = (row.kernel, row.size, row.config)
            target = (str(row.device), int(row.sm_count))
            if target != base and key in runs.index and target[1] in SM_AXIS:
                wanted.setdefault(key, {}).setdefault(target, []).append(i)
        for key, targets in wanted.items():  # one surface per instance, all its targets at once
            table = self._predict_instance(surfaces, runs, frame, key, list(targets))
            if table is not None:
                for at, values in zip(targets.values(), table.to_numpy(dtype=float)):
                    out[at] = values
        return pd.DataFrame(out, columns=["time_s", "power_w", "energy_j"])

    def _predict_instance(self, surfaces: Mapping[str, Any], runs: pd.DataFrame,
                          frame: pd.DataFrame | None, key: tuple,
                          targets: list[tuple[str, int]]) -> pd.DataFrame | None:
        """Time, power and energy of instance ``key`` at ``targets`` (None: no counters)."""
        run = runs.loc[key]
        truth = oracle_truth(frame, key, surfaces) if frame is not None else None
        if truth is None and run["counters"] is None:
            return None
        table = predict_surface(surfaces, float(run["time_s"]), run["counters"], targets,
                                base_power_w=float(run["power_w"]),
                                base_energy_j=float(run["energy_j"]), truth=truth)
        return table[["time_s", "power_w", "energy_j"]]

    def explain(self, dataset: Dataset) -> list[Prediction]:
        table = self.predict_table(dataset)
        times = dataset.times
        return [Prediction(seconds=float(t), model=self.name,
                           based_on={"base": self.base, "device": str(d), "sm_count": int(s),
                                     "power_w": float(p), "energy_j": float(e)})
                for t, p, e, d, s in zip(table["time_s"], table["power_w"], table["energy_j"],
                                         times["device"], times["sm_count"])]

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        raise InputError("the model 'scaling-surfaces' predicts other configurations from a "
                         "measured base run with counters; for one's own kernel use 'kerncast "
                         "scale FILE --to h200:64' (it measures the base run on this GPU), score "
                         "it with 'kerncast evaluate', or predict with --model static or sampling")
