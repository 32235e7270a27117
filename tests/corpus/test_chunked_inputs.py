"""Generators that make large buffers a piece at a time: every piece agrees with the whole
(and the whole is what was measured: test_measured_inputs.py)."""

import numpy as np
import pytest

from kerncast.core import Chunked
from kerncast.corpus import CorpusInputs, get_kernel
from kerncast.corpus._data import module_of


@pytest.mark.parametrize("name,params", [
    ("black_scholes", {"n": (1 << 20) + 12345}),  # a short last step of odd width
    ("bitonic_step", {"n": 3 << 14, "size": 1 << 14, "stride": 8}),  # a last lone block
    ("bitonic_step", {"n": 1 << 16, "size": 4, "stride": 1}),
    ("atomic_contention", {"n": 3 * (1 << 16) + 7, "nbins": 64}),  # a short last piece
    ("histo_shared", {"n": 3 * 128 * 128 + 100}),  # copies of the scene, the last short
    ("nearest_distance", {"n": 20_001, "qlat": 40.0, "qlon": -60.0}),
    ("spmv_csr_scalar", {"rows": 3_000, "nnz": 70_001}),
    ("spmv_ell", {"rows": 2_999, "width": 24}),
])
def test_every_piece_agrees_with_the_whole(name, params):
    made = module_of(get_kernel(name)).inputs(name, params, np.random.default_rng(3))
    chunked = {k: v for k, v in made.items() if isinstance(v, Chunked)}
    assert chunked
    rng = np.random.default_rng(0)
    for array in chunked.values():
        whole = array.materialise()
        for _ in range(20):
            lo = int(rng.integers(0, array.size))
            hi = min(array.size, lo + int(rng.integers(1, 3 * array.per)))
            assert (array.values(lo, hi) == whole[lo:hi]).all()


def test_a_launch_gets_pieces_for_an_emulation_and_whole_arrays_to_run(monkeypatch):
    from kerncast.corpus import _data

    monkeypatch.setattr(_data, "CHUNKED_BYTES", 1024)  # small's buffers count as large
    monkeypatch.setattr(CorpusInputs, "_kept", [])  # no other test's inputs serve this one
    kernel = get_kernel("spmv_ell")
    source = CorpusInputs(kernel, kernel.launch("small"), "cols", 0)
    chunked = source.draw_chunked(None, np.dtype(np.int32), (0,))
    assert isinstance(chunked, Chunked)
    whole = source.draw(None, np.dtype(np.int32), (0,))  # to run: made whole, kept so
    assert isinstance(whole, np.ndarray) and not whole.flags.writeable
    assert (whole == chunked.materialise()).all()
    assert source.draw(None, np.dtype(np.int32), (0,)) is not whole  # a new read-only view
    assert isinstance(source.draw_chunked(None, np.dtype(np.int32), (0,)), np.ndarray)


def test_radix_keys_in_pieces_are_the_keys_drawn_whole():
    module = module_of(get_kernel("radix_digit_count"))
    n = module.CHUNK + 12_345  # a second step of odd length: its words start mid-draw
    whole = module._draw_keys(np.random.default_rng(9), n)
    chunked = module._chunked_keys(np.random.default_rng(9), n)
    for lo in (0, module.CHUNK - 100, module.CHUNK + 5_000, n - 7):
        assert (chunked.values(lo, lo + 3_000) == whole[lo:lo + 3_000]).all()


def test_radix_block_counts_in_parallel_steps_are_each_tiles_digits(monkeypatch):
    module = module_of(get_kernel("radix_scatter"))
    monkeypatch.setattr(module, "CHUNK", 1 << 12)  # many steps, run side by side
    keys = np.random.default_rng(4).integers(0, 1 << 32, 50_000, dtype=np.uint64)
    keys = keys.astype(np.uint32)
    tile, shift = 96, 8  # a short last tile
    counts = module.block_counts(keys, shift, tile)
    digits = (keys >> shift) & 15
    for b in range(counts.shape[1]):
        part = digits[b * tile:(b + 1) * tile]
        assert (counts[:, b] == np.bincount(part, minlength=16)).all(), b
