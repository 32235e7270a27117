"""Reading ptxas: the -v report of several releases, constant banks from the cubin, spills."""

from __future__ import annotations

import struct

import pytest

from kerncast.frontend import Resources, compile, parse_cubin_constants, parse_verbose

# Output of ptxas 13.0.88 -arch=sm_90 -v --warn-on-spills (whole-program mode) on a
# module with a called function, a templated kernel and launch bounds.
PTXAS_13_0 = """\
ptxas info    : 24 bytes gmem
ptxas info    : Compiling entry function 'k3' for 'sm_90'
ptxas info    : Function properties for k3
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 22.981 ms
ptxas info    : Compiling entry function '_Z2k2IfEvPT_d' for 'sm_90'
ptxas info    : Function properties for _Z2k2IfEvPT_d
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 0.947 ms
ptxas info    : Compiling entry function 'k1' for 'sm_90'
ptxas info    : Function properties for k1
    192 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 48 registers, used 0 barriers, 192 bytes cumulative stack size
ptxas info    : Compile time = 6.793 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""

# ptxas 13.0.88 on a kernel limited to 24 registers: the warning comes on stderr first.
PTXAS_13_0_SPILLS = """\
ptxas warning : Registers are spilled to local memory in function 'spill', 196 bytes spill stores, 228 bytes spill loads
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'spill' for 'sm_90'
ptxas info    : Function properties for spill
    336 bytes stack frame, 196 bytes spill stores, 228 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 336 bytes cumulative stack size
ptxas info    : Compile time = 11.988 ms
"""

# The layout of CUDA 11/12 reports, which still listed constant banks per kernel and
# module-level banks beside gmem (written in that layout for this test).
PTXAS_12_LAYOUT = """\
ptxas info    : 0 bytes gmem, 256 bytes cmem[3]
ptxas info    : Compiling entry function '_Z6kernelPfS_i' for 'sm_80'
ptxas info    : Function properties for _Z6kernelPfS_i
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 4096 bytes smem, 372 bytes cmem[0], 8 bytes cmem[2]
"""

# The early layout (CUDA 4/5 era): lmem and smem as "static+dynamic".
PTXAS_OLD_LAYOUT = """\
ptxas info    : Compiling entry function 'old' for 'sm_20'
ptxas info    : Function properties for old
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 20 registers, 16+0 bytes lmem, 2048+16 bytes smem, 64 bytes cmem[0], 12 bytes cmem[1]
"""


def test_ptxas_13_report():
    report = parse_verbose(PTXAS_13_0)
    assert report.gmem == 24
    k1, k3 = report.functions["k1"], report.functions["k3"]
    assert (k1["registers"], k1["local"], k1["cumulative_stack"], k1["barriers"]) == (48, 192, 192, 0)
    assert (k3["registers"], k3["shared_static"], k3["barriers"]) == (10, 1024, 1)
    assert report.functions["_Z2k2IfEvPT_d"]["registers"] == 8
    assert report.functions["_Z6helperPfi"]["local"] == 0  # a called function, not an entry


def test_spills():
    s = parse_verbose(PTXAS_13_0_SPILLS).functions["spill"]
    assert (s["spill_stores"], s["spill_loads"], s["local"], s["registers"]) == (196, 228, 336, 24)


def test_cuda_12_layout_with_constant_banks():
    report = parse_verbose(PTXAS_12_LAYOUT)
    assert report.module_cmem == {3: 256}
    k = report.functions["_Z6kernelPfS_i"]
    assert k["cmem"] == {0: 372, 2: 8} and k["shared_static"] == 4096 and k["barriers"] == 1
    assert (k["local"], k["spill_stores"], k["spill_loads"]) == (8, 4, 4)


def test_old_layout_sums_static_and_dynamic():
    k = parse_verbose(PTXAS_OLD_LAYOUT).functions["old"]
    assert k["shared_static"] == 2064 and k["local"] == 16 and k["cmem"] == {0: 64, 1: 12}


def _elf(sections: dict[str, int]) -> bytes:
    """A minimal 64-bit ELF with the named sections of the given sizes (no contents)."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n in sections) + b".shstrtab\0"
    offsets, pos = [], 1
    for n in sections:
        offsets.append(pos)
        pos += len(n) + 1
    shstr_name = pos
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    strtab_off = 64
    shoff = strtab_off + len(names)
    shnum = len(sections) + 2
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HHH", header, 0x3A, 64, shnum, shnum - 1)
    table = bytearray(64)  # the null section
    for off, size in zip(offsets, sections.values()):
        table += struct.pack("<IIQQQQ", off, 1, 0, 0, 0, size) + bytes(24)
    table += struct.pack("<IIQQQQ", shstr_name, 3, 0, 0, strtab_off, len(names)) + bytes(24)
    return bytes(header) + names + bytes(table)


def test_cubin_constant_sections():
    data = _elf({".nv.constant0.k1": 0x224, ".nv.constant0.k3": 0x218, ".nv.constant3": 256,
                 ".text.k1": 3072, ".nv.constant2.k1": 16})
    per_kernel, module = parse_cubin_constants(data)
    assert per_kernel == {"k1": {0: 0x224, 2: 16}, "k3": {0: 0x218}}
    assert module == {3: 256}


@pytest.mark.parametrize("data", [b"", b"not an elf at all" * 8, b"\x7fELF\x01\x01" + bytes(80)])
def test_cubin_reader_ignores_other_files(data):
    assert parse_cubin_constants(data) == ({}, {})


SPILLS_CU = """\
extern "C" __global__ void __maxnreg__(24) spills(float* x, int n) {
  float a[32];
#pragma unroll
  for (int k = 0; k < 32; k++) a[k] = x[threadIdx.x + k * n];
  float s = 0;
  for (int j = 0; j < n; j++) {
#pragma unroll
    for (int k = 0; k < 32; k++) s += a[k] * a[(k + j) & 31] * x[j * k];
  }
  x[threadIdx.x] = s;
}
"""

CONSTANTS_CU = """\
__constant__ float coef[64];
__device__ __noinline__ float helper(const float* p, int i) {
  float loc[40];
  for (int k = 0; k < 40; k++) loc[k] = p[k + i];
  return loc[i % 40] * coef[i % 64];
}
extern "C" __global__ void __launch_bounds__(128, 4) uses_all(float* out, const float* in, int n) {
  __shared__ float tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  if (i < n) out[i] = helper(in, i) + tile[127 - threadIdx.x];
}
""" + SPILLS_CU


@pytest.mark.toolchain
def test_real_resources_of_a_kernel_with_everything(have_cuda):
    tu = compile(CONSTANTS_CU, lang="cuda", name="constants.cu")
    res = tu.kernel("uses_all").resources()
    assert isinstance(res, Resources)
    assert res.shared_static == 128 * 4 and res.barriers == 1
    assert res.local >= 160 and res.cumulative_stack >= res.local  # loc[40] on the stack
    assert res.module_cmem.get(3) == 256  # coef[64]
    assert res.cmem[0] > 8 + 8 + 4
    assert res.launch_bounds.max_threads == (128, 1, 1)
    assert res.launch_bounds.min_blocks_per_sm == 4
    spills = tu.kernel("spills").resources()
    assert spills.launch_bounds.max_registers == 24 and spills.registers <= 24
    assert spills.spill_stores > 0 and spills.spill_loads > 0


@pytest.mark.toolchain
def test_bad_raw_ptx_is_an_input_error(have_cuda):
    from kerncast import InputError

    from .test_compile import PTX

    broken = PTX.replace("add.f32 %f2, %f1, 0f3F800000;", "add.f32 %f2, %f1, %nope;")
    tu = compile(broken, lang="ptx", name="broken.ptx")
    with pytest.raises(InputError, match=r"ptxas rejected broken.ptx; fix the PTX:\n.*broken.ptx"):
        tu.resources()


@pytest.mark.toolchain
def test_ptx_newer_than_ptxas_names_the_fix(have_cuda):
    from kerncast import ToolchainError

    from .test_compile import PTX

    tu = compile(PTX.replace(".version 8.0", ".version 99.0"), lang="ptx", name="new.ptx")
    with pytest.raises(ToolchainError, match=r"reads PTX ISA .* but new.ptx is ISA 99.0; put a "
                                             r"newer ptxas on PATH"):
        tu.resources()
