"""Sampled runs: which blocks, how many, warm and cold, and when to stop."""

import dataclasses
import itertools

import pytest

from kerncast.corpus import get_kernel
from kerncast.measure._samples import measure_samples, multipliers, sampled_grid
from kerncast.measure._timing import TimingPolicy

from .fakes import FakeBackend

QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=6, budget_s=0.2)


def test_multipliers_are_one_to_five_then_doubling():
    assert list(itertools.islice(multipliers(), 9)) == [1, 2, 3, 4, 5, 10, 20, 40, 80]


@pytest.mark.parametrize("grid, blocks, expected", [
    ((1000,), 264, (264, 1, 1)),            # 1-D: exactly the first K blocks
    ((128, 128), 264, (128, 3, 1)),         # 2-D: whole rows, grid_y' = ceil(K / grid_x)
    ((128, 128), 50, (128, 1, 1)),          # less than a row is a whole row
    ((16, 16, 8), 600, (16, 16, 3)),        # 3-D: whole x-y planes
    ((16, 16, 8), 40, (16, 3, 1)),
    ((10, 10), 5000, (10, 10, 1)),          # never beyond the full grid
])
def test_sampled_grids_are_whole_rows_of_blocks(grid, blocks, expected):
    assert sampled_grid(grid, blocks) == expected


@pytest.mark.parametrize("grid, blocks, expected", [
    ((128, 128), 50, (50, 1, 1)),           # part of the first row
    ((5242880, 2), 1056, (1056, 1, 1)),     # copy_strided: a row is half the grid
    ((16, 16, 8), 10, (10, 1, 1)),
    ((128, 128), 264, (128, 3, 1)),         # a row or more: whole rows as before
    ((16, 16, 8), 600, (16, 16, 3)),
])
def test_samples_with_block_offsets_may_cut_a_row(grid, blocks, expected):
    assert sampled_grid(grid, blocks, partial=True) == expected


def test_a_ladder_of_partial_rows_climbs_where_one_row_holds_waves():
    from kerncast.measure._samples import ladder

    config = dataclasses.replace(get_kernel("copy_vector").launch("small"), grid=(5242880, 2))
    assert [r["k"] for r in ladder(config, 8, 132)] == [1]  # one row: half the grid
    rungs = ladder(config, 8, 132, partial=True)
    assert [r["k"] for r in rungs][:6] == [1, 2, 3, 4, 5, 10]
    assert all(r["sample_grid_y"] == 1 for r in rungs)


def test_samples_stop_at_five_percent_of_the_grid():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})  # 64 x 2048 = 131072 blocks
    backend = FakeBackend(sm_count=8, times=[20e-6], behaviours={"matmul_naive": "unwritten"})
    rows = measure_samples(backend, kernel, config, policy=QUICK, seed=1)
    assert {r["status"] for r in rows} == {"ok"}
    assert rows[0]["psat"] == 32  # 32-thread blocks, 32 registers: the limit of 32 per SM
    ks = sorted({r["k"] for r in rows})
    assert ks == [1, 2, 3, 4, 5, 10, 20, 40]  # 8 SMs x 32 = 256 blocks a wave
    fraction = {r["k"]: r["grid_fraction"] for r in rows}
    assert fraction[20] < 0.05 <= fraction[40]
    assert rows[0]["blocks_requested"] == 256 and rows[0]["blocks_launched"] == 256
    assert all(r["sample_grid_x"] == 64 and r["blocks_launched"] % 64 == 0 for r in rows)
    assert {r["l2_state"] for r in rows} == {"warm", "cold"}
    assert backend.events.count("flush") > 0  # cold runs flushed the L2 first


def test_samples_stop_once_a_sample_takes_200_microseconds():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})
    backend = FakeBackend(times=[300e-6], behaviours={"matmul_naive": "unwritten"})
    rows = measure_samples(backend, kernel, config, policy=QUICK)
    assert sorted({r["k"] for r in rows}) == [1, 2, 3, 4, 5]


def test_sample_rows_carry_the_full_runs_key():
    kernel = get_kernel("matmul_tiled")
    config = kernel.launch("large")
    rows = measure_samples(FakeBackend(behaviours={"matmul_tiled": "unwritten"}), kernel, config,
                           policy=QUICK)
    assert rows
    assert {(r["kernel"], r["size"], r["config"], r["device"], r["sm_count"]) for r in rows} == \
        {("matmul_tiled", "large", "pad=0,tile=16", "h100-sxm", 132)}
    assert all(r["blocks"] == config.blocks for r in rows)


def test_a_failed_compile_is_one_sample_row():
    kernel = get_kernel("matmul_tiled")
    rows = measure_samples(FakeBackend(behaviours={"matmul_tiled": "compile_error"}), kernel,
                           kernel.launch("small"), policy=QUICK)
    assert len(rows) == 1 and rows[0]["status"] == "compile_failed" and rows[0]["k"] == 0


def test_samples_on_pocl_run_for_real(pocl):
    kernel = get_kernel("matmul_naive")
    rows = measure_samples(pocl, kernel, kernel.launch("small"), policy=QUICK)
    assert rows and {r["status"] for r in rows} == {"ok"}
    assert all(r["time_median_s"] > 0 for r in rows)


def test_samples_on_a_cpu_device_go_past_its_launch_floor():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})  # 131072 blocks
    gpu = FakeBackend(sm_count=2, times=[300e-6], behaviours={"matmul_naive": "unwritten"})
    cpu = FakeBackend(sm_count=2, times=[300e-6], behaviours={"matmul_naive": "unwritten"})
    cpu.kind = "cpu"
    on_gpu = {r["k"] for r in measure_samples(gpu, kernel, config, policy=QUICK)}
    on_cpu = {r["k"] for r in measure_samples(cpu, kernel, config, policy=QUICK)}
    assert max(on_gpu) == 5  # 300 µs: past the GPU's 200 µs bound at once
    # every sample takes 300 µs here (the fake's time): on a CPU the bound is 20 times the
    # first sample, never reached, so the ladder climbs until 5% of the grid
    assert max(on_cpu) > 5 and {r["psat"] for r in measure_samples(
        cpu, kernel, config, policy=QUICK)} == {1}


def test_ladder_stops_short_of_the_full_grid():
    from kerncast.measure._samples import ladder

    config = get_kernel("copy_vector").launch("small")
    rungs = ladder(dataclasses.replace(config, grid=(1000,)), 2, 132)
    assert [r["k"] for r in rungs] == [1, 2, 3]  # 264, 528, 792 blocks; 4 waves > 1000
    assert all(r["blocks_launched"] < 1000 for r in rungs)
    assert ladder(dataclasses.replace(config, grid=(200,)), 2, 132) == []


def test_chosen_samples_are_the_only_ones_run():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})  # 131072 blocks
    backend = FakeBackend(sm_count=8, times=[20e-6], behaviours={"matmul_naive": "unwritten"})
    backend.block_offsets = True
    seen = {}

    def choose(rungs, time):
        seen["rungs"] = rungs
        full = [r["k"] for r in rungs].index(0)
        seen["t"] = time(1, "cold"), time(full, "warm")
        seen["full"] = full

    rows = measure_samples(backend, kernel, config, policy=QUICK, choose=choose)
    assert [(r["k"], r["l2_state"]) for r in rows] == [(2, "cold"), (0, "warm")]
    assert {r["status"] for r in rows} == {"ok"}
    # the ladder runs to the last rung short of the full grid (not to 5%), then the grid
    ladder, full = seen["rungs"][:seen["full"]], seen["rungs"][seen["full"]]
    assert full["blocks_launched"] == config.blocks
    assert ladder[-1]["blocks_launched"] < config.blocks <= 2 * ladder[-1]["blocks_launched"]
    assert rows[0]["time_median_s"] == seen["t"][0]["time_median_s"]
    # then each rung of the ladder again, from the middle of the grid
    middles = seen["rungs"][seen["full"] + 1:]
    assert [m["blocks_launched"] for m in middles] == [r["blocks_launched"] for r in ladder]
    assert [m["first_block"] for m in middles] == [
        min(config.blocks // 2, config.blocks - m["blocks_launched"]) for m in middles]


def test_the_full_grid_is_timed_warm_as_times_does_and_cold_as_samples_are():
    from kerncast.measure._samples import measure_full

    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})
    backend = FakeBackend(sm_count=8, times=[20e-6], behaviours={"matmul_naive": "unwritten"})
    rows = measure_full(backend, kernel, config, policy=QUICK)
    assert [(r["k"], r["l2_state"], r["status"]) for r in rows] == [(0, "warm", "ok"),
                                                                     (0, "cold", "ok")]
    assert all(r["blocks_launched"] == config.blocks and r["grid_fraction"] == 1.0
               and r["psat"] == 32 for r in rows)
    assert backend.events.count("flush") > 0


def test_a_failed_full_grid_is_still_the_full_grids_row():
    from kerncast.measure._samples import measure_full

    kernel = get_kernel("matmul_tiled")
    config = kernel.launch("small")
    rows = measure_full(FakeBackend(behaviours={"matmul_tiled": "compile_error"}), kernel,
                        config, policy=QUICK)
    assert len(rows) == 1 and rows[0]["status"] == "compile_failed"
    assert (rows[0]["k"], rows[0]["l2_state"], rows[0]["grid_fraction"]) == (0, "warm", 1.0)


class PaidFake(FakeBackend):
    """A fake backend that can also time the write-back of a launch's stores."""

    l2_states = ("warm", "cold", "paid")

    def time_paid(self, compiled, config, dev_args, before=None):
        self.events.append("paid")
        return self.time_launch(compiled, config, dev_args, before)

    def flush_l2(self, writes=None):
        self.events.append("flush" if writes in (None, True) else "flush-clean")


def test_samples_are_timed_in_every_l2_state_the_backend_has():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})
    backend = PaidFake(sm_count=8, times=[20e-6], behaviours={"matmul_naive": "unwritten"})
    rows = measure_samples(backend, kernel, config, policy=QUICK)
    states = {k: sorted(r["l2_state"] for r in rows if r["k"] == k) for k in (1, 40)}
    assert states == {1: ["cold", "paid", "warm"], 40: ["cold", "paid", "warm"]}
    # a paid sample follows a flush that only reads; a cold one the flush that writes
    assert backend.events.count("flush-clean") == backend.events.count("paid") > 0
    assert backend.events.count("flush") > 0


def test_paid_samples_alone_stop_where_the_ladder_stops():
    from kerncast.measure._samples import measure_paid

    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})
    backend = PaidFake(sm_count=8, times=[20e-6], behaviours={"matmul_naive": "unwritten"})
    backend.block_offsets = True
    rows = measure_paid(backend, kernel, config, policy=QUICK)
    assert {r["l2_state"] for r in rows} == {"paid"}
    assert sorted(r["k"] for r in rows if r["first_block"] == 0) == [1, 2, 3, 4, 5, 10, 20, 40]
    # and the second rung from the middle of the grid
    assert [(r["k"], r["first_block"]) for r in rows if r["first_block"]] == \
        [(2, config.blocks // 2)]
    assert "flush" not in backend.events


def test_paid_samples_need_a_backend_that_can_time_the_write_back():
    from kerncast import InputError
    from kerncast.measure._samples import measure_paid

    kernel = get_kernel("matmul_naive")
    with pytest.raises(InputError, match="fake backend cannot time the write-back.*cupy or driver"):
        measure_paid(FakeBackend(), kernel, kernel.launch("small"), policy=QUICK)


def test_a_failed_paid_ladder_is_still_the_paid_ladders_row():
    from kerncast.measure._samples import measure_paid

    kernel = get_kernel("matmul_tiled")
    rows = measure_paid(PaidFake(behaviours={"matmul_tiled": "compile_error"}), kernel,
                        kernel.launch("small"), policy=QUICK)
    assert [(r["status"], r["l2_state"]) for r in rows] == [("compile_failed", "paid")]


MARK = """__kernel void mark(__global int* seen, __global int* groups) {
  if (get_local_id(0) == 0) {
    seen[get_group_id(0)] += 1;
    groups[get_group_id(0)] = get_num_groups(0);
  }
}"""


@pytest.mark.toolchain
def test_a_sample_from_the_middle_runs_its_blocks_and_sees_the_whole_grid(pocl):
    import numpy as np

    import kerncast
    from kerncast.measure._job import user_job
    from kerncast.measure._samples import _Offsets, middle_rung, time_rung
    from kerncast.measure._session import LaunchSession

    kernel = kerncast.Kernel.of("mark", MARK, language="opencl")
    launch = kerncast.Launch(64, 4, args=(kerncast.Array("int32", 64), kerncast.Array("int32", 64)),
                             names=("seen", "groups"))
    rung = {"k": 2, "psat": 1, "blocks_requested": 8, "blocks_launched": 8,
            "grid_fraction": 8 / 64, "sample_grid_x": 8, "sample_grid_y": 1,
            "sample_grid_z": 1, "first_block": 0}
    middle = middle_rung(launch, rung)
    assert middle["first_block"] == 32
    with LaunchSession(pocl, user_job(kernel, launch)) as session:
        offsets = _Offsets.of(session)
        row = time_rung(session, launch, middle, "warm", QUICK, offsets)
        got = pocl.download(session.dev, {n: np.zeros(64, np.int32) for n in ("seen", "groups")})
    assert row["first_block"] == 32 and row["time_median_s"] > 0
    # every timed launch starts from the buffers as they were: the last one wrote once
    assert np.flatnonzero(got["seen"]).tolist() == list(range(32, 40))
    assert set(got["seen"][32:40]) == {1}
    assert set(got["groups"][32:40]) == {64}  # the whole grid's size, not the sample's
    assert pocl.global_offset is None  # put back for the launches that follow


MARK2 = """__kernel void mark2(__global int* seen, __global int* rows) {
  if (get_local_id(0) == 0) {
    int b = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    seen[b] += 1;
    rows[b] = get_num_groups(1);
  }
}"""


@pytest.mark.toolchain
def test_a_partial_row_from_the_middle_runs_the_first_blocks_of_the_middle_row(pocl):
    import numpy as np

    import kerncast
    from kerncast.measure._job import user_job
    from kerncast.measure._samples import _Offsets, ladder, middle_rung, time_rung
    from kerncast.measure._session import LaunchSession

    kernel = kerncast.Kernel.of("mark2", MARK2, language="opencl")
    launch = kerncast.Launch((16, 4), (4, 1), args=(kerncast.Array("int32", 64),
                                                   kerncast.Array("int32", 64)),
                             names=("seen", "rows"))
    rung = ladder(launch, 1, 3, partial=True)[0]  # 3 blocks: part of a row of 16
    middle = middle_rung(launch, rung)
    assert (rung["sample_grid_x"], rung["sample_grid_y"]) == (3, 1)
    assert middle["first_block"] == 2 * 16  # the middle row's first block
    with LaunchSession(pocl, user_job(kernel, launch)) as session:
        time_rung(session, launch, middle, "warm", QUICK, _Offsets.of(session))
        got = pocl.download(session.dev, {n: np.zeros(64, np.int32) for n in ("seen", "rows")})
    assert np.flatnonzero(got["seen"]).tolist() == [32, 33, 34]
    assert set(got["rows"][32:35]) == {4}


def test_a_backend_without_block_offsets_samples_a_smaller_grid_and_no_middle():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 32, "by": 1})
    backend = FakeBackend(sm_count=8, times=[20e-6], behaviours={"matmul_naive": "unwritten"})
    rows = measure_samples(backend, kernel, config, policy=QUICK)
    assert rows and {r["first_block"] for r in rows} == {0}
    assert backend.events.count("compile") == 1  # no build with offsets
