"""NumPy reference for the Monte Carlo option kernel (it has no input buffers).

An arithmetic-average Asian call, monitored at ``steps`` dates, priced by simulating
geometric Brownian motion paths. Path g takes its normals from the counter-based
generator Philox-2x32-10 (Salmon et al., SC 2011) with key = seed and counter =
(g, k) for the k-th pair of steps; the two 32-bit words become two uniforms in
(0, 1), (w >> 9 + 0.5) / 2^23, and the uniforms two normals by Box-Muller. The
reference reproduces the generator exactly in uint64 arithmetic, then follows the
paths accumulating in float64. Thread t sums the payoffs (and their squares) of paths
t * paths + 0 .. paths - 1.
"""

import numpy as np

MULT = np.uint64(0xD256D193)
WEYL = 0x9E3779B9
MASK = np.uint64(0xFFFFFFFF)
PATHS_PER_STEP = 1 << 14  # paths per step of the reference (cache-sized)


def philox2x32(x0, x1, key):
    """Philox-2x32 with 10 rounds on uint32 counter arrays; returns two uint32 arrays."""
    x0 = x0.astype(np.uint64)
    x1 = x1.astype(np.uint64)
    k = int(key)
    for _ in range(10):
        prod = x0 * MULT
        x0, x1 = (prod >> np.uint64(32)) ^ np.uint64(k) ^ x1, prod & MASK
        k = (k + WEYL) & 0xFFFFFFFF
    return x0.astype(np.uint32), x1.astype(np.uint32)


def normals(first_path, count, steps, seed):
    """The (count, steps) normals of paths first_path .. first_path + count - 1."""
    g = np.repeat(np.arange(first_path, first_path + count, dtype=np.uint64), steps // 2)
    k = np.tile(np.arange(steps // 2, dtype=np.uint64), count)
    w0, w1 = philox2x32(g, k, seed)
    u1 = ((w0 >> np.uint32(9)).astype(np.float32) + np.float32(0.5)) * np.float32(2.0**-23)
    u2 = ((w1 >> np.uint32(9)).astype(np.float32) + np.float32(0.5)) * np.float32(2.0**-23)
    # The uniforms are exact; the transcendentals are taken in float32 (relative error
    # ~1e-7, like the kernel's, far inside the check's tolerance; 10x faster in NumPy).
    radius = np.sqrt(np.float32(-2.0) * np.log(u1))
    angle = np.float32(2.0 * np.pi) * u2
    z = np.empty((count, steps // 2, 2))
    z[:, :, 0] = (radius * np.cos(angle)).reshape(count, -1)
    z[:, :, 1] = (radius * np.sin(angle)).reshape(count, -1)
    return z.reshape(count, steps)


def inputs(kernel, params, rng):
    return {}


def reference(kernel, args, params):
    total, steps, per = params["total_paths"], params["steps"], params["paths"]
    s0, strike = params["s0"], params["strike"]
    r, v, years = (float(np.float32(params[k])) for k in ("r", "v", "years"))
    dt = years / steps
    drift, vol = (r - 0.5 * v * v) * dt, v * np.sqrt(dt)
    payoff = np.empty(total)
    for lo in range(0, total, PATHS_PER_STEP):
        count = min(PATHS_PER_STEP, total - lo)
        z = normals(lo, count, steps, params["seed"])
        log_path = np.log(np.float32(s0)) + np.cumsum(drift + vol * z, axis=1)
        average = np.exp(log_path.astype(np.float32)).mean(axis=1, dtype=np.float64)
        payoff[lo:lo + count] = np.maximum(average - np.float32(strike), 0.0)
    groups = payoff.reshape(total // per, per)
    return {"sums": groups.sum(axis=1).astype(np.float32),
            "squares": (groups * groups).sum(axis=1).astype(np.float32)}
