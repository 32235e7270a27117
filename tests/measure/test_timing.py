"""The timing loop: statistics, the median's confidence interval and the stopping rule."""

import itertools

import numpy as np
import pytest

from kerncast.measure._timing import TimingPolicy, median_ci, should_stop, summarize, time_repeatedly


class FakeClock:
    """A wall clock that advances by a fixed step at every reading."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def __call__(self):
        self.now += self.step
        return self.now


def _launcher(values):
    it = iter(values)
    calls = []

    def launch(i):
        calls.append(i)
        return next(it)

    return launch, calls


def test_median_ci_uses_order_statistics():
    x = np.arange(1.0, 101.0)  # 1..100
    low, high = median_ci(x)
    # n = 100: ranks floor(50 - 9.8) = 40 and ceil(1 + 50 + 9.8) = 61
    assert (low, high) == (40.0, 61.0)
    assert median_ci([3.0, 1.0, 2.0, 5.0, 4.0]) == (1.0, 5.0)  # five samples: min..max


def test_summarize_reports_median_min_mean_and_iqr():
    stats = summarize([4.0, 1.0, 3.0, 2.0, 100.0], converged=False, warmup=2)
    assert stats.median == 3.0 and stats.minimum == 1.0 and stats.mean == 22.0
    assert stats.iqr == 2.0 and stats.count == 5 and stats.warmup == 2
    cols = stats.columns()
    assert cols["time_median_s"] == 3.0 and cols["repetitions"] == 5


def test_constant_times_stop_at_the_minimum_repetitions():
    policy = TimingPolicy(warmup=2, warmup_s=0.0, min_reps=5, max_reps=100)
    launch, calls = _launcher(itertools.repeat(1e-5))
    stats = time_repeatedly(launch, policy, clock=FakeClock(1e-3))
    assert stats.count == 5 and stats.converged
    assert calls[:2] == [-1, -2] and calls[2:] == [0, 1, 2, 3, 4]  # warm-up runs are untimed


def test_noisy_times_run_until_the_repetition_limit():
    rng = np.random.default_rng(0)
    noisy = (1e-5 * (1 + rng.uniform(0, 1, 1000))).tolist()
    policy = TimingPolicy(warmup=0, warmup_s=0.0, min_reps=5, max_reps=40, rel_ci=0.001,
                          abs_ci_s=0.0, budget_s=1e9)
    launch, _ = _launcher(noisy)
    stats = time_repeatedly(launch, policy, clock=FakeClock(1e-6))
    assert stats.count == 40 and not stats.converged


def test_moderate_noise_converges_between_the_limits():
    rng = np.random.default_rng(1)
    noisy = (1e-3 * (1 + 0.02 * rng.standard_normal(1000))).tolist()
    policy = TimingPolicy(warmup=0, warmup_s=0.0, min_reps=5, max_reps=500, rel_ci=0.01,
                          budget_s=1e9)
    launch, _ = _launcher(noisy)
    stats = time_repeatedly(launch, policy, clock=FakeClock(1e-6))
    assert 5 < stats.count < 500 and stats.converged
    assert (stats.median - stats.ci_low) <= 0.01 * stats.median


def test_time_budget_stops_a_slow_loop():
    policy = TimingPolicy(warmup=0, warmup_s=0.0, min_reps=5, max_reps=1000, rel_ci=0.0,
                          abs_ci_s=0.0, budget_s=1.0)
    launch, _ = _launcher(itertools.cycle([1.0, 2.0, 3.0]))
    stats = time_repeatedly(launch, policy, clock=FakeClock(0.125))  # 1/8 s per repetition
    assert stats.count == 8 and not stats.converged  # the budget of 1 s ends it


def test_warm_up_continues_until_its_time_is_spent():
    policy = TimingPolicy(warmup=1, warmup_s=0.01, max_warmup=50, min_reps=5)
    launch, calls = _launcher(itertools.repeat(1e-3))
    stats = time_repeatedly(launch, policy, clock=FakeClock(0.0))
    assert stats.warmup == 10 and len([c for c in calls if c < 0]) == 10


@pytest.mark.parametrize("n, expected", [(4, (False, False)), (5, (True, True))])
def test_should_stop_waits_for_the_minimum(n, expected):
    assert should_stop([1.0] * n, TimingPolicy(min_reps=5), 0.0) == expected
