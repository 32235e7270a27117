"""The corpus's generated inputs are those the datasets were measured with, however they
are made now (a piece at a time, compiled loops, draws on several threads)."""

import hashlib

import numpy as np
import pytest

from kerncast.corpus import get_kernel, make_args

#: SHA-256 (first 16 hex digits) of inputs as the generators drew them when the datasets
#: were measured (whole arrays; NumPy's rng.permutation; a BFS and Bellman-Ford level by
#: level in NumPy)
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
    "bfs_frontier_expand/small/frontier": "42883780e7b81817",
    "bfs_frontier_expand/small/level": "8ded21a415b4d911",
    "bfs_frontier_expand/medium/row_ptr": "aae551daf3c1a1be",
    "bfs_frontier_expand/medium/cols": "8b4da884752f49b0",
    "bfs_frontier_expand/medium/frontier": "3b67ac25bf23364b",
    "bfs_frontier_expand/medium/level": "78ca653a08804e10",
    "bfs_queue_expand/small/queue_in": "677e124e9d3b9103",
    "bfs_queue_expand/medium/queue_in": "98da1bbf17f463ae",
    "bfs_queue_expand/medium/level": "78ca653a08804e10",
    "sssp_relax/small/row_ptr": "296f4a4e96e676ac",
    "sssp_relax/small/cols": "f3af1f8ac922cf66",
    "sssp_relax/small/weights": "5f5f254008681e5a",
    "sssp_relax/small/active": "df30d148834b8c10",
    "sssp_relax/small/dist_in": "2c81bded6cd4ef9e",
    "sssp_relax/medium/weights": "0322c103db3c5df9",
    "sssp_relax/medium/active": "4057dd7e690a4193",
    "sssp_relax/medium/dist_in": "23469197e9801ddf",
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
