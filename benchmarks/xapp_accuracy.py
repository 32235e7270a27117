"""XAPP held out by kernel: the CPU-to-GPU speedup of the corpus C regions predicted from
their 39 microarchitecture-independent features.

    python benchmarks/xapp_accuracy.py [--device h100|h200|all] [--variant default|best]
                                       [--quick] [--features PATH] [--folds 5] [--extra ops]

For each platform the training table joins ``data/xapp/features.parquet`` with the
speedups (single-threaded C region on the Xeon / the CUDA kernel on the whole GPU). Two
hold-outs, both by kernel (a kernel's three sizes are always on the same side):

* the seed's: a test set of 12 kernels drawn by stratified sampling (one from each
  twelfth of the kernels ranked by their mean log speedup, fixed seed); every model is
  fitted on the other kernels: the intermediate models (OLS, weighted OLS, LASSO on the
  speedup, its log and its square root), the published model and kerncast's;
* a K-fold split by kernel (``--folds``): every kernel is predicted once by models that
  never saw it.

Nothing is tuned on a test fold: the published model's response and features and
kerncast's candidate, shift and interval come from cross-validation inside the training
kernels. The weighted error uses the seed's classes (30x, 100x) and, for this data, the
terciles of the training speedups. Two references put the relative errors in scale:
always predicting the training kernels' median speedup, and always predicting 0 (which
scores 100% plain and the mean class weight weighted, whatever the data). ``factor`` (the
geometric mean of max(pred/actual, actual/pred)) and ``2x`` (the share within a factor 2)
do not favour under-prediction. The port/no-port accuracy is shown next to always
answering the training majority. Finally every model is fitted on all the data and
timed. The last line is, for kerncast's model (its median prediction) on the first
device (h100 by default) from the K-fold hold-out: ``xapp weighted error: X% plain: Y%
port accuracy: Z% build: S s``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kerncast import KerncastError  # noqa: E402
from kerncast.cpu._xapp import (  # noqa: E402
    BASELINES,
    DEVICES,
    PAPER_BOUNDS,
    RESPONSES,
    KerncastModel,
    PortClassifier,
    PublishedModel,
    data_bounds,
    fit_baseline,
    grouped_folds,
    load_features,
    mean_relative_error,
    speedup_dataset,
    speedup_labels,
    weighted_error,
)

TEST_KERNELS = 12
SEED = 2015
SHOWN = {"xapp": "published", "kerncast": "kerncast", "kerncast_relative": "kerncast, shifted",
         "median": "training median", "zero": "always 0"}


@dataclass
class Settings:
    n_random: int = 10_000
    n_splits: int = 100
    folds: int = 5
    inner_folds: int = 5
    features: str | None = None
    variant: str = "default"
    extra: tuple[str, ...] = ()


@dataclass
class Fitted:
    published: PublishedModel
    own: KerncastModel
    port: PortClassifier


def stratified_kernels(frame: pd.DataFrame, count: int = TEST_KERNELS, seed: int = SEED) -> list[str]:
    """One kernel from each of ``count`` strata of the kernels ranked by mean log speedup."""
    means = np.log(frame["speedup"]).groupby(frame["kernel"]).mean().sort_values()
    rng = np.random.default_rng(seed)
    return sorted(str(rng.choice(stratum)) for stratum in np.array_split(means.index.to_numpy(), count))


def fit_models(train: pd.DataFrame, s: Settings) -> Fitted:
    published = PublishedModel(n_random=s.n_random, n_splits=s.n_splits, seed=SEED).fit(train)
    own = KerncastModel(n_folds=s.inner_folds, seed=SEED, extra=s.extra).fit(train)
    port = PortClassifier(n_folds=s.inner_folds, seed=SEED).fit(train, own)
    return Fitted(published, own, port)


def held_out(fitted: Fitted, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """The test rows with every model's prediction and their training data's class bounds."""
    out = test[["kernel", "size", "speedup"]].copy()
    out["low"], out["high"] = data_bounds(train["speedup"])
    out["xapp"] = fitted.published.predict(test)
    for response in fitted.published.others_:
        out[f"xapp_{response}"] = fitted.published.predict(test, response)
    out["kerncast"] = fitted.own.predict(test)
    out["kerncast_relative"] = fitted.own.predict_relative(test)
    out["int_low"], out["int_high"] = fitted.own.predict_interval(test)
    out["median"] = float(np.exp(np.log(train["speedup"]).median()))
    out["zero"] = 0.0
    out["port"] = fitted.port.predict(test)
    out["majority"] = bool((train["speedup"] > 1.0).mean() >= 0.5)
    return out


def _number(value: float) -> str:
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.0f}"


def _metrics(scored: pd.DataFrame, column: str) -> dict[str, float]:
    """Weighted (seed's bounds and each row's training terciles), plain, factor and 2x."""
    actual, pred = scored["speedup"].to_numpy(), scored[column].to_numpy(dtype=float)
    data = sum(weighted_error(part["speedup"], part[column].to_numpy(dtype=float), (low, high))
               * len(part) for (low, high), part in scored.groupby(["low", "high"]))
    with np.errstate(divide="ignore"):
        ratio = np.where(pred > 0, np.abs(np.log(np.maximum(pred, 1e-300) / actual)), np.inf)
    return {"weighted": 100 * weighted_error(actual, pred), "weighted(data)": 100 * data / len(scored),
            "plain": 100 * mean_relative_error(actual, pred), "factor": float(np.exp(ratio.mean())),
            "2x": 100 * float(np.mean(ratio <= np.log(2)))}


def summarise(scored: pd.DataFrame) -> dict[str, dict[str, float]]:
    columns = [*SHOWN, *(f"xapp_{r}" for r in RESPONSES if f"xapp_{r}" in scored)]
    table = {c: _metrics(scored, c) for c in columns}
    shown = pd.DataFrame(table).T.rename(index=lambda c: SHOWN.get(c, c.replace("xapp_", "published, ")))
    print("errors in % (factor: geometric mean of the ratio; 2x: % within a factor 2):")
    print(shown.to_string(float_format=_number))
    inside = (scored["int_low"] <= scored["speedup"]) & (scored["speedup"] <= scored["int_high"])
    print(f"kerncast's 80% interval holds {100 * inside.mean():.0f}% of the held-out speedups")
    truth = scored["speedup"].to_numpy() > 1.0
    port = 100 * float(np.mean(scored["port"].to_numpy(dtype=bool) == truth))
    majority = 100 * float(np.mean(scored["majority"].to_numpy(dtype=bool) == truth))
    print(f"port/no-port: {port:.1f}% ({int(np.sum(~truth))} of {truth.size} rows below 1x; always "
          f"the training majority: {majority:.1f}%)")
    table["port"] = {"accuracy": port}
    return table


def rows_table(scored: pd.DataFrame, title: str) -> None:
    out = scored.sort_values(["kernel", "size"]).copy()
    for name in ("xapp", "kerncast"):
        out[f"{name} err%"] = 100 * (out[name] - out["speedup"]) / out["speedup"]
    out["port?"] = np.where(out["port"], "yes", "no")
    out["interval"] = [f"{a:.3g}-{b:.3g}" for a, b in zip(out["int_low"], out["int_high"])]
    print(f"\n{title}")
    cols = ["kernel", "size", "speedup", "xapp", "xapp err%", "kerncast", "kerncast err%", "interval",
            "port?"]
    print(out[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}"))


def baselines(train: pd.DataFrame, test: pd.DataFrame) -> None:
    print("\nthe seed's intermediate models on the held-out kernels (spread: std of log prediction / "
          "std of log actual; terms: non-zero coefficients)")
    rows = []
    actual = test["speedup"].to_numpy()
    scored = test[["kernel", "size", "speedup"]].copy()
    scored["low"], scored["high"] = data_bounds(train["speedup"])
    for method in BASELINES:
        for response in RESPONSES:
            model = fit_baseline(method, response, train, seed=SEED)
            scored["p"] = model.predict(test)
            spread = np.std(np.log(scored["p"])) / np.std(np.log(actual))
            rows.append({"model": method, "response": response, **_metrics(scored, "p"),
                         "spread": spread, "terms": model.terms()})
    print(pd.DataFrame(rows).to_string(index=False, float_format=_number))


def describe(fitted: Fitted) -> None:
    p, own = fitted.published, fitted.own
    print(f"published model: {', '.join(p.features_)}, {p.response_} response (inner CV error by "
          "response: " + ", ".join(f"{r} {100 * e:.0f}%" for r, e in p.cv_errors_.items())
          + f"), built in {p.build_seconds_:.1f} s")
    print(f"kerncast model: {own.candidate_} (inner mean |log error| by candidate: "
          + ", ".join(f"{c} {e:.2f}" for c, e in own.log_errors_.items())
          + f"; relative-error shift {own.shift_:+.2f}), built in {own.build_seconds_:.1f} s; "
          f"port classifier {fitted.port.method_} (inner accuracy "
          + ", ".join(f"{m} {100 * a:.0f}%" for m, a in fitted.port.scores_.items()) + ")")


def paper_split(frame: pd.DataFrame, s: Settings) -> None:
    held = stratified_kernels(frame)
    test = frame[frame["kernel"].isin(held)].reset_index(drop=True)
    train = frame[~frame["kernel"].isin(held)].reset_index(drop=True)
    low, high = data_bounds(train["speedup"])
    print(f"\n== the seed's hold-out: {len(held)} kernels ({len(test)} rows) tested, "
          f"{train['kernel'].nunique()} kernels ({len(train)} rows) trained; data bounds "
          f"{low:.1f}x, {high:.1f}x ==")
    baselines(train, test)
    fitted = fit_models(train, s)
    print()
    describe(fitted)
    scored = held_out(fitted, train, test)
    rows_table(scored, "the held-out kernels:")
    summarise(scored)


def kfold(frame: pd.DataFrame, s: Settings) -> dict[str, dict[str, float]]:
    print(f"\n== {s.folds}-fold hold-out by kernel ==")
    parts = []
    started = time.perf_counter()
    folds = grouped_folds(frame["kernel"].to_numpy(), s.folds, SEED)
    for i, (tr, te) in enumerate(folds):
        train, test = frame.iloc[tr].reset_index(drop=True), frame.iloc[te].reset_index(drop=True)
        fitted = fit_models(train, s)
        parts.append(held_out(fitted, train, test))
        print(f"fold {i + 1}/{len(folds)} ({test['kernel'].nunique()} kernels held out, "
              f"{time.perf_counter() - started:.0f} s): ", end="")
        describe(fitted)
    scored = pd.concat(parts, ignore_index=True)
    rows_table(scored, "every row, predicted by the fold that held its kernel out:")
    return summarise(scored)


def report_labels(device: str, variant: str) -> None:
    _, rep = speedup_labels(device, variant)
    missing = ", ".join(f"{k}/{z}" for k, z in rep.cpu_without_gpu) or "none"
    print(f"labels {device} {variant}: {rep.labels} (CPU regions without a GPU time: {missing}; "
          f"GPU times without a CPU region: {len(rep.gpu_without_cpu)})")


def run_device(device: str, s: Settings) -> dict[str, float]:
    print(f"\n######## {device}, {s.variant} launch ########")
    report_labels(device, s.variant)
    frame = speedup_dataset(device, s.variant, s.features, extra_columns=s.extra)
    print(f"{len(frame)} rows with features and a speedup, {frame['kernel'].nunique()} kernels; "
          f"speedup {frame['speedup'].min():.3g}x to {frame['speedup'].max():.3g}x, median "
          f"{frame['speedup'].median():.3g}x; paper bounds {PAPER_BOUNDS}; kerncast's model reads "
          f"the 39 features{' and ' + ', '.join(s.extra) if s.extra else ''}")
    paper_split(frame, s)
    table = kfold(frame, s)
    final = fit_models(frame, s)
    print(f"\nfinal models on all {len(frame)} rows: ", end="")
    describe(final)
    own = table["kerncast"]
    return {"weighted": own["weighted"], "plain": own["plain"], "port": table["port"]["accuracy"],
            "build": final.own.build_seconds_}


def report_slowdown(features: str | None) -> None:
    """The profiler's cost: the region profiled against the region run natively."""
    frame = load_features(features)
    timed = frame[frame["slowdown"].notna()] if "slowdown" in frame else frame.iloc[:0]
    if timed.empty:
        print("feature collection: no native times in the features file")
        return
    by_size = ", ".join(f"{size} {g['slowdown'].median():.1f}x" for size, g in timed.groupby("size"))
    print(f"feature collection slowdown (profiled / native region time), median: "
          f"{timed['slowdown'].median():.1f}x over {len(timed)} regions ({by_size})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=[*DEVICES, "all"], default="all")
    parser.add_argument("--variant", choices=["default", "best"], default="default")
    parser.add_argument("--quick", action="store_true",
                        help="a smaller search (1,000 random sets, 30 splits, 3 folds) for a smoke run")
    parser.add_argument("--features", help="the features Parquet file (default: data/xapp/features.parquet)")
    parser.add_argument("--folds", type=int, default=5, help="outer folds split by kernel")
    parser.add_argument("--extra", nargs="*", default=["cpu_s"],
                        help="columns besides the 39 features for kerncast's model (default cpu_s, "
                             "the region's CPU time: known before porting, it tells launch-bound "
                             "small regions from the rest; --extra with nothing gives the 39 alone)")
    args = parser.parse_args()
    s = Settings(features=args.features, variant=args.variant, folds=args.folds,
                 extra=tuple(args.extra))
    if args.quick:
        s.n_random, s.n_splits, s.folds, s.inner_folds = 1000, 30, 3, 3
    devices = list(DEVICES) if args.device == "all" else [args.device]
    try:
        results = {d: run_device(d, s) for d in devices}
    except KerncastError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(getattr(exc, "exit_code", 1)) from None
    report_slowdown(s.features)
    first = results[devices[0]]
    print(f"xapp weighted error: {first['weighted']:.1f}% plain: {first['plain']:.1f}% "
          f"port accuracy: {first['port']:.1f}% build: {first['build']:.1f} s")


if __name__ == "__main__":
    main()
