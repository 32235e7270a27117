"""Scoring predictions against Kernel Tuner measurements, on hand-computed examples."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerncast._errors import InputError
from kerncast.tuner import compare, read_cache, score, write_cache

DATA = Path(__file__).parent / "data"


def test_mape_and_spearman_by_hand() -> None:
    # APE = 0, 100/3, 50, 0 -> MAPE 20.833..; ranks of m = 1,3,2,4 -> d^2 = 2,
    # rho = 1 - 6*2 / (4*(16-1)) = 0.8
    result = score([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])
    assert result["n"] == 4 and result["skipped"] == 0
    assert result["mape_pct"] == pytest.approx((100 / 3 + 50) / 4)
    assert result["spearman"] == pytest.approx(0.8)
    assert result["regret_top1_pct"] == 0.0


def test_top_k_regret_by_hand() -> None:
    predicted = np.arange(1.0, 13.0)  # configuration i is predicted i-th fastest
    measured = [4.0, 3.0, 6.0, 7.0, 8.0, 2.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0]
    result = score(predicted, measured)
    assert result["regret_top1_pct"] == pytest.approx(100.0)  # picks 4.0, best is 2.0
    assert result["regret_top5_pct"] == pytest.approx(50.0)   # best of first five: 3.0
    assert result["regret_top10_pct"] == 0.0                  # the 2.0 is 6th


def test_top_k_beyond_the_data_takes_everything() -> None:
    result = score([3.0, 1.0, 2.0], [1.0, 4.0, 2.0])
    assert result["regret_top1_pct"] == pytest.approx(300.0)
    assert result["regret_top5_pct"] == result["regret_top10_pct"] == 0.0


def test_ties_in_prediction_are_broken_by_input_order() -> None:
    assert score([1.0, 1.0, 2.0], [3.0, 2.0, 1.0])["regret_top1_pct"] == pytest.approx(200.0)


def test_nan_pairs_are_skipped() -> None:
    result = score([1.0, math.nan, 3.0, 4.0, 2.0], [1.0, 2.0, math.nan, 4.0, 2.0])
    assert (result["n"], result["skipped"]) == (3, 2)
    assert result["mape_pct"] == 0.0
    assert result["spearman"] == pytest.approx(1.0)


def test_constant_prediction_has_no_rank_correlation() -> None:
    result = score(pd.Series([2.0, 2.0, 2.0]), pd.Series([1.0, 2.0, 3.0]))
    assert math.isnan(result["spearman"])
    assert result["regret_top1_pct"] == 0.0  # input order picks the first, the fastest


@pytest.mark.parametrize(("predicted", "measured", "message"), [
    ([1.0, math.nan], [1.0, 2.0], r"only 1 of 2 configurations have both"),
    ([math.nan, math.nan, 1.0], [1.0, 2.0, math.nan], r"only 0 of 3"),
    ([1.0, 2.0], [1.0, 2.0, 3.0], r"1-D and of equal length"),
    ([[1.0, 2.0]], [[1.0, 2.0]], r"1-D and of equal length"),
    (["a", "b"], [1.0, 2.0], r"must be numbers"),
    ([1.0, 2.0], [0.0, 2.0], r"measured times must be > 0"),
])
def test_bad_input_is_refused(predicted: list, measured: list, message: str) -> None:
    with pytest.raises(InputError, match=message):
        score(predicted, measured)


# --------------------------------------------------------------------------- compare


def _predicted_for(measured_path: Path, out: Path, factor: float = 1.1) -> Path:
    measured = read_cache(measured_path)
    res = measured.results
    rows = [{"block_size_x": b, "time_ms": t * factor}
            for b, t in zip(res["block_size_x"], res["time_ms"], strict=True)]
    return write_cache(out, kernel_name=measured.kernel_name, device_name="predicted",
                       problem_size=measured.problem_size, tune_params=measured.tune_params,
                       rows=rows)


def test_compare_a_written_cache_with_kernel_tuners_measurements(tmp_path: Path) -> None:
    measured = read_cache(DATA / "test_cache_file.json")
    predicted = read_cache(_predicted_for(DATA / "test_cache_file.json", tmp_path / "p.json"))
    result = compare(predicted, measured)
    assert (result["matched"], result["predicted_configs"], result["measured_configs"]) == \
        (15, 15, 15)
    assert result["mape_pct"] == pytest.approx(10.0)
    assert result["spearman"] == pytest.approx(1.0)
    assert result["regret_top1_pct"] == pytest.approx(0.0)


def test_compare_joins_a_dataframe_on_its_tune_parameters(tmp_path: Path) -> None:
    measured = read_cache(DATA / "test_cache_file.json")
    # predict only four configurations, in another order; 768 (the fastest) ranked 2nd
    frame = pd.DataFrame({"block_size_x": [1024, 768, 128, 448],
                          "time_ms": [0.01, 0.02, 0.03, 0.04]})
    result = compare(frame, measured)
    assert (result["matched"], result["predicted_configs"]) == (4, 4)
    best = measured.results.set_index("block_size_x")["time_ms"]
    assert result["regret_top1_pct"] == pytest.approx((best[1024] / best[768] - 1) * 100)
    assert result["regret_top5_pct"] == 0.0


def test_compare_skips_failed_measurements() -> None:
    measured = read_cache(DATA / "t4_cache_invalids.json")
    frame = measured.results.assign(time_ms=1.0)  # the one configuration failed to compile
    with pytest.raises(InputError, match=r"only 0 of 1 configurations"):
        compare(frame, measured)


def test_compare_refuses_what_cannot_be_joined(tmp_path: Path) -> None:
    measured = read_cache(DATA / "test_cache_file.json")
    other = read_cache(DATA / "open_cache_with_comma.json")
    with pytest.raises(InputError, match=r"tunes \['block_size_x', 'block_size_y'\]"):
        compare(other, measured)
    with pytest.raises(InputError, match=r"no configuration of the predictions is in"):
        compare(pd.DataFrame({"block_size_x": [7], "time_ms": [1.0]}), measured)
    with pytest.raises(InputError, match=r"lack a 'key' column .*\['block_size_x'\]"):
        compare(pd.DataFrame({"bx": [128], "time_ms": [1.0]}), measured)
    with pytest.raises(InputError, match=r"'128' is predicted more than once"):
        compare(pd.DataFrame({"key": ["128", "128"], "time_ms": [1.0, 2.0]}), measured)
    with pytest.raises(InputError, match=r"no 'time_ms' column"):
        compare(pd.DataFrame({"key": ["128"], "t": [1.0]}), measured)
    with pytest.raises(InputError, match=r"measured must be a KTCache"):
        compare(measured, measured.results)  # type: ignore[arg-type]
