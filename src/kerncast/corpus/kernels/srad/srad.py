"""Inputs and NumPy reference for the SRAD kernels.

The image imitates an ultrasound scan: a tissue background with a few elliptical
structures (dark cysts, bright inclusions), multiplied by speckle (the mean of two
exponential variates: a two-look intensity speckle) and floored above zero.
"""

import numpy as np

_CHUNK = 1 << 22  # pixels per chunk of the reference


def _structure(rng, rows, cols):
    img = np.ones((rows, cols), dtype=np.float32)
    for _ in range(6):
        cy, cx = rng.uniform(0, rows), rng.uniform(0, cols)
        ry, rx = rng.uniform(0.05, 0.25) * rows, rng.uniform(0.05, 0.25) * cols
        y0, y1 = int(max(0, cy - ry)), int(min(rows, cy + ry + 1))
        x0, x1 = int(max(0, cx - rx)), int(min(cols, cx + rx + 1))
        yy = ((np.arange(y0, y1, dtype=np.float32) - cy) / ry) ** 2
        xx = ((np.arange(x0, x1, dtype=np.float32) - cx) / rx) ** 2
        inside = (yy[:, None] + xx[None, :]) <= 1.0
        img[y0:y1, x0:x1][inside] = rng.choice([0.2, 0.5, 1.8, 2.5])
    return img


def _speckled(rng, rows, cols):
    img = _structure(rng, rows, cols)
    speckle = rng.standard_exponential((rows, cols), dtype=np.float32)
    speckle += rng.standard_exponential((rows, cols), dtype=np.float32)
    speckle *= np.float32(0.5)
    speckle += np.float32(0.02)
    img *= speckle
    return img


def _padded(img, r0, r1):
    rows = img.shape[0]
    lo, hi = max(r0 - 1, 0), min(r1 + 1, rows)
    block = img[lo:hi].astype(np.float64)
    return np.pad(block, ((1 if r0 == 0 else 0, 1 if r1 == rows else 0), (1, 1)), mode="edge")


def _coefficients(img, q0sq):
    rows, cols = img.shape
    coef = np.empty((rows, cols), dtype=np.float32)
    step = max(1, _CHUNK // cols)
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        p = _padded(img, r0, r1)
        ic = p[1:-1, 1:-1]
        d = [p[:-2, 1:-1] - ic, p[2:, 1:-1] - ic, p[1:-1, :-2] - ic, p[1:-1, 2:] - ic]
        g2 = sum(x * x for x in d) / (ic * ic)
        lap = sum(d) / ic
        qsq = (0.5 * g2 - lap * lap / 16.0) / (1.0 + 0.25 * lap) ** 2
        value = 1.0 / (1.0 + (qsq - q0sq) / (q0sq * (1.0 + q0sq)))
        coef[r0:r1] = np.clip(value, 0.0, 1.0)
    return coef


def _apply(img, coef, step_size):
    rows, cols = img.shape
    out = np.empty((rows, cols), dtype=np.float32)
    step = max(1, _CHUNK // cols)
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        p, c = _padded(img, r0, r1), _padded(coef, r0, r1)
        ic, cc = p[1:-1, 1:-1], c[1:-1, 1:-1]
        flux = (c[2:, 1:-1] * (p[2:, 1:-1] - ic) + c[1:-1, 2:] * (p[1:-1, 2:] - ic)
                + cc * (p[:-2, 1:-1] - ic) + cc * (p[1:-1, :-2] - ic))
        out[r0:r1] = ic + step_size * flux
    return out


def inputs(kernel, params, rng):
    rows, cols = params["rows"], params["cols"]
    img = _speckled(rng, rows, cols)
    if kernel == "srad_coefficients":
        return {"img": img.reshape(-1)}
    coef = _coefficients(img, float(np.float32(params["q0sq"])))
    return {"img": img.reshape(-1), "coef": coef.reshape(-1)}


def reference(kernel, args, params):
    rows, cols = params["rows"], params["cols"]
    img = args["img"].reshape(rows, cols)
    if kernel == "srad_coefficients":
        return {"coef": _coefficients(img, float(np.float32(params["q0sq"]))).reshape(-1)}
    coef = args["coef"].reshape(rows, cols)
    return {"out": _apply(img, coef, float(np.float32(params["step"]))).reshape(-1)}
