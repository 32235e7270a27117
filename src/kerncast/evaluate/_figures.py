"""The report's figures, drawn with matplotlib's Agg backend (imported on first use)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["configs_figure", "ecdf_figure", "kernel_error_figure", "parity_figure",
           "roofline_figure", "safe_name", "sample_ladder_figure", "tradeoff_figure"]

BAND = 0.25  # the +-25% band around y = x


def safe_name(text: str) -> str:
    """A file-name-safe version of a model or kernel name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "x"


def _pyplot():
    import matplotlib  # noqa: PLC0415 (on use: matplotlib)

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt  # noqa: PLC0415 (on use: matplotlib)

    return plt


def _time_axis(axis) -> None:
    """Log-scale seconds labelled 1, 2 and 5 per decade in engineering units (20 µs)."""
    from matplotlib.ticker import EngFormatter, LogLocator  # noqa: PLC0415 (on use: matplotlib)

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_minor_locator(LogLocator(base=10, subs=(3.0, 4.0, 6.0, 7.0, 8.0, 9.0)))
    axis.set_major_formatter(EngFormatter(unit="s", places=0))
    axis.set_minor_formatter("")


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=90)
    _pyplot().close(fig)
    return path


def parity_figure(pred: pd.DataFrame, model: str, path: Path) -> Path:
    """Predicted against measured, log-log, with y = x and the +-25% band, by kernel."""
    plt = _pyplot()
    ok = pred[pred["ok"]]
    fig, ax = plt.subplots(figsize=(5.2, 4.6), layout="constrained")
    lo, hi = _limits(pd.concat([ok["measured_s"], ok["predicted_s"]]) if len(ok) else pd.Series())
    xs = np.geomspace(lo, hi, 50)
    ax.fill_between(xs, xs * (1 - BAND), xs * (1 + BAND), color="0.85", label="±25%")
    ax.plot(xs, xs, color="0.3", lw=1, label="y = x")
    for kernel, grp in ok.groupby("kernel"):
        ax.scatter(grp["measured_s"], grp["predicted_s"], s=10, alpha=0.7, label=str(kernel))
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="measured",
           ylabel="predicted", title=f"{model}: {len(ok)} predicted, "
           f"{int((~pred['ok']).sum())} failed")
    _time_axis(ax.xaxis)
    _time_axis(ax.yaxis)
    if ok["kernel"].nunique() <= 12:
        ax.legend(fontsize=6, loc="upper left")
    return _save(fig, path)


def _limits(values: pd.Series) -> tuple[float, float]:
    values = pd.to_numeric(values, errors="coerce").astype(float)
    values = values[np.isfinite(values) & (values > 0)]
    if values.empty:
        return 1e-6, 1e-2
    return float(values.min()) / 2, float(values.max()) * 2


def kernel_error_figure(per_kernel: pd.DataFrame, path: Path) -> Path:
    """MAPE per kernel, one bar per model; a model that failed on a kernel gets an 'x'."""
    plt = _pyplot()
    kernels = sorted(set(per_kernel["kernel"]))
    models = sorted(set(per_kernel["model"]))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(kernels) * max(len(models), 1)), 4.2),
                           layout="constrained")
    width = 0.8 / max(len(models), 1)
    x = np.arange(len(kernels))
    for i, model in enumerate(models):
        rows = per_kernel[per_kernel["model"] == model].set_index("kernel")
        mape = np.array([rows["mape_pct"].get(k, math.nan) for k in kernels], dtype=float)
        pos = x - 0.4 + width * (i + 0.5)
        ax.bar(pos, np.nan_to_num(mape, nan=0.0), width, label=model)
        for p, value in zip(pos, mape):
            if math.isnan(value):
                ax.text(p, 0, "x", ha="center", va="bottom", color="red", fontsize=8)
    ax.set_xticks(x, kernels, rotation=60, ha="right", fontsize=7)
    ax.set(ylabel="mean absolute % error", title="error per kernel (x: the model failed)")
    ax.legend(fontsize=7)
    return _save(fig, path)


def ecdf_figure(predictions: pd.DataFrame, path: Path) -> Path:
    """Distribution of absolute percentage errors: the ECDF of each model."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 4.0), layout="constrained")
    for model, grp in predictions[predictions["ok"]].groupby("model"):
        ape = np.sort(np.clip(grp["ape_pct"].to_numpy(dtype=float), 1e-3, None))
        ax.step(ape, np.arange(1, len(ape) + 1) / len(ape), where="post", label=str(model))
    for limit in (10, 25):
        ax.axvline(limit, color="0.6", ls=":", lw=1)
    ax.set(xscale="log", xlabel="absolute % error", ylabel="share of predictions",
           ylim=(0, 1.02), title="distribution of errors (dotted: 10% and 25%)")
    ax.legend(fontsize=7)
    return _save(fig, path)


def _config_groups(rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Per size, the largest (language, device, SM count) group of configurations."""
    keys = [c for c in ("language", "device", "sm_count") if c in rows]
    out = []
    order = {"small": 0, "medium": 1, "large": 2}
    sizes = sorted(set(rows["size"].astype(str)), key=lambda s: (order.get(s, 3), s))
    for size in sizes:
        part = rows[rows["size"].astype(str) == size]
        groups = list(part.groupby(keys, sort=True)) if keys else [((), part)]
        _, best = max(groups, key=lambda g: g[1]["config"].nunique())
        out.append((size, best))
    return out


def _span(grp: pd.DataFrame, least: float = 4.0) -> tuple[float, float]:
    """Y limits covering measured and predicted times, at least a factor ``least`` apart."""
    values = pd.concat([grp["measured_s"], grp.loc[grp["ok"], "predicted_s"]])
    lo, hi = _limits(values)
    lo, hi = lo * 1.6, hi / 1.6  # _limits pads by 2x; keep a little of it
    if hi / lo < least:
        mid = math.sqrt(lo * hi)
        lo, hi = mid / math.sqrt(least), mid * math.sqrt(least)
    return lo, hi


def configs_figure(predictions: pd.DataFrame, kernel: str, path: Path) -> Path:
    """Measured and predicted time over the kernel's launch configurations, per size."""
    plt = _pyplot()
    rows = predictions[predictions["kernel"] == kernel]
    groups = _config_groups(rows)
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.6), squeeze=False,
                             layout="constrained")
    for ax, (size, grp) in zip(axes[0], groups):
        measured = grp.drop_duplicates("config").sort_values("measured_s")
        order = {c: i for i, c in enumerate(measured["config"])}
        ax.plot(range(len(order)), measured["measured_s"], "k-o", ms=3, label="measured")
        for model, part in grp[grp["ok"]].groupby("model"):
            xs = part["config"].map(order)
            ax.plot(xs, part["predicted_s"], ".", ms=5, label=str(model))
        ax.set(yscale="log", ylim=_span(grp), title=f"{kernel}, size {size}", ylabel="time",
               xlabel="configurations, fastest measured first")
        _time_axis(ax.yaxis)
        if len(order) <= 24:
            ax.set_xticks(range(len(order)), list(order), rotation=70, fontsize=6)
        ax.legend(fontsize=6)
    return _save(fig, path)


def sample_ladder_figure(ladders: dict[str, tuple[pd.DataFrame, float, int]], path: Path) -> Path:
    """What each further wave of a sample costs (the step from one sample to the next over
    the waves it adds: the slope a line through them takes) against the sample's waves,
    one panel per launch, with the full run's time per wave: where a kernel's samples
    reach its steady state. ``ladders`` maps a title to (samples with ``waves`` and
    ``time_median_s``, the full run's seconds, the full grid's waves); samples with an
    ``l2_state`` column get a line per state."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter  # noqa: PLC0415 (on use: matplotlib)

    plt = _pyplot()
    n = max(len(ladders), 1)
    cols = min(n, 3)
    fig, axes = plt.subplots(math.ceil(n / cols), cols, figsize=(3.6 * cols, 2.8 * math.ceil(n / cols)),
                             squeeze=False, layout="constrained")
    for ax, (title, (samples, full_s, waves)) in zip(axes.flat, ladders.items()):
        states = samples.groupby("l2_state", sort=True) if "l2_state" in samples \
            else [("", samples)]
        for state, ladder in states:
            ladder = ladder.sort_values("waves")
            w = ladder["waves"].to_numpy(float)
            t = ladder["time_median_s"].to_numpy(float)
            label = f"{state}: each further wave" if state else "each further wave"
            ax.plot(w[1:], np.diff(t) / np.diff(w) * 1e6, "o-", ms=3, label=label)
        ax.axhline(full_s / waves * 1e6, color="0.3", ls="--", lw=1, label="full run, per wave")
        ax.set(xscale="log", xlabel="waves in the sample", ylabel="µs per wave", title=title)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.title.set_fontsize(8)
    for ax in list(axes.flat)[len(ladders):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=6)
    return _save(fig, path)


def tradeoff_figure(sweep: pd.DataFrame, path: Path) -> Path:
    """Mean and median error against mean and median overhead, one point per budget
    (``sweep`` indexed by budget with the columns the sampling benchmark prints)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.0, 3.8), layout="constrained")
    for stat, marker in (("mean", "o"), ("median", "s")):
        x, y = sweep[f"{stat}_overhead_pct"], sweep[f"{stat}_error_pct"]
        ax.plot(x, y, marker + "-", label=f"{stat} over kernels")
        for budget, xi, yi in zip(sweep.index, x, y):
            ax.annotate(str(budget), (xi, yi), fontsize=6, xytext=(3, 3),
                        textcoords="offset points")
    ax.set(xlabel="sampling overhead (% of the full run)", ylabel="error (%)",
           title="sampling: error against overhead as the budget grows")
    ax.legend(fontsize=7)
    return _save(fig, path)


def roofline_figure(roof: dict[str, float], seconds: float, fixed: dict[str, float],
                    title: str, path: Path) -> Path:
    """One launch: on the left the device's roofline (fp32 and fp64 peaks, DRAM
    bandwidth) with the launch placed at its operations per DRAM byte and operations per
    second, as is and with each fix that gains; on the right its predicted time as is and
    with each fix. ``roof`` is :attr:`kerncast.models.WhatIf.roofline`."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2),
                                      gridspec_kw={"width_ratios": [3, 2]})
    _roofs(left, roof)
    if roof["flops"] > 0:
        x = roof["intensity"]
        left.scatter([x], [roof["flops_per_s"]], color="black", zorder=3, label="as is")
        for fix, t in fixed.items():
            if t < seconds * 0.99:
                left.scatter([x], [roof["flops"] / t], marker="^", zorder=3, label=f"no {fix}")
    else:
        left.text(0.5, 0.92, f"no floating-point operations: {roof['bytes_per_s'] / 1e9:.0f} "
                  f"GB/s of DRAM, {roof['bytes_per_s'] / roof['peak_bandwidth']:.0%} of the "
                  "peak", transform=left.transAxes, ha="center")
    left.legend(fontsize=8, loc="lower right")
    names = ["as is", *[f"no {f}" for f in fixed]]
    times = [seconds, *fixed.values()]
    right.barh(names[::-1], times[::-1], color=["tab:blue"] * len(fixed) + ["black"])
    right.set_xscale("log")
    _time_axis(right.xaxis)
    right.set_xlabel("predicted time")
    for y, t in enumerate(times[::-1]):
        right.text(t, y, f" {seconds / t:.2f}x", va="center", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def _roofs(axis, roof: dict[str, float]) -> None:
    intensity = np.logspace(-3, 4, 200)
    memory = intensity * roof["peak_bandwidth"]
    for peak, label, style in ((roof["peak_fp32"], "fp32 peak", "-"),
                               (roof["peak_fp64"], "fp64 peak", "--")):
        axis.plot(intensity, np.minimum(memory, peak), style, color="grey", label=label)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("floating-point operations per DRAM byte")
    axis.set_ylabel("floating-point operations per second")
    axis.set_ylim(roof["peak_fp32"] * 1e-5, roof["peak_fp32"] * 3)
