"""Calibration: micro-benchmarks that measure a GPU's latencies, throughputs,
bandwidths, cache geometry, synchronisation and launch costs (the static-analysis
seed's section IV-A2), and the calibration files the static simulator reads.
"""

from kerncast.calibrate._analysis import cache_size_from_curve, fit_line, granularity_from_curve
from kerncast.calibrate._model import (
    CALIBRATION_DIR,
    LOADED_CURVE,
    MICROBENCHMARKS,
    SPREAD_CURVE,
    STORE_CURVE,
    TURNAROUND_CURVE,
    Calibration,
    InstructionTiming,
    load_calibration,
)

__all__ = [
    "CALIBRATION_DIR",
    "LOADED_CURVE",
    "MICROBENCHMARKS",
    "SPREAD_CURVE",
    "STORE_CURVE",
    "TURNAROUND_CURVE",
    "Calibration",
    "InstructionTiming",
    "cache_size_from_curve",
    "fit_line",
    "granularity_from_curve",
    "load_calibration",
    "PARTS",
    "run_calibration",
    "update_part",
]


def __getattr__(name: str):
    if name in ("PARTS", "run_calibration", "update_part"):
        from kerncast.calibrate import _run  # noqa: PLC0415 (needs CuPy)

        return getattr(_run, name)
    raise AttributeError(name)
