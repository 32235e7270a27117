"""``kerncast.predict`` and ``kerncast.sweep`` on a user's own kernel, in Kernel Tuner's terms."""

from __future__ import annotations

import numpy as np
import pytest

import kerncast
from kerncast import InputError

pytestmark = pytest.mark.toolchain  # compiles with NVRTC and ptxas

# Kernel Tuner's documented first example, as its users write it.
VECTOR_ADD = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
"""


def _vector_add_args(size: int = 1_000_000):
    a = np.random.randn(size).astype(np.float32)
    b = np.random.randn(size).astype(np.float32)
    c = np.zeros_like(b)
    n = np.int32(size)
    return [c, a, b, n], n


def test_kernel_tuners_vector_add_sweeps_unchanged_and_its_cache_round_trips(tmp_path):
    args, size = _vector_add_args()
    tune_params = {"block_size_x": [32, 64, 128, 256, 512, 1024]}
    cache = tmp_path / "vector_add.json"
    results, env = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune_params,
                                  cache=str(cache), verbose=False, iterations=7)
    assert [r["block_size_x"] for r in results] == tune_params["block_size_x"]
    assert all(r["time"] > 0 and not r["error"] for r in results)
    assert env["configurations"] == 6 and env["kernel_name"] == "vector_add"
    # 32-thread blocks are held by the SM's block limit: slower than 256-thread blocks
    by_block = {r["block_size_x"]: r["time"] for r in results}
    assert by_block[32] > 1.5 * by_block[256]
    stored = kerncast.tuner.read_cache(cache)
    assert sorted(stored.results["block_size_x"]) == tune_params["block_size_x"]
    assert np.allclose(sorted(stored.results["time_ms"]), sorted(by_block.values()))
    kernel_tuner = pytest.importorskip("kernel_tuner")
    found, _ = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, size, args, tune_params,
                                        simulation_mode=True, cache=str(cache), verbose=False,
                                        quiet=True)
    assert {r["block_size_x"]: r["time"] for r in found} == pytest.approx(by_block)


def test_predict_takes_the_configuration_and_honours_restrictions():
    args, size = _vector_add_args(100_000)
    p = kerncast.predict("vector_add", VECTOR_ADD, size, args, params={"block_size_x": 128})
    assert p.seconds > 0 and p.based_on["blocks"] == -(-100_000 // 128)
    assert p.based_on["compiler"].startswith(("nvrtc", "nvcc"))
    with pytest.raises(InputError, match="excluded by the restrictions"):
        kerncast.predict("vector_add", VECTOR_ADD, size, args, params={"block_size_x": 128},
                         restrictions=["block_size_x >= 256"])


def test_predict_takes_a_kernel_and_a_launch():
    kernel = kerncast.Kernel.of("vector_add", VECTOR_ADD, defines={"block_size_x": 256})
    launch = kerncast.Launch(40, 256, args=(kerncast.Array("float32", 10_240),
                                            kerncast.Array("float32", 10_240, "uniform(0, 1)"),
                                            kerncast.Array("float32", 10_240, "normal"),
                                            np.int32(10_240)))
    p = kerncast.predict(kernel, launch, device="h200")
    assert p.based_on["device"].startswith("h200") and p.based_on["blocks"] == 40


def test_the_build_warns_where_it_differs_from_the_users():
    args, size = _vector_add_args(10_000)
    p = kerncast.predict("vector_add", VECTOR_ADD, size, args, params={"block_size_x": 128},
                         compiler_options=["-arch=sm_80"], registers=99)
    assert "your options compile for sm_80" in p.based_on["warning"]
    assert "where yours uses 99" in p.based_on["warning"]


def test_constant_memory_arguments_fill_the_kernels_constants():
    source = """
    __constant__ float coef[4];
    extern "C" __global__ void poly(float *y, const float *x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = coef[0] + x[i] * (coef[1] + x[i] * (coef[2] + x[i] * coef[3]));
    }"""
    x = np.linspace(0, 1, 4096, dtype=np.float32)
    p = kerncast.predict("poly", source, 4096, [np.zeros_like(x), x, np.int32(4096)],
                         cmem_args={"coef": np.ones(4, np.float32)})
    assert p.seconds > 0
    with pytest.raises(InputError, match="no __constant__ variable of that name"):
        kerncast.predict("poly", source, 4096, [np.zeros_like(x), x, np.int32(4096)],
                         cmem_args={"coeff": np.ones(4, np.float32)})


@pytest.mark.parametrize("args, message", [
    (lambda c, a, b, n: [c, a, b], "vector_add takes 4 arguments; the launch gives 3"),
    (lambda c, a, b, n: [c, a, n, n], "arg2 is the number 1024 but the kernel uses parameter 2 as a pointer"),
    (lambda c, a, b, n: [c, a, b, np.float32(1.5)], "integer parameter"),
])
def test_arguments_that_do_not_match_the_kernel_name_the_argument(args, message):
    real, size = _vector_add_args(1024)
    with pytest.raises(InputError, match=message):
        kerncast.predict("vector_add", VECTOR_ADD, size, args(*real),
                         params={"block_size_x": 128})


def test_an_array_too_small_for_the_grid_is_the_emulators_fault_with_its_thread():
    source = """
    extern "C" __global__ void gather(float *y, const int *idx, const float *x) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        y[i] = x[idx[i]];
    }"""
    idx = np.full(256, 5000, np.int32)  # every thread reads past the end of x
    with pytest.raises(InputError, match="thread"):
        kerncast.predict("gather", source, 256, [np.zeros(256, np.float32), idx,
                                                np.zeros(100, np.float32)], block=(256,))


def test_kernel_tuner_options_that_cannot_apply_are_refused():
    args, size = _vector_add_args(1024)
    with pytest.raises(InputError, match="texture memory"):
        kerncast.predict("vector_add", VECTOR_ADD, size, args, params={"block_size_x": 128},
                         texmem_args={"t": args[1]})
    with pytest.raises(InputError, match="lang='HIP'"):
        kerncast.predict("vector_add", VECTOR_ADD, size, args, lang="HIP")
    with pytest.raises(InputError, match="kerncast predicts time only"):
        kerncast.sweep("vector_add", VECTOR_ADD, size, args, {"block_size_x": [64]},
                       objective="GFLOP/s")


def test_a_sweep_disassembles_its_binaries_together_and_predicts_the_same(tmp_path,
                                                                        monkeypatch):
    from kerncast.frontend import _process
    from kerncast.models import _predict
    from kerncast.trace import _sasscode

    if _sasscode.missing_tools():
        pytest.skip("ptxas or nvdisasm is not installed")
    args, size = _vector_add_args(100_000)
    tune_params = {"block_size_x": [64, 128, 256, 512]}  # each its own binary
    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path / "together"))
    tools: list[str] = []
    real = _process.run_tool
    monkeypatch.setattr(_process, "run_tool",
                        lambda argv, **kw: tools.append(str(argv[0])) or real(argv, **kw))
    together, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune_params)
    assert sum("nvdisasm" in t for t in tools) == 1
    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path / "alone"))
    _sasscode._RECENT.clear()
    tools.clear()
    monkeypatch.setattr(_predict, "_share_sass", lambda *a, **k: None)
    alone, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune_params)
    assert sum("nvdisasm" in t for t in tools) == len(tune_params["block_size_x"])
    assert together == alone


def test_a_configuration_that_fails_to_build_is_a_row_and_the_sweep_goes_on():
    source = VECTOR_ADD.replace("int i =", "#if block_size_x == 64\n#error no 64\n#endif\n    int i =")
    args, size = _vector_add_args(10_000)
    results, _ = kerncast.sweep("vector_add", source, size, args,
                                {"block_size_x": [32, 64, 128]})
    by_block = {r["block_size_x"]: r for r in results}
    assert by_block[64]["error"] and by_block[64]["time"] == float("inf")
    assert by_block[32]["time"] > 0 and not by_block[128]["error"]


def test_a_launch_file_is_predicted_swept_and_explained_as_the_cli_does(tmp_path):
    from kerncast.cli import main

    assert main(["new", str(tmp_path / "k")]) == 0
    launch = kerncast.load_launch_file(tmp_path / "k" / "launch.toml")
    kernel, run = launch.launch()
    alone = kerncast.predict(kernel, run)
    assert kerncast.predict(launch).seconds == pytest.approx(alone.seconds)
    results, env = kerncast.sweep(launch)
    assert len(results) == 1 and results[0]["time"] == pytest.approx(alone.seconds * 1e3)
    assert kerncast.what_if(launch, only=["occupancy"]).seconds == pytest.approx(
        alone.seconds)
