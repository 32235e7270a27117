"""Generators that make large buffers a piece at a time: the values are those the whole
draw gave when the corpus was measured, and every piece agrees with the whole."""

import hashlib

import numpy as np
import pytest

from kerncast.core import Chunked
from kerncast.corpus import CorpusInputs, get_kernel, make_args
from kerncast.corpus._data import module_of

#: SHA-256 (first 16 hex digits) of inputs as the whole-array generators drew them when
#: the datasets were measured; the chunked generators must draw the same
MEASURED = {
    "atomic_contention/small/keys": "1acbfe58d0eada58",
    "atomic_contention/medium/keys": "a3e995f12615d9d1",
    "bitonic_step/small/keys": "d4a8fe870638d76b",
    "bitonic_step/medium/keys": "76568c9e86cac4e1",
    "black_scholes/small/spot": "d2deb90c18473732",
    "black_scholes/small/strike": "4ed4236b9bcbdf24",
    "black_scholes/small/years": "92c5c8ef166f044f",
    "black_scholes/medium/spot": "75193b3621939f36",
    "black_scholes/medium/strike": "1c639d76c9d2351c",
    "black_scholes/medium/years": "3bc5e678f0dc855b",
    "histo_shared/small/img": "4fbf77f33cf0ad21",
    "histo_shared/medium/img": "290fc2d87e71f194",
    "nearest_distance/small/records": "f31015a8d06d82da",
    "nearest_distance/medium/records": "62c4e7977222c311",
    "radix_digit_count/small/keys": "7f9af453e5c6166d",
    "radix_scatter/small/keys": "7b80b2d8143ca04a",
    "radix_scatter/small/offsets": "68b454a3fa1c9c78",
    "radix_scatter/medium/offsets": "3c1a2258615ecb90",
    "radix_digit_count/medium/keys": "eb03a09a91824975",
    "spmv_csr_scalar/small/row_ptr": "616ee2febe10753e",
    "spmv_csr_scalar/small/cols": "9ffb24d87edd05c8",
    "spmv_csr_scalar/small/vals": "d6ed891140b22861",
    "spmv_csr_scalar/small/x": "c51a5308f414040e",
    "spmv_csr_scalar/medium/row_ptr": "945c48140691ea9f",
    "spmv_csr_scalar/medium/cols": "3cc9898f8e37469f",
    "spmv_csr_scalar/medium/vals": "2366f662574660af",
    "spmv_csr_scalar/medium/x": "e66dca7ec6bf6537",
    "spmv_ell/small/cols": "b2e45e6875bb15b5",
    "spmv_ell/small/vals": "f1453e879788f41e",
    "spmv_ell/small/x": "75e503d6e7afbdd9",
    "spmv_ell/medium/cols": "fcbf7945ff58939f",
    "spmv_ell/medium/vals": "b038310d20596017",
    "spmv_ell/medium/x": "6f1040acbc80ef74",
}


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("name,size", sorted({tuple(k.split("/")[:2]) for k in MEASURED}))
def test_the_inputs_are_those_measured(name, size):
    kernel = get_kernel(name)
    args = make_args(kernel, kernel.launch(size), poison_outputs=False)
    for key, digest in MEASURED.items():
        if key.startswith(f"{name}/{size}/"):
            assert _digest(args[key.rsplit("/", 1)[1]]) == digest, key


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
