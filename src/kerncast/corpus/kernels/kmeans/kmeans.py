"""Inputs and NumPy reference for the k-means assignment kernel.

Points come from a mixture of k Gaussian blobs of different widths; the centroids
are the blob centres moved a little, as in the middle of Lloyd's iterations. The
kernel's output is an integer (the nearest centroid), computed in float32 on the
device: so that no rounding can change it, the generator moves every point whose
two nearest centroids are within 0.1% in squared distance a little towards the
nearest one, until no such point is left.
"""

import numpy as np

MARGIN = 1e-3
CHUNK = 1 << 14  # points per step of the distance computation (cache-sized)


def _distances(p, centroids, c2):
    """Squared distances (float64) of points p to every centroid."""
    dist = p @ centroids.T
    dist *= -2.0
    dist += c2[None, :]
    dist += np.einsum("ij,ij->i", p, p)[:, None]
    return dist


def _two_nearest(points, centroids, want_gap=True):
    """Index of the nearest centroid and the relative gap to the second, per point."""
    c2 = np.einsum("ij,ij->i", centroids, centroids)
    best = np.empty(points.shape[0], dtype=np.int32)
    gap = np.full(points.shape[0], np.inf)
    for lo in range(0, points.shape[0], CHUNK):
        dist = _distances(points[lo:lo + CHUNK], centroids, c2)
        near = np.argmin(dist, axis=1)
        best[lo:lo + CHUNK] = near
        if want_gap and dist.shape[1] > 1:
            rows = np.arange(dist.shape[0])
            d1 = dist[rows, near]
            dist[rows, near] = np.inf
            gap[lo:lo + CHUNK] = (dist.min(axis=1) - d1) / np.maximum(d1, 1e-30)
    return best, gap


def _separate(points, centroids):
    """Move points with ambiguous nearest centroids towards the nearest (float32 result).

    The gaps are estimated in float32 (error ~1e-5 relative here), against twice the
    margin, so every point left has a true gap above the margin.
    """
    todo = np.arange(points.shape[0])
    for _ in range(50):
        p = points[todo]
        best, gap = _two_nearest(p, centroids)
        bad = gap <= 2 * MARGIN
        if not bad.any():
            return points
        moved = p[bad] + 0.05 * (centroids[best[bad]] - p[bad])
        todo = todo[bad]
        points[todo] = moved.astype(np.float32)
    raise RuntimeError("could not separate the points from the centroid boundaries")


def inputs(kernel, params, rng):
    n, k, d = params["n"], params["k"], params["d"]
    centres = rng.uniform(-4.0, 4.0, size=(k, d)).astype(np.float32)
    widths = rng.uniform(1.0, 3.0, size=k).astype(np.float32)
    label = rng.integers(0, k, size=n)
    points = np.empty((n, d), dtype=np.float32)
    for lo in range(0, n, CHUNK):
        lab = label[lo:lo + CHUNK]
        block = rng.standard_normal((lab.size, d), dtype=np.float32)
        block *= widths[lab, None]
        block += centres[lab]
        points[lo:lo + CHUNK] = block
    centroids = (centres + rng.normal(0.0, 0.5, size=(k, d))).astype(np.float32)
    points = _separate(points, centroids)
    return {"points": np.ascontiguousarray(points.T).reshape(-1),
            "centroids": centroids.reshape(-1)}


def reference(kernel, args, params):
    n, k, d = params["n"], params["k"], params["d"]
    points = args["points"].reshape(d, n).T.astype(np.float64)
    centroids = args["centroids"].reshape(k, d).astype(np.float64)
    best, _ = _two_nearest(points, centroids, want_gap=False)
    return {"membership": best}
