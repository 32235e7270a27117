"""Trace-only emulation against full emulation, over the corpus.

    python tools/check_value_slice.py [--size small] [--kernels a,b] [--inputs generated|zeros]

Emulates every corpus kernel (all blocks, default launch, each language given or the
first: CUDA where there is one) twice on the same inputs, computing every value and
computing only the values the trace needs (``emulate(..., values="needed")``), and
prints per kernel whether the traces are equal (instruction streams, active lanes,
memory accesses, barriers, totals), both run times and how many instructions the
slice skipped or reduced to their addresses. The last line counts the kernels whose
traces differ. No GPU needed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))


def _check(kernel, size: str, inputs: str) -> tuple[list[str], str]:
    from kerncast.corpus import make_args
    from kerncast.emu import emulate
    from kerncast.emu._program import build_program
    from kerncast.emu._slice import ADDRESSES, SKIP, value_slice
    from kerncast.frontend import compile as compile_source
    from kerncast.ptx import parse
    from tests.emu.trace_diff import trace_differences

    config = kernel.launch(size)
    language = "cuda" if "cuda" in kernel.languages else kernel.languages[0]
    defines = {k: (int(v) if float(v).is_integer() else v) for k, v in config.defines.items()}
    module = parse(compile_source(kernel.source_path(language), lang=language,
                                  defines=defines).ptx)
    args = make_args(kernel, config, seed=0)
    values = [args[a.name] for a in kernel.spec.args]
    if inputs == "zeros":
        values = [np.zeros_like(v) if isinstance(v, np.ndarray) else v for v in values]
    began = time.perf_counter()
    full = emulate(module, config, values, entry=kernel.entry)
    middle = time.perf_counter()
    needed = emulate(module, config, values, entry=kernel.entry, values="needed")
    end = time.perf_counter()
    modes = value_slice(build_program(module.function(kernel.entry), module)).modes
    return trace_differences(full.trace, needed.trace), (
        f"full {middle - began:6.2f} s  needed {end - middle:6.2f} s  skipped "
        f"{modes.count(SKIP)}, addresses only {modes.count(ADDRESSES)} of {len(modes)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="small")
    ap.add_argument("--kernels", default="")
    ap.add_argument("--inputs", default="generated", choices=("generated", "zeros"))
    args = ap.parse_args()
    from kerncast.corpus import get_kernel, list_kernels

    names = [k for k in args.kernels.split(",") if k]
    kernels = [get_kernel(n) for n in names] if names else list_kernels()
    bad = failed = 0
    for kernel in kernels:
        try:
            diffs, note = _check(kernel, args.size, args.inputs)
        except Exception as exc:  # noqa: BLE001 (a kernel that fails is a result)
            failed += 1
            print(f"{kernel.name:28s} FAILED {type(exc).__name__}: {str(exc)[:160]}", flush=True)
            continue
        bad += bool(diffs)
        print(f"{kernel.name:28s} {'same' if not diffs else 'DIFFERENT'}  {note}"
              + ("".join(f"\n    {d}" for d in diffs)), flush=True)
    print(f"kernels {len(kernels)}, traces different {bad}, failed {failed}")


if __name__ == "__main__":
    main()
