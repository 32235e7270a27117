"""Inputs and NumPy reference for the nearest-neighbour distance kernel.

Records are positions (latitude, longitude in degrees, float32 pairs) scattered in
discs of up to 300 km around 4096 "sites" of a region of the North Atlantic and the
Americas (20..60 N, 110..10 W), the kind of data a storm-track or a store-locator
query scans. The query point lies inside the region (the spec's qlat, qlon). Distances are great-circle
distances (haversine formula) in kilometres; the k nearest are picked on the host.
"""

import numpy as np

from kerncast.core import Chunked, advanced

EARTH_RADIUS_KM = 6371.0
SITES = 4096
PIECE = 1 << 13  # records made at once (64 KiB)


def _scatter(count, sites_lat, sites_lon, inv_cos, rng):
    """Positions in discs around sites from one 64-bit draw each: 12 bits of site,
    20 bits of radius, 24 bits of angle."""
    raw = rng.bit_generator.random_raw(count).view(np.uint32)
    lo, hi = raw[0::2], raw[1::2]
    site = lo & np.uint32(SITES - 1)
    radius = np.sqrt((lo >> np.uint32(12)).astype(np.float32) * np.float32(2.0**-20))
    radius *= np.float32(300.0 / 111.2)  # degrees of latitude
    angle = (hi >> np.uint32(8)).astype(np.float32) * np.float32(2.0 * np.pi * 2.0**-24)
    out = np.empty((count, 2), dtype=np.float32)
    out[:, 0] = sites_lat[site] + radius * np.cos(angle)
    out[:, 1] = sites_lon[site] + radius * np.sin(angle) * inv_cos[site]
    return out.reshape(-1)


def inputs(kernel, params, rng):
    n = params["n"]
    sites_lat = rng.uniform(20.0, 60.0, SITES).astype(np.float32)
    sites_lon = rng.uniform(-110.0, -10.0, SITES).astype(np.float32)
    inv_cos = (1.0 / np.cos(np.radians(sites_lat))).astype(np.float32)
    start = advanced(rng, 0)  # record i takes the i-th draw from here

    def piece(k):
        lo, hi = k * PIECE, min(n, (k + 1) * PIECE)
        return _scatter(hi - lo, sites_lat, sites_lon, inv_cos, advanced(start, lo))

    return {"records": Chunked(np.float32, 2 * n, 2 * PIECE, piece)}


def haversine_km(lat, lon, qlat, qlon):
    """Great-circle distance from (qlat, qlon) to each (lat, lon) (float32, degrees).

    The angle differences are formed in float64 (no cancellation); the sines, the
    cosine and the arcsine of those well-conditioned arguments are taken in float32
    (relative error ~1e-6 in all, far inside the check's tolerance, and ten times
    faster than float64 in NumPy).
    """
    f32 = np.float32
    rad = f32(np.pi / 180.0)
    s_lat = np.sin((lat.astype(np.float64) - qlat).astype(f32) * f32(0.5) * rad)
    s_lon = np.sin((lon.astype(np.float64) - qlon).astype(f32) * f32(0.5) * rad)
    cos_lat = np.cos(lat * rad)
    h = s_lat * s_lat + cos_lat * f32(np.cos(np.radians(qlat))) * s_lon * s_lon
    return f32(2.0 * EARTH_RADIUS_KM) * np.arcsin(np.sqrt(h))


def reference(kernel, args, params):
    rec = args["records"].reshape(-1, 2)
    qlat, qlon = float(np.float32(params["qlat"])), float(np.float32(params["qlon"]))
    dist = np.empty(rec.shape[0], dtype=np.float32)
    step = 1 << 18  # small steps keep the temporaries in cache
    for lo in range(0, rec.shape[0], step):
        part = np.ascontiguousarray(rec[lo:lo + step].T)
        dist[lo:lo + step] = haversine_km(part[0], part[1], qlat, qlon)
    return {"dist": dist}
