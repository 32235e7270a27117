"""PMAC's Eqs. (1)-(2) on hand-worked examples."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models.work import WorkCounts, _counts
from kerncast.models.zoo._pmac import (
    Pmac,
    constant_bandwidth,
    fit_stream_bandwidth,
    stream_bandwidth,
)


def test_eq2_with_the_surveys_coefficients():
    survey = (-0.0020, 0.0003, 7.0709, 3072.0)
    # below the hinge: -0.0020 * (3072 - 2048) + 7.0709 = -2.048 + 7.0709 = 5.0229
    # above it: 0.0003 * (4096 - 3072) + 7.0709 = 0.3072 + 7.0709 = 7.3781
    assert stream_bandwidth([2048, 3072, 4096], survey) == pytest.approx([5.0229, 7.0709, 7.3781])


def test_eq2_fit_recovers_a_hinge_curve():
    x = np.array([10.0, 15, 20, 25, 30])
    truth = (-0.5, 0.1, 10.0, 20.0)
    # 10: -0.5 * 10 + 10 = 5; 15: 7.5; 20: 10; 25: 10.5; 30: 11
    bandwidth = stream_bandwidth(x, truth)
    assert bandwidth == pytest.approx([5, 7.5, 10, 10.5, 11])
    assert fit_stream_bandwidth(x, bandwidth) == pytest.approx(truth)


def test_eq2_fit_needs_two_sizes():
    with pytest.raises(InputError, match="2 data sizes"):
        fit_stream_bandwidth(np.array([1.0, 1, 1]), np.array([2.0, 3, 4]))


def test_one_data_size_leaves_the_constant_of_eq2(monkeypatch):
    # gamma of least relative error: sum(1 / bw) / sum(1 / bw^2) = (1 + 0.5) / (1 + 0.25) = 1.2
    assert constant_bandwidth(np.array([1.0, 2.0])) == pytest.approx(1.2)
    monkeypatch.setitem(_counts._PROVIDERS, "pmac-test-stream", _Stream())
    # copy_vector at medium (s = 2^25 B) at 1000 and 2000 GB/s, copy_offset (32 floats more:
    # the same size) at 1000 GB/s: gamma = (2/1000 + 1/2000) / (2/1000^2 + 1/2000^2)
    # = 0.0025 / 2.25e-6 = 1111 GB/s
    rows = [_row("copy_vector", "medium", 8 * 4194304 / bw, {"bx": bx})
            for bw, bx in ((1000e9, 256), (2000e9, 512))]
    rows.append(_row("copy_offset", "medium", 8 * 4194304 / 1000e9))
    model = Pmac(work="pmac-test-stream").fit(Dataset(times=pd.DataFrame(rows)))
    alpha, beta, gamma, _ = model.curves_["h100-sxm"]
    assert (alpha, beta) == (0.0, 0.0)
    assert gamma == pytest.approx((2 / 1000e9 + 1 / 2000e9) / (2 / 1000e9**2 + 1 / 2000e9**2))


class _Stream:
    """A copy's references: n floats read and n written (flops as the row's fmas say)."""

    name, priority, description = "pmac-test-stream", -1, "test"

    def counts(self, kernel, config, language="cuda"):
        n = config.params["n"]
        flops = 2 * n * config.tunables.get("fmas", 0)
        return WorkCounts(flops, 0, 4 * n, 4 * n, None, self.name)


def _row(kernel, size, seconds, tunables=None, sm_count=132):
    return {"kernel": kernel, "language": "cuda", "size": size, "device": "h100-sxm",
            "sm_count": sm_count, "tunables": json.dumps(tunables or {}), "status": "ok",
            "time_median_s": seconds}


# copy_vector's buffers are x and y of n floats: s = 8 n bytes, and the work provider above
# gives the same 8 n bytes referenced. small n = 8192: s = 65,536 = 2^16;
# medium n = 4,194,304: s = 2^25; large n = 335,544,320: s = 2,684,354,560, log2 = 31.3219
_SIZES = {"small": 8192, "medium": 4194304, "large": 335544320}
_BANDWIDTH = {"small": 20e9, "medium": 1000e9, "large": 2800e9}


def _training():
    rows = [_row("copy_vector", size, 8 * n / _BANDWIDTH[size]) for size, n in _SIZES.items()]
    rows.append(_row("copy_vector", "medium", 1.0, sm_count=8))  # an SM-sweep row: left out
    rows.append(_row("matmul_naive", "medium", 1e-3))  # not a stream: left out
    return Dataset(times=pd.DataFrame(rows))


def test_fit_on_training_streams_and_eq1(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "pmac-test-stream", _Stream())
    model = Pmac(work="pmac-test-stream").fit(_training())
    alpha, beta, gamma, hinge = model.curves_["h100-sxm"]
    # three points, hinge at log2 s = 25: gamma = 1000 GB/s there;
    # 16: alpha * 9 + 1000e9 = 20e9 -> alpha = -980e9 / 9; 31.3219: beta = 1800e9 / 6.3219
    large = math.log2(8 * 335544320)
    assert hinge == pytest.approx(25)
    assert gamma == pytest.approx(1000e9)
    assert alpha == pytest.approx(-980e9 / 9)
    assert beta == pytest.approx(1800e9 / (large - 25))
    assert model.stream_kernels_ == ["copy_vector"]
    # Eq. (1) for copy_offset at medium: x is n + 32 floats, y n floats:
    # s = (2 * 4,194,304 + 32) * 4 = 33,554,560 B, log2 s = 25.0000055; references 8 n B
    s = (2 * 4194304 + 32) * 4
    bw = 1000e9 + beta * (math.log2(s) - 25)
    target = Dataset(times=pd.DataFrame([_row("copy_offset", "medium", float("nan"))]))
    [p] = model.explain(target)
    assert p.seconds == pytest.approx(8 * 4194304 / bw)
    assert p.breakdown == {"memory": p.seconds} and p.bottleneck == "memory"
    assert p.based_on["data_size_bytes"] == s


def test_bandwidth_stays_at_or_above_the_smallest_seen(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "pmac-test-stream", _Stream())
    model = Pmac(work="pmac-test-stream").fit(_training())
    # arith_mixed at size small has n = 1536: s = 12,288 B, log2 = 13.58, below the
    # smallest training size; the line would give 20e9 - 108.9e9 * 2.42 < 0
    target = Dataset(times=pd.DataFrame([_row("arith_mixed", "small", float("nan"),
                                              {"bx": 256, "fmas": 1})]))
    [p] = model.explain(target)
    assert p.based_on["bandwidth_gbs"] == pytest.approx(20.0)


def test_compute_heavy_streams_and_no_streams(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "pmac-test-stream", _Stream())
    # arith_mixed with 16 FMAs per element: 32 flops per 8 bytes = 4 flop/B > 1: not a stream
    heavy = [_row("arith_mixed", size, 1e-3, {"bx": 256, "fmas": 16}) for size in _SIZES]
    model = Pmac(work="pmac-test-stream").fit(Dataset(times=pd.DataFrame(heavy)))
    assert model.curves_ == {}
    # then the spec's peak: 8 n B / 3350 GB/s
    [p] = model.explain(Dataset(times=pd.DataFrame([_row("copy_vector", "medium", 0.0)])))
    assert p.seconds == pytest.approx(8 * 4194304 / 3350e9)
    assert "spec peak" in p.based_on["curve"]


def test_linear_size_scale_is_eq2_as_published(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "pmac-test-stream", _Stream())
    model = Pmac(work="pmac-test-stream", size_scale="linear").fit(_training())
    assert model.curves_["h100-sxm"][3] == pytest.approx(32.0)  # hinge at 2^25 B = 32 MiB
    with pytest.raises(InputError, match="size_scale"):
        Pmac(size_scale="cubic").fit(_training())


def test_kernels_without_an_idiom_are_nan():
    data = Dataset(times=pd.DataFrame([_row("not_in_the_corpus", "small", 1e-5)]))
    [p] = Pmac().fit(data).explain(data)
    assert math.isnan(p.seconds) and p.based_on["error"].startswith("no idiom")
