"""Inputs and NumPy reference for the D2Q9 lattice Boltzmann step.

The lattice holds a developed low-Mach flow: an array of Taylor-Green vortices on a
shear layer with a few random Fourier modes, with a small density variation; the
populations are at the local equilibrium of that flow, so that streaming mixes
neighbouring equilibria and the collision has real work to do.
"""

import numpy as np

EX = np.array([0, 1, 0, -1, 0, 1, -1, -1, 1])
EY = np.array([0, 0, 1, 0, -1, 1, 1, -1, -1])
W = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
_CHUNK = 1 << 21  # lattice cells per chunk of the reference


def _wave(rng, length, modes=3):
    t = np.arange(length, dtype=np.float64) / length
    out = np.zeros(length)
    for _ in range(modes):
        out += rng.uniform(-1, 1) * np.sin(2 * np.pi * rng.integers(1, 5) * t + rng.uniform(0, 2 * np.pi))
    return (out / modes).astype(np.float32)


def _flow(rng, nx, ny):
    kx, ky = 2 * np.pi * rng.integers(1, 4) / nx, 2 * np.pi * rng.integers(1, 4) / ny
    x, y = np.arange(nx), np.arange(ny)
    u0 = np.float32(0.04)
    ux = np.multiply.outer(np.cos(ky * y).astype(np.float32), u0 * np.sin(kx * x).astype(np.float32))
    uy = np.multiply.outer(np.sin(ky * y).astype(np.float32), -u0 * np.cos(kx * x).astype(np.float32))
    ux += (np.float32(0.03) * np.tanh((y - ny / 2) / max(ny / 16, 1))).astype(np.float32)[:, None]
    ux += np.multiply.outer(_wave(rng, ny), np.float32(0.01) * _wave(rng, nx))
    uy += np.multiply.outer(_wave(rng, ny), np.float32(0.01) * _wave(rng, nx))
    rho = np.float32(1.0) + np.multiply.outer(_wave(rng, ny), np.float32(0.02) * _wave(rng, nx))
    return rho, ux, uy


def inputs(kernel, params, rng):
    nx, ny = params["nx"], params["ny"]
    rho, ux, uy = _flow(rng, nx, ny)
    f = np.empty((9, ny, nx), dtype=np.float32)
    usq = np.float32(1.5) * (ux * ux + uy * uy)
    for q in range(9):
        eu = np.float32(EX[q]) * ux + np.float32(EY[q]) * uy
        f[q] = np.float32(W[q]) * rho * (np.float32(1.0) + np.float32(3.0) * eu
                                         + np.float32(4.5) * eu * eu - usq)
    return {"fin": f.reshape(-1)}


def _collide_rows(fin, r0, r1, omega):
    ny, nx = fin.shape[1:]
    f = np.empty((9, r1 - r0, nx))
    for q in range(9):
        rows = (np.arange(r0, r1) - EY[q]) % ny
        f[q] = np.roll(fin[q, rows].astype(np.float64), EX[q], axis=1)
    rho = f.sum(axis=0)
    ux = np.tensordot(EX, f, axes=1) / rho
    uy = np.tensordot(EY, f, axes=1) / rho
    usq = 1.5 * (ux * ux + uy * uy)
    for q in range(9):
        eu = EX[q] * ux + EY[q] * uy
        f[q] -= omega * (f[q] - W[q] * rho * (1.0 + 3.0 * eu + 4.5 * eu * eu - usq))
    return f


def reference(kernel, args, params):
    nx, ny = params["nx"], params["ny"]
    omega = float(np.float32(params["omega"]))
    fin = args["fin"].reshape(9, ny, nx)
    fout = np.empty_like(fin)
    step = max(1, _CHUNK // nx)
    for r0 in range(0, ny, step):
        r1 = min(ny, r0 + step)
        fout[:, r0:r1] = _collide_rows(fin, r0, r1, omega)
    return {"fout": fout.reshape(-1)}
