"""``kerncast.split``: slices of a grid on several devices, their outputs gathered and
checked, on emulated CUDA devices (deterministic speeds) and on PoCL."""

from __future__ import annotations

import numpy as np
import pytest

import kerncast
from kerncast import InputError
from kerncast.split import split

pytestmark = pytest.mark.toolchain  # compiles kernels

FAST, SLOW, WIDE = ("tests.split.fakes:fast", "tests.split.fakes:slow",
                    "tests.split.fakes:wide")

SCALE = '''extern "C" __global__ void scale2d(const float* x, float* y, int w, int h) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < w && j < h) y[j * w + i] = 2.0f * x[j * w + i] + blockIdx.y + gridDim.y;
}'''


def _scale(rows: int = 48, width: int = 64):
    kernel = kerncast.Kernel.of("scale2d", SCALE)
    launch = kerncast.Launch((width // 32, rows, 1), (32, 1, 1), args=(
        kerncast.Array("float32", rows * width, "uniform(0, 1)", intent="in"),
        kerncast.Array("float32", rows * width, intent="out"),
        np.int32(width), np.int32(rows)), names=("x", "y", "w", "h"))
    return kernel, launch


def test_a_2d_grid_is_split_in_rows_by_throughput_and_its_outputs_checked():
    kernel, launch = _scale()
    result = split(kernel, launch, [FAST, SLOW])
    assert result.axis == "y" and result.slices == 48 and result.blocks_per_slice == 2
    assert result.samples_reused and result.checked.startswith("outputs match")
    parts = result.parts
    assert sum(p.slices + p.sampled for p in parts) == 48
    assert parts[1].first == parts[0].first + parts[0].slices  # contiguous, in order
    # both parts, kept samples included, end together within a slice of the slower device
    assert abs(parts[0].busy_s - parts[1].busy_s) <= parts[1].line.per_slice_s
    assert parts[1].line.per_slice_s == pytest.approx(3 * parts[0].line.per_slice_s)
    assert result.makespan_s == pytest.approx(result.predicted_makespan_s, rel=0.05)
    x = np.asarray(launch.materialise()[0]).reshape(48, 64)
    want = 2 * x + np.arange(48)[:, None] + 48
    np.testing.assert_allclose(result.outputs["y"].reshape(48, 64), want, rtol=1e-6)


def test_a_grid_of_few_waves_is_divided_by_resident_blocks_without_samples():
    kernel, launch = _scale()
    result = split(kernel, launch, [WIDE, WIDE])
    assert result.divided.startswith("not sampled: the grid is 1.5 waves")
    assert [p.slices for p in result.parts] == [24, 24] and not result.samples_reused
    assert result.checked.startswith("outputs match")


def test_baselines_equal_peak_alone_and_the_oracle():
    kernel, launch = _scale()
    result = split(kernel, launch, [FAST, SLOW], baselines=True)
    base = result.baselines
    assert base["alone:" + FAST] == pytest.approx(5e-6 + 96 * 1e-6)
    assert base["oracle"] <= base["equal"] and result.oracle_fraction is not None
    assert 0.6 <= result.oracle_fraction <= 0.9  # the fast device takes about 3/4


def test_kernels_that_cannot_be_split_are_refused():
    atomic = kerncast.Kernel.of("count", '''extern "C" __global__ void count(int* c, int n) {
      if (blockIdx.x * blockDim.x + threadIdx.x < n) atomicAdd(c, 1); }''')
    launch = kerncast.Launch(8, 32, args=(kerncast.Array("int32", 1), np.int32(256)))
    with pytest.raises(InputError, match="atomically .*cannot be split"):
        split(atomic, launch, [FAST, SLOW])
    kernel, small = _scale(rows=3)
    with pytest.raises(InputError, match="too few to split across 2 devices"):
        split(kernel, small, [FAST, SLOW])
    with pytest.raises(InputError, match="at least two devices"):
        split(kernel, small, [FAST])


def test_overlapping_outputs_are_refused():
    same = kerncast.Kernel.of("last", '''extern "C" __global__ void last(int* y) {
      if (threadIdx.x == 0) y[0] = blockIdx.x; }''')
    launch = kerncast.Launch(16, 32, args=(kerncast.Array("int32", 1, intent="out"),))
    with pytest.raises(InputError, match="do not write disjoint outputs"):
        split(same, launch, [FAST, SLOW])


def test_an_opencl_kernel_split_across_two_pocl_devices(pocl):
    k = kerncast.corpus.get_kernel("black_scholes")
    source, launch = k.instance(k.launch("medium"), "opencl")
    result = split(source, launch, ["pocl", "pocl"])
    assert result.checked.startswith("outputs match pocl")
    assert sum(p.slices + p.sampled for p in result.parts) == launch.grid[0]


CPU, CPU_CLOSE = "tests.split.fakes:cpu", "tests.split.fakes:cpu_close"


@pytest.mark.parametrize("rows", [24, 400])  # a short grid, a long one
def test_a_device_slower_on_one_slice_than_the_rest_everywhere_gets_nothing(rows):
    kernel, launch = _scale(rows=rows)
    result = split(kernel, launch, [FAST, CPU], baselines=True)
    assert [p.slices + p.sampled for p in result.parts][1] == 0
    assert "left out" in result.divided
    assert result.makespan_s == pytest.approx(result.baselines["alone:" + FAST], rel=0.05)


@pytest.mark.parametrize("rows", [24, 400])  # a short grid, a long one
def test_a_grid_the_probes_leave_to_the_fastest_runs_there_in_one_launch_unsampled(rows):
    kernel, launch = _scale(rows=rows)
    result = split(kernel, launch, [FAST, CPU])
    assert result.divided.startswith(f"not sampled: {FAST} alone, in one launch")
    assert [(p.sampled, p.slices) for p in result.parts] == [(0, rows), (0, 0)]
    assert not result.sampled
    # one launch of the whole grid: the fake GPU's fixed cost once, not once per launch
    assert result.makespan_s == pytest.approx(5e-6 + 1e-6 * 2 * rows)
    assert result.checked.startswith("outputs match")


def test_unlike_devices_of_comparable_speed_share_a_short_grid_by_their_one_slice():
    kernel, launch = _scale(rows=24)  # fewer than 4 waves of 1 + 8 slices
    result = split(kernel, launch, [FAST, CPU_CLOSE], baselines=True)
    assert result.divided.startswith("not sampled: a short grid on unlike devices")
    cpu_share = result.parts[1].slices
    assert 0 < cpu_share < result.parts[0].slices
    assert result.makespan_s < result.baselines["alone:" + FAST]
    assert result.checked.startswith("outputs match")


def test_a_real_difference_names_the_element_and_unlike_devices_get_a_rounding_tolerance():
    from kerncast.split._run import _difference

    want = np.array([1.0, 2.0, 3.0], np.float32)
    got = np.array([1.0, 2.5, 3.0], np.float32)
    message = _difference("y", "cupy", got, want, np.isclose(got, want))
    assert "at 1 of 3 elements" in message and "[1]" in message and "2.5" in message


@pytest.mark.parametrize("cpu", ["cpu_optimistic", "cpu_faster_on_one_slice"])
@pytest.mark.parametrize("rows", [24, 400])  # a short grid, a long one
def test_a_cpu_share_that_runs_longer_than_one_slice_promised_is_cut(rows, cpu):
    kernel, launch = _scale(rows=rows)
    result = split(kernel, launch, [FAST, f"tests.split.fakes:{cpu}"], baselines=True)
    alone = result.baselines["alone:" + FAST]
    # the CPU's part never makes the makespan longer than the GPU alone (its kept sample
    # and its share are two launches: one fixed cost more)
    assert result.makespan_s <= alone + 6e-6
    assert result.makespan_s <= 1.05 * result.baselines["oracle"] + 6e-6
    assert result.parts[1].sampled == 0  # a slower device's samples only measure it
    if rows == 24:
        assert "left out" in result.divided and result.parts[1].slices == 0
    assert result.checked.startswith("outputs match")


def test_the_others_share_by_their_probes_decides_whether_the_fastest_runs_alone():
    from kerncast.split._plan import Line
    from kerncast.split._run import _outruns

    gpu, cpu = Line(5e-6, 1e-6), Line(10e-6, 50e-6)
    # 1,000 slices: 1 µs each on the GPU (its rate); the CPU at 50 µs would take ~2%
    lead, given = _outruns([gpu, cpu], [1e-6, 50e-6], 1000)
    assert lead == 0 and 0.01 < given < 0.05
    # a CPU five times faster would take ~9%: sampled and divided instead
    assert _outruns([gpu, Line(10e-6, 10e-6)], [1e-6, 10e-6], 1000) is None


def test_the_oracle_fraction_is_timed_again_not_kept_at_its_lowest_timing(monkeypatch):
    from kerncast.split import _run

    class Stub:
        def __init__(self, spec, alone_s):
            self.spec, self.alone_s = spec, alone_s

        def time(self, first, count, repeats=1):
            return self.alone_s

        def peak_flops(self):
            return None

    timings = []

    def makespan(runners, shares):  # every timing of a split 1 µs lower than the last
        timings.append(tuple(shares))
        return 100e-6 - 1e-6 * len(timings)

    monkeypatch.setattr(_run, "_makespan", makespan)
    out, fraction = _run._baselines([Stub("a", 100e-6), Stub("b", 100e-6)], 100)
    assert timings[-1] == (round(fraction * 100), 100 - round(fraction * 100))
    assert timings.count(timings[-1]) == 2  # the fraction found, timed once more
    assert out["oracle"] == pytest.approx(100e-6 - 1e-6 * len(timings))
    search = timings[1:-1]  # after the equal split, a baseline of its own
    assert len(set(search)) == len(search)  # no fraction timed twice in the search
