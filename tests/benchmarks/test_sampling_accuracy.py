"""The sampling benchmark's rule for kernels whose ground truth does not reproduce."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sampling_accuracy.py"


def _benchmark():
    spec = importlib.util.spec_from_file_location("sampling_accuracy", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repeat(rows: list[tuple[str, str, float, float]]) -> pd.DataFrame:
    """Rows of (kernel, config, times row s, second run s) as ``_repeat`` gives them."""
    frame = pd.DataFrame(rows, columns=["kernel", "config", "time_median_s",
                                        "time_median_s_full"])
    frame["size"], frame["device"] = "large", "h100-sxm"
    frame["diff_pct"] = 100 * (frame["time_median_s_full"] / frame["time_median_s"] - 1)
    return frame


def test_a_warm_second_run_over_the_limit_sets_a_kernel_apart():
    bench = _benchmark()
    warm = _repeat([("atomics", "a", 16.6e-3, 34.6e-3), ("copy", "a", 1e-3, 1.02e-3)])
    apart = bench._unreproduced({"warm": warm, "cold": warm.iloc[:0]})
    assert list(apart) == ["atomics"]
    assert round(apart["atomics"]) == 108


def test_a_cold_second_run_counts_only_beyond_what_filling_the_l2_costs():
    bench = _benchmark()
    # 50 MiB at 3.35 TB/s: 15.6 µs. A 20 µs launch 60% slower cold is the L2, not the truth
    cold = _repeat([("short", "a", 20e-6, 32e-6), ("atomics", "a", 16.6e-3, 34.6e-3)])
    apart = bench._unreproduced({"warm": cold.iloc[:0], "cold": cold})
    assert list(apart) == ["atomics"]


def test_a_launch_with_a_warm_second_run_is_not_judged_by_its_cold_one():
    bench = _benchmark()
    warm = _repeat([("atomics", "a", 16.6e-3, 16.7e-3)])
    cold = _repeat([("atomics", "a", 16.6e-3, 34.6e-3)])
    assert bench._unreproduced({"warm": warm, "cold": cold}) == {}
