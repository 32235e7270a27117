"""Nsight Compute: CSV parsing, units, metric checks, and the counters experiment end to end."""

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from kerncast.data import Dataset, metric_names
from kerncast.measure._campaign import Campaign
from kerncast.measure._ncu import (
    NcuObserver,
    parse_ncu_csv,
    parse_query_metrics,
    parse_value,
    split_metrics,
    unit_factor,
)

SAMPLE = Path("/work/wt/ncu_sample.csv")
HERE = Path(__file__).parent
FIXTURE = HERE / "ncu_sample.csv"


def test_parse_the_csv_of_a_real_run():
    results = parse_ncu_csv(FIXTURE.read_text())
    assert [r.id for r in results] == [0, 1]
    first = results[0]
    assert first.kernel_name == "f" and first.grid == "(4096, 1, 1)" and first.block == "(256, 1, 1)"
    assert first.metrics == {"dram__bytes_read.sum": 4198400.0, "sm__cycles_elapsed.avg": 10311.2,
                             "smsp__inst_executed.sum": 425984.0}


def test_profiler_lines_before_the_header_are_skipped():
    text = "==PROF== Connected to process 559\n==PROF== Disconnected\n" + FIXTURE.read_text()
    assert len(parse_ncu_csv(text)) == 2
    assert parse_ncu_csv("==ERROR== no kernels were profiled\n") == []


@pytest.mark.parametrize("value, unit, expected", [
    ("4,198,400", "byte", 4198400.0), ("1.5", "Kbyte", 1500.0), ("2", "Mbyte", 2e6),
    ("12.5", "usecond", 12.5e-6), ("3", "nsecond", 3e-9), ("7", "msecond", 7e-3),
    ("80.5", "%", 80.5), ("1.2", "Gbyte/second", 1.2e9), ("n/a", "inst", None),
    ("10,311.20", "cycle", 10311.2),
])
def test_values_are_normalised_to_base_units(value, unit, expected):
    got = parse_value(value, unit)
    if expected is None:
        assert got != got  # NaN
    else:
        assert got == pytest.approx(expected)
    assert unit_factor("inst/cycle") == 1.0


def test_metric_names_are_checked_by_base_name():
    listing = "Metric Name  Type\n----\nsmsp__inst_executed   Counter  inst  # warp instructions\n" \
              "l1tex__t_sector_hit_rate  Ratio  %  hit rate\n"
    available = parse_query_metrics(listing)
    assert available == {"smsp__inst_executed", "l1tex__t_sector_hit_rate"}
    kept, missing = split_metrics(["smsp__inst_executed.sum", "l1tex__t_sector_hit_rate.pct",
                                   "made_up__metric.sum"], available)
    assert kept == ["smsp__inst_executed.sum", "l1tex__t_sector_hit_rate.pct"]
    assert missing == ["made_up__metric.sum"]


def test_command_never_touches_clocks(tmp_path):
    observer = NcuObserver(ncu="/usr/local/cuda/bin/ncu")
    cmd = observer.command(tmp_path / "job.json", tmp_path / "log", ["matmul_tiled", "matmul_naive"])
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--kernel-name") + 1] == "regex:^(matmul_naive|matmul_tiled)$"
    assert cmd[-3:] == ["-m", "kerncast.measure._ncu_child", str(tmp_path / "job.json")]
    assert "--csv" in cmd and "--print-units" in cmd


def test_metric_set_covers_both_seed_tables():
    names = metric_names()
    for needed in ("smsp__inst_issued.sum", "smsp__inst_executed.sum",
                   "sm__warps_active.avg.pct_of_peak_sustained_active",
                   "smsp__sass_branch_targets_threads_divergent.sum",
                   "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct",
                   "dram__bytes_read.sum", "dram__bytes_write.sum",
                   "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                   "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                   "smsp__thread_inst_executed.sum", "sm__ctas_launched.sum",
                   "gpu__time_duration.sum"):
        assert needed in names
    assert len(names) == len(set(names))


@pytest.fixture
def fake_ncu(tmp_path, child_env):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ncu"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'fake_ncu.py'} \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    child_env.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    child_env.setenv("FAKE_NCU_ARGS", str(tmp_path / "ncu_args.jsonl"))
    return tmp_path / "ncu_args.jsonl"


def test_counters_campaign_end_to_end_with_a_stand_in_ncu(tmp_path, fake_ncu, child_env):
    child_env.setenv("KC_FAKE", json.dumps({"matmul_tiled:pad=1,tile=8": "compile_error"}))
    out = tmp_path / "counters"
    result = Campaign(out, device="h100", backend="tests.measure.fakes:FakeBackend",
                      experiments=["counters"], kernels=["matmul_naive", "matmul_tiled"],
                      sizes=["small"], configs="all", workers=0).run()
    assert result.remaining == 0
    counters = Dataset.read(out).counters
    tiled = counters[counters["kernel"] == "matmul_tiled"].set_index("config")
    assert tiled.loc["pad=1,tile=8", "status"] == "compile_failed"
    ok = counters[counters["status"] == "ok"]
    assert len(ok) == len(counters) - 1 == 20 + 6 - 1
    assert ok["gpu__time_duration.sum"].tolist() == pytest.approx([12.5e-6] * len(ok))
    assert (ok["dram__bytes_read.sum"] == 1024500.0).all()
    assert "smsp__inst_executed_op_branch.sum" not in counters.columns
    assert set(ok["metrics_missing"]) == {"smsp__inst_executed_op_branch.sum"}
    assert (ok["ncu_kernel_name"] == ok["kernel"]).all()
    assert set(ok["backend"]) == {"ncu"} and "ncu" in ok["tool_versions"].iloc[0]
    calls = [json.loads(x) for x in fake_ncu.read_text().splitlines()]
    assert len(calls) == 2 and all("none" == c[c.index("--clock-control") + 1] for c in calls)
    assert json.loads((out / "ncu_metrics.json").read_text())["ncu_version"] == "2025.3.1.0"


def test_sampled_launches_are_profiled_outside_a_campaign(fake_ncu):
    from kerncast.corpus import get_kernel
    from kerncast.measure._counters import profile_sampled
    from tests.measure.fakes import FakeBackend

    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small")
    rows = profile_sampled(FakeBackend("h100"), "h100", kernel, config, (2, 3),
                           child_backend="tests.measure.fakes:FakeBackend")
    assert [r["sample_k"] for r in rows] == [2, 3]
    assert all(r["psat"] > 0 for r in rows)
    assert rows[0]["blocks_launched"] <= rows[1]["blocks_launched"] <= config.blocks
    assert rows[1]["gpu__time_duration.sum"] == pytest.approx(12.5e-6)
    assert rows[1]["config"] == config.label() and rows[1]["device"] == "h100-sxm"
    calls = [json.loads(x) for x in fake_ncu.read_text().splitlines()]
    assert len(calls) == 1 and calls[0][calls[0].index("--clock-control") + 1] == "none"


def test_a_sample_the_profiler_misses_is_a_clear_error(fake_ncu, child_env):
    from kerncast._errors import KerncastError
    from kerncast.corpus import get_kernel
    from kerncast.measure._counters import profile_sampled
    from tests.measure.fakes import FakeBackend

    child_env.setenv("KC_FAKE", json.dumps({"matmul_naive": "launch_error"}))
    kernel = get_kernel("matmul_naive")
    with pytest.raises(KerncastError, match="k=3 of matmul_naive"):
        profile_sampled(FakeBackend("h100", behaviours={}), "h100", kernel,
                        kernel.launch("small"), (3,),
                        child_backend="tests.measure.fakes:FakeBackend")


@pytest.mark.toolchain
def test_ones_own_launch_is_profiled_in_a_process_that_rebuilds_it(fake_ncu, tmp_path):
    """The launch is written for the profiled child (its data as .npy files) and rebuilt
    there; the counters rows are keyed by it."""
    import numpy as np

    import kerncast
    from kerncast.measure._counters import profile_job
    from kerncast.measure._job import user_job
    from tests.measure.fakes import FakeBackend

    source = tmp_path / "scale.cu"
    source.write_text('extern "C" __global__ void scale(float *x, int n) {\n'
                      '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
                      '  if (i < n) x[i] *= 2.0f;\n}\n')
    kernel = kerncast.Kernel.of("scale", source)
    launch = kerncast.Launch(16384, 128, args=(np.arange(16384 * 128, dtype=np.float32),
                                               np.int32(16384 * 128)), names=("x", "n"))
    rows = profile_job(FakeBackend("h100"), "h100", user_job(kernel, launch), (2, 3),
                       child_backend="tests.measure.fakes:FakeBackend")
    assert [r["sample_k"] for r in rows] == [2, 3]
    assert rows[0]["kernel"] == "scale" and rows[0]["blocks"] == 16384
    assert 0 < rows[0]["blocks_launched"] < rows[1]["blocks_launched"] < 16384
    assert rows[1]["gpu__time_duration.sum"] == pytest.approx(12.5e-6)


def test_counters_at_reduced_sm_counts_are_profiled_in_a_context_of_that_many(
        tmp_path, fake_ncu, child_env):
    out = tmp_path / "sweep"
    result = Campaign(out, device="h100", backend="tests.measure.fakes:FakeBackend",
                      experiments=["counters", "counters-sweep"], kernels=["matmul_naive"],
                      sizes=["small"], configs="default", sm_counts=(16, 64),
                      workers=0).run()
    assert result.remaining == 0
    counters = Dataset.read(out).counters
    assert sorted(counters["sm_count"]) == [16, 64, 132]
    assert (counters["status"] == "ok").all()
    calls = [json.loads(x) for x in fake_ncu.read_text().splitlines()]
    assert len(calls) == 3  # one profiled process per SM count
    again = Campaign(out, device="h100", backend="tests.measure.fakes:FakeBackend",
                     experiments=["counters", "counters-sweep"], kernels=["matmul_naive"],
                     sizes=["small"], configs="default", sm_counts=(16, 64), workers=0).run()
    assert again.remaining == 0 and len(Dataset.read(out).counters) == 3  # nothing twice
