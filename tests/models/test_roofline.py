"""The roofline baseline on hand-computed examples."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from kerncast import InputError
from kerncast.corpus import get_kernel
from kerncast.data import Dataset
from kerncast.devices import get_device
from kerncast.models import LAUNCH_OVERHEAD_H100_S, Roofline
from kerncast.models.work import WorkCounts, WorkUnavailable, _counts, _emulator, emulator_counts


def _rows(*rows):
    base = {"kernel": "matmul_tiled", "language": "cuda", "size": "medium", "device": "h100-sxm",
            "sm_count": 132, "tunables": json.dumps({"tile": 16, "pad": 0})}
    return Dataset(times=pd.DataFrame([{**base, **r} for r in rows]))


def test_compute_bound_matmul_at_full_and_half_sms():
    data = _rows({}, {"sm_count": 66})
    full, half = Roofline(work="algorithmic").fit(data).explain(data)
    h100 = get_device("h100")
    peak = 2 * 128 * 132 * 1980e6  # fp32 FMA lanes x 2 flops x SMs x boost clock
    assert h100.peak_fp32_gflops * 1e9 == pytest.approx(peak)
    compute = 2 * 512**3 / peak
    memory = 3 * 512 * 512 * 4 / 3350e9
    assert compute > memory
    assert full.seconds == pytest.approx(compute + 3.8e-6)
    assert half.seconds == pytest.approx(2 * compute + 3.8e-6)  # compute scales with SMs
    assert full.breakdown == pytest.approx({"compute": compute, "memory": memory,
                                            "launch": 3.8e-6})
    assert full.bottleneck == "compute" and full.based_on["work"] == "algorithmic"
    assert full.based_on["intensity_flop_per_byte"] == pytest.approx(2 * 512**3 / (3 * 512**2 * 4))
    assert LAUNCH_OVERHEAD_H100_S == 3.8e-6


def test_memory_bound_when_flops_are_few_and_bandwidth_is_not_scaled(monkeypatch):
    class Stream:
        name, priority, description = "stream-for-tests", -1, "test"

        def counts(self, kernel, config, language="cuda"):
            return WorkCounts(1e6, 0, 8e9, 4e9, None, self.name)

    monkeypatch.setitem(_counts._PROVIDERS, "stream-for-tests", Stream())
    data = _rows({}, {"sm_count": 8})
    full, few = Roofline(launch_overhead_s=0.0).fit(data).explain(data)
    assert full.seconds == pytest.approx(12e9 / 3350e9) == few.seconds
    assert full.bottleneck == "memory" and full.based_on["work"] == "stream-for-tests"


def test_double_precision_uses_the_fp64_peak(monkeypatch):
    class Doubles:
        name, priority, description = "doubles-for-tests", -1, "test"

        def counts(self, kernel, config, language="cuda"):
            return WorkCounts(0, 1e12, 0, 0, None, self.name)

    monkeypatch.setitem(_counts._PROVIDERS, "doubles-for-tests", Doubles())
    (p,) = Roofline(launch_overhead_s=0.0).fit(_rows({})).explain(_rows({}))
    assert p.seconds == pytest.approx(1e12 / (get_device("h100").peak_fp64_gflops * 1e9))
    assert p.based_on["precision"] == "fp64"


@pytest.mark.toolchain  # compiles the kernel for the emulator
def test_work_comes_from_the_emulator_by_default():
    data = _rows({"kernel": "matmul_naive", "size": "small",
                  "tunables": json.dumps({"bx": 16, "by": 16})})
    (p,) = Roofline().fit(data).explain(data)
    kernel = get_kernel("matmul_naive")
    counts = emulator_counts(kernel, kernel.launch("small", {"bx": 16, "by": 16}))
    assert p.based_on["work"] == "emulator"
    assert p.based_on["flops"] == 2 * 48**3 == counts.flops
    assert p.based_on["bytes"] == counts.bytes_global


@pytest.mark.toolchain
def test_named_work_source_is_used_or_its_failure_reported(monkeypatch):
    data = _rows({})
    assert Roofline(work="algorithmic").fit(data).explain(data)[0].based_on["work"] == "algorithmic"
    monkeypatch.setattr(_emulator, "BLOCK_STEPS", 1000)
    with pytest.raises(WorkUnavailable, match="emulating block 0 of matmul_tiled takes more "
                                              "than 1,000 warp instructions"):
        Roofline(work="emulator").fit(data).predict(data)
    (p,) = Roofline().fit(data).explain(data)
    assert p.based_on["work"] == "algorithmic"  # auto falls back


def test_kernels_outside_the_corpus_fail_with_the_corpus_message():
    data = _rows({"kernel": "not_a_kernel"})
    with pytest.raises(InputError, match="no corpus kernel 'not_a_kernel'"):
        Roofline().fit(data).predict(data)


def test_missing_sm_count_means_the_whole_device():
    data = _rows({"sm_count": None})
    (p,) = Roofline().fit(data).explain(data)
    assert p.based_on["sm_count"] == 132
