"""Every corpus kernel, compiled by nvcc (CUDA) and clang-14 (OpenCL), parses and analyses.

Kernels are discovered, so new corpus applications are covered without editing this
file. Each source is compiled once with the default ``defines`` of its kernels; the
test skips cleanly where a compiler is missing.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest

from kerncast.corpus import KERNEL_DIR, list_kernels
from kerncast.ptx import build_cfg, parse, summarize, to_ptx
from tests.ptx._util import ptxas_accepts

LIBCLC = Path("/usr/lib/clc/nvptx64--nvidiacl.bc")
INCLUDE = KERNEL_DIR.parent / "include"
CASES = [(k, lang) for k in list_kernels() for lang in k.languages if lang in ("cuda", "opencl")]


def _defines(kernel) -> tuple[tuple[str, str], ...]:
    values = kernel.launch("small").defines
    return tuple(sorted((name, str(int(v) if float(v).is_integer() else v))
                        for name, v in values.items()))


@functools.cache
def _compile(source: Path, language: str, defines: tuple[tuple[str, str], ...],
             workdir: Path) -> str:
    flags = [f"-D{name}={value}" for name, value in defines] + [f"-I{INCLUDE}"]
    out = workdir / f"{source.stem}_{language}_{abs(hash(defines))}.ptx"
    if language == "cuda":
        nvcc = shutil.which("nvcc")
        if nvcc is None:
            pytest.skip("nvcc is not installed")
        cmd = [nvcc, "-ptx", "-arch=sm_90", *flags, "-o", str(out), str(source)]
    else:
        clang = shutil.which("clang-14")
        if clang is None or not LIBCLC.exists():
            pytest.skip("clang-14 with libclc is not installed")
        cmd = [clang, "-cl-std=CL1.2", "-target", "nvptx64-unknown-nvidiacl", "-march=sm_80",
               "-O2", "-Xclang", "-mlink-bitcode-file", "-Xclang", str(LIBCLC),
               "-include", "clc/clc.h", *flags, "-S", "-o", str(out), str(source)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{' '.join(cmd)}\n{result.stderr}"
    return out.read_text()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("corpus_ptx")


def test_the_corpus_has_kernels():
    assert CASES, "the corpus lists no CUDA or OpenCL kernel"


@pytest.mark.toolchain
@pytest.mark.parametrize("kernel, language", CASES,
                         ids=[f"{k.name}-{lang}" for k, lang in CASES])
def test_corpus_kernel_parses_and_analyses(kernel, language, workdir, tmp_path):
    text = _compile(kernel.source_path(language), language, _defines(kernel), workdir)
    module = parse(text, filename=f"{kernel.name}.{language}.ptx")
    func = module.function(kernel.entry)
    assert func.is_entry and func.instructions
    cfg = build_cfg(func)
    assert cfg.exit_blocks
    summary = summarize(func)
    assert summary.instructions == len(func.instructions)
    assert sum(summary.mix.values()) == summary.instructions
    starts = {block.start for block in cfg.blocks}
    assert all(point is None or point in starts for point in cfg.reconvergence.values())
    printed = to_ptx(module)
    assert [f.instructions for f in parse(printed).functions] == \
        [f.instructions for f in module.functions]
    result = ptxas_accepts(printed, tmp_path)
    assert result.returncode == 0, result.stderr
