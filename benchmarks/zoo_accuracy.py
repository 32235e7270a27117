"""The survey's model zoo and the ``combined`` model on the same rows, held out by kernel.

    python benchmarks/zoo_accuracy.py [--device h100|h200|all] [--quick] [--folds 5]
        [--rows auto|counters|all] [--per-kernel 3] [--models a,b] [--extra-bases LIST]
        [--cache DIR]

For each device (``data/<device>``), every registered model (or ``--models``) is scored
by kerncast's harness (``kerncast.evaluate.evaluate``: folds by kernel, a model never
sees a launch of the kernels it predicts) on one selection of rows:

* ``--rows counters`` (the default where the dataset has counters, as ``data/h100``):
  the launches measured whole with Nsight Compute counters, which the counter models
  (components, wfg, qa, gpu-random-forest) need; ``--rows all``: every launch of the
  whole GPU (the default where there are no counters, as ``data/h200``). SM-count sweep
  rows are left out (the scaling-surfaces model and its own benchmark cover them). On
  ``data/h200`` the scaling-surfaces model predicts each launch from its base run on the
  H100 at 132 SMs, read from ``data/h100`` (:func:`model_for`); on ``data/h100`` the
  launches are its base runs, so it predicts none;
* ``--per-kernel N`` keeps N evenly spaced launch configurations of each kernel and size
  (0: all): the models that emulate kernels (static, mwp-cwp, roofline, gpu-pram, eiger,
  pmac) take 0.2-1 s per launch on this 2-core machine, so every row is out of reach.

Every model is fitted and scored on that selection only (learned models train on the
selected rows of the training kernels). A model is *compared* where it predicts at least
90% of the selected rows; the comparison uses the rows every compared model and
``combined`` predicted (their number is printed): per model MAPE, median APE and
Spearman, the best single model, ``combined``, and the survey's Table 2 with measured
numbers (``EvaluationResult.comparison``, as ``kerncast evaluate`` prints it). A model
that predicts fewer rows is scored on its own rows, with ``combined`` on the same rows.
``--extra-bases compared`` (or a list of names) also scores ``combined`` with those bases
(``compared``: every compared model), labelled ``combined+``. ``--cache DIR`` keeps each
model's held-out predictions and reuses them for the same rows, folds and parameters, so
that a run too long for one sitting can be made in parts (``--models`` a few at a time,
then all); it does not notice a change of a model's code.

The issue's target is a ``combined`` MAPE at least 20% lower than the best single
model's; the output says whether it is met. The last line is, for the first device,
``zoo models: N best single: NAME X% combined: Y%`` (N: the survey's models with a
score on the selected rows of any device run, on the common rows or on their own).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kerncast.data import KEY_COLUMNS, Dataset  # noqa: E402
from kerncast.devices import get_device  # noqa: E402
from kerncast.evaluate import EvaluationResult, evaluate  # noqa: E402
from kerncast.evaluate._report import LABELS, format_value  # noqa: E402
from kerncast.models import Predictor, get_predictor, list_predictors, predictor_class  # noqa: E402

#: The survey's kernels (MM, HotSpot, BFS) and a few of each kind, for ``--quick``.
QUICK = ("matmul_naive", "matmul_tiled", "thermal_step", "thermal_tiled", "bfs_frontier_expand",
         "bfs_queue_expand", "copy_vector", "transpose_naive", "reduce_tree", "arith_fp32",
         "atomic_contention", "black_scholes")
#: The shipped dataset of each base GPU a model may predict from.
BASE_DATASETS = {"h100": "h100", "h100-sxm": "h100", "h200": "h200"}
#: Registered models of the survey that live outside ``kerncast.models.zoo``.
SURVEY_ELSEWHERE = ("scaling-surfaces",)
COVERAGE = 0.9
TARGET_REDUCTION = 0.2
MODEL_COLUMNS = ("model", "rows", "mape_pct", "median_ape_pct", "spearman", "within_25_pct",
                 "fit_s", "s_per_prediction")


@dataclass
class Scored:
    """What one device gave: the best single model and combined on the common rows."""

    device: str
    zoo_scored: list[str]
    best: str
    best_mape: float
    combined_mape: float


def survey_models(names: list[str]) -> list[str]:
    """The registered models that are the survey's (the zoo package and those elsewhere)."""
    return [n for n in names if n != "combined" and (
        predictor_class(n).__module__.startswith("kerncast.models.zoo.") or n in SURVEY_ELSEWHERE)]


def model_for(name: str, device: str) -> Predictor:
    """``name`` as scored on ``device``'s rows: a model that predicts from a base run on
    another GPU (``scaling-surfaces``, base: the H100 at 132 SMs) reads the base runs from
    that GPU's dataset (``base_dataset``), as a user with an H100 asking about an H200."""
    params = get_predictor(name).get_params()
    if "base_config_run" in predictor_class(name).needs and "base_dataset" in params:
        base_device = str(params["base"]).split(":")[0]
        if get_device(base_device).key != get_device(device).key:
            return get_predictor(name, base_dataset=str(ROOT / "data" / BASE_DATASETS[base_device]))
    return get_predictor(name)


def _launch_has_counters(data: Dataset) -> np.ndarray:
    c = data.counters
    if c is None or not len(c):
        return np.zeros(len(data.times), bool)
    c = c[(c["sample_k"] == 0) & (c["status"] == "ok")] if "sample_k" in c else c
    keys = [k for k in KEY_COLUMNS if k in c and k in data.times]
    have = set(map(tuple, c[keys].astype(str).to_numpy()))
    return np.array([tuple(r) in have for r in data.times[keys].astype(str).to_numpy()])


def _evenly(times: pd.DataFrame, per_kernel: int) -> pd.DataFrame:
    if per_kernel <= 0:
        return times
    parts = [g.iloc[np.unique(np.linspace(0, len(g) - 1, per_kernel).astype(int))]
             for _, g in times.groupby(["kernel", "size"], sort=True)]
    return pd.concat(parts).reset_index(drop=True) if parts else times


def select_rows(data: Dataset, rows: str, per_kernel: int, device: str) -> tuple[Dataset, str]:
    """``data`` with the selected ``times`` rows (other tables kept), and what they are."""
    t = data.times
    keep = (t["status"] == "ok") & (t["sm_count"] == get_device(device).compute.sm_count)
    if "experiment" in t:
        keep &= t["experiment"] == "times"
    has = _launch_has_counters(data)
    if rows == "auto":
        rows = "counters" if has.any() else "all"
    if rows == "counters":
        keep &= has
    chosen = _evenly(t[keep].reset_index(drop=True), per_kernel)
    what = ("launches with whole-launch counters" if rows == "counters" else
            "every launch of the whole GPU") + (f", {per_kernel} evenly spaced configurations "
                                                "per kernel and size" if per_kernel > 0 else "")
    return replace(data, times=chosen), what


def score(data: Dataset, models: list[tuple[str, Predictor]], folds: str, cache: Path | None
          ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Each (label, model) through the harness, one at a time (timed, on stderr), or read
    back from ``cache`` where the same model was scored on the same rows and folds."""
    preds: list[pd.DataFrame] = []
    calls: list[pd.DataFrame] = []
    fits: list[pd.DataFrame] = []
    info: dict[str, dict] = {}
    for label, model in models:
        stored = _cached(cache, data, label, model, folds)
        if stored is not None and stored.exists():
            frames, info[label] = _load(stored)
            print(f"  {label}: from {stored}", file=sys.stderr, flush=True)
        else:
            start = time.perf_counter()
            result = evaluate(data, [model], folds=folds)
            print(f"  {label}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
            frames = tuple(f.assign(model=label) for f in (result.predictions, result.calls,
                                                          result.fits))
            info[label] = next(iter(result.models.values()))
            if stored is not None:
                _save(stored, frames, info[label])
        for frame, out in zip(frames, (preds, calls, fits)):
            out.append(frame)
    return pd.concat(preds), pd.concat(calls), pd.concat(fits), info


def _cached(cache: Path | None, data: Dataset, label: str, model: Predictor, folds: str
            ) -> Path | None:
    if cache is None:
        return None
    rows = pd.util.hash_pandas_object(data.times[list(KEY_COLUMNS)].astype(str), index=False)
    registered = list_predictors() if model.name == "combined" else []  # its default bases
    stamp = json.dumps([label, model.get_params(deep=False), folds, registered,
                        hashlib.sha1(rows.to_numpy().tobytes()).hexdigest()],
                       sort_keys=True, default=str)
    return cache / f"{label}-{hashlib.sha1(stamp.encode()).hexdigest()[:16]}"


def _save(path: Path, frames: tuple, info: dict) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for name, frame in zip(("predictions", "calls", "fits"), frames):
        frame.astype({c: str for c in frame if frame[c].dtype == object}).to_parquet(
            path / f"{name}.parquet")
    (path / "info.json").write_text(json.dumps({**info, "needs": sorted(info["needs"])},
                                               default=str))


def _load(path: Path) -> tuple[tuple, dict]:
    frames = tuple(pd.read_parquet(path / f"{n}.parquet") for n in ("predictions", "calls", "fits"))
    for frame in frames:
        frame.replace({"None": None}, inplace=True)
    info = json.loads((path / "info.json").read_text())
    return frames, {**info, "needs": frozenset(info["needs"])}


def _key(frame: pd.DataFrame) -> pd.Series:
    return frame[[c for c in KEY_COLUMNS if c in frame]].astype(str).agg("/".join, axis=1)


def restricted(name: str, folds: str, preds: pd.DataFrame, calls: pd.DataFrame,
               fits: pd.DataFrame, info: dict, models: list[str], keys: set[str]
               ) -> EvaluationResult:
    """The harness's result (tables included) for ``models`` on the rows ``keys``."""
    p = preds[preds["model"].isin(models)]
    p = p[_key(p).isin(keys)].reset_index(drop=True)
    return EvaluationResult(dataset=name, folds=folds, models={m: info[m] for m in models},
                            predictions=p, calls=calls[calls["model"].isin(models)],
                            fits=fits[fits["model"].isin(models)])


def show(frame: pd.DataFrame, columns: tuple[str, ...] | list[str]) -> str:
    cols = [c for c in columns if c in frame]
    out = pd.DataFrame({LABELS.get(c, c): [format_value(c, v) for v in frame[c]] for c in cols})
    return out.to_string(index=False)


def _coverage(preds: pd.DataFrame, rows: int) -> pd.Series:
    return preds.groupby("model")["ok"].sum() / max(rows, 1)


def report_device(device: str, args: argparse.Namespace) -> Scored | None:
    data = Dataset.read(ROOT / "data" / device)
    if args.quick:
        data = data.subset([k for k in QUICK if k in data.kernels()])
    data, what = select_rows(data, args.rows, args.per_kernel, device)
    singles = [n for n in (args.models.split(",") if args.models else list_predictors())
               if n != "combined"]
    print(f"\n== {device}: {len(data.times)} rows ({what}), {data.times['kernel'].nunique()} "
          f"kernels, {args.folds} folds by kernel", flush=True)
    runs = [(n, model_for(n, device)) for n in singles + ["combined"]]
    scores = score(data, runs, args.folds, args.cache)
    coverage = _coverage(scores[0], len(data.times))
    compared = [n for n in singles if coverage.get(n, 0) >= COVERAGE]
    if args.extra_bases:
        bases = compared if args.extra_bases == "compared" else args.extra_bases.split(",")
        extra = score(data, [("combined+", get_predictor("combined", bases=tuple(bases)))],
                      args.folds, args.cache)
        print(f"combined+ bases: {', '.join(bases)}")
        scores = tuple(pd.concat([a, b]) for a, b in zip(scores[:3], extra[:3])) + (
            {**scores[3], **extra[3]},)
    if args.accuracy_out is not None:
        write_accuracy(args.accuracy_out, device, what, args, scores[0], coverage)
    return summarise(device, data, *scores, compared, singles, coverage, args.folds)


def write_accuracy(path: Path, device: str, what: str, args: argparse.Namespace,
                   preds: pd.DataFrame, coverage: pd.Series) -> None:
    """Each single model's held-out error on the rows it answered, with how it was
    measured, written whole or not at all."""
    ok = preds[preds["ok"] & (preds["model"] != "combined")]
    models = {
        name: {"mape_pct": round(float(group["ape_pct"].mean()), 2),
               "median_ape_pct": round(float(group["ape_pct"].median()), 2),
               "rows": int(len(group)), "kernels": int(group["kernel"].nunique()),
               "coverage_pct": round(100 * float(coverage.get(name, 0.0)), 1)}
        for name, group in ok.groupby("model")}
    table = {"dataset": f"data/{device}", "rows": what, "folds": f"{args.folds} by kernel",
             "measured_at": time.strftime("%Y-%m-%d"),
             "command": f"python benchmarks/zoo_accuracy.py --device {device} "
                        f"--per-kernel {args.per_kernel} --rows {args.rows} "
                        f"--accuracy-out {path.name}",
             "models": models}
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def common_rows(preds: pd.DataFrame, models: list[str]) -> set[str]:
    keys = None
    for model in models:
        p = preds[(preds["model"] == model) & preds["ok"]]
        got = set(_key(p))
        keys = got if keys is None else keys & got
    return keys or set()


def summarise(device: str, data: Dataset, preds: pd.DataFrame, calls: pd.DataFrame,
              fits: pd.DataFrame, info: dict, compared: list[str], singles: list[str],
              coverage: pd.Series, folds: str) -> Scored | None:
    combos = [m for m in ("combined", "combined+") if m in info]
    keys = common_rows(preds, compared + combos)
    result = restricted(device, folds, preds, calls, fits, info, compared + combos, keys)
    print(f"compared (predict >= {COVERAGE:.0%} of the rows): {', '.join(compared) or 'none'}")
    print(f"common rows: {len(keys)} of {len(data.times)}, "
          f"{result.predictions['kernel'].nunique()} kernels")
    print(show(result.per_model, MODEL_COLUMNS))
    print("\nthe survey's Table 2, measured (kerncast evaluate's comparison table):")
    print(show(result.comparison, list(result.comparison.columns)))
    _own_rows(device, folds, preds, calls, fits, info, singles, compared, coverage)
    zoo = survey_models(singles)
    scored = [n for n in zoo if coverage.get(n, 0) > 0]
    silent = [n for n in zoo if n not in scored]
    print(f"\nsurvey models registered: {', '.join(zoo)}; scored here: {len(scored)}"
          + (f" ({', '.join(silent)} predicted none of these rows)" if silent else ""))
    return _verdict(device, result.per_model, compared, scored)


def _own_rows(device: str, folds: str, preds: pd.DataFrame, calls: pd.DataFrame,
              fits: pd.DataFrame, info: dict, singles: list[str], compared: list[str],
              coverage: pd.Series) -> None:
    others = [n for n in singles if n not in compared]
    if not others:
        return
    print("\non their own rows (models that predict fewer rows), with combined on the same rows:")
    table = []
    for name in others:
        keys = common_rows(preds, [name, "combined"])
        got = restricted(device, folds, preds, calls, fits, info, [name, "combined"],
                         keys).per_model
        row = got.set_index("model")
        table.append({"model": name, "coverage_pct": 100 * coverage.get(name, 0.0),
                      "rows": len(keys), "mape_pct": row.loc[name, "mape_pct"] if keys else math.nan,
                      "median_ape_pct": row.loc[name, "median_ape_pct"] if keys else math.nan,
                      "combined_mape_pct": row.loc["combined", "mape_pct"] if keys else math.nan,
                      "error": _first_error(preds, name)})
    print(pd.DataFrame(table).to_string(index=False, float_format=lambda v: f"{v:.1f}"))


def _first_error(preds: pd.DataFrame, name: str) -> str:
    errors = preds.loc[(preds["model"] == name) & ~preds["ok"], "error"].dropna()
    return str(errors.iloc[0])[:70] if len(errors) else ""


def _verdict(device: str, per_model: pd.DataFrame, compared: list[str],
             scored: list[str]) -> Scored | None:
    table = per_model.set_index("model")
    if not compared or "combined" not in table.index:
        print("no single model predicts the rows: nothing to compare")
        return None
    mapes = table.loc[compared, "mape_pct"]
    best, best_mape = str(mapes.idxmin()), float(mapes.min())
    print()
    for label in [m for m in ("combined", "combined+") if m in table.index]:
        mape = float(table.loc[label, "mape_pct"])
        cut = 1.0 - mape / best_mape
        change = f"{100 * cut:.1f}% lower" if cut >= 0 else f"{-100 * cut:.1f}% higher"
        print(f"best single: {best} {best_mape:.1f}%; {label}: {mape:.1f}% ({change}); target "
              f"(at least {TARGET_REDUCTION:.0%} lower): "
              f"{'met' if cut >= TARGET_REDUCTION else 'not met'}")
    return Scored(device, scored, best, best_mape, float(table.loc["combined", "mape_pct"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="h100", choices=("h100", "h200", "all"))
    parser.add_argument("--quick", action="store_true", help=f"only {len(QUICK)} kernels")
    parser.add_argument("--folds", default="5", help="folds by kernel, or 'kernel' (one each)")
    parser.add_argument("--rows", default="auto", choices=("auto", "counters", "all"))
    parser.add_argument("--per-kernel", type=int, default=3,
                        help="configurations per kernel and size (0: all)")
    parser.add_argument("--models", help="comma-separated models (default: every registered)")
    parser.add_argument("--extra-bases", help="also score combined with these bases "
                        "('compared': every compared model)")
    parser.add_argument("--cache", type=Path, help="keep each model's scores here and reuse "
                        "them for the same rows and folds (delete it after changing a model)")
    parser.add_argument("--accuracy-out", type=Path, help="write each model's held-out MAPE "
                        "on the rows it answered as JSON (what 'predict --model auto' ranks "
                        "by; one device)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    devices = ("h100", "h200") if args.device == "all" else (args.device,)
    results = [report_device(d, args) for d in devices]
    print(f"\ntime: {time.perf_counter() - start:.0f} s")
    first = results[0]
    if first is None:
        print("zoo models: 0 best single: none nan% combined: nan%")
        return 1
    scored = sorted({name for r in results if r is not None for name in r.zoo_scored})
    print(f"survey models scored on {' or '.join(devices)}: {len(scored)} ({', '.join(scored)})")
    print(f"zoo models: {len(scored)} best single: {first.best} "
          f"{first.best_mape:.1f}% combined: {first.combined_mape:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
