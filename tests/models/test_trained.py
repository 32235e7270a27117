"""Training learned models on a whole dataset, and the models kerncast ships."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models import Predictor, shipped_models, train, trained_model

H100 = Path(__file__).resolve().parents[2] / "data" / "h100"


@pytest.fixture(scope="module")
def h100():
    if not (H100 / "counters.parquet").exists():
        pytest.skip("the H100 dataset is not in this checkout")
    return Dataset.read(H100)


def test_kerncast_ships_the_sampling_svr():
    assert "sampling-svr-h100" in shipped_models()
    model = trained_model("sampling-svr", "h100")
    assert model.name == "sampling-svr" and len(model.trained_kernels_) >= 20


def test_shipped_model_is_what_training_gives_today(h100):
    """The shipped file must be retrained when the data or the model change."""
    shipped = trained_model("sampling-svr", "h100")
    fresh = train("sampling-svr", h100)
    assert fresh.trained_kernels_ == shipped.trained_kernels_
    got, want = shipped.predict(h100), fresh.predict(h100)
    assert np.isfinite(want).sum() >= 20
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_training_a_model_that_learns_nothing_is_refused(h100):
    with pytest.raises(InputError, match="learns nothing.*sampling-svr"):
        train("roofline", h100)


def test_unknown_shipped_model_names_what_ships():
    with pytest.raises(InputError, match="sampling-svr-h100.*kerncast train"):
        trained_model("sampling-svr", "a100")


def test_saved_model_round_trips(tmp_path, h100):
    fitted = trained_model("sampling-svr", "h100")  # a fitted model, without fitting one here
    path = tmp_path / "svr.json"
    fitted.save(path)
    assert not list(tmp_path.glob(".*.tmp"))
    back = Predictor.load(path)
    some = h100.subset(sorted(h100.times["kernel"].unique())[:12])
    want = fitted.predict(some)
    assert np.isfinite(want).sum() >= 5
    np.testing.assert_allclose(back.predict(some), want, equal_nan=True)


def test_a_launch_its_base_measured_whole_is_passed_on_uncorrected(h100):
    """sssp_relax's grid is too short for two samples within the budget (and at a larger
    budget its samples are flagged: its first blocks hold the work), and the dataset
    holds a run of its whole grid: sampling answers with that run, and so does the SVR."""
    from kerncast.models import Sampling, SamplingSVR

    data = h100.subset(["sssp_relax", "matmul_tiled", "transpose_naive", "reduce_tree"])
    full = data.samples[(data.samples["kernel"] == "sssp_relax")
                        & (data.samples["grid_fraction"] >= 1)]
    if not len(full):
        pytest.skip("this dataset has no samples-full run of sssp_relax")
    rows = np.flatnonzero((data.times["kernel"] == "sssp_relax")
                          & (data.times["experiment"] == "times")
                          & (data.times["size"] == full["size"].iloc[0])
                          & data.times["config"].isin(full["config"]))
    assert len(rows)
    base = Sampling().fit(data).explain(data)
    svr = SamplingSVR().fit(data).explain(data)
    flagged = Sampling(budget=1.0).fit(data).explain(data)
    for i in rows:
        assert base[i].based_on["method"].startswith("direct measurement")
        assert base[i].seconds == pytest.approx(full["time_median_s"].iloc[0])
        assert svr[i].seconds == base[i].seconds
        assert svr[i].based_on["method"] == base[i].based_on["method"]
        assert flagged[i].based_on["method"].startswith("direct measurement of the whole launch")
        assert flagged[i].seconds == pytest.approx(full["time_median_s"].iloc[0])
