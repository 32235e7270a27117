"""Finding compilers: NVRTC first for CUDA, then nvcc (PATH, then NVIDIA's wheels); pinned
messages."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from kerncast import ToolchainError
from kerncast.frontend import (
    NO_CLANG,
    NO_CUDA,
    NO_PTXAS,
    _cuda,
    _toolchain,
    compile,
    find_clang,
    find_nvcc,
    find_ptxas,
)

from .conftest import SAXPY_CL, SAXPY_CU
from .test_compile import PTX

pytestmark = pytest.mark.toolchain


def test_messages_name_the_packages():
    assert NO_CUDA == (
        "no CUDA compiler found: install the wheels with pip install nvidia-cuda-nvcc==13.0.88 "
        "nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 (or nvidia-cuda-nvrtc==13.0.88), or put "
        "nvcc on PATH")
    assert NO_CLANG == ("clang-14 with libclc is needed for OpenCL C: apt-get install clang-14 "
                        "libclc-14")
    assert "pip install nvidia-cuda-nvcc==13.0.88" in NO_PTXAS


@pytest.fixture
def bare_machine(tmp_path, monkeypatch):
    """No compiler on PATH, no NVIDIA wheels, no system NVRTC."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(_toolchain, "wheel_root", lambda: None)
    monkeypatch.setattr(_toolchain.ctypes.util, "find_library", lambda name: None)
    return empty


def test_missing_cuda_compiler(bare_machine):
    with pytest.raises(ToolchainError) as info:
        compile(SAXPY_CU, lang="cuda", cache=False)
    assert str(info.value) == NO_CUDA


def test_missing_clang(bare_machine):
    with pytest.raises(ToolchainError) as info:
        compile(SAXPY_CL, lang="opencl", cache=False)
    assert str(info.value) == NO_CLANG


def test_missing_libclc(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNCAST_LIBCLC", str(tmp_path / "nowhere"))
    assert find_clang() is None
    with pytest.raises(ToolchainError, match="apt-get install clang-14 libclc-14"):
        compile(SAXPY_CL, lang="opencl", cache=False)


def test_missing_ptxas(bare_machine):
    tu = compile(PTX, lang="ptx", cache=False)  # raw PTX needs no compiler
    with pytest.raises(ToolchainError) as info:
        tu.resources()
    assert str(info.value) == NO_PTXAS


def _script(directory: Path, name: str, text: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_clang_older_than_14_is_not_used(bare_machine):
    _script(bare_machine, "clang", 'echo "clang version 13.0.1"\n')
    assert find_clang() is None


def _path_without(*tools: str) -> str:
    keep = [d for d in os.environ["PATH"].split(os.pathsep)
            if d and not any((Path(d) / t).exists() for t in tools)]
    return os.pathsep.join(keep)


def test_fresh_machine_uses_the_cuda_13_wheels(monkeypatch):
    """Without nvcc and ptxas on PATH (no /usr/local/bin/nvcc), the wheels do the work."""
    root = _toolchain.wheel_root()
    if root is None or shutil.which("gcc") is None:
        pytest.skip("needs the nvidia-cuda-nvcc wheels and gcc")
    monkeypatch.setenv("PATH", _path_without("nvcc", "ptxas"))
    assert shutil.which("nvcc") is None and shutil.which("ptxas") is None
    nvcc, ptxas = find_nvcc(), find_ptxas()
    assert nvcc.origin == "wheel nvidia-cuda-nvcc" and Path(nvcc.path).is_relative_to(root)
    assert ptxas.origin == "wheel nvidia-cuda-nvcc" and nvcc.version == "13.0.88"
    tu = compile(SAXPY_CU, lang="cuda", cache=False, toolchain="nvcc")
    assert tu.toolchain.name == "nvcc" and tu.toolchain.path == nvcc.path
    res = tu.kernel("saxpy").resources()
    assert res.registers > 0 and res.toolchain == "ptxas 13.0.88"


def test_nvrtc_when_nvcc_is_absent(monkeypatch):
    monkeypatch.setattr(_cuda, "find_nvcc", lambda: None)
    if _toolchain.find_nvrtc() is None or find_ptxas() is None:
        pytest.skip("needs the nvidia-cuda-nvrtc wheel and ptxas")
    tu = compile(SAXPY_CU, lang="cuda", cache=False)
    assert tu.toolchain.name == "nvrtc" and tu.toolchain.version.startswith("13.0")
    assert ".entry saxpy" in tu.ptx and tu.ptx_target == "sm_90"
    res = tu.kernel("saxpy").resources()  # ptxas accepts NVRTC's PTX
    assert res.registers > 0 and [p.size for p in tu.kernel("saxpy").params] == [8, 8, 4]


def test_nvrtc_comes_before_nvcc():
    if _toolchain.find_nvrtc() is None or find_nvcc() is None:
        pytest.skip("needs both the nvidia-cuda-nvrtc wheel and nvcc")
    assert _cuda.select_cuda("auto").name == "nvrtc"


# Launch variants of data/h100 whose measured binary (built by NVRTC, as the measurement
# backends build) has other registers than nvcc's PTX gets from ptxas: kernel, defines,
# the registers measured.
MEASURED_REGISTERS = [
    ("scan_block", {"BLOCK": 32, "ITEMS": 2, "PAD": 1}, 30),
    ("matmul_regblock", {"BK": 8, "BX": 8, "BY": 16, "RM": 2, "RN": 4}, 40),
    ("radix_scatter", {"BLOCK": 32, "RANK_ITEMS": 4}, 28),
    ("nw_tile_diagonal", {"TILE": 16, "TPB": 4}, 32),
]


@pytest.mark.parametrize("name,defines,registers", MEASURED_REGISTERS)
def test_default_route_builds_the_measured_binary(name, defines, registers):
    """The default CUDA route compiles as the measurement did: ptxas gives its PTX the
    registers recorded in data/h100 for the same launch."""
    import pandas as pd  # noqa: PLC0415

    from kerncast.corpus import get_kernel  # noqa: PLC0415
    from kerncast.models._rows import corpus_launch  # noqa: PLC0415

    if _toolchain.find_nvrtc() is None or find_ptxas() is None:
        pytest.skip("needs the nvidia-cuda-nvrtc wheel and ptxas")
    times = pd.read_parquet(Path(__file__).parents[2] / "data" / "h100" / "times.parquet")
    rows = times[(times.kernel == name) & (times.status == "ok")]
    recorded = {int(row["registers"]) for _, row in rows.iterrows()
                if corpus_launch(row)[1].defines == defines}
    assert recorded == {registers}  # the table above quotes the dataset
    kernel = get_kernel(name)
    tu = compile(str(kernel.source_path("cuda")), lang="cuda", arch="sm_90", defines=defines,
                 cache=False)
    assert tu.toolchain.name == "nvrtc"
    assert tu.kernel(kernel.entry).resources("sm_90").registers == registers


def test_nvcc_without_gcc_falls_back_to_nvrtc(monkeypatch):
    monkeypatch.setattr(_toolchain, "_host_compiler", lambda: None)
    assert find_nvcc() is None
    if _toolchain.find_nvrtc() is None:
        pytest.skip("needs the nvidia-cuda-nvrtc wheel")
    assert _cuda.select_cuda("auto").name == "nvrtc"
    with pytest.raises(ToolchainError, match="nvcc needs gcc on PATH"):
        _cuda.select_cuda("nvcc")


def test_path_nvcc_comes_before_the_wheel(bare_machine):
    _script(bare_machine, "nvcc", 'echo "Cuda compilation tools, release 12.4, V12.4.131"\n')
    _script(bare_machine, "gcc", "exit 0\n")
    tool = find_nvcc()
    assert tool.origin == "PATH" and tool.version == "12.4.131"


def test_unknown_toolchain_name_is_an_input_error():
    from kerncast import InputError

    with pytest.raises(InputError, match="toolchain 'clang' does not compile cuda"):
        compile(SAXPY_CU, lang="cuda", toolchain="clang")


@pytest.mark.parametrize("text,version", [
    ("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n",
     "13.0.88"),
    ("ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 11.8, V11.8.89",
     "11.8.89"),
    ("Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\n", "14.0.6"),
    ("Cuda compilation tools, release 10.2\n", "10.2"),
])
def test_version_strings(text, version):
    assert _toolchain._parse_version(text) == version
