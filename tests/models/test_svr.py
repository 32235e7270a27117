"""The sampling SVR on the synthetic dataset: the seed's formula, the residual target,
direct measurement of small grids and parameter checks."""

import numpy as np
import pytest

from kerncast import InputError
from kerncast.evaluate import hide_targets
from kerncast.models import Sampling, SamplingSVR
from tests.synthetic import synthetic_dataset


@pytest.fixture(scope="module")
def data():
    # size large: grids long enough that two samples fit a 10% budget
    return synthetic_dataset(kernels=("matmul_naive", "synthetic_stencil", "synthetic_stream"),
                             sizes=("small", "medium", "large"), failed_rows=False)


@pytest.fixture(scope="module")
def held_out(data):
    shown, _ = hide_targets(data, "synthetic_stream")
    return data.subset(["matmul_naive", "synthetic_stencil"]), shown


@pytest.mark.parametrize("target", ["residual", "ips"])
def test_time_is_the_seeds_formula(held_out, target):
    train, test = held_out
    model = SamplingSVR(target=target).fit(train)
    sampled = [p for p in model.explain(test) if "ips_estimate" in p.based_on]
    assert sampled, "some held-out launches must be larger than one sample"
    for p in sampled:
        info = p.based_on
        assert p.seconds == pytest.approx(info["instructions_charged"] / info["ips_estimate"])


def test_residual_refines_the_base_model(held_out):
    train, test = held_out
    svr = SamplingSVR(base="sampling", target="residual").fit(train)
    base = Sampling().fit(train).predict(test)
    got = svr.predict(test)
    sampled = np.array(["ips_estimate" in p.based_on for p in svr.explain(test)])
    ratio = got[sampled] / base[sampled]
    # the synthetic kernels scale alike: the learned correction stays small
    assert np.all((ratio > 0.5) & (ratio < 2.0))


def test_small_grids_are_measured_directly(held_out):
    train, test = held_out
    model = SamplingSVR().fit(train)
    direct = [p for p in model.explain(test) if "direct" in p.based_on.get("method", "")]
    assert direct and all(p.seconds > 0 for p in direct)


def test_needs_two_training_kernels(data):
    model = SamplingSVR().fit(data.subset(["synthetic_stencil"]))
    assert model.model_ is None
    info = model.explain(data.subset(["synthetic_stream"]))
    assert all(np.isnan(p.seconds) or "direct" in p.based_on["method"] for p in info)


@pytest.mark.parametrize("param, value, message", [
    ("base", "oracle", "base 'oracle' is not one of seed-linear, sampling"),
    ("target", "time", "target 'time' is not one of residual, ips"),
])
def test_unknown_parameters_are_refused(data, param, value, message):
    with pytest.raises(InputError, match=message):
        SamplingSVR(**{param: value}).fit(data)


def test_keeps_the_base_where_no_svr_generalises(data):
    """Each training kernel runs a fixed factor off the base model, in opposite
    directions: nothing in the features carries over to the held-out kernel of an inner
    fold, so the search keeps the base prediction as it is."""
    from dataclasses import replace

    train = data.subset(["matmul_naive", "synthetic_stencil"])
    base = Sampling().fit(train).predict(train)
    factor = np.where(train.times["kernel"] == "matmul_naive", 1.5, 1 / 1.5)
    skewed = replace(train, times=train.times.assign(time_median_s=base * factor))
    model = SamplingSVR().fit(skewed)
    assert model.best_params_ == {"svr": "no correction"}
    estimates = [p.based_on for p in model.explain(data.subset(["synthetic_stream"]))
                 if "ips_estimate" in p.based_on]
    assert estimates
    for info in estimates:
        assert info["ips_estimate"] == pytest.approx(info["ips_base"], rel=1e-12)
