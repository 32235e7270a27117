"""The emulator work provider: counts from the SIMT emulator's trace of sampled blocks."""

from __future__ import annotations

import pytest

import kerncast.emu
import kerncast.models.work._emulator
import kerncast.sim
from kerncast import ToolchainError
from kerncast.corpus import get_kernel
from kerncast.emu import UnsupportedInstruction
from kerncast.models.work import (
    WorkUnavailable,
    _emulator,
    compulsory_bytes,
    emulator_counts,
    list_providers,
    work_counts,
)

pytestmark = pytest.mark.toolchain  # compiles corpus kernels

#: Budgets that emulate every block and record every access.
WHOLE = {"max_blocks": 10**9, "sample_steps": 10**12, "access_budget": 10**8}


def _launch(name: str, size: str = "small", tunables: dict | None = None):
    kernel = get_kernel(name)
    return kernel, kernel.launch(size, tunables)


def test_emulator_comes_before_the_algorithmic_fallback():
    names = list_providers()
    assert names.index("emulator") < names.index("algorithmic")


@pytest.mark.parametrize("name", ["matmul_naive", "matmul_tiled"])
def test_matmul_flops_are_the_closed_form_ones(name):
    kernel, config = _launch(name)
    counts = work_counts(kernel, config, "emulator")
    algorithmic = work_counts(kernel, config, "algorithmic")
    assert counts.source == "emulator"
    assert counts.flops_fp32 == algorithmic.flops_fp32 == 2 * 48**3  # one fma per k, n^3
    assert counts.flops_fp64 == 0
    assert counts.bytes_global_write == algorithmic.bytes_global_write == 48 * 48 * 4
    assert counts.instructions > counts.flops_fp32 / 2


def test_matmul_naive_reads_every_coalesced_sector_it_requests():
    # a warp is 2 rows x 16 columns of C: per k it reads 2 elements of A (2 sectors) and
    # 16 consecutive floats of B (64 bytes: 2 sectors); 72 warps, 48 steps of k
    kernel, config = _launch("matmul_naive", tunables={"bx": 16, "by": 16})
    assert emulator_counts(kernel, config).bytes_global_read == 72 * 48 * 4 * 32


def test_threads_past_the_matrix_count_what_they_execute():
    # 2x2 blocks of 32x32 outputs cover 64x64 of the 48x48 matrix: every thread multiplies
    kernel, config = _launch("matmul_regblock")
    assert emulator_counts(kernel, config).flops_fp32 == 2 * 64 * 64 * 48


def test_double_precision_fmas_count_as_fp64():
    kernel, config = _launch("arith_fp64")
    n, iters = config.params["n"], config.params["iters"]
    counts = emulator_counts(kernel, config)
    assert counts.flops_fp64 == 2 * n * iters and counts.flops_fp32 == 0
    assert counts.dominant_precision == "fp64"


def test_a_copy_moves_its_buffers_once():
    kernel, config = _launch("copy_vector")
    counts = emulator_counts(kernel, config)
    assert (counts.bytes_global_read, counts.bytes_global_write) == compulsory_bytes(kernel,
                                                                                     config)
    assert counts.flops == 0


@pytest.mark.parametrize(("stride", "sectors_per_warp"), [(1, 4), (4, 16), (16, 32)])
def test_strided_reads_cost_whole_sectors(stride, sectors_per_warp):
    kernel, config = _launch("copy_strided", tunables={"bx": 256, "stride": stride})
    n = config.params["n"]
    counts = emulator_counts(kernel, config)
    assert counts.bytes_global_read == n // 32 * sectors_per_warp * 32
    assert counts.bytes_global_write == n * 4


def test_misaligned_reads_touch_one_more_sector_per_warp():
    kernel, config = _launch("copy_offset", tunables={"bx": 256, "offset": 1})
    n = config.params["n"]
    assert emulator_counts(kernel, config).bytes_global_read == n // 32 * 5 * 32


def test_atomics_count_as_read_and_written():
    # one bin: each warp's 32 atomicAdds hit one sector, read and written back
    kernel, config = _launch("atomic_contention", tunables={"bx": 256, "nbins": 1})
    n = config.params["n"]
    counts = emulator_counts(kernel, config)
    assert counts.bytes_global_read == n * 4 + n // 32 * 32  # the keys, then the bin
    assert counts.bytes_global_write == n // 32 * 32


@pytest.mark.parametrize("name", [
    "reduce_shuffle",     # the last of 3,907 blocks is partly empty
    "atomic_contention",  # atomics to data-dependent addresses
])
def test_a_sample_of_blocks_estimates_the_whole_grid(name):
    kernel, config = _launch(name, "medium")
    emulated = []
    real_emulate = kerncast.emu.emulate

    def spy(*args, **options):
        result = real_emulate(*args, **options)
        emulated.append(len(result.blocks))
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kerncast.emu, "emulate", spy)
        sampled = emulator_counts(kernel, config)
    assert 1 < sum(emulated) <= _emulator.MAX_BLOCKS < config.blocks
    whole = emulator_counts(kernel, config, **WHOLE)
    for field in ("flops_fp32", "bytes_global_read", "bytes_global_write", "instructions"):
        assert getattr(sampled, field) == pytest.approx(getattr(whole, field), rel=0.03), field


def test_accesses_past_the_recording_budget_are_extrapolated():
    # 20,000 lane accesses record the first k steps of matmul_naive's 223,488 and none of
    # its stores: each load's sectors per request stand for the rest, the stores count as
    # coalesced
    kernel, config = _launch("matmul_naive")
    whole = emulator_counts(kernel, config, **WHOLE)
    cut = emulator_counts(kernel, config, access_budget=20_000)
    assert cut.bytes_global_read == whole.bytes_global_read
    assert cut.bytes_global_write == whole.bytes_global_write
    assert cut.flops_fp32 == whole.flops_fp32


def test_counts_are_remembered_per_launch():
    kernel, config = _launch("copy_vector")
    assert emulator_counts(kernel, config) is emulator_counts(kernel, config)
    other = kernel.launch("small", {"vec": 1})
    assert emulator_counts(kernel, other) is not emulator_counts(kernel, config)


def test_too_many_steps_fall_back_to_the_algorithmic_count(monkeypatch):
    kernel, config = _launch("matmul_naive")
    monkeypatch.setattr(_emulator, "BLOCK_STEPS", 1000)
    with pytest.raises(WorkUnavailable, match=(
            "^emulating block 0 of matmul_naive takes more than 1,000 warp instructions, the "
            "emulator work source's limit \\(BLOCK_STEPS\\); use work='algorithmic'")):
        work_counts(kernel, config, "emulator")
    counts = work_counts(kernel, config)
    assert counts.source == "algorithmic" and counts.flops_fp32 == 2 * 48**3


def test_an_unsupported_instruction_says_so(monkeypatch):
    def unsupported(*args, **options):
        raise UnsupportedInstruction("line 40: tex.2d is not supported by the emulator")

    monkeypatch.setattr(kerncast.emu, "emulate", unsupported)
    monkeypatch.setattr(kerncast.models.work._emulator, "_CACHE", {})  # not a remembered run
    kernel, config = _launch("matmul_tiled", tunables={"tile": 8})
    with pytest.raises(WorkUnavailable, match=(
            "^the emulator cannot run matmul_tiled: line 40: tex.2d is not supported by the "
            "emulator; use work='algorithmic'")):
        emulator_counts(kernel, config)
    assert work_counts(kernel, config).source == "algorithmic"


def test_a_missing_compiler_says_so(monkeypatch):
    def no_compiler(*args):
        raise ToolchainError("no CUDA compiler found")

    monkeypatch.setattr(kerncast.sim, "cached_unit", no_compiler)
    monkeypatch.setattr(kerncast.models.work._emulator, "_CACHE", {})
    kernel, config = _launch("matmul_tiled", tunables={"tile": 32})
    with pytest.raises(WorkUnavailable, match=(
            "^the emulator cannot run matmul_tiled: its cuda source does not compile here "
            "\\(no CUDA compiler found\\); use work='algorithmic'")):
        emulator_counts(kernel, config)


def test_data_dependent_kernels_with_huge_inputs_are_not_emulated():
    kernel, config = _launch("spmv_ell", "large")
    with pytest.raises(WorkUnavailable, match=(
            "^spmv_ell's memory accesses depend on its inputs, so it is emulated on its "
            "generated inputs, and at size 'large' they take 2,624 MiB, more than the "
            "emulator's limit of 256 MiB; choose a smaller size or use work='algorithmic'")):
        emulator_counts(kernel, config)
