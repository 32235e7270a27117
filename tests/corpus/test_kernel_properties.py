"""Properties of the irregular, dynamic-programming and science/finance corpus kernels
that the generic run-against-the-reference checks cannot see: references agree with
independent brute-force computations, generators produce the states they claim, and
outputs the framework leaves unchecked (the BFS queue) are right as sets."""

import dataclasses
from collections import deque

import numpy as np
import pytest

from kerncast.measure._job import corpus_job
from kerncast.corpus import get_kernel, make_args, module_of


def _module(kernel_name):
    return module_of(get_kernel(kernel_name))


def _small(kernel_name, seed=1, **tunables):
    kernel = get_kernel(kernel_name)
    config = kernel.launch("small", tunables or None)
    return kernel, config, make_args(kernel, config, seed=seed)


def test_bfs_state_is_a_true_bfs_prefix_and_reference_the_next_level():
    kernel, config, args = _small("bfs_frontier_expand")
    row_ptr, cols, n = args["row_ptr"], args["cols"], int(args["n"])
    full = np.full(n, -1)
    full[0] = 0
    todo = deque([0])
    while todo:  # textbook BFS
        v = todo.popleft()
        for u in cols[row_ptr[v]:row_ptr[v + 1]]:
            if full[u] < 0:
                full[u] = full[v] + 1
                todo.append(u)
    cur = int(args["level"][np.flatnonzero(args["frontier"])[0]])
    assert np.array_equal(args["level"], np.where(full <= cur, full, -1))
    out = module_of(kernel).reference(kernel.name, args, kernel.arg_env(config))
    assert np.array_equal(out["level"], np.where(full <= cur + 1, full, -1))
    assert np.array_equal(np.flatnonzero(out["next_frontier"]), np.flatnonzero(full == cur + 1))


def test_bfs_queue_output_is_the_set_of_newly_discovered_vertices_on_pocl(pocl):
    kernel, config, args = _small("bfs_queue_expand", seed=4)
    got = pocl.run_once(corpus_job(kernel, config, "opencl"), args)
    count = int(got["queue_count"][0])
    queue = got["queue_out"][:count]
    discovered = np.flatnonzero((args["level"] < 0) & (got["level"] >= 0))
    assert count > 0
    assert len(set(queue.tolist())) == count
    assert np.array_equal(np.sort(queue), discovered)


def test_sssp_reference_matches_edge_by_edge_relaxation():
    kernel, config, args = _small("sssp_relax", seed=2)
    dist = args["dist"].copy()
    row_ptr, cols, weights = args["row_ptr"], args["cols"], args["weights"]
    for v in np.flatnonzero(args["active"]):
        for e in range(row_ptr[v], row_ptr[v + 1]):
            dist[cols[e]] = min(dist[cols[e]], args["dist_in"][v] + weights[e])
    out = module_of(kernel).reference(kernel.name, args, kernel.arg_env(config))
    assert np.array_equal(out["dist"], dist)
    assert np.array_equal(out["next_active"], (dist < args["dist_in"]).astype(np.uint8))


@pytest.mark.parametrize("tile", [16, 64])
def test_needleman_tiles_match_the_full_score_matrix(tile):
    kernel = get_kernel("nw_tile_diagonal")
    config = kernel.launch("small", {"tile": tile, "tpb": 2})
    args = make_args(kernel, config, seed=6)
    params = kernel.arg_env(config)
    n, gap, nt = params["n"], params["gap"], params["n"] // tile
    table = args["subst"].reshape(24, 24)
    a, b = args["seq_a"][:n].astype(int), args["seq_b"][:n].astype(int)
    h = np.zeros((n + 1, n + 1), dtype=int)
    h[0], h[:, 0] = -gap * np.arange(n + 1), -gap * np.arange(n + 1)
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            h[i, j] = max(h[i - 1, j - 1] + table[a[i - 1], b[j - 1]], h[i - 1, j] - gap,
                          h[i, j - 1] - gap)
    out = module_of(kernel).reference(kernel.name, args, params)
    hb, vb = out["hb"].reshape(-1, nt, tile + 1)[0], out["vb"].reshape(-1, nt, tile + 1)[0]
    for ti in range(nt):
        tj = nt - 1 - ti
        assert np.array_equal(hb[tj], h[(ti + 1) * tile, tj * tile:(tj + 1) * tile + 1])
        assert np.array_equal(vb[ti], h[ti * tile:(ti + 1) * tile + 1, (tj + 1) * tile])


def test_fft_stage_turns_the_state_before_it_into_the_state_after_it():
    fft = _module("fft_radix2_stage")
    x = (np.random.default_rng(0).normal(size=256) + 1j).astype(np.complex64)
    for ns in (1, 4, 16, 128):
        before = fft.partial_fft(x, ns).astype(np.complex128)[None]
        after = fft.stockham_stage(before, ns)[0]
        assert np.allclose(after, fft.partial_fft(x, 2 * ns), rtol=1e-5, atol=1e-4)
    assert np.allclose(fft.partial_fft(x, 256), np.fft.fft(x), rtol=1e-5, atol=1e-4)


def test_philox_matches_the_published_known_answers():
    philox = _module("mc_option_paths").philox2x32
    cases = [((0, 0), 0, (0xFF1DAE59, 0x6CD10DF2)),
             ((0xFFFFFFFF, 0xFFFFFFFF), 0xFFFFFFFF, (0x2C3F628B, 0xAB4FD7AD)),
             ((0x243F6A88, 0x85A308D3), 0x13198A2E, (0xDD7CE038, 0xF62A4C12))]
    for (c0, c1), key, want in cases:
        w0, w1 = philox(np.array([c0], np.uint32), np.array([c1], np.uint32), key)
        assert (int(w0[0]), int(w1[0])) == want


def test_kmeans_points_keep_a_margin_between_their_two_nearest_centroids():
    kernel, config, args = _small("kmeans_assign", seed=9)
    p = kernel.size_params("small")
    points = args["points"].reshape(p["d"], p["n"]).T.astype(np.float64)
    centroids = args["centroids"].reshape(p["k"], p["d"]).astype(np.float64)
    dist = ((points[:, None, :] - centroids[None]) ** 2).sum(axis=2)
    near = np.sort(dist, axis=1)
    assert ((near[:, 1] - near[:, 0]) / near[:, 0]).min() > 1e-3


def test_binomial_closed_form_equals_backward_induction():
    kernel, config, args = _small("binomial_option", seed=3)
    params = kernel.arg_env(config)
    want = module_of(kernel).reference(kernel.name, args, params)["call"]
    steps, r, v = params["steps"], float(np.float32(params["r"])), float(np.float32(params["v"]))
    for opt in range(args["spot"].size):
        s, x, t = (float(args[k][opt]) for k in ("spot", "strike", "years"))
        dt = t / steps
        up = np.exp(v * np.sqrt(dt))
        p = (np.exp(r * dt) - 1 / up) / (up - 1 / up)
        val = np.maximum(s * up ** (2.0 * np.arange(steps + 1) - steps) - x, 0.0)
        for n in range(steps, 0, -1):
            val = np.exp(-r * dt) * (p * val[1:n + 1] + (1 - p) * val[:n])
        assert val[0] == pytest.approx(float(want[opt]), rel=1e-6, abs=1e-6)


def test_pathfinder_reference_chunks_agree_with_one_pass(monkeypatch):
    pathfinder = _module("pathfinder_rows")
    kernel = get_kernel("pathfinder_rows")
    config = kernel.launch("small", {"bs": 256, "pyr": 16})
    args = make_args(kernel, config, seed=2)
    monkeypatch.setattr(pathfinder, "CHUNK", 100)
    chunked = pathfinder.reference(kernel.name, args, kernel.arg_env(config))["dst"]
    whole = pathfinder.advance(args["src"], args["wall"].reshape(16, -1))
    assert np.array_equal(chunked, whole)


def test_spmv_references_match_scipy():
    sparse = pytest.importorskip("scipy.sparse")
    for name in ("spmv_csr_vector", "spmv_ell"):
        kernel, config, args = _small(name, seed=8)
        rows = int(args["rows"])
        if name == "spmv_ell":
            width = int(args["width"])
            r = np.tile(np.arange(rows), width)
            live = args["cols"] >= 0
            a = sparse.csr_matrix((args["vals"][live], (r[live], args["cols"][live])), (rows, rows))
        else:
            a = sparse.csr_matrix((args["vals"], args["cols"], args["row_ptr"]), (rows, rows))
        want = a.astype(np.float64) @ args["x"].astype(np.float64)
        got = module_of(kernel).reference(name, args, kernel.arg_env(config))["y"]
        assert np.allclose(got, want, rtol=1e-6, atol=1e-6)


def test_dct_reference_matches_scipy_per_block():
    dctn = pytest.importorskip("scipy.fft").dctn
    kernel, config, args = _small("dct8x8", seed=5)
    w, h = int(args["width"]), int(args["height"])
    coef = module_of(kernel).reference(kernel.name, args, kernel.arg_env(config))["coef"].reshape(h, w)
    image = args["image"].reshape(h, w).astype(np.float64) - 128.0
    for by, bx in ((0, 0), (8, 40), (h - 8, w - 8)):
        want = dctn(image[by:by + 8, bx:bx + 8], norm="ortho")
        assert np.allclose(coef[by:by + 8, bx:bx + 8], want, rtol=1e-5, atol=1e-4)


def test_mriq_factored_reference_matches_direct_summation():
    mriq = _module("mriq_compute")
    kernel, config, args = _small("mriq_compute", seed=4)
    k = [args[c].astype(np.float64) for c in ("kx", "ky", "kz")]
    mag = args["phi_r"].astype(np.float64) ** 2 + args["phi_i"].astype(np.float64) ** 2
    pos = [args[c].astype(np.float64) for c in ("x", "y", "z")]
    assert np.allclose(mriq._factored(k, mag, pos), mriq._direct(k, mag, pos), rtol=1e-9, atol=1e-9)


def test_nbody_handles_a_count_that_fills_no_tile_on_pocl(pocl):
    kernel = get_kernel("nbody_forces")
    base = kernel.launch("small", {"bs": 64, "unroll": 8})
    config = dataclasses.replace(base, params={**base.params, "n": 250}, grid=(4,))
    module = module_of(kernel)
    params = kernel.arg_env(config)
    args = module.inputs(kernel.name, params, np.random.default_rng(1))
    args.update(acc=np.zeros(4 * 250, np.float32), n=np.int32(250), eps2=np.float32(1e-4))
    got = pocl.run_once(corpus_job(kernel, config, "opencl"), args)["acc"]
    want = module.reference(kernel.name, args, params)["acc"]
    assert np.allclose(got, want, rtol=2e-4, atol=5e-5)
