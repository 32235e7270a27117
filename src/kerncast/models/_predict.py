"""``kerncast.predict``: one prediction for one kernel launch, from the model the user picks.

One path for every model: the user's input becomes a :class:`kerncast.Kernel` and a
:class:`kerncast.Launch`; a small driver gathers what the model's ``needs`` name (for
sampled runs or counters, a measurement backend and the launch as a measurement job)
and asks the model's :meth:`~kerncast.models.Predictor.explain_launch`. The static model
needs only the source, the launch and the device spec (and its calibration); the
sampling models run the samples they take through the backend (CuPy on an NVIDIA GPU,
or PoCL on this CPU, the seed's "other vendor"); ``sampling-svr`` also profiles its
second sample with Nsight Compute. Models that predict from measured datasets only say
so. ``kerncast.sweep`` predicts every configuration of a launch space statically.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from importlib import resources
from typing import Any


from kerncast._errors import InputError, KerncastError
from kerncast.core import Kernel, Launch, LaunchFile, Tuning, UserKernel
from kerncast.corpus import CorpusKernel, get_kernel, load_application
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models._static import StaticSimulator
from kerncast.models.registry import predictor_class
from kerncast.measure import BACKEND_KINDS
from kerncast.devices import get_device
from kerncast.models._journal import Journal
from kerncast.models._search import Search, config_key, search

__all__ = ["accuracy_table", "predict", "resolve_kernel", "sweep", "sweep_space"]


def resolve_kernel(name: str | CorpusKernel) -> CorpusKernel:
    """``corpus:NAME``, ``NAME``, or ``DIR:NAME`` for an application directory of one's own
    (a directory with a ``spec.toml`` in the corpus format)."""
    if isinstance(name, CorpusKernel):
        return name
    if not isinstance(name, str):
        raise InputError(f"a corpus kernel is named by a string (corpus:NAME or DIR:NAME); got a "
                         f"{type(name).__name__}")
    text = name
    if ":" in text and not text.startswith("corpus:"):
        directory, kernel = text.rsplit(":", 1)
        path = Path(directory)
        if (path / "spec.toml").exists():
            app = load_application(path)
            for k in app.kernels:
                if k.name == kernel:
                    return k
            names = ", ".join(k.name for k in app.kernels)
            raise InputError(f"{path}/spec.toml has no kernel {kernel!r}; it has {names}")
    return get_kernel(text)


def _predictor(model: str, budget: float | None) -> Predictor:
    """A new instance of ``model``, with ``budget`` where the model samples and takes one."""
    cls = predictor_class(model)
    if budget is None:
        return cls()
    if "sampled_runs" not in cls.needs or "budget" not in cls().get_params():
        raise InputError(f"--budget sets how much of the launch sampling may spend on samples; "
                         f"the model {model!r} takes no budget (use --model sampling)")
    if not 0 < budget <= 1:
        raise InputError(f"--budget {budget} is not a share of the launch; give a number in "
                         "(0, 1], e.g. 0.05 for samples worth 5% of the predicted launch")
    return cls(budget=budget)


def _inputs(predictor: Predictor, device: str, sm_count: int | None, backend: str,
            registers: int | None, progress, job_of, corpus: tuple | None) -> LaunchInputs:
    """What ``predictor`` needs for one launch: a measurement backend and the launch as a
    job (``job_of(backend)``) for the models that take sampled runs or counters."""
    inputs = LaunchInputs(device, sm_count, registers=registers, progress=progress,
                          corpus=corpus)
    if not predictor.needs & {"sampled_runs", "counters"}:
        return inputs
    from kerncast.measure import make_backend  # noqa: PLC0415 (measure loads on use)

    kind = BACKEND_KINDS.get(backend)
    if "counters" in predictor.needs and kind is not None and kind.device != "gpu":
        raise InputError(f"{predictor.name} needs Nsight Compute counters of an NVIDIA GPU "
                         "(--backend cupy); on a CPU device use --model sampling")
    inputs.backend = make_backend(backend, device=device)
    inputs.job = job_of(inputs.backend)
    return inputs


def predict(kernel_name: str | CorpusKernel | Kernel | LaunchFile, kernel_source: Any = None,
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
    - ``predict(kernel, launch)`` with a :class:`kerncast.Kernel` and :class:`kerncast.Launch`,
      or ``predict(launch_file, params=...)`` with :func:`kerncast.load_launch_file`'s result;
    - a corpus kernel: ``predict("corpus:NAME", size=..., tunables=..., language=...)``
      (or ``DIR:NAME`` for a directory with a ``spec.toml`` in the corpus format).

    Parameters
    ----------
    device, sm_count
        The GPU to predict for, and the SMs to use (default all).
    model
        ``auto`` (the most accurate model the inputs allow, by the shipped held-out
        accuracy; ``based_on["chosen"]`` says why), ``static`` (no GPU needed), or
        ``sampling`` / ``seed-linear`` in live mode
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
    if isinstance(kernel_name, Kernel):
        if not isinstance(kernel_source, Launch):
            raise InputError("predict(kernel, launch) takes a kerncast.Launch as its second "
                             "argument")
        kernel, launch, corpus = kernel_name, kernel_source, None
    elif isinstance(kernel_name, LaunchFile):
        (kernel, launch), corpus = kernel_name.launch(params), None
    elif not isinstance(kernel_name, (str, CorpusKernel)):
        raise InputError(f"predict takes a kernel's name, a kerncast.Kernel with its Launch, or "
                         f"a launch file (kerncast.load_launch_file); got a "
                         f"{type(kernel_name).__name__}")
    elif kernel_source is not None:
        user = UserKernel.of(kernel_name, kernel_source, problem_size, arguments,
                             restrictions=tuning.pop("restrictions", None), **tuning)
        (kernel, launch), corpus = user.instance(params), None
    else:
        if tuning or arguments is not None or problem_size is not None:
            raise InputError(f"{kernel_name!r}: problem_size, arguments and the tuning options "
                             "go with a kernel_source; for a corpus kernel give size= and "
                             "tunables=")
        k = resolve_kernel(kernel_name)
        config = k.launch(size, tunables)
        (kernel, launch), corpus = k.instance(config, language), (k, config)
    args = (device, sm_count, backend, registers, progress, kernel, launch, corpus)
    if model == "auto":
        return _auto(budget, *args)
    return _one_model(_predictor(model, budget), *args)


def _one_model(predictor: Predictor, device: str, sm_count: int | None, backend: str,
               registers: int | None, progress, kernel: Kernel, launch: Launch,
               corpus: tuple | None) -> Prediction:
    inputs = _inputs(predictor, device, sm_count, backend, registers, progress,
                     lambda be: _job(be, kernel, launch, corpus), corpus)
    if inputs.job is not None:  # the launch as the backend runs it (its language)
        kernel, launch = inputs.job.kernel, inputs.job.launch
    return predictor.explain_launch(kernel, launch, inputs)


def accuracy_table(device: str) -> dict[str, Any]:
    """The shipped held-out accuracy of each model on the measured dataset of ``device``
    (``models/trained/accuracy-<h100|h200>.json``, written by
    ``benchmarks/zoo_accuracy.py --accuracy-out``); the H100's for another device."""
    key = get_device(device).key.split("-")[0]
    folder = resources.files("kerncast.models") / "trained"
    path = folder / f"accuracy-{key}.json"
    if not path.is_file():
        path = folder / "accuracy-h100.json"
    return json.loads(path.read_text())


#: Launches a model's held-out accuracy must rest on to be ranked by it; a model scored on
#: fewer comes after every model that was (``sampling-svr`` answered 4 launches of data/h200).
AUTO_LEAST_ROWS = 20


def _auto(budget: float | None, device: str, *rest: Any) -> Prediction:
    """The most accurate model, by the shipped held-out MAPE, that the inputs allow: each
    model in turn, most accurate first, until one answers; the prediction says which
    were passed over and why."""
    table = accuracy_table(device)
    ranked = sorted(table["models"].items(), key=lambda item: (
        item[1]["rows"] < AUTO_LEAST_ROWS, item[1]["mape_pct"]))
    passed: list[str] = []
    for name, score in ranked:
        try:
            predictor = _predictor(name, budget if name == "sampling" else None)
            p = _one_model(predictor, device, *rest)
        except KerncastError as exc:
            passed.append(f"{name} ({score['mape_pct']:.1f}%): {exc}")
            continue
        why = (f"{name}: the lowest held-out MAPE ({score['mape_pct']:.1f}% over "
               f"{score['rows']} launches of {score['kernels']} kernels of "
               f"{table['dataset']}, folds by kernel) among the models these inputs allow")
        return Prediction(p.seconds, p.model, breakdown=p.breakdown, bottleneck=p.bottleneck,
                          based_on={**p.based_on, "chosen": why, "passed_over": passed})
    raise InputError("no model can predict this launch from these inputs: "
                     + "; ".join(passed))


def _job(backend, kernel: Kernel, launch: Launch, corpus: tuple | None):
    """The launch as a measurement job on ``backend``: a corpus launch in the backend's
    language, one's own as it is."""
    from kerncast.measure import corpus_job, user_job  # noqa: PLC0415 (measure on use)

    if corpus is not None:
        return corpus_job(*corpus, backend.language)
    return user_job(kernel, launch)


def _sweep_row(kernel: Kernel, launch: Launch, device: str, sm_count: int | None) -> dict:
    base = {"config": launch.label(), "params": dict(launch.params),
            "grid": list(launch.grid), "block": list(launch.block)}
    try:
        p = StaticSimulator().explain_launch(kernel, launch, LaunchInputs(device, sm_count))
    except KerncastError as exc:  # a configuration that fails is a row, not the end
        return {**base, "seconds": math.inf, "bottleneck": "", "registers": None,
                "error": str(exc)}
    return {**base, "seconds": p.seconds, "bottleneck": p.bottleneck,
            "registers": p.based_on.get("registers"), "error": ""}


def sweep(kernel_name: str | CorpusKernel | LaunchFile, kernel_source: Any = None, problem_size: Any = None,
          arguments: Any = None, tune_params: Mapping[str, Any] | None = None, *,
          device: str = "h100", size: str = "large", language: str = "cuda",
          sm_count: int | None = None, cache: str | None = None, progress=None,
          executor: str = "serial", workers: int | None = None, address: str | None = None,
          journal: str | None = None, **options: Any) -> Any:
    """Static predictions over a kernel's launch space.

    With Kernel Tuner's arguments (``kernel_source`` given) it is a drop-in for
    ``tune_kernel``: it returns ``(results, env)``, ``results`` a list with a dict per
    configuration (its parameters, ``time`` in ms as predicted, ``bottleneck``,
    ``registers``, ``error`` where it cannot run) and ``env`` what the predictions rest
    on; ``cache=FILE`` writes Kernel Tuner's cache file of the predicted times, for its
    simulation mode and search strategies. ``strategy`` and ``strategy_options`` choose
    the configurations predicted, as Kernel Tuner's do the ones it runs: ``brute_force``
    (every one, the default), ``random_sample`` (``max_fevals`` or ``fraction``) and
    ``greedy_ils`` (``max_fevals``, ``neighbor``; :mod:`kerncast.models._search`).
    Options of ``tune_kernel`` that only matter on a GPU (``iterations``, ``answer``,
    ``verify``, ``observers``, ...) are accepted and have no effect.

    A launch file (:func:`kerncast.load_launch_file`) is swept over its ``tune_params``,
    returning the same ``(results, env)``.

    For a corpus kernel (no ``kernel_source``) it returns the rows over the kernel's
    whole launch space at ``size``, fastest first.

    ``executor`` (``serial``, ``pool``, ``ray``; :mod:`kerncast.execute`) runs the
    predictions on ``workers`` processes or a Ray cluster at ``address``; the results are
    the same. ``journal`` (a file) keeps every finished configuration as it comes: the
    same sweep run again with it predicts only the configurations it lacks.
    """
    from kerncast.execute import get_executor  # noqa: PLC0415 (light; only for a sweep)

    runner = get_executor(executor, workers=workers, address=address)
    plan = Search.of(options.pop("strategy", None), options.pop("strategy_options", None))
    if isinstance(kernel_name, LaunchFile):
        return sweep_space(kernel_name, device=device, sm_count=sm_count, cache=cache,
                           progress=progress, executor=runner, journal=journal, plan=plan)
    if kernel_source is None:
        if plan.strategy != "brute_force":
            raise InputError("a corpus kernel's launch space is swept whole; strategies "
                             "work on a kernel_source or a launch file with tune_params")
        return _corpus_sweep(kernel_name, device, size, language, sm_count, progress, runner,
                             journal)
    user = _sweep_user(kernel_name, kernel_source, problem_size, arguments, tune_params,
                       options)
    return sweep_space(user, device=device, sm_count=sm_count, cache=cache, progress=progress,
                       executor=runner, journal=journal, plan=plan)


def sweep_space(space: Any, *, device: str = "h100", sm_count: int | None = None,
                cache: str | None = None, progress=None, executor: Any = None,
                journal: str | None = None, plan: Search | None = None,
                only: list[dict[str, Any]] | None = None) -> tuple[list[dict], dict]:
    """Static predictions of the configurations of ``space`` (a :class:`UserKernel` or a
    :class:`kerncast.core.LaunchFile`: anything with ``configs()``, ``instance(params)``,
    ``kernel`` and ``tuning``) that ``plan`` chooses (:mod:`kerncast.models._search`;
    default every one), or of the list ``only``, as :func:`sweep` returns them, on
    ``executor`` (a :mod:`kerncast.execute` executor; default serial). A configuration
    of ``only`` that is not in the space is a row with the reason."""
    from kerncast.devices import get_device  # noqa: PLC0415 (light; only to check the name)

    get_device(device)  # an unknown device fails here, not in every row
    plan = plan or Search()
    configs = space.configs()
    log = _journal(journal, {"kernel": space.kernel.name, "device": device,
                             "sm_count": sm_count,
                             "problem_size": list(space.tuning.problem_size)})
    total = len(only) if only is not None else plan.budget(len(configs))
    finished = [0]

    def evaluate(batch: list[dict]) -> list[dict]:
        def tick(done: int, _: int) -> None:
            if progress:
                progress(finished[0] + done, total)
        _share_sass(("space", space), _new(batch, log), device, executor)
        rows = _fanned(_space_row, batch, (space, device, sm_count), executor, tick, log,
                       [config_key(c) for c in batch])
        finished[0] += len(batch)
        return rows

    if only is not None:
        pairs = _listed(space, only, evaluate)
    else:
        pairs = search(plan, configs, space.tuning.tune_params, evaluate)
    results = [{**params, "time": row["seconds"] * 1e3, "bottleneck": row["bottleneck"],
                "registers": row["registers"], "grid": row["grid"], "block": row["block"],
                "error": row["error"]} for params, row in pairs]
    env = {"kernel_name": space.kernel.name, "device_name": device, "model": "static",
           "problem_size": list(space.tuning.problem_size), "configurations": len(results),
           "space": len(configs), "strategy": "list" if only is not None else plan.strategy,
           "predicted": True}
    if cache is not None:
        _write_cache(cache, space.kernel.name, device, space.tuning, results)
    return results, env


def _listed(space: Any, only: list[dict[str, Any]], evaluate) -> list[tuple[dict, dict]]:
    """The configurations of ``only`` predicted, each one outside the space a row with
    the reason, in the list's order."""
    inside, reasons = [], {}
    for i, config in enumerate(only):
        try:
            space.tuning.check(config)
            missing = sorted(set(space.tuning.tune_params) - set(config))
            if missing:
                raise InputError(f"gives no value for {', '.join(missing)}")
            inside.append(i)
        except InputError as exc:
            reasons[i] = str(exc)
    rows = dict(zip(inside, evaluate([only[i] for i in inside])))
    return [(config, rows[i] if i in rows else _failed_row(reasons[i]))
            for i, config in enumerate(only)]


_IGNORED = ("answer", "atol", "verify", "verbose", "quiet", "iterations", "metrics",
            "observers", "simulation_mode", "log", "platform", "objective",
            "objective_higher_is_better")


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
                  sm_count: int | None, progress, executor: Any = None,
                  journal: str | None = None) -> list[dict]:
    from kerncast.devices import get_device  # noqa: PLC0415 (light; only to check the name)

    get_device(device)  # an unknown device fails here, not in every row
    k = resolve_kernel(kernel)
    configs = k.launches(size)
    log = _journal(journal, {"kernel": k.name, "device": device, "sm_count": sm_count,
                             "size": size, "language": language})
    labels = [c.label() for c in configs]
    _share_sass(("corpus", k, language), _new(configs, log, labels), device, executor)
    rows = _fanned(_corpus_row, configs, (k, language, device, sm_count), executor, progress,
                   log, labels)
    out = [{**row, "config": config.label(), "tunables": config.tunables}
           for config, row in zip(configs, rows)]
    return sorted(out, key=lambda r: r["seconds"])


def _failed_row(error: str) -> dict:
    return {"seconds": math.inf, "bottleneck": "", "registers": None, "grid": [], "block": [],
            "error": error}


def _space_row(shared: tuple, params: dict) -> dict:
    """One configuration of a launch space, predicted (in a worker)."""
    space, device, sm_count = shared
    try:
        kernel, launch = space.instance(params)
    except KerncastError as exc:
        return _failed_row(str(exc))
    return _sweep_row(kernel, launch, device, sm_count)


def _corpus_row(shared: tuple, config: Any) -> dict:
    """One launch configuration of a corpus kernel, predicted (in a worker)."""
    kernel, language, device, sm_count = shared
    return _sweep_row(*kernel.instance(config, language), device, sm_count)


def _journal(path: str | None, header: dict) -> Any:
    if path is None:
        return None

    return Journal(path, header)


#: the most configurations of a sweep whose SASS one worker assembles together
SASS_BATCH = 48
#: the fewest configurations per worker for which a sweep on several workers assembles
#: their SASS in batches first
SASS_LEAST = 8


def _new(items: list, journal: Any, keys: list[str] | None = None) -> list:
    """The items whose rows the ``journal`` does not hold (by ``keys``, by default each
    configuration's key)."""
    if journal is None:
        return list(items)
    keys = keys or [config_key(item) for item in items]
    return [item for item, key in zip(items, keys) if key not in journal.rows]


def _share_sass(source: tuple, items: list, device: str, executor: Any) -> None:
    """Before a sweep predicts ``items``, the SASS of their binaries assembled in batches
    on the executor's workers (:func:`kerncast.sim.assemble_sass`): nvdisasm takes about
    0.2 s to start, then paid once per batch instead of once per binary. ``source`` says
    how an item becomes a kernel (:func:`_instance`). A batch that fails is left to the
    predictions, which report each configuration's own error. On several workers it
    runs only for :data:`SASS_LEAST` items a worker or more: starting the workers again
    takes about a second, what nvdisasm's start-up costs five binaries."""
    from kerncast.execute import get_executor  # noqa: PLC0415 (for a sweep: process pools)

    runner = executor or get_executor("serial")
    workers = max(1, int(getattr(runner, "workers", 1) or 1))
    if len(items) < (2 if workers == 1 else SASS_LEAST * workers):
        return
    size = max(1, min(SASS_BATCH, -(-len(items) // workers)))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    for _ in runner.map(_sass_batch, chunks, (source, device)):
        pass


def _instance(source: tuple, item: Any) -> tuple[Kernel, Launch]:
    """A sweep's item as a kernel and launch: a configuration of a launch space
    (``("space", space)``) or of a corpus kernel (``("corpus", kernel, language)``)."""
    if source[0] == "corpus":
        return source[1].instance(item, source[2])
    return source[1].instance(item)


def _sass_batch(shared: tuple, items: list) -> int:
    """The SASS of a batch of a sweep's configurations, kept in the disk cache (in a
    worker)."""
    from kerncast.sim import assemble_sass  # noqa: PLC0415 (on use: the simulator)

    source, device = shared
    kernels = []
    for item in items:
        try:
            kernels.append(_instance(source, item)[0])
        except KerncastError:
            continue  # its prediction says why
    return assemble_sass(kernels, device)


def _fanned(fn, items: list, shared: tuple, executor: Any, progress, journal: Any = None,
            keys: list[str] | None = None) -> list[dict]:
    """``fn(shared, item)`` for every item on ``executor``, in the items' order; an item
    that failed in its worker is a failed row. Items whose key the ``journal`` holds are
    taken from it; each new row is added to it as it comes."""
    from kerncast.execute import Failed, get_executor  # noqa: PLC0415 (for a sweep: process pools)

    runner = executor or get_executor("serial")
    keys = keys or [str(i) for i in range(len(items))]
    known = journal.rows if journal is not None else {}
    rows: list[dict] = [known.get(key, {}) for key in keys]
    todo = [i for i, key in enumerate(keys) if key not in known]
    done = len(items) - len(todo)
    for index, row in runner.map(fn, [items[i] for i in todo], shared):
        where = todo[index]
        rows[where] = _failed_row(row.error) if isinstance(row, Failed) else row
        if journal is not None:
            journal.add(keys[where], rows[where])
        done += 1
        if progress:
            progress(done, len(items))
    return rows
