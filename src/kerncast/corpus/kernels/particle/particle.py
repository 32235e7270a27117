"""Inputs and NumPy reference for the particle-filter likelihood kernel.

The observation is an 8-bit-like video frame (float32 values 0..255): a textured
background around intensity 100 with a bright disc (228) — the tracked object. The
particles are hypotheses of the object's position scattered around it (Gaussian, 6
px); their weights come from the previous step. Each particle scores the pixels of
a disc template (radius r, npix lattice points) placed at its rounded position with
a robust log-likelihood ratio of "object" against "background".
"""

import numpy as np

FG, BG = 228.0, 100.0          # object and background intensities
INV_2VAR = 1.0 / (2.0 * 20.0**2)  # both classes have a 20-level spread
FLOOR = 1e-3                   # outlier floor of each class density
OBJECT_RADIUS = 12.0


def disc_offsets(radius):
    """Lattice offsets (dx, dy) with dx^2 + dy^2 <= radius^2, row by row."""
    r = int(radius)
    dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
    inside = dx * dx + dy * dy <= r * r
    return dx[inside].astype(np.int32), dy[inside].astype(np.int32)


def _frame(width, height, centre, rng):
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    texture = 12.0 * np.sin(x / 37.0) * np.cos(y / 23.0)
    img = BG + texture + rng.normal(0.0, 20.0, (height, width)).astype(np.float32)
    disc = (x - centre[0]) ** 2 + (y - centre[1]) ** 2 <= OBJECT_RADIUS**2
    img[disc] = FG + rng.normal(0.0, 20.0, int(disc.sum()))
    return np.clip(np.rint(img), 0, 255).astype(np.float32)


def inputs(kernel, params, rng):
    n, width, height = params["n"], params["width"], params["height"]
    dx, dy = disc_offsets(params["radius"])
    if dx.size != params["npix"]:
        raise ValueError(f"a disc of radius {params['radius']} has {dx.size} pixels, "
                         f"not npix={params['npix']}")
    centre = rng.uniform([0.3 * width, 0.3 * height], [0.7 * width, 0.7 * height])
    spread = rng.normal(0.0, 6.0, (2, n))
    return {
        "frame": _frame(width, height, centre, rng).reshape(-1),
        "px": (centre[0] + spread[0]).astype(np.float32),
        "py": (centre[1] + spread[1]).astype(np.float32),
        "weights": rng.gamma(4.0, 0.25, n).astype(np.float32),
        "dx": dx, "dy": dy,
    }


def _pixel_scores(v):
    """Log-likelihood ratio of object against background for pixel values v."""
    a, b = v - FG, v - BG
    return np.log(FLOOR + np.exp(-a * a * INV_2VAR)) - np.log(FLOOR + np.exp(-b * b * INV_2VAR))


def reference(kernel, args, params):
    width, height = params["width"], params["height"]
    frame, dx, dy = args["frame"], args["dx"], args["dy"]
    # Generated frames hold integers 0..255: score the 256 values once.
    integral = np.array_equal(frame, np.clip(np.rint(frame), 0, 255))
    table = _pixel_scores(np.arange(256, dtype=np.float64))
    cx = np.floor(args["px"] + np.float32(0.5)).astype(np.int64)
    cy = np.floor(args["py"] + np.float32(0.5)).astype(np.int64)
    loglik = np.empty(cx.size)
    step = max(1, (1 << 20) // dx.size)
    for lo in range(0, cx.size, step):
        ix = np.clip(cx[lo:lo + step, None] + dx[None, :], 0, width - 1)
        iy = np.clip(cy[lo:lo + step, None] + dy[None, :], 0, height - 1)
        values = frame[iy * width + ix]
        scores = table[values.astype(np.int64)] if integral else _pixel_scores(values.astype(np.float64))
        loglik[lo:lo + step] = scores.sum(axis=1) / dx.size
    weights = args["weights"].astype(np.float64) * np.exp(loglik)
    return {"loglik": loglik.astype(np.float32), "new_weights": weights.astype(np.float32)}
