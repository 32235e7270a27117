"""The metrics on hand-computed examples."""

from __future__ import annotations

import math

import pytest

from kerncast.evaluate import ape_pct, error_summary, spearman, top1_regret_pct


def test_ape_and_its_summary():
    ape = ape_pct([1.0, 2.0], [1.1, 1.0])
    assert ape.tolist() == pytest.approx([10.0, 50.0])
    s = error_summary(ape)
    assert s["mape_pct"] == pytest.approx(30.0) and s["median_ape_pct"] == pytest.approx(30.0)
    assert s["p90_ape_pct"] == pytest.approx(46.0)  # 10 + 0.9 * (50 - 10)
    assert s["within_10_pct"] == 50.0 and s["within_25_pct"] == 50.0


def test_within_counts_the_boundary_and_empty_is_nan():
    assert error_summary([10.0, 25.0, 25.1])["within_25_pct"] == pytest.approx(200 / 3)
    assert error_summary([10.0, 25.0])["within_10_pct"] == 50.0
    assert all(math.isnan(v) for v in error_summary([]).values())


def test_spearman_hand_examples():
    # ranks 1 2 4 3: rho = 1 - 6 * 2 / (4 * 15) = 0.8
    assert spearman([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(0.8)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # ties get average ranks: (1, 2, 3) against (1.5, 1.5, 3) -> 1.5 / sqrt(2 * 1.5)
    assert spearman([1, 2, 3], [5, 5, 6]) == pytest.approx(1.5 / math.sqrt(3.0))


def test_spearman_edge_cases():
    assert spearman([1, 2, 3], [7, 7, 7]) == 0.0  # a constant prediction ranks nothing
    assert math.isnan(spearman([1, 2], [1, 2]))  # fewer than 3 configurations
    assert math.isnan(spearman([2, 2, 2], [1, 2, 3]))  # nothing to rank


def test_regret_hand_examples():
    assert top1_regret_pct([1, 2, 3], [3, 1, 2]) == pytest.approx(100.0)  # picks the 2 s one
    assert top1_regret_pct([1, 2, 3], [1, 5, 6]) == 0.0
    # a tie between the 2 s and 4 s configurations: expected time 3 s against the best 1 s
    assert top1_regret_pct([2, 4, 1], [1, 1, 5]) == pytest.approx(200.0)
    # the best of the group was not predicted: it still counts as the best
    assert top1_regret_pct([2, 3], [1, 2], best_measured=1.0) == pytest.approx(100.0)
    assert math.isnan(top1_regret_pct([1], [1]))
