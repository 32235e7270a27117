"""Chunked arrays: values made a piece at a time, equal to those made whole."""

import numpy as np
import pytest

from kerncast.core import (CHUNKED_BYTES, Array, Chunked, Generator, advanced, chunked_together,
                           parse_generator)
from kerncast.core import _chunked


def _counting(size: int, per: int):
    made: list[int] = []

    def piece(k: int) -> np.ndarray:
        made.append(k)
        return np.arange(k * per, min(size, (k + 1) * per), dtype=np.int64) * 3

    return Chunked(np.int32, size, per, piece), made


def test_values_come_from_the_pieces_they_reach():
    array, made = _counting(1000, 64)
    assert array.pieces == 16 and array.shape == (1000,) and array.nbytes == 4000
    assert array.values(100, 140).tolist() == [3 * i for i in range(100, 140)]
    assert made == [1, 2]
    assert array.values(990, 5000).tolist() == [3 * i for i in range(990, 1000)]  # clipped
    assert array.values(50, 50).size == 0
    assert (array.materialise() == np.arange(1000) * 3).all()


def test_only_the_last_pieces_are_kept(monkeypatch):
    monkeypatch.setattr(_chunked, "KEPT_PIECES", 2)
    array, made = _counting(1000, 10)
    for k in (0, 1, 0, 2, 1):
        array.piece(k)
    assert made == [0, 1, 2, 1]  # 0 was kept when asked again; 1 had gone by then


def test_byte_ranges_pad_with_zeros_past_the_end():
    array, _ = _counting(10, 4)
    raw = array.materialise().view(np.uint8)
    assert (array.byte_range(6, 30) == raw[6:30]).all()
    assert (array[36:48] == np.concatenate([raw[36:40], np.zeros(8, np.uint8)])).all()
    with pytest.raises(TypeError, match="byte slices"):
        array[::2]


def test_a_piece_of_the_wrong_length_is_refused():
    array = Chunked(np.float32, 10, 4, lambda k: np.zeros(3))
    with pytest.raises(ValueError, match="made 3 values, not 4"):
        array.piece(0)
    with pytest.raises(IndexError):
        array.piece(3)


def test_arrays_made_together_share_their_pieces():
    calls: list[int] = []

    def make(k):
        calls.append(k)
        return {"a": np.full(4, k), "b": np.full(8, -k)}

    made = chunked_together({"a": (np.int32, 10, 4), "b": (np.int16, 20, 8)}, make)
    assert made["a"].values(4, 8).tolist() == [1] * 4
    assert made["b"].values(8, 10).tolist() == [-1, -1]
    assert calls == [1]


def test_an_advanced_generator_continues_a_longer_draw():
    rng = np.random.default_rng(5)
    rng.random(dtype=np.float32)  # leaves half a 64-bit output buffered
    start = advanced(rng, 0)
    whole = rng.bit_generator.random_raw(100)
    later = rng.random(3, dtype=np.float32)  # the buffered half first
    assert (advanced(start, 40).bit_generator.random_raw(60) == whole[40:]).all()
    assert (advanced(start, 100).random(3, dtype=np.float32) == later).all()
    with pytest.raises(TypeError, match="default_rng"):
        advanced(np.random.Generator(np.random.MT19937(1)), 3)


@pytest.mark.parametrize("text", ["uniform(-2, 3)", "arange(5, 0.5)", "full(7)", "zeros", "ones"])
def test_generators_make_the_same_values_in_pieces(text):
    size = (1 << 20) * 2 + 12345  # three pieces, the last one short
    whole = parse_generator(text)
    drawn = whole.draw(np.random.default_rng([0, 1]), np.float32, (size,))
    chunked = whole.draw_chunked(np.random.default_rng([0, 1]), np.float32, (size,))
    assert isinstance(chunked, Chunked)
    assert (chunked.values(1_000_000, 2_200_000) == drawn[1_000_000:2_200_000]).all()
    assert (chunked.materialise() == drawn).all()


def test_integers_in_a_range_are_drawn_whole():
    generator = Generator("uniform", (0, 10))
    made = generator.draw_chunked(np.random.default_rng(1), np.int32, (1 << 22,))
    assert isinstance(made, np.ndarray)
    assert (made == generator.draw(np.random.default_rng(1), np.int32, (1 << 22,))).all()


def test_an_array_comes_chunked_only_when_large_and_asked():
    big = Array(np.float32, (CHUNKED_BYTES // 4,), generator="uniform(0, 1)")
    small = Array(np.float32, (1000,), generator="uniform(0, 1)")
    rng = np.random.default_rng
    assert isinstance(big.values(rng(0), chunked=True), Chunked)
    assert isinstance(big.values(rng(0)), np.ndarray)
    assert isinstance(small.values(rng(0), chunked=True), np.ndarray)
    assert (big.values(rng(0), chunked=True).values(0, 1000) == big.values(rng(0))[:1000]).all()
