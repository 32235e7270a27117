"""kerncast.compile: CUDA, OpenCL and PTX sources to PTX, kernels, parameters, resources."""

from __future__ import annotations

import pytest

from kerncast.corpus import get_kernel

import kerncast
from kerncast import InputError
from kerncast.frontend import Kernel, Resources, TranslationUnit, compile, define_flags, find_nvrtc

from .conftest import MATMUL, SAXPY_CU

pytestmark = pytest.mark.toolchain

# NVRTC runs in-process, ~15x faster than nvcc: tests that are not about the route use it.
FAST = "nvrtc" if find_nvrtc() is not None else "auto"

PTX = """\
//
// hand-written module
//
.version 8.0
.target sm_80
.address_size 64

.visible .entry add_one(
\t.param .u64 .ptr .global .align 4 add_one_param_0,
\t.param .align 8 .b8 add_one_param_1[16],
\t.param .u32 add_one_param_2
)
.reqntid 128, 1, 1
.minnctapersm 2
{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<4>;
\t.reg .f32 %f<3>;
\tld.param.u64 %rd1, [add_one_param_0];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd3, %r1, 4;
\tadd.s64 %rd2, %rd2, %rd3;
\tld.global.f32 %f1, [%rd2];
\tadd.f32 %f2, %f1, 0f3F800000;
\tst.global.f32 [%rd2], %f2;
\tret;
}
"""


def test_the_top_level_compile_is_the_frontend_one():
    assert kerncast.compile is compile


def test_cuda_file_gives_ptx_kernels_params_and_resources(have_cuda):
    tu = compile(MATMUL / "matmul.cu")
    assert isinstance(tu, TranslationUnit)
    assert tu.language == "cuda" and tu.arch == "sm_90" and tu.ptx_target == "sm_90"
    assert tu.toolchain.name in ("nvcc", "nvrtc") and tu.toolchain.version.startswith("13.")
    assert ".entry matmul_tiled" in tu.ptx
    assert [k.name for k in tu.kernels] == [k.name for k in get_kernel("matmul_naive").app.kernels]
    tiled = tu.kernel("matmul_tiled")
    assert isinstance(tiled, Kernel) and tiled.entry == "matmul_tiled" and tiled.ptx == tu.ptx
    assert [(p.type, p.size) for p in tiled.params] == [("u64", 8)] * 3 + [("u32", 4)]
    res = tiled.resources()
    assert isinstance(res, Resources) and res.arch == "sm_90" and res.kernel == "matmul_tiled"
    assert 8 <= res.registers <= 255
    assert res.shared_static == 2 * 16 * 16 * 4  # two TILE x TILE float tiles, TILE = 16
    assert res.barriers == 1 and res.local == 0 and res.spill_stores == 0
    assert res.cmem[0] > 4 * 8  # parameters live in bank 0, beside the driver's fields
    assert tu.kernel("matmul_naive").resources().shared_static == 0


def test_opencl_file_goes_through_clang_and_ptxas_assembles_it_for_sm_90(have_clang):
    tu = compile(MATMUL / "matmul.cl", defines={"TILE": 8})
    assert tu.language == "opencl" and tu.toolchain.name == "clang"
    assert tu.ptx_target == "sm_86" and tu.arch == "sm_90"
    assert any("sm_86" in note for note in tu.notes)
    res = tu.kernel("matmul_tiled").resources()
    assert res.arch == "sm_90" and res.shared_static == 2 * 8 * 8 * 4 and res.barriers == 1
    assert [p.size for p in tu.kernel("matmul_naive").params] == [8, 8, 8, 4]


def test_opencl_native_math_lowers_through_the_shim(have_clang):
    src = ("__kernel void k(__global float* x, __global float4* v) { int i = get_global_id(0);"
           " x[i] = native_sin(x[i]) + half_exp(x[i]) + native_divide(x[i], 3.0f)"
           " + native_recip(x[i]) + native_powr(x[i], 2.0f) + half_rsqrt(x[i]);"
           " v[i] = native_cos(v[i]) + native_recip(v[i]); }")
    tu = compile(src, lang="opencl")
    assert tu.kernel("k").resources().registers > 0


def test_raw_ptx_is_taken_as_is_with_its_target(have_cuda):
    tu = compile(PTX, lang="ptx")
    assert tu.ptx == PTX and tu.language == "ptx" and tu.arch == "sm_80"
    assert tu.toolchain.name == "ptx"
    (k,) = tu.kernels
    assert [(p.type, p.size, p.align, p.space) for p in k.params] == [
        ("u64", 8, 8, "global"), ("b8", 16, 8, None), ("u32", 4, 4, None)]  # .align 4 is the pointee's
    assert k.launch_bounds.required_threads == (128, 1, 1)
    assert k.launch_bounds.min_blocks_per_sm == 2
    assert k.resources().arch == "sm_80"
    assert k.resources("sm_90").arch == "sm_90"
    assert k.resources("h100").launch_bounds.thread_limit == 128


def test_ptx_takes_no_defines():
    with pytest.raises(InputError, match="is PTX, which takes no defines"):
        compile(PTX, lang="ptx", defines={"A": 1})


def test_path_with_parentheses_is_a_path(tmp_path, have_cuda):
    odd = tmp_path / "copy (2)"
    odd.mkdir()
    (odd / "s.cu").write_text(SAXPY_CU)
    assert compile(str(odd / "s.cu"), toolchain=FAST).kernel("saxpy").entry == "saxpy"


def test_ptx_file_and_an_older_target_asked_for(tmp_path, have_cuda):
    path = tmp_path / "k.ptx"
    path.write_text(PTX)
    tu = compile(path, arch="sm_75")
    with pytest.raises(InputError, match="PTX for sm_80, which cannot be assembled for sm_75"):
        tu.resources()


def test_defines_change_the_ptx(have_cuda):
    small = compile(MATMUL / "matmul.cu", defines={"TILE": 8}, toolchain=FAST)
    large = compile(MATMUL / "matmul.cu", defines={"TILE": 32}, toolchain=FAST)
    assert small.ptx != large.ptx
    assert small.kernel("matmul_tiled").resources().shared_static == 2 * 8 * 8 * 4
    assert large.kernel("matmul_tiled").resources().shared_static == 2 * 32 * 32 * 4
    assert large.defines == {"TILE": "32"}


def test_source_text_needs_a_language():
    with pytest.raises(InputError, match="source text needs its language"):
        compile(SAXPY_CU)


def test_text_source_compiles_with_lang(have_cuda):
    tu = compile(SAXPY_CU, lang="cuda", arch="sm_80", toolchain=FAST)
    assert tu.source == "<source>" and tu.kernel("saxpy").resources().arch == "sm_80"


def test_device_name_selects_its_ptx_target(have_cuda):
    assert compile(SAXPY_CU, lang="cu", arch="h200", toolchain=FAST).arch == "sm_90"


def test_unknown_suffix_and_missing_file_are_input_errors(tmp_path):
    odd = tmp_path / "k.txt"
    odd.write_text("x")
    with pytest.raises(InputError, match=r"cannot tell the language of .*k.txt"):
        compile(odd)
    with pytest.raises(InputError, match="no such file: nothere.cu"):
        compile("nothere.cu")
    with pytest.raises(InputError, match="unknown language 'fortran'"):
        compile(SAXPY_CU, lang="fortran")


def test_bad_arch_and_bad_macro_names():
    with pytest.raises(InputError, match="unknown device"):
        compile(SAXPY_CU, lang="cuda", arch="rtx9999")
    with pytest.raises(InputError, match="'1BAD' is not a valid macro name"):
        compile(SAXPY_CU, lang="cuda", defines={"1BAD": 1})


def test_arch_too_old_for_cuda_13(have_cuda):
    with pytest.raises(InputError, match="cannot compile for sm_20"):
        compile(SAXPY_CU, lang="cuda", arch="sm_20")


def test_define_flags_formats_values():
    clean, flags = define_flags({"A": 1, "B": None, "C": True, "D": "0.5f"})
    assert flags == ["-DA=1", "-DB", "-DC=1", "-DD=0.5f"]
    assert clean == {"A": "1", "B": "", "C": "1", "D": "0.5f"}


def test_kernel_lookup_names_the_kernels(have_cuda):
    src = SAXPY_CU + "template <typename T> __global__ void twice(T* x) { x[0] *= 2; }\n" \
        "template __global__ void twice<float>(float*);\n" \
        "template __global__ void twice<int>(int*);\n"
    tu = compile(src, lang="cuda", name="mixed.cu", toolchain=FAST)
    mangled = [k for k in tu.kernels if k.mangled]
    assert {k.name for k in mangled} == {"twice"} and len(mangled) == 2
    assert tu.kernel(mangled[0].entry) is mangled[0]
    with pytest.raises(InputError, match="2 kernels in mixed.cu are named 'twice'"):
        tu.kernel("twice")
    with pytest.raises(InputError, match=r"no kernel 'saxpi' in mixed.cu; did you mean saxpy"):
        tu.kernel("saxpi")


def test_corpus_reference_compiles_with_default_defines(have_cuda):
    tu = compile("corpus:matmul_tiled", toolchain=FAST)
    assert tu.defines == {"TILE": "16", "PAD": "0"} and tu.language == "cuda"
    tu = compile("corpus:matmul_tiled", defines={"TILE": 32}, toolchain=FAST)
    assert tu.defines["TILE"] == "32" and tu.kernel("matmul_tiled").resources().shared_static == 8192


def test_to_dict_is_json_ready(have_cuda):
    import json

    tu = compile(MATMUL / "matmul.cu")
    data = json.loads(json.dumps(tu.to_dict()))
    assert data["kernels"][1]["name"] == "matmul_tiled"
    res = json.loads(json.dumps(tu.kernel("matmul_tiled").resources().to_dict()))
    assert Resources.from_dict(res) == tu.kernel("matmul_tiled").resources()
