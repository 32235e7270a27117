"""Inputs and NumPy reference for the image histograms.

The image is a synthetic photograph-like scene: smooth shading, soft bright and dark
blobs, a few flat objects with hard edges, and sensor noise, quantised to 8 bits. Its
histogram is uneven and neighbouring pixels often share a bin, as in real images. Large
images repeat a 2048 x 2048 base scene with a brightness shift per copy.
"""

import numpy as np

from kerncast.core import Chunked

CHUNK = 1 << 24
PIECE = 1 << 16  # pixels made at once where an emulation reaches them


def _scene(rng, h, w):
    # rows and columns broadcast, and each blob's Gaussian is the product of its row and
    # column factors: the same image, bit for bit, as the full grids gave (checked over
    # seeds in the tests), in a quarter of the time
    yy = np.arange(h, dtype=np.float32)[:, None]
    xx = np.arange(w, dtype=np.float32)[None, :]
    yy /= h
    xx /= w
    img = 90 + 60 * xx + 30 * np.sin(2.5 * yy + 1.3 * xx)
    for _ in range(6):
        cy, cx = rng.random(2)
        r = rng.uniform(0.05, 0.25)
        gain = rng.uniform(-70, 90)
        img += (gain * np.exp(-(yy - cy) ** 2 / (2 * r * r))) * np.exp(-(xx - cx) ** 2 / (2 * r * r))
    for _ in range(4):
        y0, x0 = rng.integers(0, h * 3 // 4), rng.integers(0, w * 3 // 4)
        value = rng.uniform(20, 235)  # drawn first, as the assignment's right side was
        dy, dx = rng.integers(h // 16, h // 4), rng.integers(w // 16, w // 4)
        img[y0:y0 + dy, x0:x0 + dx] = value
    img += rng.normal(0, 3, (h, w)).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8).reshape(-1)


def inputs(kernel, params, rng):
    n = params["n"]
    side = 2048 if n >= CHUNK else 128
    base = _scene(rng, side, side)
    shifts = rng.integers(0, 32, -(-n // base.size), dtype=np.uint8)
    per = min(PIECE, base.size)  # both powers of two: a piece lies in one copy

    def piece(k):
        lo, hi = k * per, min(n, (k + 1) * per)
        copy, at = divmod(lo, base.size)
        return base[at:at + hi - lo] + shifts[copy]  # wraps past 255, like a brightness roll

    return {"img": Chunked(np.uint8, n, per, piece), "bins": np.zeros(256, np.uint32)}


def reference(kernel, args, params):
    counts = args["bins"].astype(np.int64)
    img = args["img"]
    for start in range(0, img.size, CHUNK):
        counts += np.bincount(img[start:start + CHUNK], minlength=256)
    return {"bins": counts.astype(np.uint32)}
