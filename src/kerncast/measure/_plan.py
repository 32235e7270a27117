"""What a campaign measures: items grouped by (kernel, size), minus what is already recorded.

An :class:`Item` is one measurement that yields the rows of one table: a ``times``
row, the ``samples`` rows of one configuration, its full grid timed warm and cold
(``samples-full``), its ladder timed with the write-back of each sample's stores
(``samples-paid``, for samples recorded before the backends timed that), an ``energy`` row, one
``sm-sweep`` point, a ``counters`` row, or a ``cpu`` row. Items are grouped into
units of one (kernel, size), the granularity at which inputs are prepared and
scratch files removed. Resuming skips every item whose key already has a row (an
``ok`` row, with ``retry_failed``). Nothing here hard-codes kernels: the plan comes
from whatever the corpus holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kerncast._errors import InputError
from kerncast.corpus import CorpusKernel, LaunchConfig

__all__ = ["EXPERIMENTS", "PROFILED", "SAMPLE_COUNTER_KS", "SWEPT", "TABLE_OF", "Item", "Unit",
           "done_keys", "item_key", "plan_units"]

# Experiments in the order a unit runs them, and the table each one fills.
EXPERIMENTS = ("times", "samples", "samples-full", "samples-paid", "energy", "sm-sweep", "energy-sweep",
               "counters", "counters-sweep", "sample-counters", "cpu")
# Experiments run at each SM count of the sweep (a green context per count).
SWEPT = ("sm-sweep", "energy-sweep", "counters-sweep")
# Experiments profiled with Nsight Compute (after the timed ones).
PROFILED = ("counters", "counters-sweep", "sample-counters")
TABLE_OF = {"times": "times", "sm-sweep": "times", "samples": "samples",
            "samples-full": "samples", "samples-paid": "samples", "energy": "energy",
            "energy-sweep": "energy", "counters": "counters", "counters-sweep": "counters",
            "sample-counters": "counters", "cpu": "cpu"}
# Configurations measured per experiment with --configs auto.
AUTO_CONFIGS = {"times": "all", "counters": "all", "samples": "all", "samples-full": "all",
                "samples-paid": "all",
                "energy": "default",
                "sm-sweep": "default", "energy-sweep": "default", "counters-sweep": "default",
                "sample-counters": "default",
                "cpu": "default"}
# Sample multipliers profiled by sample-counters: the seed's 2 and 3 and the points
# kerncast's sampler fits (the counters of sampled launches feed the SVR).
SAMPLE_COUNTER_KS = (1, 2, 3, 4, 5, 10)
DEFAULT_SM_COUNTS = (8, 16, 24, 32, 48, 64, 96)


@dataclass(frozen=True)
class Item:
    """One measurement of a campaign."""

    id: int
    experiment: str
    kernel: str
    size: str
    config: str
    tunables: tuple[tuple[str, int], ...]
    language: str
    sm_count: int | None = None
    sample_k: int = 0

    @property
    def table(self) -> str:
        return TABLE_OF[self.experiment]

    def job(self) -> dict[str, Any]:
        """The item as the worker reads it."""
        return {"id": self.id, "experiment": self.experiment, "kernel": self.kernel,
                "size": self.size, "tunables": dict(self.tunables), "sm_count": self.sm_count,
                "sample_k": self.sample_k}


@dataclass
class Unit:
    """The items of one (kernel, size)."""

    kernel: CorpusKernel
    size: str
    items: list[Item] = field(default_factory=list)

    def configs(self) -> list[LaunchConfig]:
        """The distinct launch configurations its items measure."""
        seen: dict[str, LaunchConfig] = {}
        for item in self.items:
            if item.experiment != "cpu" and item.config not in seen:
                seen[item.config] = self.kernel.launch(self.size, dict(item.tunables))
        return list(seen.values())


CONFIG_MODES = ("auto", "all", "default", "spread")


def _configs(kernel: CorpusKernel, size: str, mode: str) -> list[LaunchConfig]:
    if mode == "default":
        return [kernel.launch(size)]
    if mode == "spread":
        return spread_configs(kernel, size)
    return kernel.launches(size)


def spread_configs(kernel: CorpusKernel, size: str) -> list[LaunchConfig]:
    """The default configuration and the two others farthest apart from each other in
    threads per block (then in the tunables' values): three launches of one kernel
    that use the GPU differently, for sweeps that cannot afford every configuration."""
    default = kernel.launch(size)
    others = [c for c in kernel.launches(size) if c.label() != default.label()]
    if not others:
        return [default]

    def order(config: LaunchConfig) -> tuple:
        return (config.threads_per_block, sorted(config.tunables.items()))

    low, high = min(others, key=order), max(others, key=order)
    return [default, low] + ([high] if high.label() != low.label() else [])


def item_key(item: Item, device: str) -> tuple:
    """The key under which an item's rows are recorded (see :func:`done_keys`)."""
    if item.experiment in ("times", "sm-sweep"):
        return ("times", item.experiment, item.kernel, item.language, item.size, item.config,
                device, item.sm_count or 0)
    if item.table == "counters":  # the whole GPU is 0, as counters-sweep items key it
        return ("counters", item.kernel, item.language, item.size, item.config, device,
                item.sample_k, item.sm_count or 0)
    if item.table == "energy":
        return ("energy", item.kernel, item.language, item.size, item.config, device,
                item.sm_count or 0)
    return (item.experiment, item.kernel, item.language, item.size, item.config, device)


def _samples_experiment(row: dict) -> str:
    """The experiment a ``samples`` row keys: ``samples-full`` for the whole grid timed
    warm (or its failure), ``samples-paid`` for a sample timed with its write-back, else
    ``samples``. A whole grid timed only cold (as ``samples-full`` did before it timed it
    warm too) marks nothing done, so that the launch is measured again."""
    if int(row.get("k") or 0) == 0 and (row.get("grid_fraction") or 0) >= 1:
        warm = row.get("l2_state") == "warm" or row.get("status") != "ok"
        return "samples-full" if warm else "samples-full-cold"
    return "samples-paid" if row.get("l2_state") == "paid" else "samples"


def done_keys(dataset: Any, total_sms: int, ok_only: bool = False) -> set[tuple]:
    """Keys (as :func:`item_key` builds them) of the rows a dataset already holds."""
    keys: set[tuple] = set()
    for table, frame in dataset.tables().items():
        if not len(frame):
            continue
        if ok_only:
            frame = frame[frame["status"] == "ok"]
        for row in frame.to_dict("records"):
            if table == "times":
                experiment = row.get("experiment") or "times"
                requested = row.get("sm_count_requested") or row["sm_count"]
                sms = 0 if experiment == "times" else int(requested)
                keys.add(("times", experiment, row["kernel"], row["language"], row["size"],
                          row["config"], row["device"], sms))
            elif table == "counters":
                sms = int(row.get("sm_count") or 0)
                keys.add((table, row["kernel"], row["language"], row["size"], row["config"],
                          row["device"], int(row.get("sample_k") or 0),
                          0 if not total_sms or sms >= total_sms else sms))
            elif table == "energy":  # the whole GPU is 0, as energy items key it
                sms = int(row.get("sm_count") or 0)
                keys.add((table, row["kernel"], row["language"], row["size"], row["config"],
                          row["device"], 0 if not total_sms or sms >= total_sms else sms))
            else:
                name = _samples_experiment(row) if table == "samples" else table
                keys.add((name, row["kernel"], row["language"], row["size"], row["config"],
                          row["device"]))
    return keys


def plan_units(kernels: list[CorpusKernel], sizes: list[str], experiments: list[str], *,
               language: str, configs: str = "auto", sm_counts: tuple[int, ...] = DEFAULT_SM_COUNTS,
               total_sms: int = 0) -> tuple[list[Unit], list[str]]:
    """Units of (kernel, size) with their items, and notes on what was left out."""
    unknown = [e for e in experiments if e not in EXPERIMENTS]
    if unknown:
        raise InputError(f"unknown experiment(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(EXPERIMENTS)}")
    if configs not in CONFIG_MODES:
        raise InputError(f"--configs {configs!r}: choose {', '.join(CONFIG_MODES)}")
    order = [e for e in EXPERIMENTS if e in experiments]
    units, notes, next_id = [], [], 0
    counts = sorted({int(n) for n in sm_counts if 0 < int(n) < (total_sms or 1 << 30)})
    for swept in (e for e in SWEPT if e in order):
        if total_sms and any(int(n) >= total_sms for n in sm_counts):
            notes.append(f"{swept} measures fewer than {total_sms} SMs; the whole-GPU point is "
                         f"the {TABLE_OF[swept]} experiment's row")
    for kernel in kernels:
        gpu_ok = language in kernel.languages
        if not gpu_ok and any(e != "cpu" for e in order):
            notes.append(f"{kernel.name}: no {language} version; only its cpu experiment runs")
        for size in sizes:
            if size not in kernel.spec.sizes:
                notes.append(f"{kernel.name}: no size {size!r}")
                continue
            unit = Unit(kernel, size)
            for experiment in order:
                if experiment != "cpu" and not gpu_ok:
                    continue
                mode = AUTO_CONFIGS[experiment] if configs == "auto" else configs
                if experiment == "cpu":
                    mode = "default"
                lang = "c" if experiment == "cpu" else language
                ks = SAMPLE_COUNTER_KS if experiment == "sample-counters" else (0,)
                for config in _configs(kernel, size, mode):
                    for sms in (counts if experiment in SWEPT else [None]):
                        for k in ks:
                            unit.items.append(Item(next_id, experiment, kernel.name, size,
                                                   config.label(),
                                                   tuple(sorted(config.tunables.items())),
                                                   lang, sms, k))
                            next_id += 1
            if unit.items:
                units.append(unit)
    return units, notes
