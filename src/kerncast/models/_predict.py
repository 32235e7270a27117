"""``kerncast.predict``: one prediction for one kernel launch, from the model the user picks.

The static model needs only the source, the launch and the device spec (and its
calibration, or the nearest calibrated one adapted to the spec). The sampling models
need sampled runs: in *live* mode they run the samples they take themselves through a
measurement backend (CuPy on an NVIDIA GPU, or PoCL on this CPU, the seed's "other
vendor"), then predict; a grid too small to sample is measured directly, and the
prediction says so. ``sampling-svr`` also profiles its second sample (3·Psat·N_SM
blocks) with Nsight Compute and asks the SVR kerncast ships (trained on its H100
dataset, or the one trained for the device where there is one).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from kerncast._errors import InputError
from kerncast.core import Kernel, Launch, Tuning
from kerncast.corpus import CorpusKernel, LaunchConfig, get_kernel
from kerncast.data import Dataset
from kerncast.models._base import Prediction
from kerncast.core import UserKernel
from kerncast.models.registry import get_predictor

__all__ = ["LIVE_MODELS", "predict", "resolve_kernel", "sweep", "sweep_space"]

LIVE_MODELS = ("sampling", "seed-linear", "sampling-svr")


def resolve_kernel(name: str | CorpusKernel) -> CorpusKernel:
    """``corpus:NAME``, ``NAME``, or ``DIR:NAME`` for an application directory of one's own
    (a directory with a ``spec.toml`` in the corpus format)."""
    if isinstance(name, CorpusKernel):
        return name
    text = str(name)
    if ":" in text and not text.startswith("corpus:"):
        directory, kernel = text.rsplit(":", 1)
        path = Path(directory)
        if (path / "spec.toml").exists():
            from kerncast.corpus._spec import load_application  # noqa: PLC0415

            app = load_application(path)
            for k in app.kernels:
                if k.name == kernel:
                    return k
            names = ", ".join(k.name for k in app.kernels)
            raise InputError(f"{path}/spec.toml has no kernel {kernel!r}; it has {names}")
    return get_kernel(text)


def _row(kernel: CorpusKernel, config: LaunchConfig, device_key: str, language: str,
         sm_count: int) -> dict:
    return {"kernel": kernel.name, "language": language, "size": config.size,
            "config": config.label(), "tunables": json.dumps(config.tunables, sort_keys=True),
            "device": device_key, "sm_count": sm_count,
            "blocks": config.blocks, "threads_per_block": config.threads_per_block,
            "status": "ok"}


def _static(kernel: Kernel, launch: Launch, device: str, sm_count: int | None,
            progress=None, registers: int | None = None) -> Prediction:
    from kerncast.sim import predict_launch  # noqa: PLC0415 (the simulator loads on use)

    res = predict_launch(kernel, launch, device, sm_count=sm_count, progress=progress)
    based_on = {**res.based_on, "configuration": launch.label()}
    warnings = _build_warnings(kernel, res.based_on, registers)
    if warnings:
        based_on["warning"] = "; ".join(warnings)
    return Prediction(res.seconds, "static", breakdown=res.breakdown, bottleneck=res.bottleneck,
                      based_on=based_on)


def _build_warnings(kernel: Kernel, based_on: dict, registers: int | None) -> list[str]:
    """Where the binary predicted differs from the one the user says they run."""
    from kerncast.devices import get_device  # noqa: PLC0415 (light, but only needed here)
    from kerncast.frontend import user_arch  # noqa: PLC0415 (the frontend loads on use)

    out = []
    target = get_device(based_on["device"]).ptx_target
    asked = user_arch(kernel)
    if asked and target and asked != target:
        out.append(f"your options compile for {asked}; the prediction is of the {target} "
                   f"binary that {based_on['device']} runs")
    if registers is not None and registers != based_on.get("registers"):
        out.append(f"the predicted binary uses {based_on.get('registers')} registers per "
                   f"thread where yours uses {registers} ({based_on.get('compiler')}); "
                   "pass the compiler and options you build with (compiler='nvcc', "
                   "compiler_options=[...]) so that occupancy matches")
    return out


def _live(model: str, device: str, backend: str, budget: float | None = None, *,
          job=None, corpus: tuple | None = None) -> Prediction:
    """A live prediction from sampled runs on ``backend`` of ``job`` (a
    :class:`kerncast.measure.Job`), or of the corpus kernel and configuration ``corpus``
    in the backend's language (``sampling-svr`` needs those: its counters are profiled
    in a child process that rebuilds the launch)."""
    from kerncast.measure._factory import make_backend  # noqa: PLC0415
    from kerncast.measure._job import corpus_job  # noqa: PLC0415
    from kerncast.measure._samples import measure_samples  # noqa: PLC0415

    be = make_backend(backend, device=device)
    job = job or corpus_job(*corpus, be.language)
    predictions: list[Prediction] = []
    choose = None
    if model != "sampling-svr":  # run only the samples the model takes
        predictor = get_predictor(model, **({} if budget is None else {"budget": budget}))

        def choose(rungs: list[dict], time) -> None:
            ladder = pd.DataFrame(rungs).assign(sm_count=be.sm_count)
            predictions.append(predictor.explain_live(ladder, job.launch.blocks, time,
                                                      be.l2_states))

    rows = _all_ok(measure_samples(be, job, choose=choose), f"sampled runs of {job.name}")
    if model == "sampling-svr":
        kernel, config = corpus
        row = _row(kernel, config, be.device_key, be.language, be.sm_count)
        rows += _whole_grid_if_distrusted(be, job, row, rows)
        prediction = _live_svr(be, device, kernel, config, row, rows)
    else:
        prediction = predictions[0]
    prediction.based_on["backend"] = be.name
    prediction.based_on["device"] = be.device_key
    prediction.based_on["sampled_runs"] = len(rows)
    prediction.based_on["configuration"] = job.launch.label()
    return prediction


def _check_budget(model: str, budget: float | None) -> None:
    if budget is None:
        return
    if model != "sampling":
        raise InputError(f"--budget sets how much of the launch sampling may spend on samples; "
                         f"the model {model!r} takes no budget (use --model sampling)")
    if not 0 < budget <= 1:
        raise InputError(f"--budget {budget} is not a share of the launch; give a number in "
                         "(0, 1], e.g. 0.05 for samples worth 5% of the predicted launch")


def _whole_grid_if_distrusted(be, job, row: dict, rows: list[dict]) -> list[dict]:
    """The run of the whole grid (a ``samples`` row) where ``sampling``, the SVR's base,
    does not trust the samples; none where it does."""
    from kerncast.measure._samples import measure_full  # noqa: PLC0415
    from kerncast.models._sampling import Sampling, _distrusted  # noqa: PLC0415

    data = Dataset(times=pd.DataFrame([row]), samples=pd.DataFrame(rows))
    fit = Sampling(fallback=False)._fits(data)[0]
    if fit is None or not _distrusted(fit):
        return []
    return _all_ok(measure_full(be, job), f"the run of {job.name}'s whole grid")


def _all_ok(rows: list[dict], what: str) -> list[dict]:
    """``rows``, or an error naming ``what`` and the first failure among them."""
    bad = [r for r in rows if r.get("status") != "ok"]
    if bad:
        raise InputError(f"{what} failed ({bad[0]['status']}): {bad[0].get('error', '')}")
    return rows


def _shipped_svr(device_key: str):
    """The shipped SVR for ``device_key`` (``h200`` for the H200), else the H100's."""
    from kerncast.models._trained import shipped_models, trained_model  # noqa: PLC0415

    short = device_key.split("-")[0]
    name = short if f"sampling-svr-{short}" in shipped_models() else "h100"
    return trained_model("sampling-svr", name), name


def _live_svr(be, device, kernel, config, row: dict, samples: list[dict]) -> Prediction:
    from kerncast.measure._counters import profile_sampled  # noqa: PLC0415
    from kerncast.models._svr import SECOND_K  # noqa: PLC0415

    svr, trained_on = _shipped_svr(be.device_key)
    counters = profile_sampled(be, device, kernel, config, (SECOND_K,))
    data = Dataset(times=pd.DataFrame([row]), samples=pd.DataFrame(samples),
                   counters=pd.DataFrame(counters))
    prediction = svr.explain(data)[0]
    prediction.based_on["svr_trained_on"] = trained_on
    if math.isnan(prediction.seconds):  # nothing to predict from
        raise InputError(f"sampling-svr could not predict {kernel.name}: "
                         f"{prediction.based_on.get('error', 'no usable sample')}; "
                         f"try --model sampling")
    return prediction


def predict(kernel_name: str | CorpusKernel | Kernel, kernel_source: Any = None,
            problem_size: Any = None, arguments: Any = None, *,
            params: Mapping[str, Any] | None = None, device: str = "h100",
            model: str = "static", sm_count: int | None = None, backend: str = "cupy",
            budget: float | None = None, registers: int | None = None,
            size: str = "large", tunables: dict[str, int] | None = None,
            language: str = "cuda", progress=None, **tuning: Any) -> Prediction:
    """Predict the time of one launch of a kernel.

    Three ways to name the launch:

    - Kernel Tuner's: ``predict(kernel_name, kernel_source, problem_size, arguments,
      params={...}, grid_div_x=..., block_size_names=..., restrictions=...,
      compiler_options=..., defines=..., cmem_args=..., smem_args=..., lang=...)``;
      ``kernel_source`` is a file name or the source text, ``arguments`` NumPy arrays
      and scalars (or :class:`kerncast.Array` descriptions, :class:`kerncast.View`,
      structs), ``params`` the configuration (a restriction that excludes it is an
      error); ``grid=``/``block=`` give the launch directly instead;
    - ``predict(kernel, launch)`` with a :class:`kerncast.Kernel` and :class:`kerncast.Launch`;
    - a corpus kernel: ``predict("corpus:NAME", size=..., tunables=..., language=...)``
      (or ``DIR:NAME`` for a directory with a ``spec.toml`` in the corpus format).

    Parameters
    ----------
    device, sm_count
        The GPU to predict for, and the SMs to use (default all).
    model
        ``static`` (no GPU needed), or ``sampling`` / ``seed-linear`` in live mode
        (runs sampled launches on ``backend``: ``cupy`` or ``pocl``), or
        ``sampling-svr`` (sampled launches and Nsight Compute counters; ``cupy`` only).
    budget
        For ``sampling``: the share of the predicted launch its samples may take
        (default 0.1).
    registers
        The registers per thread of the binary you run (``ptxas -v``, Nsight Compute);
        the prediction warns where its own build differs.
    progress
        Told each step of a static prediction as it starts (a line of text).
    """
    _check_budget(model, budget)
    if isinstance(kernel_name, Kernel):
        if not isinstance(kernel_source, Launch):
            raise InputError("predict(kernel, launch) takes a kerncast.Launch as its second "
                             "argument")
        return _predict_instance(kernel_name, kernel_source, device, model, sm_count, backend,
                                 budget, registers, progress)
    if kernel_source is not None:
        user = UserKernel.of(kernel_name, kernel_source, problem_size, arguments,
                             restrictions=tuning.pop("restrictions", None), **tuning)
        kernel, launch = user.instance(params)
        return _predict_instance(kernel, launch, device, model, sm_count, backend, budget,
                                 registers, progress)
    if tuning or arguments is not None or problem_size is not None:
        raise InputError(f"{kernel_name!r}: problem_size, arguments and the tuning options go "
                         "with a kernel_source; for a corpus kernel give size= and tunables=")
    k = resolve_kernel(kernel_name)
    config = k.launch(size, tunables)
    if model == "static":
        return _static(*k.instance(config, language), device, sm_count, progress, registers)
    if model == "sampling-svr" and backend != "cupy":
        raise InputError("sampling-svr needs Nsight Compute counters of an NVIDIA GPU "
                         "(--backend cupy); on a CPU device use --model sampling")
    if model in LIVE_MODELS:
        return _live(model, device, backend, budget, corpus=(k, config))
    raise InputError(f"kerncast predict runs the models static, sampling, seed-linear and "
                     f"sampling-svr; "
                     f"{model!r} is scored on datasets with 'kerncast evaluate'")


def _predict_instance(kernel: Kernel, launch: Launch, device: str, model: str,
                      sm_count: int | None, backend: str, budget: float | None,
                      registers: int | None, progress) -> Prediction:
    if model == "static":
        return _static(kernel, launch, device, sm_count, progress, registers)
    if model == "sampling-svr":
        raise InputError("sampling-svr profiles a corpus kernel's sample with Nsight Compute in "
                         "a process of its own; predict your own kernel with --model sampling")
    if model in LIVE_MODELS:
        from kerncast.measure._job import user_job  # noqa: PLC0415 (measure loads on use)

        return _live(model, device, backend, budget, job=user_job(kernel, launch))
    raise InputError(f"kerncast predict runs the models static, sampling, seed-linear and "
                     f"sampling-svr; {model!r} is scored on datasets with 'kerncast evaluate'")


def _sweep_row(kernel: Kernel, launch: Launch, device: str, sm_count: int | None) -> dict:
    base = {"config": launch.label(), "params": dict(launch.params),
            "grid": list(launch.grid), "block": list(launch.block)}
    try:
        p = _static(kernel, launch, device, sm_count)
    except InputError as exc:
        return {**base, "seconds": math.inf, "bottleneck": "", "registers": None,
                "error": str(exc)}
    return {**base, "seconds": p.seconds, "bottleneck": p.bottleneck,
            "registers": p.based_on.get("registers"), "error": ""}


def sweep(kernel_name: str | CorpusKernel, kernel_source: Any = None, problem_size: Any = None,
          arguments: Any = None, tune_params: Mapping[str, Any] | None = None, *,
          device: str = "h100", size: str = "large", language: str = "cuda",
          sm_count: int | None = None, cache: str | None = None, progress=None,
          **options: Any) -> Any:
    """Static predictions over a kernel's launch space.

    With Kernel Tuner's arguments (``kernel_source`` given) it is a drop-in for
    ``tune_kernel``: it returns ``(results, env)``, ``results`` a list with a dict per
    configuration (its parameters, ``time`` in ms as predicted, ``bottleneck``,
    ``registers``, ``error`` where it cannot run) and ``env`` what the predictions rest
    on; ``cache=FILE`` writes Kernel Tuner's cache file of the predicted times, for its
    simulation mode and search strategies. Options of ``tune_kernel`` that only matter on
    a GPU (``iterations``, ``answer``, ``verify``, ``strategy``, ``observers``, ...) are
    accepted and have no effect: every configuration is predicted.

    For a corpus kernel (no ``kernel_source``) it returns the rows over the kernel's
    whole launch space at ``size``, fastest first.
    """
    if kernel_source is None:
        return _corpus_sweep(kernel_name, device, size, language, sm_count, progress)
    user = _sweep_user(kernel_name, kernel_source, problem_size, arguments, tune_params,
                       options)
    return sweep_space(user, device=device, sm_count=sm_count, cache=cache, progress=progress)


def sweep_space(space: Any, *, device: str = "h100", sm_count: int | None = None,
                cache: str | None = None, progress=None) -> tuple[list[dict], dict]:
    """Static predictions of every configuration of ``space`` (a :class:`UserKernel` or a
    :class:`kerncast.core.LaunchFile`: anything with ``configs()``, ``instance(params)``,
    ``kernel`` and ``tuning``), as :func:`sweep` returns them."""
    configs = space.configs()
    results = []
    for i, params in enumerate(configs):
        try:
            kernel, launch = space.instance(params)
            row = _sweep_row(kernel, launch, device, sm_count)
        except InputError as exc:
            row = {"seconds": math.inf, "bottleneck": "", "registers": None, "grid": [],
                   "block": [], "error": str(exc)}
        results.append({**params, "time": row["seconds"] * 1e3, "bottleneck": row["bottleneck"],
                        "registers": row["registers"], "grid": row["grid"],
                        "block": row["block"], "error": row["error"]})
        if progress:
            progress(i + 1, len(configs))
    env = {"kernel_name": space.kernel.name, "device_name": device, "model": "static",
           "problem_size": list(space.tuning.problem_size), "configurations": len(configs),
           "predicted": True}
    if cache is not None:
        _write_cache(cache, space.kernel.name, device, space.tuning, results)
    return results, env


_IGNORED = ("answer", "atol", "verify", "verbose", "quiet", "iterations", "strategy",
            "strategy_options", "metrics", "observers", "simulation_mode", "log", "platform",
            "objective", "objective_higher_is_better")


def _sweep_user(kernel_name, kernel_source, problem_size, arguments, tune_params,
                options: dict) -> UserKernel:
    objective = options.get("objective")
    if objective not in (None, "time"):
        raise InputError(f"objective={objective!r}: kerncast predicts time only")
    known = {k: v for k, v in options.items() if k not in _IGNORED}
    return UserKernel.of(kernel_name, kernel_source, problem_size, arguments, tune_params,
                         **known)


def _write_cache(path: str, kernel_name: str, device: str, tuning: Tuning,
                 results: list[dict]) -> None:
    from kerncast.tuner import write_cache  # noqa: PLC0415 (only where a cache is asked for)

    rows = []
    for r in results:
        row = {k: r[k] for k in tuning.tune_params}
        if r["error"]:
            row["status"] = "InvalidConfig"
        else:
            row["time_ms"] = r["time"]
        rows.append(row)
    write_cache(path, kernel_name=kernel_name, device_name=f"{device} (kerncast static)",
                problem_size=list(tuning.problem_size),
                tune_params={k: list(v) for k, v in tuning.tune_params.items()}, rows=rows)


def _corpus_sweep(kernel: str | CorpusKernel, device: str, size: str, language: str,
                  sm_count: int | None, progress) -> list[dict]:
    k = resolve_kernel(kernel)
    configs = k.launches(size)
    out = []
    for i, config in enumerate(configs):
        row = _sweep_row(*k.instance(config, language), device, sm_count)
        out.append({**row, "config": config.label(), "tunables": config.tunables})
        if progress:
            progress(i + 1, len(configs))
    return sorted(out, key=lambda r: r["seconds"])
