"""Inputs and NumPy reference for the MRI Q-matrix kernel.

Non-Cartesian MRI reconstruction (the Q matrix of Stone et al.) needs, for every
voxel x, Q(x) = sum_k |phi_k|^2 exp(i 2 pi k . x). Voxels are the points of a cubic
grid (coordinates in voxel units, centred on 0); K-space samples lie on a stack of
spirals (|k| <= 0.5 cycles per voxel) and phi is a smooth density-compensation-like
weight with a random phase. The kernel gets phi's real and imaginary parts and forms
|phi|^2 itself; Q's real part is the cosine sum, its imaginary part the sine sum.
"""

import numpy as np

TWO_PI = 2.0 * np.pi
VOXELS_PER_STEP = 256  # voxels per step of the reference


def _voxels(numx):
    side = round(numx ** (1.0 / 3.0))
    if side**3 != numx:
        raise ValueError(f"numx={numx} is not a cube; choose numx = side^3")
    axis = np.arange(side, dtype=np.float32) - side / 2
    z, y, x = np.meshgrid(axis, axis, axis, indexing="ij")
    return x.reshape(-1), y.reshape(-1), z.reshape(-1)


def _spiral_stack(numk, rng):
    """numk samples on 16 spiral interleaves x numk/16 points, stacked in kz."""
    turns, leaves = 8.0, 16
    per = numk // leaves
    s = np.linspace(0.0, 1.0, per, endpoint=False)
    leaf = np.arange(leaves)[:, None]
    radius = 0.5 * s[None, :]
    angle = TWO_PI * (turns * s[None, :] + leaf / leaves)
    kx = radius * np.cos(angle)
    ky = radius * np.sin(angle)
    kz = np.broadcast_to(np.linspace(-0.5, 0.5, leaves)[:, None], kx.shape)
    jitter = rng.normal(0.0, 1e-3, (3, leaves, per))
    return [(c + j).reshape(-1).astype(np.float32) for c, j in zip((kx, ky, kz), jitter)]


def inputs(kernel, params, rng):
    numk, numx = params["numk"], params["numx"]
    kx, ky, kz = _spiral_stack(numk, rng)
    weight = np.exp(-(kx**2 + ky**2 + kz**2) / 0.18) * rng.uniform(0.8, 1.2, numk)
    phase = rng.uniform(0.0, TWO_PI, numk)
    x, y, z = _voxels(numx)
    return {"kx": kx, "ky": ky, "kz": kz,
            "phi_r": (weight * np.cos(phase)).astype(np.float32),
            "phi_i": (weight * np.sin(phase)).astype(np.float32),
            "x": x, "y": y, "z": z}


def _direct(k, mag, pos):
    """Q by direct summation, phases reduced modulo 2 pi in float64 (any voxel set)."""
    numx = pos[0].size
    q = np.empty(numx, dtype=np.complex128)
    for lo in range(0, numx, VOXELS_PER_STEP):
        sl = slice(lo, lo + VOXELS_PER_STEP)
        turns = pos[0][sl, None] * k[0] + pos[1][sl, None] * k[1] + pos[2][sl, None] * k[2]
        turns -= np.rint(turns)
        q[sl] = np.exp(1j * TWO_PI * turns) @ mag
    return q


def _factored(k, mag, pos):
    """Q on voxels with few distinct coordinates (a grid), in float64.

    exp(i 2 pi k.x) = ex[x] ey[y] ez[z]: with the (y, z) rows of the grid as columns,
    Q[x, row] = sum_k ex[x, k] (mag ey ez)[k, row] is one complex matrix product.
    """
    (ux, ix), (uy, iy), (uz, iz) = (np.unique(p, return_inverse=True) for p in pos)
    ex, ey, ez = (np.exp(1j * TWO_PI * np.outer(u, kc)) for u, kc in zip((ux, uy, uz), k))
    rows, row_of = np.unique(iy * uz.size + iz, return_inverse=True)
    weights = (mag[:, None] * ey[rows // uz.size].T) * ez[rows % uz.size].T
    return (ex @ weights)[ix, row_of]


def reference(kernel, args, params):
    k = [args[c].astype(np.float64) for c in ("kx", "ky", "kz")]
    mag = args["phi_r"].astype(np.float64) ** 2 + args["phi_i"].astype(np.float64) ** 2
    pos = [args[c].astype(np.float64) for c in ("x", "y", "z")]
    distinct = [np.unique(p).size for p in pos]
    grid_like = distinct[0] * distinct[1] * distinct[2] <= 4 * pos[0].size
    q = _factored(k, mag, pos) if grid_like else _direct(k, mag, pos)
    return {"qr": q.real.astype(np.float32), "qi": q.imag.astype(np.float32)}
