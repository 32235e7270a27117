"""Arguments as users give them, and what a launch materialises from them."""

from __future__ import annotations

import numpy as np
import pytest

from kerncast import InputError
from kerncast.core import (Array, BufferOffset, Generator, Launch, Scalar, Struct, View,
                           as_argument, parse_generator)


def test_numpy_values_become_arguments():
    x = np.arange(8, dtype=np.float32)
    assert isinstance(as_argument(x), Array) and as_argument(x).data is x
    assert as_argument(np.int32(5)) == Scalar(5, np.dtype("int32"))
    assert as_argument(True) == Scalar(True)
    assert as_argument(np.bool_(False)).dtype == np.dtype(bool)
    point = np.zeros((), np.dtype([("x", np.float32), ("n", np.int32)], align=True))
    assert as_argument(point) == Struct(bytes(8))


@pytest.mark.parametrize("value, message", [
    ("text", "cannot pass a str"),
    ({"a": 1}, "cannot pass a dict"),
    (Generator("zeros"), "a generator alone is no argument"),
])
def test_what_is_no_argument_is_refused(value, message):
    with pytest.raises(InputError, match=message):
        as_argument(value)


def test_a_struct_is_packed_in_the_c_layout():
    raw = Struct.pack([("alpha", "float32", 2.0), ("n", "int32", 7), ("g", "float64", 0.5)]).raw
    assert len(raw) == 16  # 4 + 4, then the double at 8
    assert np.frombuffer(raw[:4], np.float32)[0] == 2.0
    assert np.frombuffer(raw[4:8], np.int32)[0] == 7
    assert np.frombuffer(raw[8:], np.float64)[0] == 0.5


def test_scalars_are_checked_against_their_type():
    with pytest.raises(InputError, match="does not fit int8"):
        Scalar(300, "int8")
    with pytest.raises(InputError, match="not a kernel argument type"):
        Scalar(1, "complex64")


def test_an_array_description_is_generated_with_the_launch_seed():
    desc = Array("float32", (1000,), "uniform(2, 3)")
    launch = Launch(4, 256, args=(desc,), seed=7)
    first = launch.materialise()[0]
    assert first.dtype == np.float32 and first.shape == (1000,)
    assert 2 <= first.min() and first.max() < 3
    assert np.array_equal(first, Launch(4, 256, args=(desc,), seed=7).materialise()[0])
    assert not np.array_equal(first, Launch(4, 256, args=(desc,), seed=8).materialise()[0])
    assert not launch.materialise(generate=False)[0].any()  # zeros where values do not matter


def test_data_comes_read_only_and_unchanged():
    x = np.arange(6, dtype=np.int32)
    out = Launch(1, 32, args=(x,)).materialise()[0]
    assert np.shares_memory(out, x) and not out.flags.writeable


def test_an_output_is_zeros_even_with_a_generator():
    desc = Array("int32", 64, "randint(1, 5)", intent="out")
    assert not Launch(1, 64, args=(desc,)).materialise()[0].any()


def test_a_view_points_into_its_array():
    launch = Launch(1, 32, args=(Array("float32", 100, "arange"), View("x", 10)),
                    names=("x", "p"))
    base, view = launch.materialise()
    assert isinstance(view, BufferOffset) and view.array is base and view.byte_offset == 40


def test_a_view_of_a_numpy_array_finds_the_argument_holding_it():
    x = np.zeros(50, np.float64)
    launch = Launch(1, 32, args=(x, View(x, 5)))
    assert launch.materialise()[1].byte_offset == 40


@pytest.mark.parametrize("view, message", [
    (View("nope", 1), "no argument 'nope'"),
    (View("n", 1), "is not an array"),
    (View("x", 101), "points 101 elements into x, which has 100"),
])
def test_bad_views_are_named(view, message):
    launch = Launch(1, 32, args=(Array("float32", 100), Scalar(3), view), names=("x", "n", "p"))
    with pytest.raises(InputError, match=message):
        launch.materialise()


def test_generators_parse_and_refuse_unknown_names():
    assert parse_generator("uniform(0, 1)") == Generator("uniform", (0, 1))
    assert parse_generator("zeros").args == ()
    assert parse_generator("normal").args == (0.0, 1.0)
    with pytest.raises(InputError, match="unknown generator 'gauss'.*uniform"):
        parse_generator("gauss(0, 1)")
    with pytest.raises(InputError, match="needs low, high"):
        parse_generator("randint()")
    with pytest.raises(InputError, match="at most 2 values"):
        parse_generator("uniform(0, 1, 2)")


def test_npy_generator_checks_the_file(tmp_path):
    path = tmp_path / "rows.npy"
    np.save(path, np.arange(10, dtype=np.int32))
    values = Generator("npy", (str(path),)).draw(np.random.default_rng(), np.dtype("int32"), (10,))
    assert np.array_equal(values, np.arange(10))
    with pytest.raises(InputError, match="holds 10 elements"):
        Generator("npy", (str(path),)).draw(np.random.default_rng(), np.dtype("int32"), (11,))
    with pytest.raises(InputError, match="holds int32 but the argument is float32"):
        Generator("npy", (str(path),)).draw(np.random.default_rng(), np.dtype("float32"), (10,))


def test_permutation_and_randint_draw_what_they_say():
    rng = np.random.default_rng(0)
    perm = Generator("permutation").draw(rng, np.dtype("int32"), (64,))
    assert sorted(perm.tolist()) == list(range(64))
    ints = Generator("randint", (3, 5)).draw(rng, np.dtype("int64"), (1000,))
    assert set(np.unique(ints).tolist()) == {3, 4}


@pytest.mark.parametrize("grid, block, message", [
    ((0,), 32, "at least 1"),
    (1, 2048, "exceeds the limit of 1024"),
    ((1, 70000), 32, "grid dimension y = 70000 exceeds"),
    ((1, 1, 1, 1), 32, "has 4 dimensions"),
])
def test_launch_geometry_is_checked(grid, block, message):
    with pytest.raises(InputError, match=message):
        Launch(grid, block)


def test_launch_names_and_label():
    launch = Launch((4, 2), (16, 16), args=(np.int32(1), np.float32(2)), params={"b": 2, "a": 1})
    assert launch.names == ("arg0", "arg1") and launch.label() == "a=1,b=2"
    assert launch.blocks == 8 and launch.threads_per_block == 256 and launch.grid == (4, 2, 1)
