"""Scaling surfaces of one kernel: its time, power and energy at other SM counts and
devices, from one base run, with the model fitted on the shipped data (``kerncast scale``).

A corpus kernel's base run is the shipped data's, and the model is fitted on the other
kernels, so that measured values sit beside the predictions; one's own kernel's base run
is measured on this machine's GPU (:func:`kerncast.measure.measure_base_run`) or read
from a file, and the model is fitted on every corpus kernel.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from kerncast._errors import InputError, unknown_name

__all__ = ["corpus_surface", "own_base", "own_surface", "saved_run", "scale", "shipped_data",
           "trainable"]

_DATASETS = ("h100", "h200")


def _data_root() -> Path:
    for root in (Path(__file__).resolve().parents[3] / "data", Path.cwd() / "data"):
        if all((root / d).is_dir() for d in _DATASETS):
            return root
    raise InputError("the shipped datasets data/h100 and data/h200 are not here; run kerncast "
                     "scale from a kerncast checkout (they hold the base runs and the surfaces)")


@lru_cache(maxsize=1)
def shipped_data() -> Any:
    """data/h100 and data/h200 as one dataset (the base runs and surfaces), read once."""
    from kerncast.data import Dataset  # noqa: PLC0415  (pandas: not on every command)
    from kerncast.models._scaling import merge_datasets  # noqa: PLC0415 (on use: pandas)

    root = _data_root()
    return merge_datasets([Dataset.read(root / d) for d in _DATASETS])


def _kernel_name(kernel: str, data: Any) -> str:
    if not kernel.startswith("corpus:"):
        raise InputError(f"{kernel!r} is not a corpus kernel (corpus:NAME, kerncast corpus "
                         "list): one's own kernel is scaled with its launch (scale(kernel, "
                         "launch), or a launch file or source file on the command line)")
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
    from kerncast.models._scaling import base_runs  # noqa: PLC0415 (on use: scikit-learn)

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
    from kerncast.models._scaling import SM_AXIS, parse_configuration  # noqa: PLC0415 (on use: scikit-learn)

    if to is None or to.strip().lower() == "all":
        return [(d, s) for d in devices for s in SM_AXIS if (d, s) != base]
    return [parse_configuration(item, devices) for item in to.split(",") if item.strip()]


def _measured(data: Any, instance: tuple) -> Any:
    from kerncast.models._scaling import INSTANCE, surface_frame  # noqa: PLC0415 (on use: scikit-learn)

    frame = surface_frame(data.subset([instance[0]]))
    sel = (frame[INSTANCE] == list(instance)).all(axis=1)
    return frame[sel].set_index(["device", "sm_count"])


def corpus_surface(kernel: str, size: str = "large", base: str = "h100:132",
                   to: str | None = None, method: str = "regression"
                   ) -> tuple[Any, dict[str, Any]]:
    """Predicted time, power and energy at each target, with the measurements where they
    exist; the model (``method``: ``"regression"`` or the published ``"clusters"``) is
    fitted on every other kernel of the shipped data."""
    import numpy as np  # noqa: PLC0415 (on use: numpy)

    from kerncast.models._scaling import parse_configuration  # noqa: PLC0415 (on use: scikit-learn)

    _check_method(method)
    data = shipped_data()
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


def _check_method(method: str) -> None:
    from kerncast.models._scaling import METHODS  # noqa: PLC0415 (on use: scikit-learn)

    if method not in METHODS:
        raise InputError(f"--method {method!r}: choose one of {', '.join(METHODS)}")


def _predicted(train: Any, base_cfg: tuple[str, int], to: str | None, method: str,
               time_s: float, counters: dict, power_w: float, energy_j: float
               ) -> tuple[Any, dict[str, Any]]:
    """The model fitted on ``train``'s kernels, and its prediction at each target (``to``)
    from one base run; with what it was fitted on."""
    from kerncast.models._scaling import (  # noqa: PLC0415 (on use: scikit-learn)
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
    from kerncast.models._scaling import base_runs  # noqa: PLC0415 (on use: scikit-learn)

    data = shipped_data()
    devices = sorted(set(data.times["device"]))
    if base_cfg[0] not in devices:
        raise InputError(f"the base run is on {base_cfg[0]}, where the shipped data has no "
                         f"surfaces; measure it on one of {', '.join(devices)}")
    if not any(c is not None for c in base_runs(data, base_cfg)["counters"]):
        raise InputError(f"the base run is at {text}, where the shipped data has no base runs "
                         "with counters to fit the model on; measure it at one of "
                         f"{_counter_bases(data)} (--base)")
    return data


def own_surface(run: Any, to: str | None = None, method: str = "regression"
                ) -> tuple[Any, dict[str, Any]]:
    """Predicted time, power and energy at each target from one's own kernel's base run
    (a :class:`kerncast.measure.BaseRun`), the model fitted on every corpus kernel of the
    shipped data."""
    import numpy as np  # noqa: PLC0415 (on use: numpy)

    _check_method(method)
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


def scale(kernel: Any = None, launch: Any = None, *, to: str | None = None,
          base: str | None = None, base_run: Any = None, size: str = "large",
          method: str = "regression", backend: str = "cupy",
          progress: Any = None) -> tuple[Any, dict[str, Any]]:
    """Predict a kernel's time, power and energy at other SM counts and devices from one
    base run with counters (the scaling surfaces).

    Parameters
    ----------
    kernel, launch
        ``"corpus:NAME"`` (its base run is the shipped data's, at ``size``), or one's own
        :class:`kerncast.Kernel` and :class:`kerncast.Launch`, whose base run is measured
        on this machine's GPU.
    base
        The base configuration ``DEVICE:SMS`` (corpus default ``h100:132``; one's own
        kernel: this GPU, all its SMs).
    base_run
        One's own kernel's base run measured before: a :class:`kerncast.measure.BaseRun`
        or the path of one saved with ``BaseRun.save`` (no GPU needed).
    to
        Targets ``DEVICE:SMS,...`` (default: every measured configuration).
    method
        ``"regression"`` (kerncast's) or ``"clusters"`` (as published).

    Returns
    -------
    (table, info)
        A row per target (``time_s``, ``power_w``, ``energy_j`` and, for a corpus kernel,
        the measured values and errors), and what the prediction rests on (its base run
        under ``base_run`` for one's own kernel).

    Raises
    ------
    InputError
        For a kernel, configuration or base run the model cannot start from.
    """
    from kerncast.measure import measure_base_run  # noqa: PLC0415 (on use: GPU)

    if base_run is not None:
        return own_surface(saved_run(base_run, base), to, method)
    if isinstance(kernel, str) and launch is None:
        return corpus_surface(kernel, size, base or "h100:132", to, method)
    if kernel is None or launch is None:
        raise InputError("scale() takes a corpus kernel ('corpus:NAME'), one's own kernel "
                         "with its launch (scale(kernel, launch)), or base_run=")
    run = measure_base_run(kernel, launch, **own_base(base), backend=backend,
                           progress=progress)
    return own_surface(run, to, method)


def saved_run(base_run: Any, base: str | None = None) -> Any:
    """A base run measured before (a :class:`kerncast.measure.BaseRun` or the path of one);
    ``base``, where given, must be where it was measured."""
    from kerncast.measure import BaseRun  # noqa: PLC0415 (on use: the base run's type)
    from kerncast.models._scaling import parse_configuration  # noqa: PLC0415 (on use: scikit-learn)

    run = base_run if isinstance(base_run, BaseRun) else BaseRun.load(base_run)
    if base is not None and parse_configuration(base) != (run.device, run.sm_count):
        raise InputError(f"--base {base} differs from the base run's {run.configuration}; "
                         "leave --base out (the run says where it was measured)")
    return run


def own_base(base: str | None) -> dict[str, Any]:
    """``measure_base_run``'s device and SM count for ``--base`` (None: this GPU, whole),
    refused before anything runs where the model has no base runs to start from there."""
    from kerncast.devices import get_device  # noqa: PLC0415 (light, but only needed here)
    from kerncast.models._scaling import parse_configuration  # noqa: PLC0415 (on use: scikit-learn)

    if base is None:
        return {"device": None, "sm_count": None}
    device, sm_count = parse_configuration(base)
    trainable((device, sm_count), base)  # before the GPU spends time on a useless run
    whole = sm_count == get_device(device).compute.sm_count
    return {"device": device, "sm_count": None if whole else sm_count}
