"""kerncast split on the corpus: makespan against the oracle, equal and peak-rate splits.

    python benchmarks/split.py --devices cupy:0,cupy:1 [--size medium] [--kernels a,b]
        [--out data/split/NAME.parquet]

For every corpus kernel (its default launch at ``--size``; CUDA where every device runs
CUDA, else the OpenCL version), ``kerncast.split`` runs the grid across the devices with
``baselines=True``: the split kerncast chose from its samples (its first run, and timed again as
the baselines are, on warm devices: the comparison uses the latter), the equal split, the split
by peak floating-point rate, each device alone and, for two devices, the oracle (the best
of the fractions 0-100% in steps of 10%, then 2% around the best; fractions that cannot
beat the best so far are not run). Kernels that cannot be
split (global atomics, overlapping outputs, too few slices) are listed with the reason and
not counted. Rows are written as each kernel ends (``--out``: Parquet, with the devices'
names and the date), so that an interrupted run keeps what it measured; run again with
the same ``--out``, it measures only the kernels the file lacks.

Last line: ``split within 5% of oracle: N of M``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import pandas as pd  # noqa: E402

from kerncast import __version__  # noqa: E402
from kerncast._errors import KerncastError  # noqa: E402
from kerncast.corpus import list_kernels  # noqa: E402
from kerncast.split import split  # noqa: E402

TOLERANCE = 0.05


def language_for(devices: list[str]) -> str:
    return "cuda" if all(d.split(":")[0] in ("cupy", "driver") or "fakes" in d
                         for d in devices) else "opencl"


def one(kernel, devices: list[str], size: str, language: str) -> dict:
    source, launch = kernel.instance(kernel.launch(size), language)
    started = time.perf_counter()
    result = split(source, launch, devices, baselines=True)
    row = {"kernel": kernel.name, "size": size, "language": language,
           "devices": ",".join(devices),
           "device_names": ",".join(p.name for p in result.parts),
           "slices": result.slices, "makespan_s": result.makespan_s,
           "predicted_makespan_s": result.predicted_makespan_s,
           "sampling_s": result.sampling_s, "samples_reused": result.samples_reused,
           "shares": json.dumps([p.slices + p.sampled for p in result.parts]),
           "oracle_fraction": result.oracle_fraction, "checked": result.checked,
           "divided": result.divided,
           "seconds": time.perf_counter() - started, "kerncast_version": __version__,
           "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    row.update({f"{name}_s": value for name, value in result.baselines.items()})
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="cupy:0,cupy:1")
    parser.add_argument("--size", default="medium")
    parser.add_argument("--kernels", help="comma-separated corpus kernels (default: all)")
    parser.add_argument("--out", type=Path, help="Parquet file of the rows")
    args = parser.parse_args(argv)
    devices = [d.strip() for d in args.devices.split(",")]
    language = language_for(devices)
    wanted = args.kernels.split(",") if args.kernels else None
    kernels = [k for k in list_kernels() if (wanted is None or k.name in wanted)
               and language in k.languages]
    rows, refused = [], []
    if args.out is not None and args.out.exists():  # a run cut short goes on where it was
        rows = pd.read_parquet(args.out).to_dict("records")
        other = {(r["devices"], r["size"]) for r in rows} - {(",".join(devices), args.size)}
        if other:
            sys.exit(f"{args.out} holds rows of {sorted(other)[0][0]} at size "
                     f"{sorted(other)[0][1]}; give another --out to measure "
                     f"{','.join(devices)} at size {args.size}")
        done = {row["kernel"] for row in rows}
        print(f"{args.out}: {len(done)} kernels measured before; measuring the rest",
              file=sys.stderr, flush=True)
        kernels = [k for k in kernels if k.name not in done]
    for kernel in kernels:
        try:
            row = one(kernel, devices, args.size, language)
        except KerncastError as exc:
            refused.append((kernel.name, str(exc).splitlines()[0][:120]))
            print(f"{kernel.name}: not split: {refused[-1][1]}", file=sys.stderr, flush=True)
            continue
        rows.append(row)
        ratio = row["makespan_s"] / row["oracle_s"] if "oracle_s" in row else float("nan")
        print(f"{kernel.name}: makespan {row['makespan_s'] * 1e3:.3f} ms, oracle "
              f"{row.get('oracle_s', float('nan')) * 1e3:.3f} ms ({ratio:.2f}x), equal "
              f"{row['equal_s'] * 1e3:.3f} ms, sampling {row['sampling_s'] * 1e3:.1f} ms",
              file=sys.stderr, flush=True)
        if args.out is not None:
            _write(pd.DataFrame(rows), args.out)
    frame = pd.DataFrame(rows)
    if frame.empty:
        print("split within 5% of oracle: 0 of 0")
        return 1
    show = ["kernel", "slices", "shares", "makespan_s", "kerncast (warm)_s", "oracle_s",
            "equal_s", "peak_s", "sampling_s"]
    print(frame[[c for c in show if c in frame]].to_string(index=False))
    for name, why in refused:
        print(f"not split: {name}: {why}")
    if "oracle_s" not in frame:
        print(f"split within 5% of oracle: - of {len(frame)} (no oracle for "
              f"{len(devices)} devices)")
        return 0
    # the baselines are medians of launches on warm devices: kerncast's split timed so
    warm = frame["kerncast (warm)_s"] if "kerncast (warm)_s" in frame else frame["makespan_s"]
    within = int((warm <= (1 + TOLERANCE) * frame["oracle_s"]).sum())
    share = (frame["sampling_s"] / (frame["sampling_s"] + frame["makespan_s"])).median()
    print(f"median share of the sampling's wall time in sampling + makespan: {share:.0%}")
    print(f"split within 5% of oracle: {within} of {len(frame)}")
    return 0


def _write(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part")
    frame.to_parquet(tmp, index=False)
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
