"""Scaling surfaces (Wu et al., HPCA 2015) on the shipped H100 and H200 data, held out by kernel.

Every kernel instance with an SM sweep and a base run with counters (H100, 132 SMs: its
median time, average power, energy per launch and Nsight Compute counters) is predicted
at every other measured configuration (H100 and H200 at 8..132 SMs) by a model fitted on
the other kernels only (5 folds by kernel: a kernel's instances, every size and launch
configuration, are never in the fit that predicts them). Instances: the default launch at
sizes large and medium (swept on both devices) and, at sizes medium and small, the launch
configurations swept on the H200 only that have H100 counters at 132 SMs (they count for
the H200 targets and train what they can; size small has no energy sweep yet). The error
is the mean absolute percentage error over every (base -> target) pair, the base
excluded, pooled over instances.

Reported: the published model (K-means on the scaling values, 12 clusters per set, a
one-hidden-layer sigmoid network on the counters), the same with an oracle classifier
(the cluster nearest to the kernel's own measured scaling), the variant that clusters log
scaling values, kerncast's regression (the model's default: trees on how the base run is
bound and its waves learn the log ratio to each target), and a what-if baseline that
needs no training: time scaled by the SM-count ratio (base SMs / target SMs, devices
alike) and dynamic power by its inverse (energy: the two multiplied). And the static
model's --sm-count/--device what-if (time only; no training): its predicted time at the
target over its predicted time at the base, times the base run's measured time, and its
predicted time at the target alone (no run at all). Its predictions are read from
data/probes/static-sm-sweep.parquet (tools/static_sm_sweep.py: 410 s for 431 instances
on sixteen cores; 49 s for 10 instances on two).

Then: the error broken down by target configuration, by kind of (base -> target) pair
and by size; a measurement floor for power (the closest non-decreasing curve through
each instance's own power readings on each device, fitted to the readings themselves);
the error per kernel; the same study from the H200 at 132 SMs as the base (every
instance with an H200 base run with counters, power where that run has energy, in
folds of its own); and (without --quick) the base-configuration study (one model per
base SM count on the H100, from counters measured inside a green context at that SM
count, size medium for every SM count and large where measured; then the same on the
H200, size large at 8, 16, 32 and 64 SMs) and the cluster-count sweep.

Power is the average board power NVML measured over a loop of launches; the published
model predicts its dynamic part (average minus the device's idle power, as published) and
adds the idle power back, and so does the regression (it learns the dynamic power's
ratio). The dynamic power's own error is shown too. The last line is the model's default
(the regression).

Run: .venv/bin/python benchmarks/scaling_accuracy.py [--folds 5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from kerncast.data import Dataset  # noqa: E402
from kerncast.models._scaling import (  # noqa: E402
    DYNAMIC_FLOOR_W, INSTANCE, SM_AXIS, base_inputs, base_physical, base_runs, fit_surfaces,
    merge_datasets, oracle_truth, predict_surface, surface_frame,
)

ROOT = Path(__file__).resolve().parents[1]
BASE = ("h100-sxm", 132)
PUBLISHED_K = 12
PUBLISHED = "published (12 clusters)"
REGRESSION = "kerncast regression"
QUANTITY_COLUMNS = {"time": "time_s", "power": "power_w", "energy": "energy_j"}


class Data:
    """The surfaces, and for one base configuration its base runs, their inputs and the
    usable instances (a sweep, a base run with counters and a time)."""

    def __init__(self, data: Dataset, frame: pd.DataFrame, base: tuple[str, int]):
        self.frame, self.base = frame, base
        self.runs = base_runs(data, base)
        self.inputs = base_inputs(self.runs, base)
        self.physical = base_physical(self.runs, base)
        swept = {tuple(k) for k in frame[INSTANCE].drop_duplicates().itertuples(index=False)}
        self.usable = sorted(k for k in swept if k in self.inputs.index
                             and np.isfinite(self.runs.loc[k, "time_s"]))
        static = pd.read_parquet(STATIC_SWEEP) if STATIC_SWEEP.exists() else pd.DataFrame(
            columns=[*INSTANCE, "device", "sm_count", "static_s"])
        self.static = static.set_index([*INSTANCE, "device", "sm_count"])["static_s"]


def load_all() -> tuple[Dataset, pd.DataFrame]:
    data = merge_datasets([Dataset.read(ROOT / "data" / d) for d in ("h100", "h200")])
    return data, surface_frame(data)


def kernel_folds(kernels: list[str], n: int, seed: int = 0) -> list[list[str]]:
    order = list(np.random.default_rng(seed).permutation(sorted(kernels)))
    return [order[i::n] for i in range(n)]


def _targets(base: tuple[str, int]) -> list[tuple[str, int]]:
    return [(dev, s) for dev in (BASE[0], "h200") for s in SM_AXIS if (dev, s) != base]


def _measured(frame: pd.DataFrame, instance: tuple) -> pd.DataFrame:
    part = frame[(frame[INSTANCE] == pd.Series(instance, index=INSTANCE)).all(axis=1)]
    return part.set_index(["device", "sm_count"])


def _baseline(run: pd.Series, idle: dict, targets: list, base: tuple[str, int]) -> pd.DataFrame:
    dyn = max(float(run["power_w"]) - idle.get(base[0], np.nan), DYNAMIC_FLOOR_W)
    rows = []
    for dev, s in targets:
        ratio = base[1] / s
        power = idle.get(dev, np.nan) + dyn / ratio
        rows.append({"device": dev, "sm_count": s, "time_s": run["time_s"] * ratio, "power_w": power,
                     "energy_j": run["energy_j"] * ratio * power / float(run["power_w"])})
    return pd.DataFrame(rows)


STATIC_SWEEP = ROOT / "data" / "probes" / "static-sm-sweep.parquet"
STATIC_FROM_BASE = "static what-if x base time"
STATIC_ALONE = "static model alone (no run)"


def _static(run: pd.Series, instance: tuple, targets: list, base: tuple[str, int],
            static: pd.Series) -> dict[str, pd.DataFrame]:
    """The static model's time at each target: scaled from the measured base time by its
    own ratio, and as it predicts it (power and energy: none)."""
    at_base = static.get((*instance, *base), np.nan)
    rows: dict[str, list] = {STATIC_FROM_BASE: [], STATIC_ALONE: []}
    for dev, s in targets:
        own = static.get((*instance, dev, s), np.nan)
        for name, t in ((STATIC_FROM_BASE, run["time_s"] * own / at_base), (STATIC_ALONE, own)):
            rows[name].append({"device": dev, "sm_count": s, "time_s": t, "power_w": np.nan,
                                "energy_j": np.nan})
    return {name: pd.DataFrame(r) for name, r in rows.items()}


def _pair(base: tuple[str, int], device: str, sm_count: int) -> str:
    if device == base[0]:
        return "SM count only"
    return "device only" if sm_count == base[1] else "device and SM count"


def _error_rows(pred: pd.DataFrame, meas: pd.DataFrame, method: str, instance: tuple,
                idle: dict, base: tuple[str, int]) -> list[dict]:
    rows = []
    for r in pred.itertuples(index=False):
        key = (r.device, r.sm_count)
        if key not in meas.index:
            continue
        m = meas.loc[key]
        row = {"method": method, "kernel": instance[0], "size": instance[1], "config": instance[2],
               "device": r.device, "sm_count": r.sm_count, "pair": _pair(base, r.device, r.sm_count)}
        for q, col in QUANTITY_COLUMNS.items():
            truth = float(m[col])
            row[q] = abs(getattr(r, col) - truth) / truth * 100 if truth > 0 else np.nan
        dyn_true = max(float(m["power_w"]) - idle.get(r.device, np.nan), DYNAMIC_FLOOR_W)
        dyn_pred = max(r.power_w - idle.get(r.device, np.nan), DYNAMIC_FLOOR_W)
        row["dynamic power"] = abs(dyn_pred - dyn_true) / dyn_true * 100
        rows.append(row)
    return rows


def run_fold(d: Data, train: list[tuple], test: list[tuple], *, k: int, space: str,
             quantities: tuple[str, ...], label: str, oracle: bool, baseline: bool,
             method: str = "clusters") -> list[dict]:
    train_kernels = {t[0] for t in train}
    surfaces = fit_surfaces(d.frame[d.frame["kernel"].isin(train_kernels)],
                            d.inputs.loc[d.inputs.index.isin(train)], base=d.base, n_clusters=k,
                            space=space, quantities=quantities, method=method,
                            physical=d.physical.loc[d.physical.index.isin(train)])
    idle = surfaces["idle_w"]
    targets = _targets(d.base)
    rows: list[dict] = []
    for inst in test:
        run, meas = d.runs.loc[inst], _measured(d.frame, inst)
        kwargs = {"base_power_w": float(run["power_w"]), "base_energy_j": float(run["energy_j"])}
        pred = predict_surface(surfaces, float(run["time_s"]), run["counters"], targets, **kwargs)
        rows += _error_rows(pred, meas, label, inst, idle, d.base)
        if oracle:
            truth = oracle_truth(d.frame, inst, surfaces)
            pred = predict_surface(surfaces, float(run["time_s"]), None, targets, truth=truth, **kwargs)
            rows += _error_rows(pred, meas, f"{label} + oracle", inst, idle, d.base)
        if baseline:
            rows += _error_rows(_baseline(run, idle, targets, d.base), meas, "SM-ratio what-if",
                                inst, idle, d.base)
            for name, pred in _static(run, inst, targets, d.base, d.static).items():
                rows += _error_rows(pred, meas, name, inst, idle, d.base)
    return rows


def cross_validate(d: Data, folds: list[list[str]], **kw) -> pd.DataFrame:
    rows: list[dict] = []
    for fold in folds:
        test = [u for u in d.usable if u[0] in fold]
        train = [u for u in d.usable if u[0] not in fold]
        if test and train:
            rows += run_fold(d, train, test, **kw)
    return pd.DataFrame(rows)


def _summary(errors: pd.DataFrame) -> pd.DataFrame:
    cols = ["time", "power", "dynamic power", "energy"]
    out = errors.groupby("method")[cols].mean()
    out["pairs"] = errors.groupby("method").size()
    return out.round(1).sort_values("time")


def _per_kernel(errors: pd.DataFrame) -> pd.DataFrame:
    part = errors[errors["method"].isin([PUBLISHED, REGRESSION])]
    table = part.pivot_table(index="kernel", columns="method", values=["time", "power"], aggfunc="mean")
    table.columns = [f"{q} {'published' if m == PUBLISHED else 'regression'}" for q, m in table.columns]
    return table.round(1).sort_values(f"time {'regression'}")


def power_floor(frame: pd.DataFrame, usable: list[tuple]) -> dict[str, float]:
    """Mean error of curves fitted to each usable instance's own board-power readings (per
    device, over SM count): the closest non-decreasing curve, and the closest straight line.
    A model that predicts from one base run does not fit the readings it is scored on, so
    these bound how close the readings' own scatter lets any smooth surface come."""
    from sklearn.isotonic import IsotonicRegression  # noqa: PLC0415

    part = frame.merge(pd.DataFrame(usable, columns=INSTANCE), on=INSTANCE).dropna(subset=["power_w"])
    errors: dict[str, list[float]] = {"non-decreasing": [], "straight line": []}
    for _, g in part.groupby([*INSTANCE, "device"]):
        if len(g) < 4:
            continue
        s, p = g["sm_count"].to_numpy(float), g["power_w"].to_numpy(float)
        fits = {"non-decreasing": IsotonicRegression(increasing=True).fit_transform(s, p),
                "straight line": np.polyval(np.polyfit(s, p, 1), s)}
        for name, fit in fits.items():
            errors[name] += list(np.abs(fit / p - 1) * 100)
    out = {name: float(np.mean(e)) for name, e in errors.items()}
    return out | {"readings": len(errors["straight line"])}


def base_study(data: Dataset, frame: pd.DataFrame, folds: list[list[str]],
               device: str = BASE[0]) -> pd.DataFrame:
    """One model per base SM count on ``device``, time only, every other configuration a
    target (the main folds; a kernel they lack joins them in turn)."""
    folds = [list(f) for f in folds]
    for i, kernel in enumerate(sorted(set(frame["kernel"]) - {k for f in folds for k in f})):
        folds[i % len(folds)].append(kernel)
    rows = []
    for sm in SM_AXIS:
        d = Data(data, frame, (device, sm))
        if len({u[0] for u in d.usable}) < 10:
            continue
        errors = pd.concat([
            cross_validate(d, folds, k=PUBLISHED_K, space="ratio", quantities=("time",),
                           label=PUBLISHED, oracle=False, baseline=False),
            cross_validate(d, folds, k=PUBLISHED_K, space="ratio", quantities=("time",),
                           label=REGRESSION, oracle=False, baseline=False, method="regression")])
        mean = errors.pivot_table(index="size", columns="method", values="time", aggfunc="mean")
        sizes = pd.Series([u[1] for u in d.usable]).value_counts()
        row = {"base SMs": sm, "instances": ", ".join(f"{n} {s}" for s, n in sizes.items())}
        for size in ("medium", "large"):
            for method, short in ((PUBLISHED, "published"), (REGRESSION, "regression")):
                value = mean.loc[size, method] if size in mean.index else np.nan
                row[f"{size} {short}"] = value
        row["all regression"] = errors.loc[errors["method"] == REGRESSION, "time"].mean()
        rows.append(row)
        print(f"  base {sm} SMs: done", file=sys.stderr)
    return pd.DataFrame(rows).set_index("base SMs").round(1)


SECOND_BASE = ("h200", 132)


def second_base(data: Dataset, frame: pd.DataFrame, n_folds: int) -> tuple[str, pd.DataFrame]:
    """The same study from the H200 at 132 SMs: every instance with an H200 base run with
    counters (any swept launch configuration and size) predicted at every other measured
    configuration, in its own folds by kernel. Returns a line naming the instances and
    the error table."""
    d = Data(data, frame, SECOND_BASE)
    kernels = sorted({u[0] for u in d.usable})
    errors = cross_validate(d, kernel_folds(kernels, n_folds), k=PUBLISHED_K, space="ratio",
                            quantities=("time", "power", "energy"), label=REGRESSION,
                            oracle=False, baseline=True, method="regression")
    sizes = pd.Series([u[1] for u in d.usable]).value_counts()
    powered = errors.loc[errors["method"] == REGRESSION].dropna(subset=["power"])
    line = (f"{len(d.usable)} instances of {len(kernels)} kernels ("
            + ", ".join(f"{n} {s}" for s, n in sizes.items())
            + f"), {int((errors['method'] == REGRESSION).sum())} pairs, "
            f"{powered[INSTANCE].drop_duplicates().shape[0]} instances with a power sweep")
    table = _summary(errors)
    own = errors[errors["method"] == REGRESSION]
    for size, g in own.groupby("size"):
        table.loc[f"{REGRESSION}, size {size}", ["time", "power", "energy"]] = \
            g[["time", "power", "energy"]].mean().round(1).to_numpy()
        table.loc[f"{REGRESSION}, size {size}", "pairs"] = len(g)
    return line, table.astype({"pairs": int})


def cluster_sweep(d: Data, folds: list[list[str]], k_max: int) -> pd.DataFrame:
    rows = []
    for k in range(2, k_max + 1):
        errors = cross_validate(d, folds, k=k, space="ratio", quantities=("time", "power"),
                                label="network", oracle=True, baseline=False)
        means = errors.groupby("method")[["time", "power"]].mean()
        rows.append({"clusters": k, "time (network)": means.loc["network", "time"],
                     "time (oracle)": means.loc["network + oracle", "time"],
                     "power (network)": means.loc["network", "power"],
                     "power (oracle)": means.loc["network + oracle", "power"]})
        print(f"  clusters {k}: done", file=sys.stderr)
    return pd.DataFrame(rows).set_index("clusters").round(1)


def _by(errors: pd.DataFrame, index: str, value: str = "time") -> pd.DataFrame:
    part = errors[errors["method"].isin([PUBLISHED, REGRESSION])]
    table = part.pivot_table(index=index, columns="method", values=value, aggfunc="mean")
    table["pairs"] = part[part["method"] == REGRESSION].groupby(index).size()
    return table.round(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="skip the base-configuration study and the cluster-count sweep")
    args = parser.parse_args()
    start = time.perf_counter()
    data, frame = load_all()
    d = Data(data, frame, BASE)
    kernels = sorted({u[0] for u in d.usable})
    folds = kernel_folds(kernels, args.folds)
    smallest_train = len(kernels) - max(len(f) for f in folds)
    sizes = pd.Series([u[1] for u in d.usable]).value_counts()
    print(f"{len(d.usable)} kernel instances of {len(kernels)} kernels ("
          + ", ".join(f"{n} {s}" for s, n in sizes.items())
          + ") with a base run (H100, 132 SMs) with counters and a sweep; "
          f"{args.folds} folds by kernel, at least {smallest_train} training kernels per fold; "
          f"targets: {len(_targets(BASE))} configurations (H100 and H200, {SM_AXIS[0]}..{SM_AXIS[-1]} SMs)")
    every = ("time", "power", "energy")
    errors = pd.concat([
        cross_validate(d, folds, k=PUBLISHED_K, space="ratio", quantities=every, label=PUBLISHED,
                       oracle=True, baseline=True),
        cross_validate(d, folds, k=PUBLISHED_K, space="log", quantities=every,
                       label="log scaling values (12 clusters)", oracle=False, baseline=False),
        cross_validate(d, folds, k=PUBLISHED_K, space="ratio", quantities=every, label=REGRESSION,
                       oracle=False, baseline=False, method="regression"),
    ], ignore_index=True)
    print("\nmean absolute error, % (every base -> target pair, base excluded):")
    print(_summary(errors).to_string())
    for method in (PUBLISHED, REGRESSION):
        part = errors[errors["method"] == method]
        print(f"\nerror by target configuration, {method}, time %:")
        print(part.pivot_table(index="device", columns="sm_count", values="time", aggfunc="mean")
              .round(1).to_string())
    print("\ntime error % by kind of (base -> target) pair:")
    print(_by(errors, "pair").to_string())
    print("\ntime error % by size:")
    print(_by(errors, "size").to_string())
    print("\npower error % by target device:")
    print(_by(errors, "device", "power").to_string())
    floor = power_floor(frame, d.usable)
    print(f"\npower readings' own scatter ({floor['readings']} readings, per instance and device, "
          f"fitted to the readings themselves): {floor['non-decreasing']:.1f}% from the closest "
          f"non-decreasing curve in SM count, {floor['straight line']:.1f}% from the closest line")
    print("\nper kernel (mean over its instances and targets), %:")
    print(_per_kernel(errors).to_string())
    line, table = second_base(data, frame, args.folds)
    print(f"\nfrom the H200 at 132 SMs as the base: {line}; mean absolute error, %:")
    print(table.to_string())
    if not args.quick:
        for device, name in ((BASE[0], "H100"), ("h200", "H200")):
            print(f"\nbase-configuration study: one model per {name} base SM count (counters "
                  "measured at that SM count), time error % to every other configuration, held "
                  "out by kernel:")
            print(base_study(data, frame, folds, device).to_string())
        k_max = min(20, smallest_train // 3)
        print(f"\ncluster counts 2..{k_max} (at most a third of the {smallest_train} training "
              "kernels: a cluster needs a few members for the network to learn it), mean error %:")
        print(cluster_sweep(d, folds, k_max).to_string())
    print(f"\n({time.perf_counter() - start:.0f} s)")
    means = errors.loc[errors["method"] == REGRESSION, ["time", "power"]].mean()
    print(f"scaling time error: {means['time']:.2f}% power error: {means['power']:.2f}%")


if __name__ == "__main__":
    main()
