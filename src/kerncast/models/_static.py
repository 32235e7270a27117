"""The static predictor: source + launch + device spec and calibration, no GPU run.

Registered as ``static``. For every target row it compiles the kernel for the row's
device, emulates one round of resident blocks on the CPU and simulates it on the
warp-pipeline model (:mod:`kerncast.sim`), then scales to the grid. Rows it cannot
predict (a launch the device cannot run, an instruction the emulator does not
support) get NaN and the reason in :meth:`explain`.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from kerncast._errors import KerncastError
from kerncast.core import Kernel
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models._rows import corpus_launch
from kerncast.models.registry import register

if TYPE_CHECKING:  # a static prediction loads no pandas
    from kerncast.data import Dataset

__all__ = ["MEMO_SIZE", "StaticSimulator", "build_warnings", "interval"]

#: How many row predictions a process keeps (the least recently used go first): the model
#: learns nothing, so a launch asked again (by each fit and predict of ``combined``, by
#: every model of an evaluation that includes it) is answered from here.
MEMO_SIZE = 4096
_MEMO: OrderedDict[tuple, Prediction] = OrderedDict()
#: How many corpus launches a process keeps built, by what they are built from: the rows
#: that measured one launch at several SM counts or on several devices predict the same
#: :class:`~kerncast.core.Launch` object, whose emulations the simulator keeps
#: (:func:`kerncast.sim._predict.emulations_of`) and so runs once for all of them.
LAUNCHES_KEPT = 8
_LAUNCHES: OrderedDict[tuple, tuple[Kernel, Any]] = OrderedDict()


@register
class StaticSimulator(Predictor):
    """Emulate one round of resident blocks, simulate it on the warp pipeline, scale."""

    name = "static"
    needs = frozenset({"source", "spec"})
    description = ("Static analysis and trace simulation: the PTX emulated on the CPU for one "
                   "round of resident blocks, a warp-pipeline model calibrated by "
                   "micro-benchmarks, scaled by waves")
    insight = "compute, memory, latency and synchronisation time, and the bottleneck"
    columns = ("kernel", "language", "size", "config", "tunables", "device", "sm_count")

    def __init__(self, *, seed: int = 0, budget: int | None = None):
        self.seed = seed
        self.budget = budget

    def _budget(self) -> dict[str, int]:
        """``budget`` for :func:`kerncast.sim.predict_launch`: the instructions of one SM's
        round simulated in full (None: the simulator's default)."""
        return {} if self.budget is None else {"budget": int(self.budget)}

    def explain(self, dataset: Dataset) -> list[Prediction]:
        """Each row's prediction (:meth:`_one`), :data:`SHARE_CHUNK` rows at a time, the
        SASS of their binaries first assembled in one batch (:func:`share_sass`): a chunk's
        compiled binaries are still kept in memory when its rows are predicted."""
        self._check_fitted()
        rows = dataset.times.to_dict("records")
        out: list[Prediction] = []
        for start in range(0, len(rows), SHARE_CHUNK):
            chunk = rows[start:start + SHARE_CHUNK]
            share_sass([row for row in chunk if self._memo_key(row) not in _MEMO], self.seed)
            out.extend(self._one(row) for row in chunk)
        return out

    def _one(self, row) -> Prediction:
        key = self._memo_key(row)
        if key in _MEMO:
            _MEMO.move_to_end(key)
        else:
            _MEMO[key] = self._predicted(row)
            if len(_MEMO) > MEMO_SIZE:
                _MEMO.popitem(last=False)
        kept = _MEMO[key]  # a copy, so that no caller changes what is kept
        return replace(kept, breakdown=dict(kept.breakdown), based_on=dict(kept.based_on))

    def _memo_key(self, row) -> tuple:
        """What a row's prediction depends on: the corpus launch, the device's spec (the
        object loaded, so a spec file loaded again under the same name is a new key), the
        SM count and this model's parameters."""
        from kerncast.devices import get_device  # noqa: PLC0415 (light, but only needed here)

        try:
            device = id(get_device(str(row["device"])))
        except KerncastError:
            device = str(row["device"])
        return (str(row["kernel"]), str(row["size"]), str(row.get("tunables")),
                str(row.get("config")), str(row.get("language") or "cuda"), device,
                str(row.get("sm_count")), self.seed, self.budget)

    def _predicted(self, row) -> Prediction:
        from kerncast.sim import predict_launch  # noqa: PLC0415 (on use: the simulator is heavy)

        try:
            source, launch = self._launch(row)
            result = predict_launch(source, launch, str(row["device"]),
                                    sm_count=int(row["sm_count"]) if row.get("sm_count") else None,
                                    **self._budget())
        except KerncastError as exc:
            return Prediction(float("nan"), self.name, based_on={"error": str(exc)})
        return Prediction(result.seconds, self.name, breakdown=result.breakdown,
                          bottleneck=result.bottleneck, based_on=result.based_on)

    def _launch(self, row) -> tuple[Kernel, Any]:
        """The source and launch a row measured, the same objects for every row that
        measured that launch (at any SM count, on any device)."""
        language = str(row.get("language") or "cuda")
        key = (str(row["kernel"]), str(row["size"]), str(row.get("tunables")),
               str(row.get("config")), language, self.seed)
        built = _LAUNCHES.get(key)
        if built is None:
            kernel, config = corpus_launch(row)
            _LAUNCHES[key] = built = kernel.instance(config, language, self.seed)
            while len(_LAUNCHES) > LAUNCHES_KEPT:
                _LAUNCHES.popitem(last=False)
        else:
            _LAUNCHES.move_to_end(key)
        return built

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """The launch compiled, emulated and simulated (:func:`kerncast.sim.predict_launch`);
        ``based_on`` names the compiler and registers and warns where the user's build
        differs."""
        from kerncast.sim import predict_launch  # noqa: PLC0415 (the simulator loads on use)

        res = predict_launch(kernel, launch, inputs.device, sm_count=inputs.sm_count,
                             progress=inputs.progress, **self._budget())
        based_on = {**res.based_on, "configuration": launch.label()}
        warnings = build_warnings(kernel, res.based_on, inputs.registers)
        if warnings:
            based_on["warning"] = "; ".join(warnings)
        based_on.update(interval(res.seconds, res.bottleneck, str(res.based_on["device"])))
        return Prediction(res.seconds, self.name, breakdown=res.breakdown,
                          bottleneck=res.bottleneck, based_on=based_on)


#: Fewer binaries than this are assembled one by one, as each prediction reads its SASS.
SHARE_LEAST = 2
#: Rows whose binaries are assembled together: no more than the compiled units a process
#: keeps in memory (:func:`kerncast.sim.cached_unit`), which the predictions then reuse.
SHARE_CHUNK = 48


def share_sass(rows: list[dict], seed: int = 0) -> int:
    """Keep in the disk cache the SASS of the binaries that ``rows`` (corpus launches)
    predict, assembled by one ptxas and one nvdisasm run per batch
    (:func:`kerncast.sim.assemble_sass`) rather than one each: nvdisasm takes about 0.2 s
    to start whatever the binary. A row whose launch cannot be built is left for its
    prediction to report. Returns how many modules were assembled."""
    from kerncast.sim import assemble_sass  # noqa: PLC0415 (on use: the simulator is heavy)

    kernels: dict[str, list[Kernel]] = {}
    for row in rows:
        try:
            kernel, config = corpus_launch(row)
            source, _ = kernel.instance(config, str(row.get("language") or "cuda"), seed)
        except KerncastError:
            continue
        kernels.setdefault(str(row["device"]), []).append(source)
    done = 0
    for device, sources in kernels.items():
        if len(sources) >= SHARE_LEAST:
            try:
                done += assemble_sass(sources, device)
            except KerncastError:
                continue  # each prediction reports its own
    return done


def build_warnings(kernel: Kernel, based_on: dict, registers: int | None) -> list[str]:
    """Where the binary predicted differs from the one the user says they run."""
    from kerncast.devices import get_device  # noqa: PLC0415 (light, but only needed here)

    out = []
    target = get_device(based_on["device"]).ptx_target
    asked = kernel.target_arch()
    if asked and target and asked != target:
        out.append(f"your options compile for {asked}; the prediction is of the {target} "
                   f"binary that {based_on['device']} runs")
    if registers is not None and registers != based_on.get("registers"):
        out.append(f"the predicted binary uses {based_on.get('registers')} registers per "
                   f"thread where yours uses {registers} ({based_on.get('compiler')}); "
                   "pass the compiler and options you build with (compiler='nvcc', "
                   "compiler_options=[...]) so that occupancy matches")
    issue = str(based_on.get("issue_slots", ""))
    if issue.startswith("PTX: one issue per PTX instruction (") and target:
        out.append(f"the {target} SASS could not be read ({issue.split('(', 1)[1].rstrip(')')}"
                   "): each PTX instruction is issued once and register-bank conflicts are "
                   "not modelled")
    return out


@lru_cache(maxsize=4)
def _spreads(key: str) -> dict | None:
    """The shipped spread of measured / predicted time (``tools/static_intervals.py``)."""
    folder = resources.files("kerncast.models") / "trained"
    path = folder / f"static-errors-{key}.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def interval(seconds: float, bottleneck: str, device: str) -> dict[str, Any]:
    """An 80% interval around a static prediction: the 10th and 90th percentiles of
    measured / predicted time on the corpus launches of the same bottleneck, measured on
    the same GPU (the H100's for another one). Empty where no spread is shipped."""
    key = device.split("-")[0]
    table = _spreads(key) or _spreads("h100")
    if table is None or not np.isfinite(seconds):
        return {}
    spreads = table["by_bottleneck"]
    entry = spreads.get(bottleneck) or spreads["all"]
    which = f"a {bottleneck} bottleneck" if bottleneck in spreads else "any bottleneck"
    return {"interval_80": [seconds * entry["ratio_p10"], seconds * entry["ratio_p90"]],
            "interval_from": (f"static's measured / predicted time from x{entry['ratio_p10']:.2f}"
                              f" to x{entry['ratio_p90']:.2f} on {entry['launches']} launches "
                              f"of {entry['kernels']} corpus kernels with {which} "
                              f"({table['dataset']})")}
