"""A small, clearly synthetic dataset for tests of models and the evaluation harness.

The times are made up by a formula with seeded noise (never measured, never written
under data/): rows of real corpus kernels (so that models reading the corpus work) and
of kernels that exist only here (so that per-kernel failures can be tested).
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd

from kerncast.corpus import get_kernel
from kerncast.data import Dataset, schema

CORPUS_KERNELS = ("matmul_naive", "matmul_tiled")
FAKE_KERNELS = ("synthetic_stream", "synthetic_stencil")
PROVENANCE = "synthetic test data (made up, not measured)"


def _row(kernel: str, size: str, config: str, grid, block, tunables, params,
         sm_count: int, seconds: float) -> dict:
    return {
        "kernel": kernel, "language": "cuda", "size": size, "config": config,
        "device": "h100-sxm", "sm_count": sm_count,
        "grid_x": grid[0], "grid_y": grid[1], "grid_z": grid[2],
        "block_x": block[0], "block_y": block[1], "block_z": block[2],
        "blocks": int(np.prod(grid)), "threads_per_block": int(np.prod(block)),
        "tunables": json.dumps(tunables), "params": json.dumps(params), "registers": 32,
        "status": "ok", "time_median_s": seconds, "time_min_s": seconds * 0.98,
        "time_iqr_s": seconds * 0.01, "repetitions": 10, "source": PROVENANCE,
    }


def _pad3(values) -> tuple[int, int, int]:
    values = list(values) + [1] * (3 - len(values))
    return tuple(int(v) for v in values[:3])


def _corpus_rows(name: str, sizes, sm_counts, rng) -> list[dict]:
    kernel = get_kernel(name)
    rows = []
    for size in sizes:
        for cfg in kernel.launches(size):
            n = cfg.params["n"]
            shape = 1 + 0.4 * abs(np.log2(cfg.threads_per_block / 256))
            for sm in sm_counts:
                t = 3e-6 + 2 * n**3 / (20e12 * sm / 132) * shape * rng.uniform(0.9, 1.1)
                rows.append(_row(name, size, cfg.label(), _pad3(cfg.grid), _pad3(cfg.block),
                                 cfg.tunables, cfg.params, sm, t))
    return rows


def _fake_rows(name: str, sizes, sm_counts, rng) -> list[dict]:
    rows = []
    for i, size in enumerate(sizes):
        n = 1 << (16 + 4 * i)
        for bx in (64, 128, 256, 512, 1024):
            grid = (-(-n // bx), 1, 1)
            for sm in sm_counts:
                t = 4e-6 + 12 * n / 3e12 * (1 + 128 / bx) * rng.uniform(0.9, 1.1)
                rows.append(_row(name, size, f"bx={bx}", grid, (bx, 1, 1), {"bx": bx},
                                 {"n": n}, sm, t))
    return rows


def _sample_rows(times: pd.DataFrame, rng, psat: int = 4) -> list[dict]:
    """Sampled runs: the first k·psat·sm_count blocks of each launch, warm and cold L2,
    timed as a launch floor plus a share of the full time proportional to the blocks."""
    rows = []
    for _, row in times[times["status"] == "ok"].iterrows():
        per_block = (row["time_median_s"] - 3e-6) / row["blocks"]
        for k in (1, 2, 3, 4, 5, 10, 20):
            launched = min(k * psat * row["sm_count"], row["blocks"])
            for l2, factor in (("warm", 0.95), ("cold", 1.0)):
                t = (3e-6 + per_block * launched * factor) * rng.uniform(0.98, 1.02)
                rows.append({**{c: row[c] for c in ("kernel", "language", "size", "config",
                                                    "device", "sm_count", "source")},
                             "k": k, "psat": psat, "blocks_launched": launched,
                             "grid_fraction": launched / row["blocks"], "l2_state": l2,
                             "status": "ok", "time_median_s": t, "time_min_s": t * 0.99,
                             "time_iqr_s": t * 0.01, "repetitions": 10})
            if launched >= row["blocks"]:
                break
    return rows


#: Counters of the synthetic launches: per-instruction rates and ratios (made up).
_RATES = {"smsp__inst_executed_op_branch.sum": 0.08, "l1tex__t_sectors.sum": 0.5,
          "l1tex__t_requests.sum": 0.12, "lts__t_sectors.sum": 0.3,
          "dram__bytes_read.sum": 6.0, "dram__bytes_write.sum": 2.0,
          "smsp__inst_executed_op_global_ld.sum": 0.1,
          "smsp__inst_executed_op_global_st.sum": 0.03}
_RATIOS = {"l1tex__t_sector_hit_rate.pct": 40.0, "lts__t_sector_hit_rate.pct": 70.0,
           "sm__warps_active.avg.pct_of_peak_sustained_active": 60.0,
           "smsp__thread_inst_executed_per_inst_executed.ratio": 31.0}


def _counter_row(row: pd.Series, k: int, launched: int, seconds: float, rng) -> dict:
    """Nsight-Compute-like counters of one launch of ``launched`` blocks: instructions in
    proportion to the blocks, a throughput that depends on the block size."""
    per_block = 2e3 * row["threads_per_block"] / 32 * (1 + np.log2(max(row["blocks"], 2)) / 8)
    issued = per_block * launched * rng.uniform(0.99, 1.01)
    out = {**{c: row[c] for c in row.index if c in _KEEP}, "sample_k": k, "psat": 4,
           "blocks_launched": launched, "status": "ok",
           "smsp__inst_issued.sum": issued, "smsp__inst_executed.sum": issued * 0.97,
           "gpu__time_duration.sum": seconds}
    out.update({name: rate * issued * rng.uniform(0.9, 1.1) for name, rate in _RATES.items()})
    out.update({name: value * rng.uniform(0.95, 1.05) for name, value in _RATIOS.items()})
    return out


_KEEP = ("kernel", "language", "size", "config", "device", "sm_count", "grid_x", "grid_y",
         "grid_z", "block_x", "block_y", "block_z", "blocks", "threads_per_block", "tunables",
         "params", "registers")


def _counters_rows(times: pd.DataFrame, samples: pd.DataFrame, rng) -> list[dict]:
    """Counters of each full launch (sample_k 0) and of its warm-L2 sampled launches."""
    rows = []
    warm = samples[samples["l2_state"] == "warm"].groupby(["kernel", "size", "config", "sm_count"])
    for _, row in times[times["status"] == "ok"].iterrows():
        rows.append(_counter_row(row, 0, int(row["blocks"]), row["time_median_s"], rng))
        key = (row["kernel"], row["size"], row["config"], row["sm_count"])
        if key not in warm.groups:
            continue
        for _, s in warm.get_group(key).iterrows():
            rows.append(_counter_row(row, int(s["k"]), int(s["blocks_launched"]),
                                     s["time_median_s"], rng))
    return rows


def synthetic_dataset(kernels=CORPUS_KERNELS + FAKE_KERNELS, sizes=("small", "medium"),
                      sm_counts=(132,), seed: int = 0, failed_rows: bool = True) -> Dataset:
    """The synthetic dataset (with sampled runs and counters); each kernel gets one failed
    row when ``failed_rows``."""
    rng = np.random.default_rng(seed)
    rows = []
    for name in kernels:
        make = _corpus_rows if name in CORPUS_KERNELS else _fake_rows
        part = make(name, sizes, sm_counts, rng)
        if failed_rows:
            bad = dict(part[0], status="launch_failed", time_median_s=np.nan,
                       time_min_s=np.nan, time_iqr_s=np.nan, config="bx=9999")
            part.append(bad)
        rows.extend(part)
    times = _complete("times", pd.DataFrame(rows))
    samples = _complete("samples", pd.DataFrame(_sample_rows(times, rng)))
    counters = _complete("counters", pd.DataFrame(_counters_rows(times, samples, rng)))
    return Dataset(times=times, samples=samples, counters=counters, name="synthetic")


_FILL = {"str": PROVENANCE, "json": "{}", "time": "2026-01-01T00:00:00+00:00", "int": 0,
         "float": 0.0, "bool": False}


def _complete(table: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Add every schema column the synthetic rows lack, with placeholder values, so that
    the dataset is written and read back like a measured one."""
    for col in schema.columns(table):
        if col.name not in frame.columns:
            frame[col.name] = _FILL[col.dtype]
    return schema.conform(table, frame)


@functools.cache
def evaluated_synthetic():
    """``evaluate(synthetic_dataset(), "all")``, once per test process: the harness and the
    report tests both read it (read only), and it takes minutes on two cores."""
    from kerncast.evaluate import evaluate  # noqa: PLC0415

    return evaluate(synthetic_dataset(), "all")
