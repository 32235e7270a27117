"""Inputs and NumPy reference for the 8x8 DCT kernel.

The image is a synthetic photograph-like 8-bit picture (float32 integers 0..255):
smooth shading, a few hard-edged shapes, a fine texture and sensor noise, so its
blocks range from flat (energy in the DC coefficient) to busy. The reference applies
the orthonormal 8-point DCT-II matrix to the rows and columns of every block of the
level-shifted image in float64.
"""

import numpy as np

ROWS_PER_STEP = 64  # image rows per step (a multiple of 8)


def basis():
    k = np.arange(8)
    c = np.cos((2 * k[None, :] + 1) * k[:, None] * np.pi / 16) * np.sqrt(2.0 / 8.0)
    c[0] /= np.sqrt(2.0)
    return c


def _rows(y0, y1, width, shapes, rng):
    y = np.arange(y0, y1, dtype=np.float32)[:, None]
    x = np.arange(width, dtype=np.float32)[None, :]
    img = np.float32(90.0) + np.float32(60.0) * np.sin(x * np.float32(0.0011) + y * np.float32(0.0007))
    img += np.float32(8.0) * np.sin(x * np.float32(1.3)) * np.cos(y * np.float32(0.9))
    for cx, cy, radius, level in shapes:  # discs, drawn inside their bounding boxes
        lo, hi = int(max(0, cx - radius)), int(min(width, cx + radius + 1))
        if lo >= hi or cy + radius < y0 or cy - radius >= y1:
            continue
        inside = (x[:, lo:hi] - cx) ** 2 + (y - cy) ** 2 < radius**2
        img[:, lo:hi][inside] = level
    noise = rng.bit_generator.random_raw((y1 - y0) * width // 8 + 1).view(np.uint8)
    img += (noise[:(y1 - y0) * width].reshape(y1 - y0, width) - np.float32(127.5)) * np.float32(0.08)
    return np.clip(np.rint(img), 0, 255)


def inputs(kernel, params, rng):
    width, height = params["width"], params["height"]
    shapes = [(rng.uniform(0, width), rng.uniform(0, height),
               rng.uniform(0.02, 0.2) * min(width, height), rng.uniform(0, 255)) for _ in range(12)]
    image = np.empty((height, width), dtype=np.float32)
    for y0 in range(0, height, ROWS_PER_STEP):
        y1 = min(height, y0 + ROWS_PER_STEP)
        image[y0:y1] = _rows(y0, y1, width, shapes, rng)
    return {"image": image.reshape(-1)}


def reference(kernel, args, params):
    width, height = params["width"], params["height"]
    c = basis()
    image = args["image"].reshape(height, width)
    coef = np.empty((height, width), dtype=np.float32)
    for y0 in range(0, height, ROWS_PER_STEP):
        y1 = min(height, y0 + ROWS_PER_STEP)
        blocks = image[y0:y1].astype(np.float64).reshape((y1 - y0) // 8, 8, width // 8, 8)
        blocks -= 128.0
        across = blocks @ c.T                                  # rows: (b, y, x, u)
        out = c @ across.transpose(0, 2, 1, 3)                 # columns: (b, x, v, u)
        coef[y0:y1] = out.transpose(0, 2, 1, 3).reshape(y1 - y0, width)
    return {"coef": coef}
