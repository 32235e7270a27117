"""Block offsets: the PTX rewrite, run on the emulator, writes exactly the blocks of its
slice with the whole grid's indices; the OpenCL prelude's macros."""

from __future__ import annotations

import numpy as np
import pytest

import kerncast
from kerncast import InputError
from kerncast.emu import emulate
from kerncast.frontend import build
from kerncast.ptx import parse
from kerncast.split import OFFSET_PARAMS, offset_ptx, opencl_prelude

pytestmark = pytest.mark.toolchain  # compiles CUDA

TAG = '''extern "C" __global__ void tag(int* out, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  out[y * w + x] = 10000 * gridDim.y + 100 * blockIdx.y + blockIdx.x;
}'''


def _built(source: str, name: str) -> tuple[str, str]:
    tu = build(kerncast.Kernel.of(name, source), "h100")
    entry = tu.kernel(name).entry
    return tu.ptx, entry


def _run(ptx: str, entry: str, grid, out: np.ndarray, extra=()) -> np.ndarray:
    result = emulate(ptx, (grid, (32, 1, 1)), [out, 64, *extra], entry=entry, trace=False)
    return next(iter(result.outputs.values())).reshape(out.shape)


def test_a_slice_of_rows_writes_its_blocks_with_the_whole_grids_indices():
    ptx, entry = _built(TAG, "tag")
    whole = _run(ptx, entry, (2, 6, 1), np.full((6, 64), -1, np.int32))
    sliced = offset_ptx(ptx, entry)
    params = [p.name for p in parse(sliced).kernel(entry).params]
    assert params[-6:] == list(OFFSET_PARAMS)
    start = np.full((6, 64), -1, np.int32)
    part = _run(sliced, entry, (2, 2, 1), start, (0, 3, 0, 2, 6, 1))  # rows 3 and 4
    assert (part[3:5] == whole[3:5]).all()
    assert (part[:3] == -1).all() and (part[5:] == -1).all()
    assert part[3, 0] == 10000 * 6 + 300


def test_a_device_function_reading_the_block_index_is_refused():
    ptx, entry = _built('''__device__ __noinline__ int row() { return blockIdx.y; }
extern "C" __global__ void k(int* out) { out[row()] = 1; }''', "k")
    with pytest.raises(InputError, match="device function .* reads the block index"):
        offset_ptx(ptx, entry)
    with pytest.raises(InputError, match="already takes block-offset parameters"):
        good, name = _built(TAG, "tag")
        offset_ptx(offset_ptx(good, name), name)


def test_the_opencl_prelude_counts_groups_from_the_offset_and_sizes_the_whole_grid():
    text = opencl_prelude((8, 4, 1))
    assert "get_global_offset(d) / get_local_size(d)" in text
    assert "(d) == 0 ? 8u : (d) == 1 ? 4u : 1u" in text
