"""Dividing slices among devices: lines through samples and shares that end together."""

from __future__ import annotations

import pytest

from kerncast.split import Line, balanced_shares, fit_line, proportional_shares


def test_the_line_through_samples_and_its_fallbacks():
    line = fit_line([(2, 5.0 + 2 * 3.0), (4, 5.0 + 4 * 3.0), (8, 5.0 + 8 * 3.0)])
    assert line.fixed_s == pytest.approx(5.0) and line.per_slice_s == pytest.approx(3.0)
    assert fit_line([(4, 8.0)]) == Line(0.0, 2.0)  # one sample: through the origin
    assert line.seconds(0) == 0.0


def test_shares_end_together_and_a_device_too_slow_to_start_gets_none():
    # a: 1 s/slice, b: 3 s/slice, both 2 s fixed: 100 slices -> a 75, b 25 (both 77 s)
    assert balanced_shares([Line(2.0, 1.0), Line(2.0, 3.0)], 100) == [75, 25]
    # c's fixed cost alone is longer than a and b need for everything
    assert balanced_shares([Line(0.0, 1.0), Line(0.0, 1.0), Line(500.0, 1.0)], 10) == [5, 5, 0]
    assert sum(balanced_shares([Line(0.1, 0.3), Line(0.2, 0.7), Line(0.0, 1.1)], 97)) == 97


def test_proportional_shares_round_by_largest_remainder():
    assert proportional_shares([1, 1, 1], 10) == [4, 3, 3]
    assert proportional_shares([60.0, 1.0], 10) == [10, 0]
