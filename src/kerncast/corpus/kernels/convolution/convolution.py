"""Inputs and NumPy reference for the separable convolution passes.

The image has structure at several scales (smooth shading, rectangles, noise); the
filter is a normalised Gaussian of the launch's radius (sigma = radius / 2).
"""

import numpy as np


def _image(rng, rows, cols):
    y = np.linspace(0.0, 1.0, rows, dtype=np.float32)
    x = np.linspace(0.0, 1.0, cols, dtype=np.float32)
    img = rng.random((rows, cols), dtype=np.float32)
    img *= np.float32(0.2)
    img += np.multiply.outer(np.float32(0.3) * y, np.float32(0.5) + np.float32(0.5) * x)
    for _ in range(8):
        r0, c0 = rng.integers(0, rows), rng.integers(0, cols)
        r1, c1 = r0 + rng.integers(1, rows // 3 + 2), c0 + rng.integers(1, cols // 3 + 2)
        img[r0:r1, c0:c1] += np.float32(rng.uniform(0.1, 0.5))
    return img


def weights(radius):
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-0.5 * (k / (radius / 2.0)) ** 2)
    return (g / g.sum()).astype(np.float32)


def inputs(kernel, params, rng):
    rows, cols = params["rows"], params["cols"]
    return {"in": _image(rng, rows, cols).reshape(-1), "w": weights(params["radius"])}


def reference(kernel, args, params):
    from scipy.ndimage import correlate1d  # noqa: PLC0415 (heavy import, only when checking)

    rows, cols = params["rows"], params["cols"]
    img = args["in"].reshape(rows, cols)
    axis = 0 if kernel == "convolve_cols" else 1
    # correlate1d accumulates in double precision; 'nearest' is clamp-to-edge.
    out = correlate1d(img, args["w"].astype(np.float64), axis=axis, mode="nearest",
                      output=np.float32)
    return {"out": out.reshape(-1)}
