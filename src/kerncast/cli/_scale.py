"""``kerncast scale``: time and power at other SM counts and devices, from one base run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kerncast._errors import InputError, unknown_name
from kerncast.cli._app import app
from kerncast.cli._output import console, print_json, writable_parent

_DATASETS = ("h100", "h200")


def _data_root() -> Path:
    for root in (Path(__file__).resolve().parents[3] / "data", Path.cwd() / "data"):
        if all((root / d).is_dir() for d in _DATASETS):
            return root
    raise InputError("the shipped datasets data/h100 and data/h200 are not here; run kerncast "
                     "scale from a kerncast checkout (they hold the base runs and the surfaces)")


def _load() -> Any:
    from kerncast.data import Dataset  # noqa: PLC0415  (pandas: not on every command)
    from kerncast.models import merge_datasets  # noqa: PLC0415 (CLI start-up: models load on use)

    root = _data_root()
    return merge_datasets([Dataset.read(root / d) for d in _DATASETS])


def _kernel_name(kernel: str, data: Any) -> str:
    if not kernel.startswith("corpus:"):
        raise InputError(f"{kernel!r}: kerncast scale reads the base run from the shipped dataset, "
                         "so give a corpus kernel as corpus:NAME (kerncast corpus list)")
    name = kernel.split(":", 1)[1]
    if name not in set(data.times["kernel"]):
        raise unknown_name("kernel", name, set(data.times["kernel"]))
    return name


def _counter_bases(data: Any, instance: tuple | None = None) -> str:
    """The configurations (device:SMs) with Nsight Compute counters in ``data`` (of
    ``instance``, a (kernel, size, config), where given)."""
    counters = data.counters
    if counters is not None and len(counters) and instance is not None:
        sel = ((counters["kernel"] == instance[0]) & (counters["size"] == instance[1])
               & (counters["config"] == instance[2]))
        if "status" in counters:
            sel &= counters["status"] == "ok"
        counters = counters[sel]
    if counters is None or not len(counters):
        return "no configuration"
    pairs = sorted({(d, int(n)) for d, n in counters[["device", "sm_count"]].itertuples(index=False)})
    return ", ".join(f"{d.split('-')[0]}:{n}" for d, n in pairs)


def _instance(data: Any, name: str, size: str) -> tuple[str, str, str]:
    """The kernel's default launch (the one its SM sweep measured) at ``size``."""
    t = data.times
    swept = t[(t["kernel"] == name) & (t["experiment"] == "sm-sweep")]
    if not len(swept):
        raise InputError(f"{name} has no SM sweep in the shipped data, so no surface to compare "
                         "with; choose a kernel that kerncast data summary lists with SM counts")
    return name, size, str(swept["config"].iloc[0])


def _base_run(data: Any, instance: tuple, base: tuple[str, int], text: str) -> Any:
    from kerncast.models import base_runs  # noqa: PLC0415 (CLI start-up: models load on use)

    runs = base_runs(data, base)
    where = _counter_bases(data, instance)
    if instance not in runs.index:
        raise InputError(f"no measured run of {instance[0]} (size {instance[1]}, launch "
                         f"{instance[2]}) at {text}; measured base runs with counters exist at "
                         f"{where}: use one of them as --base")
    run = runs.loc[instance]
    if run["counters"] is None:
        raise InputError(f"the base run of {instance[0]} at {text} has no counters (Nsight Compute "
                         f"was run at {where}); use one of them as --base, or measure counters "
                         "with kerncast measure corpus --experiments counters")
    return run


def _targets(to: str | None, base: tuple[str, int], devices: list[str]) -> list[tuple[str, int]]:
    from kerncast.models import SM_AXIS, parse_configuration  # noqa: PLC0415 (CLI start-up: models load on use)

    if to is None or to.strip().lower() == "all":
        return [(d, s) for d in devices for s in SM_AXIS if (d, s) != base]
    return [parse_configuration(item, devices) for item in to.split(",") if item.strip()]


def _measured(data: Any, instance: tuple) -> Any:
    from kerncast.models import INSTANCE, surface_frame  # noqa: PLC0415 (CLI start-up: models load on use)

    frame = surface_frame(data.subset([instance[0]]))
    sel = (frame[INSTANCE] == list(instance)).all(axis=1)
    return frame[sel].set_index(["device", "sm_count"])


def scale_table(kernel: str, size: str = "large", base: str = "h100:132",
                to: str | None = None, method: str = "regression") -> tuple[Any, dict[str, Any]]:
    """Predicted time, power and energy at each target, with the measurements where they
    exist; the model (``method``: ``"regression"`` or the published ``"clusters"``) is
    fitted on every other kernel of the shipped data."""
    import numpy as np  # noqa: PLC0415 (CLI start-up: numpy on use)

    from kerncast.models import (  # noqa: PLC0415 (CLI start-up: models load on use)
        METHODS, base_inputs, base_physical, base_runs, fit_surfaces, parse_configuration,
        predict_surface, surface_frame,
    )

    if method not in METHODS:
        raise InputError(f"--method {method!r}: choose one of {', '.join(METHODS)}")

    data = _load()
    name = _kernel_name(kernel, data)
    base_cfg = parse_configuration(base, sorted(set(data.times["device"])))
    instance = _instance(data, name, size)
    run = _base_run(data, instance, base_cfg, base)
    devices = [base_cfg[0], *sorted(set(data.times["device"]) - {base_cfg[0]})]
    targets = _targets(to, base_cfg, devices)
    others = data.subset([k for k in data.kernels() if k != name])
    other_runs = base_runs(others, base_cfg)
    surfaces = fit_surfaces(surface_frame(others), base_inputs(other_runs, base_cfg), base=base_cfg,
                            method=method, physical=base_physical(other_runs, base_cfg))
    table = predict_surface(surfaces, float(run["time_s"]), run["counters"], targets,
                            base_power_w=float(run["power_w"]), base_energy_j=float(run["energy_j"]))
    meas = _measured(data, instance)
    for col in ("time_s", "power_w", "energy_j"):
        table[f"measured_{col}"] = [float(meas.loc[(d, s), col]) if (d, s) in meas.index else np.nan
                                    for d, s in zip(table["device"], table["sm_count"])]
        table[f"error_{col}_pct"] = (table[col] / table[f"measured_{col}"] - 1) * 100
    info = {"kernel": name, "size": size, "config": instance[2], "base": base,
            "base_time_s": float(run["time_s"]), "base_power_w": float(run["power_w"]),
            "trained_on": len(surfaces["kernels"]),
            "clusters": surfaces["n_clusters"] if method == "clusters" else None,
            "method": method}
    return table, info


def _show(table: Any, info: dict[str, Any]) -> None:
    console.print(f"[bold]{info['kernel']}[/bold] (size {info['size']}, launch {info['config']}) from "
                  f"its base run at {info['base']}: {info['base_time_s'] * 1e3:.4g} ms, "
                  f"{info['base_power_w']:.0f} W")
    out = Table(title="predicted (measured, error) at each configuration")
    for col in ("configuration", "time ms", "measured", "error", "power W", "measured ", "error "):
        out.add_column(col, justify="left" if col == "configuration" else "right")
    for r in table.itertuples(index=False):
        out.add_row(f"{r.device}:{r.sm_count}", f"{r.time_s * 1e3:.4g}", _fmt(r.measured_time_s * 1e3),
                    _pct(r.error_time_s_pct), f"{r.power_w:.0f}", _fmt(r.measured_power_w),
                    _pct(r.error_power_w_pct))
    console.print(out)
    how = ("regression on how the base run is bound" if info["method"] == "regression"
           else f"published, {info['clusters']} clusters per set")
    console.print(f"scaling-surfaces model ({how}) fitted on the {info['trained_on']} other "
                  "kernels; benchmarks/scaling_accuracy.py scores it held out by kernel")


def _fmt(value: float) -> str:
    return "-" if value != value else f"{value:.4g}"


def _pct(value: float) -> str:
    return "-" if value != value else f"{value:+.1f}%"


def plot_surface(table: Any, info: dict[str, Any], path: Path) -> None:
    """Heat maps of the predicted time surface and, where measured, of its error."""
    import matplotlib  # noqa: PLC0415 (on use: matplotlib)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (on use: matplotlib)
    import numpy as np  # noqa: PLC0415 (CLI start-up: numpy on use)

    devices = list(dict.fromkeys(table["device"]))
    sms = sorted(set(table["sm_count"]))
    grids = [np.full((len(devices), len(sms)), np.nan) for _ in range(2)]
    for r in table.itertuples(index=False):
        at = (devices.index(r.device), sms.index(r.sm_count))
        grids[0][at], grids[1][at] = r.time_s * 1e3, r.error_time_s_pct
    fig, axes = plt.subplots(1, 2, figsize=(11, 1.2 + 0.8 * len(devices)))
    for ax, grid, title, cmap in zip(axes, grids, ("predicted time, ms", "error vs measured, %"),
                                     ("viridis", "coolwarm")):
        lim = np.nanmax(np.abs(grid)) if np.isfinite(grid).any() else 1.0
        im = ax.imshow(grid, cmap=cmap, aspect="auto",
                       **({"vmin": -lim, "vmax": lim} if cmap == "coolwarm" else {}))
        ax.set_xticks(range(len(sms)), [str(s) for s in sms])
        ax.set_yticks(range(len(devices)), devices)
        ax.set_xlabel("SMs")
        ax.set_title(title)
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, "" if v != v else f"{v:.3g}", ha="center", va="center", fontsize=7)
        fig.colorbar(im, ax=ax)
    fig.suptitle(f"{info['kernel']} from {info['base']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@app.command("scale")
def scale_cmd(
    kernel: Annotated[str, typer.Argument(help="corpus:NAME (its base run is read from data/).")],
    size: Annotated[str, typer.Option("--size", "-s", help="Problem size.")] = "large",
    base: Annotated[str, typer.Option("--base", help="Base configuration DEVICE:SMS.")] = "h100:132",
    to: Annotated[str | None, typer.Option(
        "--to", help="Targets DEVICE:SMS,... (default: every measured configuration).")] = None,
    method: Annotated[str, typer.Option(
        "--method", help="regression (kerncast's, the default) or clusters (as published).")] = "regression",
    plot: Annotated[Path | None, typer.Option("--plot", help="Write heat maps to this PNG.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")] = False,
) -> None:
    """Predict a kernel's time and power at other SM counts and devices from one base run
    with counters (the scaling-surfaces model: by default trees on how the base run is bound;
    --method clusters: the published clusters of scaling values chosen by a network).

    Example: kerncast scale corpus:matmul_tiled --base h100:132 --to h200:64,h100:32
    """
    if plot is not None:
        writable_parent(plot)
    table, info = scale_table(kernel, size, base, to, method)
    if plot is not None:
        plot_surface(table, info, plot)
    if as_json:
        print_json({**info, "targets": table.drop(columns=[c for c in table if c.endswith("_clusters")])
                    .to_dict(orient="records"), "plot": str(plot) if plot else None})
        return
    _show(table, info)
    if plot is not None:
        console.print(f"heat maps written to {plot}")
