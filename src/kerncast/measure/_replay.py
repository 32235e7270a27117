"""The replay backend: recorded measurements served through the measuring API.

CI and users without a GPU ask :class:`ReplayBackend` exactly what they would ask a
GPU backend (``backend.measure(kernel, config)``) and get the recorded ``times`` row
of that (kernel, size, configuration, device, SM count); ``samples``, ``counters``
and ``energy`` serve the other tables. A request that was never recorded fails with
a message that says what the dataset does hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kerncast._errors import InputError, ToolchainError
from kerncast.corpus import CorpusKernel, LaunchConfig
from kerncast.measure._backend import Backend
from kerncast.data import Dataset
from kerncast.devices import get_device

__all__ = ["ReplayBackend"]


def _clean(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if hasattr(value, "item"):
            value = value.item()
        out[key] = value
    return out


class ReplayBackend(Backend):
    """Serve the rows of a recorded dataset.

    Parameters
    ----------
    dataset
        A :class:`~kerncast.data.Dataset` or the path of one.
    device
        The device whose rows to serve (a spec name or alias, or ``cpu:...``); may be
        omitted when the dataset holds one device.
    sm_count
        SM count of the rows to serve; by default the largest recorded for the device.
    language
        ``cuda``, ``opencl`` or ``None`` for either (CUDA preferred).
    """

    name = "replay"

    def __init__(self, dataset: Any, device: str | None = None, sm_count: int | None = None,
                 language: str | None = None):
        self.source = str(getattr(dataset, "name", "") or dataset)
        self.dataset = dataset if isinstance(dataset, Dataset) else Dataset.read(Path(dataset))
        times = self.dataset.times
        recorded = sorted(set(times["device"])) if len(times) else []
        self.device_key = self._device(device, recorded)
        mine = times[times["device"] == self.device_key] if len(times) else times
        self.sm_count = int(sm_count or (mine["sm_count"].max() if len(mine) else 0))
        self.language = language or "cuda"
        self._language_filter = language
        self.kind = "cpu" if self.device_key.startswith("cpu:") else "gpu"

    def _device(self, device: str | None, recorded: list[str]) -> str:
        if device is None:
            if len(recorded) == 1:
                return recorded[0]
            raise InputError(f"{self.source} holds {len(recorded)} devices "
                             f"({', '.join(recorded) or 'none'}); choose one with --device")
        if device.startswith("cpu:"):
            return device

        return get_device(device).key

    def _unsupported(self, *args: Any, **kwargs: Any):
        raise ToolchainError(f"the replay backend serves recorded measurements ({self.source}); "
                             "it cannot compile or launch kernels: measure on a GPU with "
                             "--backend cupy")

    compile = upload = launch = synchronize = download = _unsupported  # type: ignore[assignment]

    def lookup(self, table: str, kernel: str, size: str, config: str) -> list[dict]:
        """Recorded rows of ``table`` for one launch on this backend's device and SM count."""
        frame = getattr(self.dataset, table)
        if not len(frame):
            return []
        match = ((frame["kernel"] == kernel) & (frame["size"] == size)
                 & (frame["config"] == config) & (frame["device"] == self.device_key)
                 & (frame["sm_count"] == self.sm_count))
        rows = frame[match]
        if self._language_filter is not None:
            rows = rows[rows["language"] == self._language_filter]
        elif len(set(rows["language"])) > 1:
            rows = rows[rows["language"] == "cuda"]
        return [_clean(r) for r in rows.to_dict("records")]

    def _missing(self, table: str, kernel: CorpusKernel, config: LaunchConfig) -> InputError:
        frame = getattr(self.dataset, table)
        kernels = sorted(set(frame["kernel"])) if len(frame) else []
        lang = f" ({self._language_filter})" if self._language_filter else ""
        return InputError(
            f"no recorded {table} row of {kernel.name} at size {config.size!r} with "
            f"{config.label()} on {self.device_key} with {self.sm_count} SMs{lang} in "
            f"{self.source} (it holds {len(frame)} {table} rows of {len(kernels)} kernels); "
            "measure it on a GPU (--backend cupy) or choose a recorded one "
            "(kerncast data summary lists them)")

    def measure(self, kernel: Any, config: Any = None, **options: Any) -> dict:
        """The recorded ``times`` row of a job (or a corpus kernel at ``config``); ``options``
        of a real measurement are ignored."""
        from kerncast.measure._job import Job  # noqa: PLC0415 (cycle: _job imports measure)

        if isinstance(kernel, Job):
            if kernel.corpus is None:
                rows = self.lookup("times", kernel.name, kernel.columns["size"],
                                   kernel.columns["config"])
                if not rows:
                    raise InputError(f"no recorded times row of {kernel.where} in {self.source}; "
                                     "measure it on a GPU (--backend cupy)")
                return rows[0]
            kernel, config = kernel.corpus
        rows = self.lookup("times", kernel.name, config.size, config.label())
        if not rows:
            raise self._missing("times", kernel, config)
        return rows[0]

    def samples(self, kernel: CorpusKernel, config: LaunchConfig) -> list[dict]:
        rows = self.lookup("samples", kernel.name, config.size, config.label())
        if not rows:
            raise self._missing("samples", kernel, config)
        return sorted(rows, key=lambda r: (r["k"], r["l2_state"]))

    def counters(self, kernel: CorpusKernel, config: LaunchConfig) -> dict:
        rows = self.lookup("counters", kernel.name, config.size, config.label())
        if not rows:
            raise self._missing("counters", kernel, config)
        return rows[0]

    def energy(self, kernel: CorpusKernel, config: LaunchConfig) -> dict:
        rows = self.lookup("energy", kernel.name, config.size, config.label())
        if not rows:
            raise self._missing("energy", kernel, config)
        return rows[0]

    def describe(self) -> dict[str, Any]:
        return {"device_name": "", "driver_version": "", "runtime_version": "",
                "backend": "replay", "tool_versions": {}}
