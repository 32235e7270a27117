"""Inputs and NumPy reference for the binomial-tree option kernel.

European calls priced on a Cox-Ross-Rubinstein tree of ``steps`` steps: up factor
u = exp(v sqrt(dt)), down 1/u, risk-neutral up probability p = (exp(r dt) - 1/u) /
(u - 1/u). Backward induction over the tree, as the kernel does it, equals the
closed sum  exp(-rT) sum_i C(N, i) p^i (1-p)^(N-i) max(S u^(2i-N) - X, 0),  which the
reference evaluates in float64 with log-binomial coefficients.
"""

import numpy as np
from scipy.special import gammaln


def inputs(kernel, params, rng):
    n = params["options"]
    spot = (100.0 * np.exp(rng.normal(0.0, 0.2, n))).astype(np.float32)
    return {
        "spot": spot,
        "strike": (spot * rng.uniform(0.8, 1.2, n)).astype(np.float32),
        "years": rng.uniform(0.25, 2.0, n).astype(np.float32),
    }


def reference(kernel, args, params):
    steps = params["steps"]
    r, v = float(np.float32(params["r"])), float(np.float32(params["v"]))
    s = args["spot"].astype(np.float64)[:, None]
    x = args["strike"].astype(np.float64)[:, None]
    t = args["years"].astype(np.float64)[:, None]
    dt = t / steps
    up = np.exp(v * np.sqrt(dt))
    p = (np.exp(r * dt) - 1.0 / up) / (up - 1.0 / up)
    i = np.arange(steps + 1, dtype=np.float64)[None, :]
    log_c = gammaln(steps + 1.0) - gammaln(i + 1.0) - gammaln(steps - i + 1.0)
    weight = np.exp(log_c + i * np.log(p) + (steps - i) * np.log1p(-p))
    payoff = np.maximum(s * up ** (2.0 * i - steps) - x, 0.0)
    price = np.exp(-r * t[:, 0]) * (weight * payoff).sum(axis=1)
    return {"call": price.astype(np.float32)}
