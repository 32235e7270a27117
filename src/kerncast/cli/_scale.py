"""``kerncast scale``: time and power at other SM counts and devices, from one base run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kerncast._errors import InputError, ToolchainError, unknown_name
from kerncast.cli._app import app
from kerncast.cli._output import console, err_console, print_json, writable_parent
from kerncast.cli._target import (
    ArgOpt, BlockOpt, CompilerOpt, DefineOpt, GridOpt, KernelOpt, OptionOpt, SmemOpt, target_of,
)

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

    from kerncast.models import METHODS, parse_configuration  # noqa: PLC0415 (models load on use)

    if method not in METHODS:
        raise InputError(f"--method {method!r}: choose one of {', '.join(METHODS)}")

    data = _load()
    name = _kernel_name(kernel, data)
    base_cfg = parse_configuration(base, sorted(set(data.times["device"])))
    instance = _instance(data, name, size)
    run = _base_run(data, instance, base_cfg, base)
    table, trained = _predicted(data.subset([k for k in data.kernels() if k != name]),
                                base_cfg, to, method, float(run["time_s"]), run["counters"],
                                float(run["power_w"]), float(run["energy_j"]))
    meas = _measured(data, instance)
    for col in ("time_s", "power_w", "energy_j"):
        table[f"measured_{col}"] = [float(meas.loc[(d, s), col]) if (d, s) in meas.index else np.nan
                                    for d, s in zip(table["device"], table["sm_count"])]
        table[f"error_{col}_pct"] = (table[col] / table[f"measured_{col}"] - 1) * 100
    info = {"kernel": name, "size": size, "config": instance[2], "base": base,
            "base_time_s": float(run["time_s"]), "base_power_w": float(run["power_w"]),
            **trained, "method": method}
    return table, info


def _predicted(train: Any, base_cfg: tuple[str, int], to: str | None, method: str,
               time_s: float, counters: dict, power_w: float, energy_j: float
               ) -> tuple[Any, dict[str, Any]]:
    """The model fitted on ``train``'s kernels, and its prediction at each target (``to``)
    from one base run; with what it was fitted on."""
    from kerncast.models import (  # noqa: PLC0415 (CLI start-up: models load on use)
        base_inputs, base_physical, base_runs, fit_surfaces, predict_surface, surface_frame,
    )

    devices = [base_cfg[0], *sorted(set(train.times["device"]) - {base_cfg[0]})]
    targets = _targets(to, base_cfg, devices)
    runs = base_runs(train, base_cfg)
    surfaces = fit_surfaces(surface_frame(train), base_inputs(runs, base_cfg), base=base_cfg,
                            method=method, physical=base_physical(runs, base_cfg))
    table = predict_surface(surfaces, time_s, counters, targets, base_power_w=power_w,
                            base_energy_j=energy_j)
    return table, {"trained_on": len(surfaces["kernels"]),
                   "clusters": surfaces["n_clusters"] if method == "clusters" else None}


def trainable(base_cfg: tuple[str, int], text: str) -> Any:
    """The shipped data, where it holds base runs with counters at ``base_cfg`` (``text``
    as the user wrote it) to fit the model on for one's own kernel; else an input error
    that names the configurations that have them."""
    from kerncast.models import base_runs  # noqa: PLC0415 (models load on use)

    data = _load()
    devices = sorted(set(data.times["device"]))
    if base_cfg[0] not in devices:
        raise InputError(f"the base run is on {base_cfg[0]}, where the shipped data has no "
                         f"surfaces; measure it on one of {', '.join(devices)}")
    if not any(c is not None for c in base_runs(data, base_cfg)["counters"]):
        raise InputError(f"the base run is at {text}, where the shipped data has no base runs "
                         "with counters to fit the model on; measure it at one of "
                         f"{_counter_bases(data)} (--base)")
    return data


def scale_own(run: Any, to: str | None = None, method: str = "regression"
              ) -> tuple[Any, dict[str, Any]]:
    """Predicted time, power and energy at each target from one's own kernel's base run
    (a :class:`kerncast.measure.BaseRun`), the model fitted on every corpus kernel of the
    shipped data."""
    import numpy as np  # noqa: PLC0415 (CLI start-up: numpy on use)

    from kerncast.models import METHODS  # noqa: PLC0415 (models load on use)

    if method not in METHODS:
        raise InputError(f"--method {method!r}: choose one of {', '.join(METHODS)}")
    base_cfg = (run.device, int(run.sm_count))
    data = trainable(base_cfg, run.configuration)
    table, trained = _predicted(data, base_cfg, to, method, run.time_s, run.counters,
                                run.power_w, run.energy_j)
    for col in ("time_s", "power_w", "energy_j"):
        table[f"measured_{col}"] = np.nan
        table[f"error_{col}_pct"] = np.nan
    config = ", ".join(f"{k}={run.counters[k]}" for k in ("blocks", "threads_per_block")
                       if k in run.counters)
    info = {"kernel": run.kernel, "size": "-", "config": config, "base": run.configuration,
            "base_time_s": run.time_s, "base_power_w": run.power_w, **trained,
            "method": method, "base_run": run.to_dict()}
    return table, info


def _show(table: Any, info: dict[str, Any]) -> None:
    power = "power not measured" if info["base_power_w"] != info["base_power_w"] \
        else f"{info['base_power_w']:.0f} W"
    console.print(f"[bold]{info['kernel']}[/bold] (size {info['size']}, launch {info['config']}) from "
                  f"its base run at {info['base']}: {info['base_time_s'] * 1e3:.4g} ms, {power}")
    measured = bool(table["measured_time_s"].notna().any())
    out = Table(title="predicted (measured, error) at each configuration" if measured
                else "predicted at each configuration (none of it measured)")
    columns = ("configuration", "time ms", "measured", "error", "power W", "measured ", "error ")
    for col in columns if measured else columns[:2] + columns[4:5]:
        out.add_column(col, justify="left" if col == "configuration" else "right")
    for r in table.itertuples(index=False):
        cells = [f"{r.device}:{r.sm_count}", f"{r.time_s * 1e3:.4g}", _fmt(r.measured_time_s * 1e3),
                 _pct(r.error_time_s_pct), _fmt(r.power_w), _fmt(r.measured_power_w),
                 _pct(r.error_power_w_pct)]
        out.add_row(*(cells if measured else cells[:2] + cells[4:5]))
    console.print(out)
    how = ("regression on how the base run is bound" if info["method"] == "regression"
           else f"published, {info['clusters']} clusters per set")
    others = "corpus" if "base_run" in info else "other"
    console.print(f"scaling-surfaces model ({how}) fitted on the {info['trained_on']} {others} "
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
    panels = 2 if np.isfinite(grids[1]).any() else 1  # the error only where measured
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 1.2 + 0.8 * len(devices)),
                             squeeze=False)
    for ax, grid, title, cmap in zip(axes[0], grids, ("predicted time, ms", "error vs measured, %"),
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
    kernel: Annotated[str | None, typer.Argument(
        help="corpus:NAME (its base run is read from data/), or one's own kernel: a launch "
             "file (.toml) or a source file with --kernel, --grid, --block and --arg, whose "
             "base run is measured on this machine's GPU (or read with --base-run).")] = None,
    size: Annotated[str, typer.Option("--size", "-s", help="Problem size (corpus).")] = "large",
    base: Annotated[str | None, typer.Option(
        "--base", help="Base configuration DEVICE:SMS (corpus default h100:132; one's own "
                       "kernel: this GPU, all its SMs).")] = None,
    to: Annotated[str | None, typer.Option(
        "--to", help="Targets DEVICE:SMS,... (default: every measured configuration).")] = None,
    method: Annotated[str, typer.Option(
        "--method", help="regression (kerncast's, the default) or clusters (as published).")] = "regression",
    base_run: Annotated[Path | None, typer.Option(
        "--base-run", help="One's own kernel's base run, as --save-base wrote it (no GPU "
                           "needed).")] = None,
    save_base: Annotated[Path | None, typer.Option(
        "--save-base", help="Write the base run measured here to this JSON file.")] = None,
    backend: Annotated[str, typer.Option(help="Backend that measures one's own kernel's base "
                                              "run: cupy or driver.")] = "cupy",
    plot: Annotated[Path | None, typer.Option("--plot", help="Write heat maps to this PNG.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")] = False,
    entry: KernelOpt = None, grid: GridOpt = None, block: BlockOpt = None, smem: SmemOpt = 0,
    arg: ArgOpt = None, compiler: CompilerOpt = "auto", option: OptionOpt = None,
    define: DefineOpt = None,
) -> None:
    """Predict a kernel's time and power at other SM counts and devices from one base run
    with counters (the scaling-surfaces model: by default trees on how the base run is bound;
    --method clusters: the published clusters of scaling values chosen by a network).

    Example: kerncast scale corpus:matmul_tiled --base h100:132 --to h200:64,h100:32

    Example: kerncast scale saxpy.toml --to h100:32,h200 --save-base saxpy-base.json

    Example: kerncast scale --base-run saxpy-base.json --to h200:64
    """
    for path in (plot, save_base):
        if path is not None:
            writable_parent(path)
    own = {"entry": entry, "grid": grid, "block": block, "smem": smem, "args": arg,
           "compiler": compiler, "options": option, "defines": define}
    run = _own_base_run(kernel, base, base_run, backend, own, quiet=as_json)
    if run is None:
        if save_base is not None:
            raise InputError(f"--save-base writes the base run measured for one's own kernel; "
                             f"{kernel}'s base run is the shipped data's")
        table, info = scale_table(str(kernel), size, base or "h100:132", to, method)
    else:
        if save_base is not None:
            run.save(save_base)
        table, info = scale_own(run, to, method)
    if plot is not None:
        plot_surface(table, info, plot)
    if as_json:
        print_json({**info, "targets": table.drop(columns=[c for c in table if c.endswith("_clusters")])
                    .to_dict(orient="records"), "plot": str(plot) if plot else None})
        return
    _show(table, info)
    if save_base is not None and run is not None:
        console.print(f"base run written to {save_base}")
    if plot is not None:
        console.print(f"heat maps written to {plot}")


def _own_base_run(kernel: str | None, base: str | None, path: Path | None, backend: str,
                  own: dict[str, Any], quiet: bool) -> Any:
    """One's own kernel's base run: read from ``path``, or measured here at ``base``; None
    for a corpus kernel."""
    from kerncast.devices import get_device  # noqa: PLC0415 (light, but only needed here)
    from kerncast.measure import BaseRun, measure_base_run  # noqa: PLC0415 (on use)
    from kerncast.models import parse_configuration  # noqa: PLC0415 (models load on use)

    if path is not None:
        if kernel is not None:
            raise InputError(f"give either a kernel ({kernel}) or --base-run {path}: the base "
                             "run names its kernel")
        run = BaseRun.load(path)
        if base is not None and parse_configuration(base) != (run.device, run.sm_count):
            raise InputError(f"--base {base} differs from the base run's {run.configuration}; "
                             "leave --base out (the run says where it was measured)")
        return run
    if kernel is None:
        raise InputError("give a kernel: corpus:NAME, a launch file (.toml) or a source file "
                         "with --kernel, --grid, --block and --arg; or --base-run PATH")
    found = target_of(kernel, **own)
    if not found.own:
        return None
    device, sm_count = parse_configuration(base) if base is not None else (None, None)
    if device is not None and sm_count is not None:
        trainable((device, sm_count), base)  # before the GPU spends time on a useless run
        if sm_count == get_device(device).compute.sm_count:
            sm_count = None  # the whole GPU: no green context
    instance, launch = found.instance({})
    say = (lambda text: None) if quiet else (lambda text: err_console.print(f"[dim]{text}[/dim]"))
    try:
        return measure_base_run(instance, launch, device=device, sm_count=sm_count,
                                backend=backend, progress=say)
    except ToolchainError as exc:
        why = str(exc).split(";")[0]
        raise ToolchainError(f"the base run of one's own kernel is measured on an NVIDIA GPU "
                             f"here ({why}); on a machine without one, "
                             "predict from a base run measured on a GPU: kerncast scale "
                             "--base-run PATH (written there with --save-base PATH)") from None
