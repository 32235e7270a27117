"""Frontend tests share one on-disk cache per test session (fast, and never ~/.cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kerncast.frontend import find_clang, find_nvcc, find_nvrtc, find_ptxas

HERE = Path(__file__).parent
MATMUL = Path(__file__).parents[2] / "src" / "kerncast" / "corpus" / "kernels" / "matmul"

SAXPY_CU = """\
#ifndef SCALE
#define SCALE 2.0f
#endif
extern "C" __global__ void saxpy(float* __restrict__ y, const float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = SCALE * x[i] + y[i];
}
"""

SAXPY_CL = """\
#ifndef SCALE
#define SCALE 2.0f
#endif
__kernel void saxpy(__global float* restrict y, __global const float* restrict x, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = SCALE * x[i] + y[i];
}
"""


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory):
    """A fresh cache directory for the whole session (``KERNCAST_CACHE``)."""
    path = tmp_path_factory.mktemp("kerncast-frontend-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KERNCAST_CACHE", str(path))
        yield path


@pytest.fixture(scope="session")
def have_cuda():
    if find_ptxas() is None or (find_nvcc() is None and find_nvrtc() is None):
        pytest.skip("needs the CUDA 13.0 wheels or a CUDA toolkit")


@pytest.fixture(scope="session")
def have_clang():
    if find_clang() is None or find_ptxas() is None:
        pytest.skip("needs clang-14 with libclc and ptxas")


@pytest.fixture
def saxpy_cu(tmp_path):
    path = tmp_path / "saxpy.cu"
    path.write_text(SAXPY_CU)
    return path


@pytest.fixture
def saxpy_cl(tmp_path):
    path = tmp_path / "saxpy.cl"
    path.write_text(SAXPY_CL)
    return path


class Counter:
    """Counts calls of a wrapped function."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


@pytest.fixture
def count_runs(monkeypatch):
    """Counts every compiler process and every PTX build (any language) from here on."""
    import dataclasses

    from kerncast.frontend import _languages, _process

    runs = Counter(_process.run_tool)
    builds = Counter(None)

    def counted(build):
        def call(*args, **kwargs):
            builds.calls += 1
            return build(*args, **kwargs)
        return call

    monkeypatch.setattr(_process, "run_tool", runs)
    for name, frontend in list(_languages.FRONTENDS.items()):
        if frontend.build is not None:
            monkeypatch.setitem(_languages.FRONTENDS, name,
                                dataclasses.replace(frontend, build=counted(frontend.build)))
    return runs, builds
