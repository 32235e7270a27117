"""Static predictor speed: seconds to predict one launch of every corpus kernel.

    python benchmarks/static_speed.py [--device h100] [--kernels a,b] [--size large]
                                      [--keep-cache]

Predicts, one after the other in this process, every corpus kernel at its largest size
(or ``--size``) with its default launch configuration on ``--device``, after one
untimed prediction of a small kernel (so that imports and the calibration are loaded),
twice:

- cold: the first prediction of each kernel, with an empty disk cache
  (``$KERNCAST_CACHE`` set to a new temporary directory unless ``--keep-cache``), so
  that it pays for compiling the source to PTX, ptxas and nvdisasm;
- warm: the same launch again in the same process, as a sweep or a repeated
  prediction runs it (the compiled module and the SASS come from the caches, and a
  kernel whose trace depends on its data finds its generated inputs kept, as a sweep of
  one problem does: they are generated again, untimed, just before, because the kept
  problem is by then another kernel's). Each such kernel's generation time is printed.

Prints per kernel both times and the predicted kernel time, fastest first, then the
kernels that failed with their error, a line per pass, and last
``static seconds/prediction median: <M> p95: <P>`` over the cold predictions that
succeeded. No GPU needed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

WARM_UP = "copy_vector"


def _largest_size(kernel, wanted: str | None) -> str:
    from kerncast.corpus import SIZE_NAMES

    if wanted:
        return wanted
    return [s for s in SIZE_NAMES if s in kernel.spec.sizes][-1]


def _language(kernel) -> str:
    return "cuda" if "cuda" in kernel.languages else kernel.languages[0]


def _generate(kernel, size: str) -> float:
    """Generate (and keep) a corpus launch's inputs, as a sweep of the problem holds them
    (large buffers whose generator makes them a piece at a time as pieces, made as an
    emulation reaches them); the seconds it took."""
    started = time.perf_counter()
    _, launch = kernel.instance(kernel.launch(size), _language(kernel))
    launch.materialise(generate=True, chunked=True)
    return time.perf_counter() - started


def _one(kernel, size: str, device: str) -> dict:
    from kerncast.sim import predict_launch

    language = _language(kernel)
    started = time.perf_counter()
    try:
        config = kernel.launch(size)
        result = predict_launch(*kernel.instance(config, language), device)
    except Exception as exc:  # noqa: BLE001 (a kernel the predictor fails on is a result)
        return {"kernel": kernel.name, "size": size, "seconds": time.perf_counter() - started,
                "predicted_s": float("nan"), "error": f"{type(exc).__name__}: {exc}"[:200]}
    return {"kernel": kernel.name, "size": size, "seconds": time.perf_counter() - started,
            "predicted_s": result.seconds, "bottleneck": result.bottleneck,
            "blocks": config.blocks, "error": "",
            "data_dependent": bool(result.based_on.get("data_dependent"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="h100", help="device name or alias (default h100)")
    ap.add_argument("--kernels", default="", help="comma-separated subset of corpus kernels")
    ap.add_argument("--size", default="", help="problem size (default: each kernel's largest)")
    ap.add_argument("--keep-cache", action="store_true",
                    help="use $KERNCAST_CACHE as it is instead of an empty one")
    args = ap.parse_args()
    if args.keep_cache:
        _run(args)
        return
    with tempfile.TemporaryDirectory(prefix="kerncast-speed-") as cache:
        os.environ["KERNCAST_CACHE"] = cache
        _run(args)


def _run(args) -> None:
    from kerncast.cli._predict import _fmt
    from kerncast.corpus import get_kernel, list_kernels
    from kerncast.sim import predict_launch

    names = [k for k in args.kernels.split(",") if k]
    kernels = [get_kernel(n) for n in names] if names else list_kernels()
    warm = get_kernel(WARM_UP)
    predict_launch(*warm.instance(warm.launch("small")), args.device)  # untimed warm-up

    results = []
    for kernel in kernels:
        results.append(_one(kernel, _largest_size(kernel, args.size), args.device))
        print(f"  {kernel.name}: {results[-1]['seconds']:.2f} s", file=sys.stderr, flush=True)
    for kernel, first in zip(kernels, results):
        first["generate_s"] = _generate(kernel, first["size"]) \
            if first.get("data_dependent") else 0.0
        first["warm_seconds"] = _one(kernel, first["size"], args.device)["seconds"]
    ok = sorted((r for r in results if not r["error"]), key=lambda r: r["seconds"])
    failed = [r for r in results if r["error"]]

    width = max([len(r["kernel"]) for r in results] + [6])
    print(f"{'kernel':{width}s} {'size':6s} {'blocks':>10s} {'cold s':>8s} {'warm s':>8s} "
          f"{'inputs s':>8s} {'predicted':>12s}  bottleneck")
    for r in ok:
        inputs = f"{r['generate_s']:8.3f}" if r["generate_s"] else f"{'':8s}"
        print(f"{r['kernel']:{width}s} {r['size']:6s} {r['blocks']:10,d} {r['seconds']:8.3f} "
              f"{r['warm_seconds']:8.3f} {inputs} {_fmt(r['predicted_s']):>12s}  "
              f"{r['bottleneck']}")
    for r in failed:
        print(f"failed: {r['kernel']} ({r['size']}) after {r['seconds']:.2f} s: {r['error']}")
    cold = np.array([r["seconds"] for r in ok]) if ok else np.array([np.nan])
    warm = np.array([r["warm_seconds"] for r in ok]) if ok else np.array([np.nan])
    print(f"device {args.device}, kernels {len(results)}, predicted {len(ok)}, "
          f"failed {len(failed)}, total {sum(r['seconds'] for r in results):.1f} s cold, "
          f"{sum(r['warm_seconds'] for r in results):.1f} s warm")
    cache = "as found" if args.keep_cache else "empty"
    print(f"cold (first prediction, disk cache {cache}) median: {np.median(cold):.3f} "
          f"p95: {np.percentile(cold, 95):.3f}")
    print(f"warm (the same launch again, its inputs kept) median: {np.median(warm):.3f} "
          f"p95: {np.percentile(warm, 95):.3f}")
    generated = [r for r in ok if r["generate_s"]]
    if generated:
        print(f"inputs generated for {len(generated)} kernels whose traces depend on their "
              f"data: {sum(r['generate_s'] for r in generated):.1f} s in all, at most "
              f"{max(r['generate_s'] for r in generated):.2f} s "
              f"({max(generated, key=lambda r: r['generate_s'])['kernel']})")
    print(f"static seconds/prediction median: {np.median(cold):.3f} "
          f"p95: {np.percentile(cold, 95):.3f}")


if __name__ == "__main__":
    main()
