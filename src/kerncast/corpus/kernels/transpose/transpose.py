"""Inputs and NumPy reference for the transpose kernels."""

import numpy as np


def inputs(kernel, params, rng):
    rows, cols = params["rows"], params["cols"]
    return {"in": rng.random(rows * cols, dtype=np.float32)}


def reference(kernel, args, params):
    rows, cols = params["rows"], params["cols"]
    return {"out": np.ascontiguousarray(args["in"].reshape(rows, cols).T)}
