"""Inputs and NumPy reference for the direct Coulomb summation kernel.

The electrostatic potential on the plane z = zslice of a lattice of spacing h,
V(x, y) = sum_a q_a / |r - r_a|, from a chunk of ``natoms`` point charges: the
launch adds the chunk's contribution to the plane (earlier chunks' potential is
already there). Atoms form globular clumps (a crowded biomolecular box) with partial
charges of both signs; none lies within 0.1 of the plane, so 1/r stays bounded.
"""

import numpy as np

ATOMS_PER_STEP = 256  # atoms per step of the reference


def _atoms(natoms, extent, zslice, rng):
    clumps = max(1, natoms // 256)
    centres = rng.uniform(0.1 * extent, 0.9 * extent, (clumps, 3))
    centres[:, 2] = zslice + rng.uniform(-0.1 * extent, 0.1 * extent, clumps)
    pos = centres[rng.integers(0, clumps, natoms)] + rng.normal(0.0, 0.04 * extent, (natoms, 3))
    near = np.abs(pos[:, 2] - zslice) < 0.1
    pos[near, 2] = zslice + np.where(pos[near, 2] >= zslice, 0.1, -0.1)
    charge = rng.choice([-0.8, -0.5, -0.3, 0.3, 0.5, 0.8], natoms) * rng.uniform(0.8, 1.2, natoms)
    return np.column_stack([pos, charge]).astype(np.float32)


def _earlier_chunks(gx, gy, rng):
    """A smooth field standing for the potential of the chunks already summed."""
    y, x = np.mgrid[0:gy, 0:gx] / np.array([gy, gx])[:, None, None]
    field = np.zeros((gy, gx))
    for _ in range(6):
        cx, cy, w, a = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.05, 0.3), rng.normal(0, 2)
        field += a * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / w**2)
    return field.astype(np.float32).reshape(-1)


def inputs(kernel, params, rng):
    gx, gy, h = params["gx"], params["gy"], params["h"]
    extent = h * max(gx, gy)
    return {"atoms": _atoms(params["natoms"], extent, params["zslice"], rng).reshape(-1),
            "grid": _earlier_chunks(gx, gy, rng)}


def reference(kernel, args, params):
    """Per-pair terms in float32, partial sums over 256 atoms in float32, total in float64.

    Per-pair float32 rounding (~1e-7) and 256-term float32 partial sums (~1e-5 of
    the partial's magnitude at worst) stay far inside the check's tolerance; the
    blocks of 256 atoms x one row keep the temporaries in cache.
    """
    gx, gy = params["gx"], params["gy"]
    h, zslice = np.float32(params["h"]), np.float32(params["zslice"])
    atoms = args["atoms"].reshape(-1, 4)
    xs = h * np.arange(gx, dtype=np.float32)
    grid = args["grid"].reshape(gy, gx).astype(np.float64)
    work = np.empty((ATOMS_PER_STEP, gx), dtype=np.float32)
    for lo in range(0, atoms.shape[0], ATOMS_PER_STEP):
        ax, ay, az, q = (atoms[lo:lo + ATOMS_PER_STEP, c] for c in range(4))
        dx2 = (xs[None, :] - ax[:, None]) ** 2
        dz2 = (zslice - az) ** 2
        part = work[:ax.size]
        for j in range(gy):
            dyz2 = (h * np.float32(j) - ay) ** 2 + dz2
            np.add(dx2, dyz2[:, None], out=part)
            np.sqrt(part, out=part)
            np.divide(q[:, None], part, out=part)
            grid[j] += part.sum(axis=0)
    return {"grid": grid.astype(np.float32).reshape(-1)}
