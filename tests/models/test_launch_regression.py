"""The launch-regression baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models import LaunchRegression


def _data(blocks, tpb, sms, seconds=None):
    frame = pd.DataFrame({"kernel": "k", "status": "ok", "blocks": blocks,
                          "threads_per_block": tpb, "sm_count": sms})
    if seconds is not None:
        frame["time_median_s"] = seconds
    return Dataset(times=frame)


def test_recovers_a_power_law_of_the_launch_shape():
    rng = np.random.default_rng(0)
    blocks = rng.integers(1, 10_000, 60)
    tpb = rng.choice([64, 128, 256, 512], 60)
    sms = rng.choice([16, 66, 132], 60)
    seconds = 1e-6 * blocks**0.9 * tpb**0.5 / sms**0.7
    model = LaunchRegression(alpha=1e-9).fit(_data(blocks, tpb, sms, seconds))
    pred = model.predict(_data([1000, 50], [256, 64], [132, 16]))
    want = 1e-6 * np.array([1000**0.9 * 256**0.5 / 132**0.7, 50**0.9 * 64**0.5 / 16**0.7])
    assert pred == pytest.approx(want, rel=1e-6)
    assert model.n_train_ == 60


def test_learns_from_successful_rows_only():
    data = _data([1, 2, 4], [32, 32, 32], [132] * 3, [1e-6, 2e-6, float("nan")])
    data.times.loc[2, "status"] = "timeout"
    assert LaunchRegression().fit(data).n_train_ == 2


def test_needs_two_rows_and_the_launch_columns():
    with pytest.raises(InputError, match="at least 2 measured rows.*got 1"):
        LaunchRegression().fit(_data([1], [32], [132], [1e-6]))
    with pytest.raises(InputError, match="lacks sm_count"):
        LaunchRegression().fit(Dataset(times=pd.DataFrame({
            "kernel": "k", "status": "ok", "blocks": [1, 2], "threads_per_block": 32,
            "time_median_s": [1e-6, 2e-6]})))
