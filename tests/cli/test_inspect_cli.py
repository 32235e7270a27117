"""``kerncast inspect``: resources and occupancy per kernel, JSON output and exit codes."""

from __future__ import annotations

import json

import pytest

from kerncast.cli import main
from kerncast.cli._inspect import parse_defines
from kerncast.devices import occupancy
from kerncast.frontend import find_clang, find_nvcc, find_nvrtc, find_ptxas

pytestmark = pytest.mark.toolchain

SRC = """\
#ifndef N
#define N 64
#endif
extern "C" __global__ void fill(float* x) { __shared__ float s[N]; s[threadIdx.x % N] = 1.0f;
  __syncthreads(); x[threadIdx.x] = s[(threadIdx.x + 1) % N]; }
extern "C" __global__ void __launch_bounds__(128) bounded(float* x) { x[threadIdx.x] = 0.0f; }
"""


@pytest.fixture(autouse=True)
def cache_and_tools(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path_factory.getbasetemp() / "inspect-cache"))
    if find_ptxas() is None or (find_nvcc() is None and find_nvrtc() is None):
        pytest.skip("needs the CUDA 13.0 wheels or a CUDA toolkit")


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("inspect") / "fill.cu"
    path.write_text(SRC)
    return path


def _json(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_json_has_resources_and_occupancy_per_kernel(capsys, source):
    out = _json(capsys, ["inspect", str(source), "--define", "N=128", "--json"])
    assert out["device"] == "h100-sxm" and out["arch"] == "sm_90" and out["language"] == "cuda"
    assert out["defines"] == {"N": "128"}
    fill, bounded = out["kernels"]
    assert fill["entry"] == "fill" and fill["resources"]["shared_static"] == 128 * 4
    assert fill["resources"]["barriers"] == 1
    assert fill["block"] == 256 and fill["block_from"] == "default"
    want = occupancy("h100", 256, fill["resources"]["registers"], 512)
    assert fill["occupancy"]["blocks_per_sm"] == want.blocks_per_sm
    assert bounded["block"] == 128 and bounded["block_from"] == ".maxntid"
    assert bounded["resources"]["launch_bounds"]["max_threads"] == [128, 1, 1]
    analysis = fill["analysis"]
    assert analysis["blocks"] >= 1 and analysis["instructions"] > 0
    assert analysis["mix"]["barrier"] == 1 and analysis["mix"]["st_shared"] >= 1


def test_block_option_and_kernel_filter(capsys, source):
    out = _json(capsys, ["inspect", str(source), "--block", "64", "--kernel", "fill", "--json"])
    (fill,) = out["kernels"]
    assert fill["block"] == 64 and fill["occupancy"]["threads_per_block"] == 64


def test_device_option_sets_the_arch(capsys, source):
    assert _json(capsys, ["inspect", str(source), "--device", "h200", "--json"])["device"] == "h200"


def test_corpus_kernel_with_its_default_defines_and_launch(capsys):
    out = _json(capsys, ["inspect", "corpus:matmul_tiled", "--json"])
    assert out["defines"] == {"TILE": "16", "PAD": "0"}
    (k,) = out["kernels"]
    assert k["entry"] == "matmul_tiled" and k["block"] == 256
    assert k["resources"]["shared_static"] == 2 * 16 * 16 * 4


def test_corpus_kernel_in_opencl(capsys):
    if find_clang() is None:
        pytest.skip("needs clang-14 with libclc")
    out = _json(capsys, ["inspect", "corpus:matmul_naive", "--lang", "opencl", "--json"])
    assert out["language"] == "opencl" and out["ptx_target"] == "sm_86"
    assert out["kernels"][0]["resources"]["arch"] == "sm_90"


def test_table_output(capsys, source):
    assert main(["inspect", str(source)]) == 0
    out = capsys.readouterr().out
    assert "fill" in out and "bounded" in out and "regs" in out


def test_compile_error_exits_2_with_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* x) {\n  x[0] = y;\n}\n')
    assert main(["inspect", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f'{bad}:2: error: identifier "y" is undefined' in err and "Traceback" not in err


@pytest.mark.parametrize("argv,message", [
    (["inspect", "missing.cu"], "no such file: missing.cu"),
    (["inspect", "corpus:matmul_tild"], "did you mean matmul_tiled"),
    (["inspect", "{src}", "--block", "512", "--kernel", "bounded"],
     "block size 512 exceeds the 128 threads that kernel bounded allows"),
    (["inspect", "{src}", "--block", "4096", "--kernel", "fill"], "exceeds the h100-sxm limit"),
    (["inspect", "{src}", "--device", "h1000"], "unknown device 'h1000'"),
    (["inspect", "{src}", "--kernel", "nope"], "no kernel 'nope'"),
    (["inspect", "{src}", "--define", "=3"], "names no macro"),
])
def test_bad_input_exits_2(capsys, source, argv, message):
    argv = [a.replace("{src}", str(source)) for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_missing_toolchain_exits_1(capsys, source, monkeypatch):
    from kerncast.frontend import _cuda

    monkeypatch.setattr(_cuda, "find_nvcc", lambda: None)
    monkeypatch.setattr(_cuda, "find_nvrtc", lambda: None)
    monkeypatch.setenv("KERNCAST_CACHE", str(source.parent / "empty-cache"))
    assert main(["inspect", str(source)]) == 1
    assert "no CUDA compiler found" in capsys.readouterr().err


def test_parse_defines():
    assert parse_defines(["A=1", "B", "C=x=y"]) == {"A": "1", "B": None, "C": "x=y"}


def test_help_has_an_example(capsys):
    assert main(["inspect", "--help"]) == 0
    assert "Example: kerncast inspect" in capsys.readouterr().out
