"""NumPy references for the kernels of this folder, by launch-file stem.

Each reference takes the materialised arguments by name (``launch.names`` paired with
``launch.materialise()``: flat arrays, NumPy scalars, struct bytes, ``BufferOffset`` for
views) and returns the expected contents of the arrays the kernel writes, by argument
name. An expected value is an array (compared exactly for integers, with the
kernel's tolerance for floats) or an :class:`Unordered` (a queue whose order depends on
the schedule).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Values = dict[str, Any]


@dataclass(frozen=True)
class Unordered:
    """The first ``len(items)`` entries hold ``items`` in any order; the rest is ``rest``."""

    items: np.ndarray
    rest: np.ndarray


def saxpy(v: Values) -> Values:
    n = int(v["n"])
    y = v["y"].astype(np.float64)
    y[:n] += float(v["a"]) * v["x"][:n].astype(np.float64)
    return {"y": y}


def cpp_soft_threshold(v: Values) -> Values:
    x, lam, n = v["x"].astype(np.float64), float(v["lambda"]), int(v["n"])
    out = np.zeros_like(x)
    out[:n] = np.sign(x[:n]) * np.maximum(np.abs(x[:n]) - lam, 0.0)
    return {"out": out}


def tile_transpose(v: Values) -> Values:
    rows, cols = int(v["rows"]), int(v["cols"])
    return {"dst": v["src"].reshape(rows, cols).T.reshape(-1)}


def heat7(v: Values) -> Values:
    nx, ny, nz = int(v["nx"]), int(v["ny"]), int(v["nz"])
    u = v["in"].astype(np.float64).reshape(nz, ny, nx)
    out = u.copy()
    c = u[1:-1, 1:-1, 1:-1]
    around = (u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
              + u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1])
    out[1:-1, 1:-1, 1:-1] = float(v["c0"]) * c + float(v["c1"]) * around
    return {"out": out.reshape(-1)}


def block_sum_argmax(v: Values, block: int = 256) -> Values:
    x, n = v["in"].astype(np.float64), int(v["n"])
    blocks = v["block_sum"].size
    owner = (np.arange(n) // block) % blocks  # the grid-stride loop's assignment
    sums = np.array([x[:n][owner == b].sum() for b in range(blocks)])
    argmax = np.array([np.flatnonzero(owner == b)[np.argmax(x[:n][owner == b])]
                       for b in range(blocks)], np.int32)  # argmax: first of equal maxima
    return {"block_sum": sums, "block_argmax": argmax}


_PARAMS = np.dtype([("alpha", np.float32), ("n", np.int32), ("beta", np.float32),
                    ("gamma", np.float64)], align=True)


def struct_params(v: Values) -> Values:
    assert _PARAMS.itemsize == 24 and len(v["p"]) == 24
    p = np.frombuffer(v["p"], _PARAMS)[0]
    n = int(p["n"])
    y = v["y"].astype(np.float64)
    inner = np.float32(p["alpha"]) * v["x"][:n] + np.float32(p["beta"])  # float32, as the kernel
    y[:n] = float(p["gamma"]) * inner.astype(np.float64)
    return {"y": y}


def symlog(v: Values) -> Values:
    x, n = v["in"].astype(np.float64), int(v["n"])
    out = v["out"].astype(np.float64)
    f = np.expm1 if bool(v["inverse"]) else np.log1p
    out[:n] = np.sign(x[:n]) * f(np.abs(x[:n]))
    return {"out": out}


def diffuse_interior(v: Values) -> Values:
    rows, cols, lam = int(v["rows"]), int(v["cols"]), float(v["lambda"])
    # the views must point cols + 1 elements into J and D
    assert v["Jc"].array is v["J"] and v["Jc"].byte_offset == (cols + 1) * 4
    assert v["Dc"].array is v["D"] and v["Dc"].byte_offset == (cols + 1) * 4
    j = v["J"].astype(np.float64).reshape(rows, cols)
    d = j.copy()
    c = j[1:-1, 1:-1]
    lap = j[1:-1, :-2] + j[1:-1, 2:] + j[:-2, 1:-1] + j[2:, 1:-1] - 4.0 * c
    d[1:-1, 1:-1] = c + lam * lap
    return {"D": d.reshape(-1), "J": v["J"]}


def matmul_naive(v: Values) -> Values:
    m, n, k = int(v["M"]), int(v["N"]), int(v["K"])
    lda, ldb, ldc = int(v["lda"]), int(v["ldb"]), int(v["ldc"])
    a = v["A"].reshape(m, lda)[:, :k]
    b = v["B"].reshape(k, ldb)[:, :n]
    c = v["C"].reshape(m, ldc).copy()
    c[:, :n] = float(v["alpha"]) * (a @ b) + float(v["beta"]) * c[:, :n]
    return {"C": c.reshape(-1)}


def bfs_level(v: Values) -> Values:
    row, col, cur = v["row_offsets"], v["col_indices"], int(v["cur"])
    level = v["level"].copy()
    frontier = np.flatnonzero(level == cur)
    neighbours = np.unique(np.concatenate([col[row[u]:row[u + 1]] for u in frontier]))
    found = neighbours[level[neighbours] == -1].astype(np.int32)
    level[found] = cur + 1
    queue_rest = np.full(v["next_queue"].size - found.size, -1, np.int32)
    return {"level": level, "next_count": np.array([found.size], np.int32),
            "next_queue": Unordered(found, queue_rest)}


def conv1d_tuned(v: Values, radius: int = 3) -> Values:
    x, taps, n = v["in"].astype(np.float64), v["taps"].astype(np.float64), int(v["n"])
    padded = np.concatenate([np.zeros(radius), x[:n], np.zeros(radius)])
    out = sum(taps[k] * padded[k:k + n] for k in range(2 * radius + 1))
    return {"out": out}


def vadd(v: Values) -> Values:
    n = int(v["n"])
    c = v["c"].astype(np.float64)
    c[:n] = v["a"][:n].astype(np.float64) + v["b"][:n]
    return {"c": c}


def local_matmul(v: Values) -> Values:
    m, n, k = int(v["M"]), int(v["N"]), int(v["K"])
    a = v["A"].astype(np.float64).reshape(m, k)
    b = v["B"].astype(np.float64).reshape(k, n)
    return {"C": (a @ b).reshape(-1)}


def bitmix(v: Values) -> Values:
    mask64, mask32 = (1 << 64) - 1, (1 << 32) - 1
    seed, n = int(v["seed"]), int(v["n"])
    digest = v["digest"].copy()
    bucket = v["bucket"].copy()
    for i in range(n):
        z = (int(v["keys"][i]) + 0x9E3779B97F4A7C15 * ((seed + 1) & mask32)) & mask64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask64
        z ^= z >> 31
        lo, hi = z & mask32, z >> 32
        r = hi & 31
        rot = ((lo << r) | (lo >> (32 - r))) & mask32 if r else lo
        d = rot ^ ((hi * 0x85EBCA6B) >> 32)
        clz = 32 - (lo | 1).bit_length()
        digest[i] = (d + bin(hi).count("1") + clz) & mask32
        bucket[i] = d % 7
    return {"digest": digest, "bucket": bucket}


def graph_smooth(v: Values) -> Values:
    row, col, w = v["row_offsets"], v["col_indices"], v["weights"].astype(np.float64)
    x, self_w, n = v["x"].astype(np.float64), float(v["self_w"]), int(v["n"])
    out = np.empty(n)
    for u in range(n):
        e = slice(row[u], row[u + 1])
        out[u] = (self_w * x[u] + (w[e] * x[col[e]]).sum()) / (self_w + w[e].sum())
    return {"out": out}


def block_scan(v: Values, block: int = 256) -> Values:
    n = int(v["n"])
    blocks = v["block_totals"].size
    x = np.zeros(blocks * block, np.int64)
    x[:n] = v["in"][:n]
    scan = np.cumsum(x.reshape(blocks, block), axis=1)
    return {"out": scan.reshape(-1)[:n].astype(np.int32),
            "block_totals": scan[:, -1].astype(np.int32)}


def byte_histogram(v: Values) -> Values:
    n = int(v["n"])
    counts = np.bincount(v["data"][:n], minlength=256).astype(np.uint32)
    return {"bins": v["bins"] + counts}


def half_scale(v: Values) -> Values:
    n = int(v["n"])
    y = v["y"].copy()
    y[:n] = (v["x"][:n].astype(np.float32) * np.float32(v["s"]) + np.float32(v["b"])
             ).astype(np.float16)
    return {"y": y}


REFERENCES: dict[str, Callable[[Values], Values]] = {
    "saxpy": saxpy,
    "cpp_soft_threshold": cpp_soft_threshold,
    "tile_transpose": tile_transpose,
    "heat7": heat7,
    "block_sum_argmax": block_sum_argmax,
    "struct_params": struct_params,
    "symlog": symlog,
    "symlog_inverse": symlog,
    "diffuse_interior": diffuse_interior,
    "matmul_naive": matmul_naive,
    "bfs_level": bfs_level,
    "conv1d_tuned": conv1d_tuned,
    "vadd": vadd,
    "local_matmul": local_matmul,
    "bitmix": bitmix,
    "graph_smooth": graph_smooth,
    "block_scan": block_scan,
    "byte_histogram": byte_histogram,
    "half_scale": half_scale,
}

#: (rtol, atol) for float outputs where the default (1e-5, 1e-6) is too tight: sums whose
#: order differs from NumPy's, contracted multiply-adds, float16 rounding
TOLERANCE: dict[str, tuple[float, float]] = {
    "block_sum_argmax": (1e-4, 1e-4),
    "conv1d_tuned": (1e-5, 1e-5),
    "local_matmul": (1e-5, 1e-5),
    "saxpy": (1e-5, 1e-5),
    "heat7": (1e-5, 1e-4),
    "diffuse_interior": (1e-5, 1e-6),
    "symlog_inverse": (1e-5, 1e-5),
    "matmul_naive": (1e-12, 1e-12),
    "half_scale": (1e-3, 1e-3),
}
