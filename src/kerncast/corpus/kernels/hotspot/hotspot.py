"""Inputs and NumPy reference for the thermal-simulation kernels.

The power map is a floorplan: the die is cut into a grid of functional units of
random sizes, most dissipating little and a few (the "cores") a lot. Temperatures
are a smooth field over the ambient plus local heating of the hot units.
"""

import numpy as np

_CHUNK_ROWS = 1 << 22  # cells per chunk of the reference


def _pieces(rng, length, count):
    cuts = np.sort(rng.choice(np.arange(1, length), size=min(count, length) - 1, replace=False))
    return np.diff(np.concatenate(([0], cuts, [length])))


def _floorplan(rng, rows, cols):
    heights = _pieces(rng, rows, max(1, min(12, rows // 4)))
    widths = _pieces(rng, cols, max(1, min(12, cols // 4)))
    density = rng.uniform(0.01, 0.08, (heights.size, widths.size))
    hot = rng.random(density.shape) < 0.2
    density[hot] = rng.uniform(0.3, 0.6, int(hot.sum()))
    power = np.repeat(np.repeat(density.astype(np.float32), heights, axis=0), widths, axis=1)
    return power


def _profile(rng, length):
    x = np.linspace(0.0, 1.0, length)
    phase, freq = rng.uniform(0, 2 * np.pi, 3), rng.uniform(0.5, 3.0, 3)
    wave = sum(np.sin(2 * np.pi * f * x + p) for f, p in zip(freq, phase))
    return ((wave - wave.min()) / (np.ptp(wave) + 1e-12)).astype(np.float32)


def inputs(kernel, params, rng):
    rows, cols, t_amb = params["rows"], params["cols"], params["t_amb"]
    power = _floorplan(rng, rows, cols)
    temp = np.multiply.outer(_profile(rng, rows), _profile(rng, cols))
    temp *= np.float32(25.0)
    temp += np.float32(t_amb + 10.0)
    temp += np.float32(20.0) * power
    return {"temp": temp.reshape(-1), "power": power.reshape(-1)}


def _step(temp, power, p):
    tc = temp[1:-1, 1:-1]
    flow = (p["gx"] * ((temp[1:-1, 2:] - tc) + (temp[1:-1, :-2] - tc))
            + p["gy"] * ((temp[:-2, 1:-1] - tc) + (temp[2:, 1:-1] - tc))
            + p["gz"] * (p["t_amb"] - tc))
    return tc + p["cap_inv"] * (power + flow)


def reference(kernel, args, params):
    rows, cols = params["rows"], params["cols"]
    coef = {k: float(np.float32(params[k])) for k in ("cap_inv", "gx", "gy", "gz", "t_amb")}
    temp = args["temp"].reshape(rows, cols)
    power = args["power"].reshape(rows, cols)
    out = np.empty((rows, cols), dtype=np.float32)
    step = max(1, _CHUNK_ROWS // cols)
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        lo, hi = max(r0 - 1, 0), min(r1 + 1, rows)
        block = temp[lo:hi].astype(np.float64)
        block = np.pad(block, ((1 if r0 == 0 else 0, 1 if r1 == rows else 0), (1, 1)), mode="edge")
        out[r0:r1] = _step(block, power[r0:r1].astype(np.float64), coef)
    return {"out": out.reshape(-1)}
