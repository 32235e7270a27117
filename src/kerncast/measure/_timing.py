"""Repeated timing with a stopping rule: the one loop that every backend's times go through.

The loop launches a few untimed warm-up runs, then timed repetitions until the
median is known well enough: at least ``min_reps``, and then until the 95%
confidence interval of the median (distribution-free, from order statistics) is
narrower than ``rel_ci`` of the median on each side, or until ``max_reps`` runs or
``budget_s`` seconds of wall time have been spent. Each timed run is one call of
``launch_once(i)``, which returns the seconds that the backend's timer measured for
repetition ``i`` (so that the caller can rotate inputs, restore buffers and flush
caches outside the timed interval).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from kerncast.core import MAX_INPUT_SETS

__all__ = ["TimingPolicy", "TimingStats", "median_ci", "should_stop", "summarize", "time_repeatedly"]


@dataclass(frozen=True)
class TimingPolicy:
    """How long to warm up and when to stop repeating.

    Parameters
    ----------
    warmup
        Untimed launches before timing (at least this many).
    warmup_s
        ... and more untimed launches until this much kernel time has passed (at most
        ``max_warmup``).
    min_reps, max_reps
        Bounds on the number of timed launches.
    rel_ci
        Stop when the 95% confidence interval of the median lies within this fraction
        of the median on either side.
    abs_ci_s
        ... or within this many seconds (the timer's resolution makes a relative
        bound unreachable for the shortest kernels).
    budget_s
        Stop (after ``min_reps``) once the timed loop has taken this much wall time.
    rotate_inputs
        Cycle several copies of the inputs when all buffers fit in twice the L2.
    max_input_sets
        At most this many copies.
    check
        Compare the outputs with the NumPy reference after timing.
    """

    warmup: int = 2
    warmup_s: float = 0.02
    max_warmup: int = 50
    min_reps: int = 5
    max_reps: int = 200
    rel_ci: float = 0.015
    abs_ci_s: float = 2e-8
    budget_s: float = 1.0
    rotate_inputs: bool = True
    max_input_sets: int = MAX_INPUT_SETS
    check: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TimingStats:
    """Statistics of the timed repetitions (seconds)."""

    median: float
    minimum: float
    mean: float
    iqr: float
    ci_low: float
    ci_high: float
    count: int
    converged: bool
    warmup: int = 0
    samples: list[float] = field(default_factory=list, repr=False)

    def columns(self) -> dict:
        """The statistics as ``times`` columns."""
        return {"time_median_s": self.median, "time_min_s": self.minimum,
                "time_mean_s": self.mean, "time_iqr_s": self.iqr,
                "time_ci_low_s": self.ci_low, "time_ci_high_s": self.ci_high,
                "repetitions": self.count, "converged": self.converged, "warmup": self.warmup}


def median_ci(samples: list[float] | np.ndarray, z: float = 1.96) -> tuple[float, float]:
    """A distribution-free confidence interval of the median (order statistics).

    With ``n`` sorted samples the interval is ``[x_j, x_k]`` with
    ``j = floor(n/2 - z*sqrt(n)/2)`` and ``k = ceil(1 + n/2 + z*sqrt(n)/2)`` (1-based,
    clipped to the sample): the normal approximation of the binomial(n, 1/2) ranks.
    """
    x = np.sort(np.asarray(samples, dtype=float))
    n = len(x)
    if n == 0:
        return math.nan, math.nan
    half = z * math.sqrt(n) / 2
    j = max(1, math.floor(n / 2 - half))
    k = min(n, math.ceil(1 + n / 2 + half))
    return float(x[j - 1]), float(x[k - 1])


def should_stop(samples: list[float], policy: TimingPolicy, elapsed_s: float) -> tuple[bool, bool]:
    """(stop now, converged): the stopping rule after ``len(samples)`` repetitions."""
    n = len(samples)
    if n < policy.min_reps:
        return False, False
    median = float(np.median(samples))
    low, high = median_ci(samples)
    tolerance = max(policy.rel_ci * abs(median), policy.abs_ci_s)
    converged = (median - low) <= tolerance and (high - median) <= tolerance
    if converged:
        return True, True
    return n >= policy.max_reps or elapsed_s >= policy.budget_s, False


def summarize(samples: list[float], converged: bool, warmup: int = 0) -> TimingStats:
    """Median, min, mean, IQR and the median's CI of ``samples``."""
    x = np.asarray(samples, dtype=float)
    q1, q3 = np.percentile(x, [25, 75])
    low, high = median_ci(x)
    return TimingStats(median=float(np.median(x)), minimum=float(x.min()), mean=float(x.mean()),
                       iqr=float(q3 - q1), ci_low=low, ci_high=high, count=len(x),
                       converged=converged, warmup=warmup, samples=[float(v) for v in x])


def time_repeatedly(launch_once: Callable[[int], float], policy: TimingPolicy,
                    clock: Callable[[], float] = time.perf_counter) -> TimingStats:
    """Warm up, then time ``launch_once(i)`` until the stopping rule says enough.

    Parameters
    ----------
    launch_once
        Runs repetition ``i`` (warm-up runs get negative ``i``) and returns its time
        in seconds as the backend's timer measured it.
    policy
        Warm-up and stopping parameters.
    clock
        Wall clock for the time budget (a fake in tests).
    """
    warm, spent = 0, 0.0
    while warm < policy.warmup or (spent < policy.warmup_s and warm < policy.max_warmup):
        spent += launch_once(-1 - warm)
        warm += 1
    samples: list[float] = []
    start = clock()
    while True:
        samples.append(float(launch_once(len(samples))))
        stop, converged = should_stop(samples, policy, clock() - start)
        if stop:
            return summarize(samples, converged, warm)
