"""Inputs and NumPy reference for the matmul kernels."""

import numpy as np


def inputs(kernel, params, rng):
    n = params["n"]
    return {
        "a": rng.uniform(-1, 1, n * n).astype(np.float32),
        "b": rng.uniform(-1, 1, n * n).astype(np.float32),
    }


def reference(kernel, args, params):
    n = params["n"]
    a = args["a"].reshape(n, n).astype(np.float64)
    b = args["b"].reshape(n, n).astype(np.float64)
    return {"c": (a @ b).astype(np.float32)}


def work(kernel, params):
    """The algorithm's operations: n^3 multiply-adds (2 flops each), in float32."""
    n = params["n"]
    return {"flops_fp32": 2.0 * n**3}
