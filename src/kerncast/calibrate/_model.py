"""The calibration of one device: what its micro-benchmarks measured.

A calibration file is JSON with provenance (device, driver, clocks seen, date, tool
versions) and four groups of figures that the static simulator uses:

``instructions``  per instruction class: dependent-issue latency (cycles) and
                  throughput (results per clock per SM), from inline-PTX chains;
``memory``        latencies (cycles) of L1 hits, L2 hits, DRAM and shared memory,
                  bandwidths of DRAM (read, write, copy), L2 and shared memory,
                  atomics, and the latency-versus-footprint curves behind the cache
                  sizes and the fetch granularity;
``sync``          cycles per block-wide barrier by warps per block;
``launch``        the fixed cost of a launch and the cost per block.

Shipped files live in ``kerncast/calibrate/data/<device key>.json``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kerncast._errors import InputError

__all__ = ["CALIBRATION_DIR", "LOADED_CURVE", "SPREAD_CURVE", "STORE_CURVE", "TURNAROUND_CURVE",
           "Calibration", "InstructionTiming", "load_calibration"]

CALIBRATION_DIR = Path(__file__).with_name("data")
#: the micro-benchmarks' CUDA source
MICROBENCHMARKS = Path(__file__).with_name("ubench.cu")
#: the curve of scattered stores: [sectors per request, bytes of each sector written,
#: sectors written per cycle per SM], measured over a matrix beyond the L2
STORE_CURVE = "store_sectors_per_clk_sm_vs_shape"
#: a block slot's turnaround by block size: [warps per block, cycles, cycles per spun cycle]
TURNAROUND_CURVE = "block_turnaround_cycles_vs_warps"
#: the DRAM under load: [bytes in flight per SM, warps per SM, read GB/s, latency cycles]
LOADED_CURVE = "dram_latency_vs_inflight"
#: single DRAM reads' latencies at light load: [quantile, cycles] at evenly spaced
#: quantiles (their mean is the latencies' mean)
SPREAD_CURVE = "dram_latency_quantiles"


@dataclass(frozen=True)
class InstructionTiming:
    latency_cycles: float
    throughput_per_clk_sm: float


@dataclass(frozen=True)
class Calibration:
    """Measured figures of one device, with where and when they were measured."""

    device: str
    provenance: dict
    instructions: dict[str, InstructionTiming]
    memory: dict[str, float]
    curves: dict[str, list[list[float]]] = field(default_factory=dict)
    sync: dict[str, float] = field(default_factory=dict)
    launch: dict[str, float] = field(default_factory=dict)
    adapted_from: str | None = None

    def instruction(self, cls: str) -> InstructionTiming:
        try:
            return self.instructions[cls]
        except KeyError:
            known = ", ".join(sorted(self.instructions))
            raise InputError(f"calibration of {self.device} has no instruction class {cls!r} "
                             f"(it has {known})") from None

    def to_dict(self) -> dict:
        out = asdict(self)
        out["instructions"] = {k: asdict(v) for k, v in self.instructions.items()}
        return out

    @classmethod
    def from_dict(cls, raw: dict, *, origin: str = "calibration") -> Calibration:
        try:
            instructions = {k: InstructionTiming(**v) for k, v in raw["instructions"].items()}
            return cls(
                device=raw["device"], provenance=raw["provenance"], instructions=instructions,
                memory={k: float(v) for k, v in raw["memory"].items()},
                curves=raw.get("curves", {}), sync=raw.get("sync", {}),
                launch=raw.get("launch", {}), adapted_from=raw.get("adapted_from"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{origin} is not a valid kerncast calibration ({type(exc).__name__}: "
                             f"{exc}); regenerate it with 'kerncast calibrate'") from None

    def save(self, path: str | Path) -> None:
        """Write atomically (temporary file, then rename)."""
        path = Path(path)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")
        tmp.replace(path)


def load_calibration(device_or_path: str | Path) -> Calibration:
    """The shipped calibration of a device (by spec key) or a calibration file.

    Raises
    ------
    InputError
        If no calibration exists for the device or the file is not valid.
    """
    text = str(device_or_path)
    path = Path(text) if text.endswith(".json") else CALIBRATION_DIR / f"{text}.json"
    if not path.exists():
        shipped = ", ".join(sorted(p.stem for p in CALIBRATION_DIR.glob("*.json"))) or "none"
        raise InputError(f"no calibration for {text!r} (shipped: {shipped}); run "
                         f"'kerncast calibrate --device {text}' on that GPU")
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read calibration {path}: {exc}") from None
    return Calibration.from_dict(raw, origin=str(path))
