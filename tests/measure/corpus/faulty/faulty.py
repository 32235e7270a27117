"""Inputs and references of the deliberately faulty kernels."""

import numpy as np


def inputs(kernel, params, rng):
    n = params["n"]
    if kernel == "wrong_values":
        return {"a": rng.integers(0, 1000, n).astype(np.int32)}
    out = {"a": rng.uniform(-1, 1, n).astype(np.float32)}
    if kernel == "accum":
        out["acc"] = rng.uniform(-1, 1, n).astype(np.float32)
    return out


def reference(kernel, args, params):
    if kernel == "accum":
        return {"acc": args["acc"] + args["a"]}
    return {"out": args["a"].copy()}
