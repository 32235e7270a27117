"""kerncast.core._permute: NumPy's permutation, its values and its generator's state."""

import numpy as np
import pytest

from kerncast.core import _permute
from kerncast.core._permute import permuted, shuffle


@pytest.fixture
def compiled_always(monkeypatch):
    monkeypatch.setattr(_permute, "COMPILED_FROM", 0)
    monkeypatch.setattr(_permute, "_BLOCK", 64)  # many blocks, words left over between them


@pytest.mark.parametrize("n", [1, 2, 3, 17, 1000, 4099])
@pytest.mark.parametrize("buffered", [False, True])
def test_values_and_state_are_numpys(compiled_always, n, buffered):
    for seed in range(4):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        if buffered:  # a 32-bit draw leaves the high half of an output buffered
            ours.integers(0, 9, dtype=np.int32)
            theirs.integers(0, 9, dtype=np.int32)
        values = np.arange(n, dtype=np.int32) * 7 - 3
        got = permuted(ours, values)
        np.testing.assert_array_equal(got, theirs.permutation(values))
        assert ours.bit_generator.state == theirs.bit_generator.state
        assert ours.random() == theirs.random()


def test_input_left_as_it_is(compiled_always):
    values = np.arange(100, dtype=np.int64)
    out = permuted(np.random.default_rng(1), values)
    np.testing.assert_array_equal(values, np.arange(100))
    assert sorted(out.tolist()) == list(range(100)) and out.dtype == np.int64


def test_large_array_takes_the_compiled_path():
    values = np.repeat(np.arange(1 << 17, dtype=np.int32), 9)
    assert values.size >= _permute.COMPILED_FROM
    ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(permuted(ours, values), theirs.permutation(values))
    assert ours.bit_generator.state == theirs.bit_generator.state


def test_other_bit_generators_and_shapes_left_to_numpy(compiled_always):
    ours, theirs = (np.random.Generator(np.random.MT19937(3)) for _ in range(2))
    np.testing.assert_array_equal(permuted(ours, np.arange(50)), theirs.permutation(np.arange(50)))
    grid = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(permuted(np.random.default_rng(2), grid),
                                  np.random.default_rng(2).permutation(grid))


@pytest.mark.parametrize("n", [0, 1, 2, 5000])
def test_shuffle_in_place_is_numpys(compiled_always, n):
    ours, theirs = np.random.default_rng(9), np.random.default_rng(9)
    ours.integers(0, 9, dtype=np.int32)
    theirs.integers(0, 9, dtype=np.int32)
    mine, numpys = np.arange(n, dtype=np.uint32), np.arange(n, dtype=np.uint32)
    shuffle(ours, mine)
    theirs.shuffle(numpys)
    np.testing.assert_array_equal(mine, numpys)
    assert ours.bit_generator.state == theirs.bit_generator.state
