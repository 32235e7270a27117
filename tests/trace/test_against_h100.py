"""The trace's memory totals equal Nsight Compute's counters measured on an H100.

The fixture holds counters of the cases of ``tools/trace_counters.py``; the cases
whose kernels live in this repository (the micro-kernels, the emulator's test
kernels, the corpus's matmul) are rebuilt here, emulated and compared metric by
metric. Known, explained differences are listed in ``EXPECTED_DIFFERENCES``.
"""

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kerncast.emu import emulate
from kerncast.ptx import parse
from kerncast.trace import kernel_totals

pytestmark = pytest.mark.toolchain

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "counters_h100.csv"
EXACT = (
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)
# ptxas keeps these kernels' small local arrays in registers: no local traffic on the GPU.
EXPECTED_DIFFERENCES = {
    ("localmem", "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"),
    ("localmem", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"),
    ("local_array", "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"),
    ("local_array", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"),
}


def _tool():
    spec = importlib.util.spec_from_file_location("trace_counters",
                                                  ROOT / "tools" / "trace_counters.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measured() -> dict[str, dict[str, float]]:
    lines = [line for line in FIXTURE.read_text().splitlines() if not line.startswith("#")]
    out: dict[str, dict[str, float]] = {}
    for row in csv.DictReader(lines):
        out.setdefault(row["case"], {})[row["metric"]] = float(row["value"])
    return out


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    tool = _tool()
    root = tmp_path_factory.mktemp("cases")
    built = tool._micro_cases(root) + tool._test_cases(root)
    built += [c for c in tool._corpus_cases(root, [None]) if c["name"].startswith(
        "corpus_matmul")]
    return root, built


def test_fixture_covers_the_cases(cases):
    measured = _measured()
    _, built = cases
    assert {c["name"] for c in built} <= set(measured)
    assert len(measured) == 92


def test_memory_totals_equal_the_measured_counters(cases):
    root, built = cases
    measured = _measured()
    wrong = []
    for case in built:
        args = [np.load(root / a["array"]) if "array" in a else
                np.dtype(a["dtype"]).type(a["scalar"]) for a in case["args"]]
        result = emulate(parse((root / case["ptx"]).read_text()),
                         (case["grid"], case["block"], case["shared"]), args,
                         entry=case["entry"])
        totals = kernel_totals(result.trace)
        for metric in EXACT:
            want = measured[case["name"]][metric]
            if totals[metric] != want and (case["name"], metric) not in EXPECTED_DIFFERENCES:
                wrong.append((case["name"], metric, want, totals[metric]))
    assert wrong == []


def test_bfs_frontier_store_sectors_depend_on_the_schedule():
    """bfs_frontier_expand stores ``level[u]`` wherever its load of ``level[u]`` still
    reads -1: how many threads store depends on how soon they see the other threads'
    stores, so its store sectors change with the schedule (the H100 gave 1270 to 1324
    over 30 launches, the fixture 1306), while its loads, which every edge makes, equal
    the measured count under any schedule (docs/emulator.md, "Schedule-dependent
    counts")."""
    from kerncast.emu import emulate_corpus

    ld, st = EXACT[1], EXACT[3]
    measured = _measured()["corpus_bfs_frontier_expand"]
    together = emulate_corpus("bfs_frontier_expand", "small")
    apart = emulate_corpus("bfs_frontier_expand", "small", blocks=together.blocks[::-1],
                           batch_threads=together.launch.threads_per_block)
    assert together.ok and apart.ok
    a, b = kernel_totals(together.trace), kernel_totals(apart.trace)
    assert a[ld] == b[ld] == measured[ld] == 17329
    assert a[st] != b[st]
    # Every store of a lockstep emulation is seen by every warp at the next iteration;
    # on the GPU stores take hundreds of cycles to reach other SMs, so more threads
    # still read -1 and store.
    assert max(a[st], b[st]) < 0.6 * measured[st]
