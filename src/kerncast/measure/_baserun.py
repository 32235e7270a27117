"""A base run: what the scaling surfaces predict one's own kernel from.

One launch measured on this machine's GPU at one configuration (the whole GPU, or a green
context of N SMs): its median time (the ``times`` protocol), its average board power and
energy per launch (a loop of launches read by NVML, as the ``energy`` experiment reads
it) and its Nsight Compute counters (the ``counters`` experiment's metrics). The run is
written to and read from a JSON file, so that it is measured once on the GPU and
predicted from anywhere.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kerncast._errors import InputError, KerncastError

__all__ = ["BASE_RUN_FORMAT", "BaseRun", "measure_base_run"]

BASE_RUN_FORMAT = 1
#: The counters row's launch columns a prediction reads beside the metrics (its waves).
LAUNCH_KEYS = ("blocks", "threads_per_block")


@dataclass(frozen=True)
class BaseRun:
    """One launch's time, power, energy and counters at ``device``:``sm_count``."""

    kernel: str
    device: str
    sm_count: int
    time_s: float
    power_w: float
    energy_j: float
    counters: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def configuration(self) -> str:
        return f"{self.device.split('-')[0]}:{self.sm_count}"

    def to_dict(self) -> dict[str, Any]:
        return {"format": BASE_RUN_FORMAT, **asdict(self)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "the base run") -> BaseRun:
        """Check and read :meth:`to_dict`'s form; an :class:`InputError` names what is
        wrong."""
        if not isinstance(data, dict) or data.get("format") != BASE_RUN_FORMAT:
            raise InputError(f"{where} is not a kerncast base run (format {BASE_RUN_FORMAT}); "
                             "write one with kerncast scale FILE --save-base PATH on a GPU")
        missing = [k for k in ("kernel", "device", "sm_count", "time_s", "counters")
                   if k not in data]
        if missing:
            raise InputError(f"{where} lacks {', '.join(missing)}; measure it again with "
                             "kerncast scale FILE --save-base PATH")
        counters = data["counters"]
        if not isinstance(counters, dict) or not counters:
            raise InputError(f"{where} has no counters: the scaling surfaces read the base "
                             "run's Nsight Compute counters; measure it with Nsight Compute "
                             "installed (kerncast scale FILE --save-base PATH)")
        absent = [k for k in LAUNCH_KEYS if k not in counters]
        if absent:
            raise InputError(f"{where}'s counters lack {', '.join(absent)}; measure it again")
        time_s = _number(data["time_s"], "time_s", where)
        if not time_s > 0:
            raise InputError(f"{where} has time_s {data['time_s']!r}: a launch time must be "
                             "positive")
        return cls(kernel=str(data["kernel"]), device=str(data["device"]),
                   sm_count=int(data["sm_count"]), time_s=time_s,
                   power_w=_number(data.get("power_w"), "power_w", where),
                   energy_j=_number(data.get("energy_j"), "energy_j", where),
                   counters=dict(counters), provenance=dict(data.get("provenance") or {}))

    def save(self, path: str | Path) -> Path:
        """Write the run as JSON (atomically: a run cut short leaves no partial file)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(_strict(self.to_dict()), indent=1, allow_nan=False,
                                  default=_plain) + "\n")
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> BaseRun:
        path = Path(path)
        if not path.is_file():
            raise InputError(f"no base run at {path}: write one with kerncast scale FILE "
                             f"--save-base {path} on a machine with the base GPU")
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"{path} is not readable JSON ({exc}); write it again with "
                             "--save-base") from None
        return cls.from_dict(data, str(path))


def _number(value: Any, name: str, where: str) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {name} is {value!r}, not a number") from None


def _strict(value: Any) -> Any:
    """``value`` with every NaN or infinite number as None: the file is strict JSON (a
    power the run could not measure is ``null``, and reads back as NaN)."""
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plain(value: Any) -> Any:
    """JSON for NumPy scalars and anything else a row holds."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def measure_base_run(kernel: Any, launch: Any, *, device: str | None = None,
                     sm_count: int | None = None, backend: str = "cupy",
                     progress: Any = None) -> BaseRun:
    """Measure ``launch`` of one's own ``kernel`` on this machine's GPU (``device`` checked
    against it; ``sm_count`` SMs through a green context, default the whole GPU): its time,
    its power and energy, its counters.

    Raises
    ------
    InputError
        For a device that is not the one found, or a launch the GPU cannot run.
    KerncastError
        When a measurement fails (the message says which and why).
    """
    from kerncast.measure._api import measure, monitor_for  # noqa: PLC0415 (on use: GPU libraries)
    from kerncast.measure._counters import profile_job  # noqa: PLC0415 (on use: GPU libraries)
    from kerncast.measure._energy import measure_energy  # noqa: PLC0415 (on use: GPU libraries)
    from kerncast.measure._factory import backend_language, make_backend  # noqa: PLC0415 (on use: GPU libraries)
    from kerncast.measure._job import user_job  # noqa: PLC0415 (on use: GPU libraries)
    from kerncast.measure._nvml import NvmlEnergyObserver  # noqa: PLC0415 (on use: GPU libraries)

    say = progress or (lambda text: None)
    engine = make_backend(backend, device=device, sm_count=sm_count,
                          language=backend_language(backend))
    job = user_job(kernel, launch)
    say(f"timing {job.name} on {engine.device_key} at {engine.sm_count} SMs")
    timed = measure(kernel, launch, backend=engine).row
    if timed.get("status") != "ok":
        raise KerncastError(f"the base run of {job.name} could not be timed "
                            f"({timed.get('status')}): {timed.get('error')}")
    say("measuring its power (NVML, a loop of launches)")
    energy = measure_energy(engine, job, None, NvmlEnergyObserver(monitor_for(engine)),
                            monitor=monitor_for(engine))
    if energy.get("status") not in ("ok", "host_bound"):
        raise KerncastError(f"the power of {job.name} could not be measured "
                            f"({energy.get('status')}): {energy.get('error')}")
    say("profiling it with Nsight Compute")
    counters = profile_job(engine, device, job, (0,), sm_count=sm_count)[0]
    keep = {"status", "error", "sample_k", "psat", "blocks_launched"}
    return BaseRun(
        kernel=job.name, device=engine.device_key, sm_count=int(engine.sm_count),
        time_s=float(timed["time_median_s"]),
        power_w=float(energy["avg_power_w"]) if energy.get("status") == "ok" else math.nan,
        energy_j=float(energy["energy_per_launch_j"]) if energy.get("status") == "ok"
        else math.nan,
        counters={k: v for k, v in counters.items() if k not in keep},
        provenance={k: timed.get(k) for k in (
            "device_name", "driver_version", "measured_at", "sm_clock_mhz_before",
            "sm_clock_mhz_after", "mem_clock_mhz_before", "mem_clock_mhz_after",
            "kerncast_version", "tool_versions")}
        | {"energy_status": energy.get("status"), "energy_error": energy.get("error", "")})
