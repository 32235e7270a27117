"""Kernel Tuner's vocabulary: grids, blocks, defines and restrictions as it makes them."""

from __future__ import annotations

import pytest

from kerncast import InputError
from kerncast.core import Kernel, Tuning


def test_the_grid_divides_the_problem_by_the_block_by_default():
    tuning = Tuning.of(1000, {"block_size_x": [128, 256]})
    assert tuning.block({"block_size_x": 128}) == (128, 1, 1)
    assert tuning.grid({"block_size_x": 128}) == (8, 1, 1)  # ceil(1000 / 128)
    assert tuning.block({}) == (256, 1, 1)  # Kernel Tuner's default block


def test_grid_div_takes_names_and_expressions():
    tuning = Tuning.of((4096, 2048), {"block_size_x": [16], "block_size_y": [8], "tile": [4]},
                       grid_div_x=["block_size_x", "tile"], grid_div_y="block_size_y * 2")
    params = {"block_size_x": 16, "block_size_y": 8, "tile": 4}
    assert tuning.grid(params) == (64, 128, 1)
    assert tuning.block(params) == (16, 8, 1)


def test_problem_size_may_name_a_parameter():
    tuning = Tuning.of(("n",), {"n": [512]}, block_size_names=["bs"])
    assert tuning.grid({"n": 512, "bs": 64}) == (8, 1, 1)


def test_configs_follow_kernel_tuners_order_and_restrictions():
    tuning = Tuning.of(64, {"a": [1, 2], "b": [10, 20]}, restrictions=["a * b < 40"])
    assert tuning.configs() == [{"a": 1, "b": 10}, {"a": 1, "b": 20}, {"a": 2, "b": 10}]
    func = Tuning.of(64, {"a": [1, 2]}, restrictions=lambda p: p["a"] > 1)
    assert func.configs() == [{"a": 2}]


def test_a_restricted_or_unknown_value_is_refused():
    tuning = Tuning.of(64, {"a": [1, 2]}, restrictions=["a > 1"])
    with pytest.raises(InputError, match="excluded by the restrictions"):
        tuning.check({"a": 1})
    with pytest.raises(InputError, match="a=3 is not among the values"):
        tuning.check({"a": 3})


def test_defines_hold_every_parameter_and_the_geometry():
    tuning = Tuning.of(100, {"block_size_x": [32]})
    defines = tuning.defines({"block_size_x": 32, "flag": True}, (4, 1, 1), (32, 1, 1))
    assert defines["block_size_x"] == 32 and defines["grid_size_x"] == 4
    assert defines["flag"] == 1 and defines["kernel_tuner"] == 1


def test_a_zero_unroll_factor_removes_its_pragma():
    source = ("__global__ void k(float *x) {\n"
              "  #pragma unroll loop_unroll_factor_i\n"
              "  for (int i = 0; i < 8; i++) x[i] += 1;\n}\n")
    kernel = Kernel("k", text=source)
    tuning = Tuning.of(8, {"loop_unroll_factor_i": [0, 4]})
    removed = tuning.kernel(kernel, {"loop_unroll_factor_i": 0}, (1, 1, 1), (8, 1, 1))
    assert "#pragma unroll" not in removed.source
    assert "loop_unroll_factor_i" not in removed.defines
    kept = tuning.kernel(kernel, {"loop_unroll_factor_i": 4}, (1, 1, 1), (8, 1, 1))
    assert "#pragma unroll loop_unroll_factor_i" in kept.source
    assert kept.defines["loop_unroll_factor_i"] == 4


@pytest.mark.parametrize("kwargs, message", [
    ({"problem_size": (1, 2, 3, 4)}, "4 dimensions"),
    ({"tune_params": {"a": []}}, "has no values"),
    ({"block_size_names": []}, "one to three"),
])
def test_malformed_tuning_is_refused(kwargs, message):
    with pytest.raises(InputError, match=message):
        Tuning.of(**kwargs)
