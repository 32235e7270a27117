"""Inputs and NumPy reference for the 7-point 3-D stencil kernels.

The field is smooth (a sum of separable waves along x, y and z) with a little
noise, like a diffusing quantity partway through a simulation.
"""

import numpy as np

_CHUNK = 1 << 23  # grid cells per slab of the reference


def _wave(rng, length):
    t = np.linspace(0.0, 1.0, length, dtype=np.float32)
    return np.float32(rng.uniform(0.5, 1.5)) * np.sin(
        np.float32(2 * np.pi * rng.uniform(0.5, 3.0)) * t + np.float32(rng.uniform(0, 2 * np.pi)))


def inputs(kernel, params, rng):
    nx, ny, nz = params["nx"], params["ny"], params["nz"]
    field = rng.random((nz, ny, nx), dtype=np.float32)
    field *= np.float32(0.1)
    field += _wave(rng, nx)[None, None, :]
    field += _wave(rng, ny)[None, :, None]
    field += _wave(rng, nz)[:, None, None]
    return {"in": field.reshape(-1)}


def _slab(grid, z0, z1, c0, c1):
    """Interior update of planes z0..z1-1 (each 1 <= z <= nz-2)."""
    g = grid[z0 - 1:z1 + 1].astype(np.float64)
    c = g[1:-1, 1:-1, 1:-1]
    s = (g[1:-1, 1:-1, :-2] + g[1:-1, 1:-1, 2:] + g[1:-1, :-2, 1:-1] + g[1:-1, 2:, 1:-1]
         + g[:-2, 1:-1, 1:-1] + g[2:, 1:-1, 1:-1])
    return c0 * c + c1 * s


def reference(kernel, args, params):
    nx, ny, nz = params["nx"], params["ny"], params["nz"]
    c0, c1 = float(np.float32(params["c0"])), float(np.float32(params["c1"]))
    grid = args["in"].reshape(nz, ny, nx)
    out = grid.copy()
    step = max(1, _CHUNK // (nx * ny))
    for z0 in range(1, nz - 1, step):
        z1 = min(nz - 1, z0 + step)
        out[z0:z1, 1:-1, 1:-1] = _slab(grid, z0, z1, c0, c1)
    return {"out": out.reshape(-1)}
