"""Compiler errors reach the user as ``file:line: error: ...`` with their own file name."""

from __future__ import annotations

import pytest

from kerncast import InputError
from kerncast.frontend import compile
from kerncast.frontend._diagnostics import compile_error, error_lines

NVCC_LOG = """\
/tmp/kerncast-nvcc-x/source.cu(2): error: identifier "y" is undefined
    x[0] = y;
           ^

/tmp/kerncast-nvcc-x/source.cu(3): catastrophic error: cannot open source file "nope.h"

2 errors detected in the compilation of "/tmp/kerncast-nvcc-x/source.cu".
"""

CLANG_LOG = """\
/tmp/kerncast-clang-y/source.cl:2:10: error: use of undeclared identifier 'y'
  x[0] = y;
         ^
/tmp/kerncast-clang-y/source.cl:1:1: warning: something harmless
1 error generated.
"""


def test_nvcc_lines_are_rewritten():
    lines = error_lines(NVCC_LOG, {"/tmp/kerncast-nvcc-x/source.cu": "k.cu"})
    assert lines == ['k.cu:2: error: identifier "y" is undefined',
                     'k.cu:3: catastrophic error: cannot open source file "nope.h"']


def test_clang_lines_lose_the_column_and_warnings():
    lines = error_lines(CLANG_LOG, {"/tmp/kerncast-clang-y/source.cl": "k.cl"})
    assert lines == ["k.cl:2: error: use of undeclared identifier 'y'"]


def test_long_logs_are_cut():
    log = "\n".join(f"a.cu({i}): error: e{i}" for i in range(1, 40))
    err = compile_error("CUDA", "a.cu", "nvcc 13.0.88", log)
    assert isinstance(err, InputError)
    text = str(err).splitlines()
    assert text[0] == "CUDA compile of a.cu failed with nvcc 13.0.88; fix these errors:"
    assert text[1] == "a.cu:1: error: e1" and text[-1] == "... and 19 more"


BAD_CU = 'extern "C" __global__ void k(float* x) {\n  x[0] = y;\n}\n'
BAD_CL = "__kernel void k(__global float* x) {\n  x[0] = y;\n}\n"


@pytest.mark.toolchain
@pytest.mark.parametrize("toolchain", ["nvcc", "nvrtc"])
def test_cuda_errors_carry_the_users_file_and_line(tmp_path, toolchain, have_cuda):
    path = tmp_path / "bad.cu"
    path.write_text(BAD_CU)
    with pytest.raises(InputError) as info:
        compile(path, toolchain=toolchain, cache=False)
    msg = str(info.value)
    assert f'{path}:2: error: identifier "y" is undefined' in msg
    assert "kerncast-" not in msg  # no temporary path


@pytest.mark.toolchain
def test_cuda_text_errors_use_the_given_name(have_cuda):
    with pytest.raises(InputError, match=r'mine.cu:2: error: identifier "y" is undefined'):
        compile(BAD_CU, lang="cuda", name="mine.cu", cache=False)


@pytest.mark.toolchain
def test_opencl_errors_carry_the_users_file_and_line(tmp_path, have_clang):
    path = tmp_path / "bad.cl"
    path.write_text(BAD_CL)
    with pytest.raises(InputError) as info:
        compile(path, cache=False)
    assert f"{path}:2: error: use of undeclared identifier 'y'" in str(info.value)
    with pytest.raises(InputError, match=r"<source>:2: error: use of undeclared"):
        compile(BAD_CL, lang="opencl", cache=False)


@pytest.mark.toolchain
def test_missing_header_is_reported(tmp_path, have_cuda):
    path = tmp_path / "inc.cu"
    path.write_text('#include "nothere.h"\n' + BAD_CU)
    with pytest.raises(InputError, match=r"inc.cu:1: .*nothere.h"):
        compile(path, cache=False)
