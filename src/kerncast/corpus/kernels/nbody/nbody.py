"""Inputs and NumPy reference for the all-pairs n-body kernel.

Bodies are drawn from a Plummer sphere (scale radius 1, total mass 1, equal masses,
radii capped at ~30) — the standard initial model of star-cluster simulations. With
G = 1 and softening eps, body i gets

    a_i   = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
    phi_i = -sum_j m_j / (|x_j - x_i|^2 + eps^2)^(1/2)      (j = i included)
"""

import numpy as np

ROWS = 64  # bodies per step of the reference


def plummer(n, rng):
    u = rng.uniform(1e-6, 0.999, n)
    radius = 1.0 / np.sqrt(u ** (-2.0 / 3.0) - 1.0)
    direction = rng.standard_normal((n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return direction * radius[:, None]


def inputs(kernel, params, rng):
    n = params["n"]
    pos = np.empty((n, 4), dtype=np.float32)
    pos[:, :3] = plummer(n, rng)
    pos[:, 3] = 1.0 / n
    return {"pos": pos.reshape(-1)}


def reference(kernel, args, params):
    """Pairwise terms in float32, sums accumulated in float64.

    Each pair's terms carry float32 rounding only (relative ~1e-7, as in the kernel);
    the sums over all bodies, where a float32 kernel's error grows, are taken in
    float64. Float32 pair arithmetic runs several times faster than float64 in NumPy.
    """
    pos = args["pos"].reshape(-1, 4)
    n = pos.shape[0]
    eps2 = np.float32(params["eps"] ** 2)
    xyz = np.ascontiguousarray(pos[:, :3].T)
    mass = pos[:, 3]
    out = np.empty((n, 4), dtype=np.float64)
    for lo in range(0, n, ROWS):
        mine = pos[lo:lo + ROWS, :3]
        d = [xyz[k][None, :] - mine[:, k][:, None] for k in range(3)]
        r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2
        inv = 1.0 / np.sqrt(r2)
        w = inv * inv * inv * mass
        for k in range(3):
            out[lo:lo + ROWS, k] = (d[k] * w).sum(axis=1, dtype=np.float64)
        out[lo:lo + ROWS, 3] = -(inv * mass).sum(axis=1, dtype=np.float64)
    return {"acc": out.astype(np.float32).reshape(-1)}
