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
from pathlib import Path

import pandas as pd

from kerncast._errors import InputError
from kerncast.corpus import CorpusKernel, LaunchConfig, get_kernel
from kerncast.data import Dataset
from kerncast.models._base import Prediction
from kerncast.models.registry import get_predictor

__all__ = ["LIVE_MODELS", "predict", "resolve_kernel", "sweep"]

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


def _static(kernel, config, device, language, sm_count, progress=None) -> Prediction:
    from kerncast.sim import predict_launch  # noqa: PLC0415

    source, launch = kernel.instance(config, language)
    res = predict_launch(source, launch, device, sm_count=sm_count, progress=progress)
    return Prediction(res.seconds, "static", breakdown=res.breakdown, bottleneck=res.bottleneck,
                      based_on=res.based_on)


def _live(model: str, kernel, config, device, language, backend: str,
          budget: float | None = None) -> Prediction:
    from kerncast.measure._factory import make_backend  # noqa: PLC0415
    from kerncast.measure._samples import measure_samples  # noqa: PLC0415

    be = make_backend(backend, device=device)
    predictions: list[Prediction] = []
    choose = None
    if model != "sampling-svr":  # run only the samples the model takes
        predictor = get_predictor(model, **({} if budget is None else {"budget": budget}))

        def choose(rungs: list[dict], time) -> None:
            ladder = pd.DataFrame(rungs).assign(sm_count=be.sm_count)
            predictions.append(predictor.explain_live(ladder, config.blocks, time,
                                                      be.l2_states))

    rows = _all_ok(measure_samples(be, kernel, config, choose=choose),
                   f"sampled runs of {kernel.name}")
    if model == "sampling-svr":
        row = _row(kernel, config, be.device_key, be.language, be.sm_count)
        rows += _whole_grid_if_distrusted(be, kernel, config, row, rows)
        prediction = _live_svr(be, device, kernel, config, row, rows)
    else:
        prediction = predictions[0]
    prediction.based_on["backend"] = be.name
    prediction.based_on["device"] = be.device_key
    prediction.based_on["sampled_runs"] = len(rows)
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


def _whole_grid_if_distrusted(be, kernel, config, row: dict, rows: list[dict]) -> list[dict]:
    """The run of the whole grid (a ``samples`` row) where ``sampling``, the SVR's base,
    does not trust the samples; none where it does."""
    from kerncast.measure._samples import measure_full  # noqa: PLC0415
    from kerncast.models._sampling import Sampling, _distrusted  # noqa: PLC0415

    data = Dataset(times=pd.DataFrame([row]), samples=pd.DataFrame(rows))
    fit = Sampling(fallback=False)._fits(data)[0]
    if fit is None or not _distrusted(fit):
        return []
    return _all_ok(measure_full(be, kernel, config), f"the run of {kernel.name}'s whole grid")


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


def predict(kernel: str | CorpusKernel, *, device: str = "h100", size: str = "large",
            tunables: dict[str, int] | None = None, model: str = "static",
            language: str = "cuda", sm_count: int | None = None,
            backend: str = "cupy", budget: float | None = None,
            progress=None) -> Prediction:
    """Predict the time of one launch of a corpus kernel (or a kernel with a spec).

    Parameters
    ----------
    kernel
        ``corpus:NAME``, a corpus kernel's name, or ``DIR:NAME`` (own spec directory).
    device, size, tunables, language, sm_count
        The launch and where it runs.
    model
        ``static`` (no GPU needed), or ``sampling`` / ``seed-linear`` in live mode
        (runs sampled launches on ``backend``: ``cupy`` or ``pocl``), or
        ``sampling-svr`` (sampled launches and Nsight Compute counters; ``cupy`` only).
    budget
        For ``sampling``: the share of the predicted launch its samples may take
        (default 0.1); a larger budget buys samples of more waves, a smaller one less
        overhead (``benchmarks/sampling_accuracy.py`` prints the trade-off).
    progress
        Told each step of a static prediction as it starts (a line of text).
    """
    k = resolve_kernel(kernel)
    config = k.launch(size, tunables)
    _check_budget(model, budget)
    if model == "static":
        return _static(k, config, device, language, sm_count, progress)
    if model == "sampling-svr" and backend != "cupy":
        raise InputError("sampling-svr needs Nsight Compute counters of an NVIDIA GPU "
                         "(--backend cupy); on a CPU device use --model sampling")
    if model in LIVE_MODELS:
        return _live(model, k, config, device, language, backend, budget)
    raise InputError(f"kerncast predict runs the models static, sampling, seed-linear and "
                     f"sampling-svr; "
                     f"{model!r} is scored on datasets with 'kerncast evaluate'")


def sweep(kernel: str | CorpusKernel, *, device: str = "h100", size: str = "large",
          language: str = "cuda", sm_count: int | None = None, progress=None) -> list[dict]:
    """Static predictions over a kernel's whole launch space, fastest first."""
    k = resolve_kernel(kernel)
    configs = k.launches(size)
    out = []
    for i, config in enumerate(configs):
        try:
            p = _static(k, config, device, language, sm_count)
            out.append({"config": config.label(), "tunables": config.tunables,
                        "grid": list(config.grid), "block": list(config.block),
                        "seconds": p.seconds, "bottleneck": p.bottleneck, "error": ""})
        except InputError as exc:
            out.append({"config": config.label(), "tunables": config.tunables,
                        "grid": list(config.grid), "block": list(config.block),
                        "seconds": math.inf, "bottleneck": "", "error": str(exc)})
        if progress:
            progress(i + 1, len(configs))
    return sorted(out, key=lambda r: r["seconds"])
