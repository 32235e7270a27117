"""Fuzzing the readers of user input: only kerncast's own errors may escape."""

from __future__ import annotations

import functools
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kerncast import KerncastError
from kerncast.core import Tuning, load_launch_file, parse_arg, parse_args, parse_generator

PIECES = st.sampled_from(["n=", "x=", "int32", "float32", "bool", "uint8", "float16", ":", "[",
                          "]", ",", "(", ")", "+", "view:", "struct:", "npy:", "uniform",
                          "normal", "randint", "npy", "zeros", "1", "0", "-3", "2.5", "n",
                          "1e9", "true", "=", " ", "x", "*", "**", "0x1f", "\n", "'"])
SPECS = st.lists(PIECES, min_size=1, max_size=12).map("".join) | st.text(
    alphabet=string.printable, max_size=40)
FAST = settings(max_examples=400, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(SPECS)
def test_an_argument_string_parses_or_says_why(spec):
    try:
        parse_arg(spec)
    except KerncastError:
        pass


@FAST
@given(st.lists(SPECS, max_size=5))
def test_a_list_of_arguments_parses_or_says_why(specs):
    try:
        args, names = parse_args(specs)
    except KerncastError:
        return
    assert len(args) == len(names) == len(specs)


@FAST
@given(SPECS)
def test_a_generator_parses_or_says_why(text):
    try:
        parse_generator(text)
    except KerncastError:
        pass


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**40) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@FAST
@given(st.dictionaries(st.sampled_from(["problem_size", "tune_params", "restrictions",
                                        "grid_div_x", "block_size_names"]),
                       VALUES | st.dictionaries(st.text(min_size=1, max_size=4), VALUES,
                                                max_size=3), max_size=4))
def test_tuning_options_make_a_tuning_or_say_why(options):
    try:
        tuning = Tuning.of(**options)
        configs = tuning.configs()
        if configs:
            tuning.grid(configs[0])
    except KerncastError:
        pass


TOML_LINES = st.sampled_from([
    'kernel = "k"', 'source = "k.cu"', "grid = [4]", "grid = 4", 'grid = ["n"]',
    "block = [32]", "block = [2048]", "dynamic_shared = -1", "seed = 3",
    'args = ["n=int32:4", "x=float32[n]"]', 'args = [1, 2]', 'args = "n=int32:1"',
    "problem_size = 100", "[params]", "block_size_x = 64", "[tune_params]",
    "block_size_x = [32, 64]", 'restrictions = ["block_size_x > 32"]', "bogus = 1",
    'compiler = "clang"', 'options = "-O3"', "defines = { A = 1 }", "= broken"])


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(TOML_LINES, max_size=10))
def test_a_launch_file_loads_or_says_why(tmp_path_factory, lines):
    folder = tmp_path_factory.mktemp("launch")
    (folder / "k.cu").write_text('extern "C" __global__ void k(int n, float *x) {}\n')
    path = folder / "launch.toml"
    path.write_text("\n".join(lines) + "\n")
    try:
        lf = load_launch_file(path)
        for params in lf.configs()[:2]:
            lf.launch(params)
    except KerncastError:
        pass


ARGS = st.one_of(
    st.integers(-2**70, 2**70), st.floats(allow_nan=True), st.booleans(), st.none(),
    st.binary(max_size=24), st.text(max_size=4),
    st.builds(lambda n, k: __import__("numpy").zeros(n, k), st.integers(0, 64),
              st.sampled_from(["float32", "int32", "uint8", "float64", "complex64"])),
    st.builds(lambda o, k: __import__("kerncast").View(o, k),
              st.sampled_from(["x", "y", "arg2", 0, 7]), st.integers(-5, 80)),
)
SAXPY = ('extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {\n'
         '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
         '    if (i < n) y[i] = a * x[i] + y[i];\n}\n')


@pytest.mark.toolchain
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(ARGS, max_size=5), st.integers(-2, 3), st.integers(-1, 2048))
def test_any_arguments_bind_and_run_or_say_why(args, grid, block):
    from kerncast.core import Launch
    from kerncast.emu import emulate

    module = _saxpy_module()
    try:
        launch = Launch(grid, block, args=tuple(args), names=("n", "a", "x", "y", "e")[:len(args)])
        emulate(module, launch, launch.materialise(), [0], entry="saxpy", step_budget=20_000)
    except KerncastError:
        pass


@functools.cache
def _saxpy_module():
    import kerncast

    return kerncast.compile(SAXPY, lang="cuda").module
