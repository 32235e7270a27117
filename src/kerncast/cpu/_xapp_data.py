"""XAPP's training data (section 3.3 and Fig. 2 step 1 of the seed): the features of every
corpus C region joined with its measured CPU-to-GPU speedup on one platform.

The CPU time is the single-threaded C version's region of interest on the GPU machines'
Xeon (``data/pocl-16core/cpu.parquet``); the GPU time is the CUDA version on the whole GPU
(``data/<device>/times.parquet``, experiment ``times``). ``default`` joins the corpus
kernel's default launch (its spec's ``defaults``, whose label the ``cpu`` rows carry);
``best`` the fastest launch measured for that kernel and size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kerncast._errors import InputError, unknown_name
from kerncast.cpu._features import FEATURES
from kerncast.data import read_table_files, table_files
from kerncast.corpus import SIZE_NAMES, list_kernels

__all__ = [
    "DEVICES",
    "FEATURES_PATH",
    "VARIANTS",
    "LabelReport",
    "feature_matrix",
    "gpu_times",
    "kernel_groups",
    "load_features",
    "speedup_column",
    "speedup_dataset",
    "speedup_labels",
]

_ROOT = Path(__file__).resolve().parents[3]
DATA_ROOT = _ROOT / "data"
FEATURES_PATH = DATA_ROOT / "xapp" / "features.parquet"
"""Where the profiler commits the features of the corpus C regions."""
CPU_DATASET = "pocl-16core"
DEVICES: tuple[str, ...] = ("h100", "h200")
VARIANTS: tuple[str, ...] = ("default", "best")
_KEY = ["kernel", "size"]


@dataclass(frozen=True)
class LabelReport:
    """What joined and what did not, for one device and variant."""

    device: str
    variant: str
    labels: int
    cpu_without_gpu: tuple[tuple[str, str], ...]
    gpu_without_cpu: tuple[tuple[str, str], ...]


def _check(device: str, variant: str) -> None:
    if device not in DEVICES:
        raise unknown_name("device", device, DEVICES)
    if variant not in VARIANTS:
        raise unknown_name("variant", variant, VARIANTS)


def _read_table(root: Path, table: str) -> pd.DataFrame:
    files = table_files(root, table)
    if not files:
        raise InputError(f"{root} has no {table} table ({table}.parquet or parts/{table}/); "
                         "give data_root= the checkout's data/ directory")
    return read_table_files(table, files)


def cpu_times(data_root: Path = DATA_ROOT) -> pd.DataFrame:
    """``kernel, size, config, cpu_s``: the single-threaded C region times that succeeded."""
    cpu = _read_table(data_root / CPU_DATASET, "cpu")
    cpu = cpu[cpu["status"] == "ok"]
    return cpu[[*_KEY, "config", "time_median_s"]].rename(columns={"time_median_s": "cpu_s"})


def _default_labels() -> dict[tuple[str, str], str]:
    return {(k.name, s): k.launch(s).label() for k in list_kernels() for s in SIZE_NAMES}


def gpu_times(device: str = "h100", variant: str = "default",
              data_root: Path = DATA_ROOT) -> pd.DataFrame:
    """``kernel, size, config, gpu_s``: one whole-GPU time per kernel and size.

    ``default`` keeps the corpus kernel's default launch (``CorpusKernel.launch(size)``,
    whose ``LaunchConfig.label()`` is the ``config`` column); ``best`` the launch with the
    lowest median time of those measured.
    """
    _check(device, variant)
    t = _read_table(data_root / device, "times")
    t = t[(t["experiment"] == "times") & (t["status"] == "ok") & t["time_median_s"].notna()]
    t = t[t["sm_count"] == t["sm_count"].max()]
    if variant == "default":
        labels = _default_labels()
        keep = [labels.get((k, s)) == c for k, s, c in zip(t["kernel"], t["size"], t["config"])]
        t = t[np.asarray(keep, dtype=bool)]
    else:
        t = t.loc[t.groupby(_KEY)["time_median_s"].idxmin()]
    t = t.drop_duplicates(_KEY)
    return t[[*_KEY, "config", "time_median_s"]].rename(columns={"time_median_s": "gpu_s"})


def speedup_labels(device: str = "h100", variant: str = "default",
                   data_root: Path = DATA_ROOT) -> tuple[pd.DataFrame, LabelReport]:
    """``kernel, size, cpu_s, gpu_s, speedup`` (``cpu_s / gpu_s``) and what did not join."""
    cpu = cpu_times(data_root)
    gpu = gpu_times(device, variant, data_root).rename(columns={"config": "gpu_config"})
    joined = cpu.merge(gpu, on=_KEY, how="inner")
    joined["speedup"] = joined["cpu_s"] / joined["gpu_s"]
    cpu_keys = set(zip(cpu["kernel"], cpu["size"]))
    gpu_keys = set(zip(gpu["kernel"], gpu["size"]))
    report = LabelReport(device, variant, len(joined), tuple(sorted(cpu_keys - gpu_keys)),
                         tuple(sorted(gpu_keys - cpu_keys)))
    cols = [*_KEY, "cpu_s", "gpu_s", "speedup", "config", "gpu_config"]
    return joined[cols].sort_values(_KEY).reset_index(drop=True), report


def load_features(features_path: str | Path | None = None) -> pd.DataFrame:
    """``kernel, size`` and the 39 features (:data:`FEATURES`) of every profiled region
    (with the file's other columns); rows whose ``status`` is not ``ok`` are left out."""
    path = Path(features_path) if features_path is not None else FEATURES_PATH
    if not path.is_file():
        raise InputError(f"no XAPP features at {path}: profile the corpus C regions first "
                         "(kerncast.cpu writes data/xapp/features.parquet), or pass "
                         "features_path= a Parquet file with kernel, size and the 39 features")
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for broken files
        raise InputError(f"cannot read {path} as Parquet ({type(exc).__name__}: {exc})") from None
    missing = [c for c in (*_KEY, *FEATURES) if c not in frame.columns]
    if missing:
        raise InputError(f"{path} lacks the columns {', '.join(missing)}; it must hold kernel, "
                         "size and the 39 features named in kerncast.cpu._features.FEATURES")
    if "status" in frame.columns:
        frame = frame[frame["status"] == "ok"].reset_index(drop=True)
    if frame.duplicated(_KEY).any():
        raise InputError(f"{path} has several rows for one kernel and size; keep one per region")
    return frame


def speedup_dataset(device: str = "h100", variant: str = "default",
                    features_path: str | Path | None = None, *,
                    data_root: str | Path | None = None,
                    extra_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """The seed's training table for one platform: ``kernel, size``, the 39 features,
    ``cpu_s``, ``gpu_s`` and ``speedup``, one row per region with both a feature vector and
    a speedup label. ``extra_columns`` are further columns of the features file to keep
    (``cpu_s``, always there, may be named too).

    Rows whose features are missing (NaN) are dropped.
    """
    _check(device, variant)
    root = Path(data_root) if data_root is not None else DATA_ROOT
    features = load_features(features_path)
    extra_columns = tuple(c for c in extra_columns if c != "cpu_s")
    missing = [c for c in extra_columns if c not in features.columns]
    if missing:
        raise InputError(f"the features file lacks {', '.join(missing)}; drop them from "
                         "extra_columns")
    labels, _ = speedup_labels(device, variant, root)
    cols = [*_KEY, *FEATURES, *extra_columns]
    joined = features[cols].merge(labels[[*_KEY, "cpu_s", "gpu_s", "speedup"]], on=_KEY)
    joined = joined.dropna(subset=[*FEATURES, *extra_columns])
    if joined.empty:
        raise InputError(f"no region has both features and a {device} {variant} speedup; check "
                         "that the features file names corpus kernels and sizes")
    return joined.sort_values(_KEY).reset_index(drop=True)


def feature_matrix(frame: pd.DataFrame, features: tuple[str, ...] | list[str] = FEATURES) -> np.ndarray:
    """The ``features`` columns of ``frame`` as a float array, checked (present, finite)."""
    if isinstance(frame, pd.Series):
        frame = frame.to_frame().T
    missing = [c for c in features if c not in frame.columns]
    if missing:
        raise InputError(f"the rows lack the feature columns {', '.join(missing)}; give the "
                         "features kerncast.cpu computes (kerncast.cpu._features.FEATURES)")
    x = frame[list(features)].to_numpy(dtype=float)
    if not np.all(np.isfinite(x)):
        bad = sorted({features[j] for j in np.flatnonzero(~np.isfinite(x).all(axis=0))})
        raise InputError(f"the features {', '.join(bad)} hold NaN or infinite values; profile "
                         "the region again or drop those rows")
    return x


def speedup_column(frame: pd.DataFrame) -> np.ndarray:
    """The ``speedup`` column, checked positive and finite (the training label)."""
    if "speedup" not in frame.columns:
        raise InputError("the training rows lack a speedup column; build them with "
                         "speedup_dataset()")
    y = frame["speedup"].to_numpy(dtype=float)
    if not (np.all(np.isfinite(y)) and np.all(y > 0)):
        raise InputError("speedups must be finite and positive; drop rows without a measurement")
    return y


def kernel_groups(frame: pd.DataFrame) -> np.ndarray:
    """The ``kernel`` column: the groups that a split must never cut."""
    if "kernel" not in frame.columns:
        raise InputError("the training rows lack a kernel column, needed to split by kernel")
    return frame["kernel"].astype(str).to_numpy()
