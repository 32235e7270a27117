"""``kerncast.scale``: a kernel's surfaces from one base run, through the Python API."""

from __future__ import annotations

from pathlib import Path

import pytest

import kerncast
from kerncast import InputError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SHIPPED_RUN = Path(__file__).resolve().parents[2] / "data" / "probes" / "saxpy-base-h200.json"


def test_a_saved_base_run_of_ones_own_kernel_is_scaled_without_a_gpu():
    table, info = kerncast.scale(base_run=SHIPPED_RUN, to="h200:64,h100:132")
    assert info["kernel"] == "saxpy" and info["base"] == "h200:132"
    assert info["trained_on"] == 58 and info["base_run"]["counters"]["blocks"] == 262144
    assert list(zip(table["device"], table["sm_count"])) == [("h200", 64), ("h100-sxm", 132)]
    assert (table["time_s"] > info["base_time_s"]).all()  # fewer SMs; a slower memory
    assert table["measured_time_s"].isna().all()


def test_a_corpus_kernel_is_scaled_from_its_shipped_base_run():
    table, info = kerncast.scale("corpus:copy_vector", to="h100:32")
    assert info["trained_on"] == 57 and table["measured_time_s"].iloc[0] > 0


def test_a_kernel_without_its_launch_or_nothing_at_all_is_refused():
    with pytest.raises(InputError, match="base_run="):
        kerncast.scale()
    with pytest.raises(InputError, match="with its launch"):
        kerncast.scale(object())


def test_a_base_the_model_cannot_start_from_is_refused_before_measuring():
    from kerncast.models import own_base

    assert own_base(None) == {"device": None, "sm_count": None}
    assert own_base("h100:132") == {"device": "h100-sxm", "sm_count": None}  # the whole GPU
    assert own_base("h100:8") == {"device": "h100-sxm", "sm_count": 8}
    with pytest.raises(InputError, match="no base runs with counters"):
        own_base("h200:96")


def test_a_name_that_is_not_a_corpus_kernel_says_how_to_scale_ones_own():
    with pytest.raises(InputError, match=r"scale\(kernel, launch\)"):
        kerncast.scale("saxpy")
