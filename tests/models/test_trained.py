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
    fitted = train("sampling-svr", h100.subset(sorted(h100.times["kernel"].unique())[:30]))
    path = tmp_path / "svr.json"
    fitted.save(path)
    assert not list(tmp_path.glob(".*.tmp"))
    back = Predictor.load(path)
    np.testing.assert_allclose(back.predict(h100), fitted.predict(h100), equal_nan=True)
