"""Check the emulator's trace totals against Nsight Compute on a real GPU.

Three steps::

    # here (no GPU): compile the kernels, generate inputs, write the cases
    PYTHONPATH=src python tools/trace_counters.py build .ncucheck
    # on a GPU machine with CuPy and ncu (kerncast is not needed there)
    ncu --metrics $(python3 tools/trace_counters.py metrics) --csv \
        --log-file counters.csv python3 tools/trace_counters.py run .ncucheck
    # here again: emulate every case and print measured against emulated
    PYTHONPATH=src python tools/trace_counters.py compare .ncucheck counters.csv

Cases: the micro-kernels of tools/trace_kernels.cu (strided and vector global
loads, shared-memory strides at 32, 64 and 128 bits, local arrays, atomics), the
emulator's test kernels (tests/emu/kernels.cu), the speed benchmark's kernels and
every corpus kernel (CUDA, size small, default configuration).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

METRICS = (
    "smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct",
)


# -- build (here) ----------------------------------------------------------------------


def _micro_cases(root: Path) -> list[dict]:
    rng = np.random.default_rng(0)
    n = 4096
    cases = []
    for stride in (1, 2, 4, 8, 32):
        cases.append(("gload32", f"gload32_s{stride}", (n // 256,), (256,), 0,
                      [np.arange(n * stride + 32, dtype=np.int32), np.zeros(n, np.int32),
                       np.int32(stride), np.int32(0)]))
    cases.append(("gload32", "gload32_offset1", (n // 256,), (256,), 0,
                  [np.arange(n + 32, dtype=np.int32), np.zeros(n, np.int32), np.int32(1),
                   np.int32(1)]))
    for stride in (1, 2, 4):
        cases.append(("gload64", f"gload64_s{stride}", (n // 256,), (256,), 0,
                      [np.arange(n * stride, dtype=np.int64), np.zeros(n, np.int64),
                       np.int32(stride)]))
        cases.append(("gload128", f"gload128_s{stride}", (n // 256,), (256,), 0,
                      [np.arange(4 * n * stride, dtype=np.int32), np.zeros(4 * n, np.int32),
                       np.int32(stride)]))
    for stride in (0, 1, 2, 4, 8, 16, 32, 33):
        cases.append(("shared32", f"shared32_s{stride}", (8,), (256,), 0,
                      [np.zeros(2048, np.int32), np.int32(stride)]))
    for stride in (1, 2, 4, 16, 32):
        cases.append(("shared64", f"shared64_s{stride}", (8,), (256,), 0,
                      [np.zeros(2048, np.int64), np.int32(stride)]))
    for stride in (1, 2, 4, 8):
        cases.append(("shared128", f"shared128_s{stride}", (8,), (256,), 0,
                      [np.zeros(4 * 2048, np.int32), np.int32(stride)]))
    cases.append(("localmem", "localmem", (8,), (256,), 0,
                  [rng.integers(0, 32, 2048).astype(np.int32), np.zeros(2048, np.int32)]))
    cases.append(("atomic_one", "atomic_one", (8,), (256,), 0,
                  [np.zeros(1, np.int32), np.zeros(1, np.float32)]))
    cases.append(("atomic_spread", "atomic_spread", (8,), (256,), 0,
                  [np.zeros(64, np.int32), rng.integers(0, 64, 2048).astype(np.int32)]))
    return _write(root, "trace_kernels", Path(__file__).with_name("trace_kernels.cu"), cases)


def _test_cases(root: Path) -> list[dict]:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 100, 1024).astype(np.int32)
    f = rng.standard_normal(1024).astype(np.float32)
    cases = [
        ("if_else", "if_else", (8,), (128,), 0, [x, np.zeros(2048, np.int32)]),
        ("nested_break", "nested_break", (8,), (128,), 0, [x % 40, np.zeros(1024, np.int32)]),
        ("block_sum", "block_sum", (4,), (256,), 0, [f, np.zeros(4, np.float32)]),
        ("calls", "calls", (8,), (128,), 0, [f, np.array([1, -2, 0.5, 3], np.float32),
                                             np.zeros(1024, np.float32), np.int32(4)]),
        ("local_array", "local_array", (8,), (128,), 0, [x, np.zeros(1024, np.int32)]),
        ("shared_histogram", "shared_histogram", (8,), (128,), 0,
         [x, np.zeros(16, np.int32)]),
        ("shuffles", "shuffles", (8,), (128,), 0, [x, np.zeros(6 * 1024, np.int32)]),
        ("warp_sum", "warp_sum", (8,), (128,), 0, [f, np.zeros(32, np.float32)]),
        ("vectors_const", "vectors_const", (2,), (128,), 0,
         [rng.standard_normal(1024).astype(np.float32), np.zeros(512, np.float32),
          np.zeros(1, np.int32)]),
        ("dynamic_shared", "dynamic_shared", (1,), (128,), 512, [x[:128], np.zeros(128, np.int32)]),
    ]
    source = Path(__file__).resolve().parents[1] / "tests" / "emu" / "kernels.cu"
    return _write(root, "test_kernels", source, cases)


def _corpus_cases(root: Path, roots: list) -> list[dict]:
    from kerncast.corpus import list_kernels, make_args
    from kerncast.frontend import compile as compile_source

    out, seen = [], set()
    for kernels_root in roots:
        for kernel in list_kernels(kernels_root):
            if kernel.name in seen or "cuda" not in kernel.languages:
                continue
            seen.add(kernel.name)
            config = kernel.launch("small")
            defines = {k: int(v) for k, v in config.defines.items()}
            ptx = compile_source(kernel.source_path("cuda"), lang="cuda", defines=defines).ptx
            name = f"corpus_{kernel.name}"
            (root / f"{name}.ptx").write_text(ptx)
            args = make_args(kernel, config, seed=0)
            values = [args[a.name] for a in kernel.spec.args]
            grid = tuple(config.grid) + (1,) * (3 - len(config.grid))
            block = tuple(config.block) + (1,) * (3 - len(config.block))
            out.append(_case(root, name, f"{name}.ptx", kernel.entry, grid, block,
                             config.dynamic_shared, values))
    return out


def _case(root: Path, name: str, ptx: str, entry: str, grid, block, shared: int,
          values: list) -> dict:
    args = []
    for k, value in enumerate(values):
        if isinstance(value, np.ndarray):
            file = f"{name}_arg{k}.npy"
            np.save(root / file, value)
            args.append({"array": file})
        else:
            args.append({"scalar": value.item(), "dtype": np.asarray(value).dtype.name})
    return {"name": name, "ptx": ptx, "entry": entry, "grid": list(grid), "block": list(block),
            "shared": int(shared), "args": args}


def _write(root: Path, stem: str, source: Path, cases: list) -> list[dict]:
    from kerncast.frontend import compile as compile_source

    (root / f"{stem}.ptx").write_text(compile_source(source, lang="cuda").ptx)
    out = []
    for entry, name, grid, block, shared, values in cases:
        grid = tuple(grid) + (1,) * (3 - len(grid))
        block = tuple(block) + (1,) * (3 - len(block))
        out.append(_case(root, name, f"{stem}.ptx", entry, grid, block, shared, values))
    return out


def build(root: Path, corpus_roots: list) -> None:
    root.mkdir(parents=True, exist_ok=True)
    cases = _micro_cases(root) + _test_cases(root) + _corpus_cases(root, corpus_roots or
                                                                  [None])
    (root / "cases.json").write_text(json.dumps(cases, indent=1))
    print(f"{len(cases)} cases in {root}")


# -- run (on the GPU; CuPy and NumPy only) ----------------------------------------------


def run(root: Path) -> None:
    import cupy as cp

    cases = json.loads((root / "cases.json").read_text())
    modules: dict[str, object] = {}
    for case in cases:
        module = modules.get(case["ptx"])
        if module is None:
            module = modules[case["ptx"]] = cp.RawModule(path=str(root / case["ptx"]))
        func = module.get_function(case["entry"])
        args = []
        for arg in case["args"]:
            if "array" in arg:
                args.append(cp.asarray(np.load(root / arg["array"])))
            else:
                args.append(np.dtype(arg["dtype"]).type(arg["scalar"]))
        func(tuple(case["grid"]), tuple(case["block"]), tuple(args),
             shared_mem=case["shared"])
        cp.cuda.Device().synchronize()
        print(case["name"], flush=True)


# -- compare (here) ---------------------------------------------------------------------


def read_ncu(path: Path) -> list[dict[str, float]]:
    """Rows of an ``ncu --csv`` log: one dict of metric values per profiled launch."""
    import csv

    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    launches: dict[int, dict] = {}
    for row in csv.DictReader(lines):
        entry = launches.setdefault(int(row["ID"]), {"kernel": row["Kernel Name"]})
        entry[row["Metric Name"]] = float(row["Metric Value"].replace(",", "") or "nan")
    return [launches[k] for k in sorted(launches)]


def emulated(root: Path, case: dict, **options) -> dict[str, float]:
    """Trace totals and SASS estimate of ``case`` emulated (``options`` go to ``emulate``:
    another block order or batching, say)."""
    from kerncast.emu import emulate
    from kerncast.ptx import parse
    from kerncast.trace import estimate_sass, kernel_totals

    args = [np.load(root / a["array"]) if "array" in a else np.dtype(a["dtype"]).type(
        a["scalar"]) for a in case["args"]]
    module = parse((root / case["ptx"]).read_text())
    result = emulate(module, (case["grid"], case["block"], case["shared"]), args,
                     entry=case["entry"], **options)
    totals = kernel_totals(result.trace)
    sass = estimate_sass(result.trace)
    totals["sass_estimate"] = sass["total"]
    totals["sass_method"] = sass["method"]
    return totals


def compare(root: Path, log: Path) -> list[dict]:
    cases = json.loads((root / "cases.json").read_text())
    measured = read_ncu(log)
    if len(measured) != len(cases):
        raise SystemExit(f"{len(measured)} profiled launches for {len(cases)} cases")
    rows = []
    for case, got in zip(cases, measured):
        emu = emulated(root, case)
        row = {"case": case["name"]}
        for metric in METRICS:
            if metric in got:
                row[metric] = (got[metric], emu.get(metric, float("nan")))
        row["sass"] = (got.get("smsp__inst_executed.sum", float("nan")), emu["sass_estimate"])
        rows.append(row)
    return rows


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in ("build", "run", "compare", "metrics"):
        raise SystemExit(__doc__)
    if argv[0] == "metrics":
        print(",".join(METRICS))
    elif argv[0] == "build":
        build(Path(argv[1]), [Path(p) for p in argv[2:]] or [None])
    elif argv[0] == "run":
        run(Path(argv[1]))
    else:
        for row in compare(Path(argv[1]), Path(argv[2])):
            print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv[1:])
