"""Generators and closed-form references of the micro-benchmark, reduction, scan and
sorting kernels, checked against direct (slow) computations of their definitions."""

import numpy as np
import pytest

from kerncast.corpus import get_kernel, make_args, module_of


def _args(name, size="small", **tunables):
    kernel = get_kernel(name)
    config = kernel.launch(size, tunables or None)
    return kernel, config, make_args(kernel, config, seed=11)


def _reference(kernel, config, args):
    return module_of(kernel).reference(kernel.name, args, kernel.arg_env(config))


@pytest.mark.parametrize("name", ["arith_fp32", "arith_fp64"])
def test_affine_chain_closed_form_matches_iteration(name):
    kernel, config, args = _args(name)
    a = args["x"].astype(np.float64)
    for _ in range(int(args["iters"])):
        a = a * float(args["m"]) + float(args["c"])
    got = _reference(kernel, config, args)["y"]
    assert np.allclose(got, a, rtol=1e-6, atol=1e-6)


def test_integer_chain_reference_matches_a_direct_loop():
    kernel, config, args = _args("arith_int32")
    h = args["x"][:64].astype(np.uint64)
    mask = (1 << 32) - 1
    for _ in range(int(args["iters"])):
        h ^= h >> 7
        h = (h * int(args["mul"]) + int(args["add"])) & mask
        h ^= (h << 9) & 0xA5A5A5A5
        h = (h + (h >> 13)) & mask
    assert np.array_equal(_reference(kernel, config, args)["y"][:64], h.astype(np.uint32))


def test_strided_copy_reference_is_the_gather():
    kernel, config, args = _args("copy_strided", stride=8)
    cols, stride = int(args["cols"]), int(args["stride"])
    q, r = np.divmod(np.arange(cols * stride), cols)
    assert np.array_equal(_reference(kernel, config, args)["y"], args["x"][r * stride + q])


def test_bank_stride_window_sums_match_the_loop():
    kernel, config, args = _args("smem_bank_stride", stride=3)
    table, iters = args["table"].astype(np.uint64), int(args["iters"])
    i = np.arange(100, dtype=np.uint64)[:, None]
    idx = (i * 3 + np.arange(iters, dtype=np.uint64)[None, :]) & np.uint64(2047)
    want = (table[idx].sum(axis=1) % (1 << 32)).astype(np.uint32)
    assert np.array_equal(_reference(kernel, config, args)["y"][:100], want)


def test_data_dependent_branches_are_mostly_coherent_per_warp():
    _, _, args = _args("branch_divergence", size="medium")
    paths = [len(np.unique(w)) for w in args["cls"].reshape(-1, 32)[:2000]]
    assert 1.0 < np.mean(paths) < 2.5


def test_reduction_partials_follow_the_tile_layout():
    kernel, config, args = _args("reduce_tree", bx=64, items=8)
    tile = 64 * 8
    got = _reference(kernel, config, args)["partial"]
    x = args["x"].astype(np.float64)
    want = [x[b * tile:(b + 1) * tile].sum() for b in range(got.size)]
    assert got.size == config.blocks and np.allclose(got, want, rtol=1e-6)


def test_scan_restarts_at_every_segment():
    kernel, config, args = _args("scan_block", bx=32, items=4)
    y, x = _reference(kernel, config, args)["y"], args["x"]
    assert y[127] == x[:128].sum() and y[128] == x[128] and y[-1] == x[x.size // 128 * 128:].sum()


def test_bitonic_step_state_finishes_into_sorted_runs():
    kernel, config, args = _args("bitonic_step")
    module, keys = module_of(kernel), args["keys"].copy()
    size, stride = int(args["size"]), int(args["stride"])
    while stride >= 1:
        module._step(keys, size, stride)
        stride //= 2
    for b, run in enumerate(keys.astype(np.int64).reshape(-1, size)):
        steps = np.diff(run)
        assert (steps >= 0).all() if b % 2 == 0 else (steps <= 0).all()


def test_radix_offsets_agree_with_the_digit_counts():
    scatter, config, args = _args("radix_scatter", bx=64, items=4)
    count = get_kernel("radix_digit_count")
    counts = module_of(count).reference(count.name, {**args, "tile": 256}, {})["counts"]
    want = np.concatenate(([0], np.cumsum(counts.astype(np.int64))[:-1]))
    assert np.array_equal(args["offsets"], want)
    out, keys = _reference(scatter, config, args)["out"], args["keys"]
    digit = lambda k: (k >> np.uint32(int(args["shift"]))) & np.uint32(15)  # noqa: E731
    assert (np.diff(digit(out).astype(np.int64)) >= 0).all()
    for d in range(16):  # stable: each digit's keys keep their input order
        assert np.array_equal(out[digit(out) == d], keys[digit(keys) == d])
