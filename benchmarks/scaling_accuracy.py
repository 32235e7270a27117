"""Scaling surfaces (Wu et al., HPCA 2015) on the shipped H100 and H200 data, held out by kernel.

Every kernel instance with an SM sweep on both devices (the default launch of each corpus
kernel at size large) is predicted from its base run (H100, 132 SMs: its median time,
average power, energy per launch and Nsight Compute counters) at every other measured
configuration (H100 and H200 at 8..132 SMs) by a model fitted on the other kernels only
(5 folds by kernel). The error is the mean absolute percentage error over every
(base -> target) pair, the base excluded, pooled over kernels.

Reported: the published model (K-means on the scaling values, 12 clusters per set, a
one-hidden-layer sigmoid network on the counters), the same with an oracle classifier
(the cluster nearest to the kernel's own measured scaling), kerncast's variant that
clusters log scaling values, and a what-if baseline that needs no training: time scaled
by the SM-count ratio (base SMs / target SMs, devices alike) and dynamic power by its
inverse (energy: the two multiplied). The static model's --sm-count what-if is not run
here: it emulates every kernel (minutes per kernel on this machine's two cores).

Power is the average board power NVML measured over a loop of launches; the model
predicts its dynamic part (average minus the device's idle power, as published) and adds
the idle power back. The dynamic power's own error is shown too.

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
    DYNAMIC_FLOOR_W, INSTANCE, SM_AXIS, base_inputs, base_runs, fit_surfaces, merge_datasets,
    oracle_truth, predict_surface, surface_frame,
)

ROOT = Path(__file__).resolve().parents[1]
BASE = ("h100-sxm", 132)
PUBLISHED_K = 12
QUANTITY_COLUMNS = {"time": "time_s", "power": "power_w", "energy": "energy_j"}


def load() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[tuple]]:
    """The surfaces, the base runs, their classifier inputs and the usable instances."""
    data = merge_datasets([Dataset.read(ROOT / "data" / d) for d in ("h100", "h200")])
    frame = surface_frame(data)
    runs = base_runs(data, BASE)
    inputs = base_inputs(runs, BASE)
    swept = {tuple(k) for k in frame[INSTANCE].drop_duplicates().itertuples(index=False)}
    usable = sorted(k for k in swept if k in inputs.index and np.isfinite(runs.loc[k, "time_s"]))
    return frame, runs, inputs, usable


def kernel_folds(kernels: list[str], n: int, seed: int = 0) -> list[list[str]]:
    order = list(np.random.default_rng(seed).permutation(sorted(kernels)))
    return [order[i::n] for i in range(n)]


def _targets() -> list[tuple[str, int]]:
    return [(dev, s) for dev in (BASE[0], "h200") for s in SM_AXIS if (dev, s) != BASE]


def _measured(frame: pd.DataFrame, instance: tuple) -> pd.DataFrame:
    part = frame[(frame[INSTANCE] == pd.Series(instance, index=INSTANCE)).all(axis=1)]
    return part.set_index(["device", "sm_count"])


def _baseline(run: pd.Series, idle: dict, targets: list) -> pd.DataFrame:
    dyn = max(float(run["power_w"]) - idle[BASE[0]], DYNAMIC_FLOOR_W)
    rows = []
    for dev, s in targets:
        ratio = BASE[1] / s
        power = idle.get(dev, np.nan) + dyn / ratio
        rows.append({"device": dev, "sm_count": s, "time_s": run["time_s"] * ratio, "power_w": power,
                     "energy_j": run["energy_j"] * ratio * power / float(run["power_w"])})
    return pd.DataFrame(rows)


def _error_rows(pred: pd.DataFrame, meas: pd.DataFrame, method: str, instance: tuple,
                idle: dict) -> list[dict]:
    rows = []
    for r in pred.itertuples(index=False):
        key = (r.device, r.sm_count)
        if key not in meas.index:
            continue
        m = meas.loc[key]
        row = {"method": method, "kernel": instance[0], "device": r.device, "sm_count": r.sm_count}
        for q, col in QUANTITY_COLUMNS.items():
            truth = float(m[col])
            row[q] = abs(getattr(r, col) - truth) / truth * 100 if truth > 0 else np.nan
        dyn_true = max(float(m["power_w"]) - idle.get(r.device, np.nan), DYNAMIC_FLOOR_W)
        dyn_pred = max(r.power_w - idle.get(r.device, np.nan), DYNAMIC_FLOOR_W)
        row["dynamic power"] = abs(dyn_pred - dyn_true) / dyn_true * 100
        rows.append(row)
    return rows


def run_fold(frame, runs, inputs, train: list[tuple], test: list[tuple], *, k: int, space: str,
             quantities: tuple[str, ...], label: str, oracle: bool, baseline: bool) -> list[dict]:
    train_kernels = {t[0] for t in train}
    surfaces = fit_surfaces(frame[frame["kernel"].isin(train_kernels)],
                            inputs.loc[inputs.index.isin(train)], base=BASE, n_clusters=k,
                            space=space, quantities=quantities)
    idle = surfaces["idle_w"]
    rows: list[dict] = []
    for inst in test:
        run, meas = runs.loc[inst], _measured(frame, inst)
        kwargs = {"base_power_w": float(run["power_w"]), "base_energy_j": float(run["energy_j"])}
        pred = predict_surface(surfaces, float(run["time_s"]), run["counters"], _targets(), **kwargs)
        rows += _error_rows(pred, meas, label, inst, idle)
        if oracle:
            truth = oracle_truth(frame, inst, surfaces)
            pred = predict_surface(surfaces, float(run["time_s"]), None, _targets(), truth=truth, **kwargs)
            rows += _error_rows(pred, meas, f"{label} + oracle", inst, idle)
        if baseline:
            rows += _error_rows(_baseline(run, idle, _targets()), meas, "SM-ratio what-if", inst, idle)
    return rows


def cross_validate(data, folds: list[list[str]], **kw) -> pd.DataFrame:
    frame, runs, inputs, usable = data
    rows: list[dict] = []
    for fold in folds:
        test = [u for u in usable if u[0] in fold]
        train = [u for u in usable if u[0] not in fold]
        rows += run_fold(frame, runs, inputs, train, test, **kw)
    return pd.DataFrame(rows)


def _summary(errors: pd.DataFrame) -> pd.DataFrame:
    cols = ["time", "power", "dynamic power", "energy"]
    out = errors.groupby("method")[cols].mean()
    out["pairs"] = errors.groupby("method").size()
    return out.round(1)


def _per_kernel(errors: pd.DataFrame, method: str) -> pd.DataFrame:
    part = errors[errors["method"] == method]
    return part.groupby("kernel")[["time", "power", "energy"]].mean().round(1).sort_values("time")


def cluster_sweep(data, folds: list[list[str]], k_max: int) -> pd.DataFrame:
    rows = []
    for k in range(2, k_max + 1):
        errors = cross_validate(data, folds, k=k, space="ratio", quantities=("time", "power"),
                                label="network", oracle=True, baseline=False)
        means = errors.groupby("method")[["time", "power"]].mean()
        rows.append({"clusters": k, "time (network)": means.loc["network", "time"],
                     "time (oracle)": means.loc["network + oracle", "time"],
                     "power (network)": means.loc["network", "power"],
                     "power (oracle)": means.loc["network + oracle", "power"]})
        print(f"  clusters {k}: done", file=sys.stderr)
    return pd.DataFrame(rows).set_index("clusters").round(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="skip the cluster-count sweep")
    args = parser.parse_args()
    start = time.perf_counter()
    data = load()
    kernels = sorted({u[0] for u in data[3]})
    folds = kernel_folds(kernels, args.folds)
    smallest_train = len(kernels) - max(len(f) for f in folds)
    print(f"{len(kernels)} kernel instances with a base run (H100, 132 SMs) with counters and a sweep; "
          f"{args.folds} folds by kernel, at least {smallest_train} training kernels per fold; "
          f"targets: {len(_targets())} configurations (H100 and H200, {SM_AXIS[0]}..{SM_AXIS[-1]} SMs)")
    published = cross_validate(data, folds, k=PUBLISHED_K, space="ratio", quantities=("time", "power",
                               "energy"), label="published (12 clusters)", oracle=True, baseline=True)
    variant = cross_validate(data, folds, k=PUBLISHED_K, space="log", quantities=("time", "power",
                             "energy"), label="log scaling values (12 clusters)", oracle=False,
                             baseline=False)
    errors = pd.concat([published, variant], ignore_index=True)
    print("\nmean absolute error, % (every base -> target pair, base excluded):")
    print(_summary(errors).to_string())
    print("\nerror by target configuration, published model, time %:")
    pub = errors[errors["method"] == "published (12 clusters)"]
    print(pub.pivot_table(index="device", columns="sm_count", values="time", aggfunc="mean").round(1)
          .to_string())
    print("\nper kernel, published model (mean over its targets), %:")
    print(_per_kernel(errors, "published (12 clusters)").to_string())
    k_max = min(20, smallest_train // 3)
    if not args.quick:
        print(f"\ncluster counts 2..{k_max} (at most a third of the {smallest_train} training kernels: "
              "a cluster needs a few members for the network to learn it), mean error %:")
        print(cluster_sweep(data, folds, k_max).to_string())
    print(f"\n({time.perf_counter() - start:.0f} s)")
    means = pub[["time", "power"]].mean()
    print(f"scaling time error: {means['time']:.1f}% power error: {means['power']:.1f}%")


if __name__ == "__main__":
    main()
