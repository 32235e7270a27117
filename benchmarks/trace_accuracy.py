"""The emulator's trace totals against Nsight Compute on an H100, case by case.

    python benchmarks/trace_accuracy.py [--cases corpus_] [--workdir DIR]

Rebuilds the cases of ``tools/trace_counters.py`` (micro-kernels, the emulator's test
kernels, every CUDA corpus kernel at size small, default configuration; same seeded
inputs as when they were measured), emulates each, and prints measured against
emulated global load and store sectors and executed warp instructions (the PTX
stream mapped onto the real SASS that ptxas makes of each kernel for sm_90 by
``kerncast.trace.estimate_sass``; "factors" in the method column where ptxas or
nvdisasm is missing and the per-class factor model answered) from the committed
counters (``tests/trace/fixtures/counters_h100.csv``). Last line::

  trace sectors within 5%: <A>/<N> (<S> of the misses schedule-dependent) sass within 15%: <B>/<N>

A case counts as within 5% when both its load and store sectors are. A case that
misses is emulated again one block at a time in reverse block order; where its
sectors then change ("schedule" column), the kernel's memory work depends on how
its threads' accesses interleave (threads reading what other threads store,
without synchronisation), so the emulator's schedule and the GPU's timing give
different counts (docs/emulator.md, "Schedule-dependent counts").
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
FIXTURE = ROOT / "tests" / "trace" / "fixtures" / "counters_h100.csv"
LD = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
WARP = "smsp__inst_executed.sum"


def _tool():
    spec = importlib.util.spec_from_file_location("trace_counters",
                                                  ROOT / "tools" / "trace_counters.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measured() -> pd.DataFrame:
    frame = pd.read_csv(FIXTURE, comment="#")
    return frame.pivot_table(index="case", columns="metric", values="value", aggfunc="first")


def _ratio(got: float, want: float) -> float:
    if want == 0:
        return 1.0 if got == 0 else float("inf")
    return got / want


def _schedule_dependent(tool, root: Path, case: dict, emu: dict) -> bool:
    """Whether ``case``'s global sectors change when its blocks run one at a time, last
    block first (instead of all together)."""
    blocks = int(np.prod(case["grid"]))
    threads = int(np.prod(case["block"]))
    again = tool.emulated(root, case, blocks=np.arange(blocks)[::-1], batch_threads=threads)
    return any(again[metric] != emu[metric] for metric in (LD, ST))


def _row(name: str, emu: dict, meas: pd.Series) -> dict:
    row = {"case": name}
    for label, metric in (("ld sectors", LD), ("st sectors", ST)):
        row[f"{label} measured"] = float(meas.get(metric, np.nan))
        row[f"{label} emulated"] = float(emu.get(metric, np.nan))
    row["warp instr measured"] = float(meas.get(WARP, np.nan))
    row["sass estimate"] = float(emu["sass_estimate"])
    row["method"] = emu.get("sass_method", "")
    row["sectors ok"] = all(abs(_ratio(row[f"{k} emulated"], row[f"{k} measured"]) - 1) <= 0.05
                            for k in ("ld sectors", "st sectors"))
    row["sass/measured"] = _ratio(row["sass estimate"], row["warp instr measured"])
    row["sass ok"] = abs(row["sass/measured"] - 1) <= 0.15
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="", help="only cases whose name starts with this")
    ap.add_argument("--workdir", default="", help="where to build the cases (default: temp)")
    args = ap.parse_args()
    tool = _tool()
    measured = _measured()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.workdir or tmp)
        root.mkdir(parents=True, exist_ok=True)
        cases = tool._micro_cases(root) + tool._test_cases(root) + tool._corpus_cases(root, [None])
        rows = []
        for case in cases:
            if not case["name"].startswith(args.cases) or case["name"] not in measured.index:
                continue
            emu = tool.emulated(root, case)
            row = _row(case["name"], emu, measured.loc[case["name"]])
            row["schedule"] = ("dependent" if not row["sectors ok"] and
                               _schedule_dependent(tool, root, case, emu) else "")
            rows.append(row)
    table = pd.DataFrame(rows).set_index("case")
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(table.to_string(float_format=lambda v: f"{v:.3g}"))
    n = len(table)
    dependent = int((table["schedule"] == "dependent").sum())
    print(f"trace sectors within 5%: {int(table['sectors ok'].sum())}/{n} "
          f"({dependent} of the misses schedule-dependent) "
          f"sass within 15%: {int(table['sass ok'].sum())}/{n}")


if __name__ == "__main__":
    main()
