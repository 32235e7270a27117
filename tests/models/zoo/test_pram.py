"""GPU à la (QRQW) PRAM (Kothapalli et al.) on hand-worked examples."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models.work import WorkCounts, _counts
from kerncast.models.zoo._pram import (
    GpuPram,
    PramApp,
    PramPlatform,
    launch_work,
    pram_cycles,
    pram_platform,
)


def test_equations_on_a_small_gpu():
    hw = PramPlatform(sm_count=4, lanes_per_sm=128, clock_hz=1e9, bandwidth_bps=100e9,
                      latency_cycles=500, blocks_per_sm=2, warps_per_sm=16)
    # (P1) ceil(20 / 4) = 5 blocks per SM; (P2) ceil(5 / 2) = 3 rounds
    # threads per SM and round 5 * 256 / 3 = 426.67; (P3) W = 426.67 * 10 * 1 / 128 = 33.33
    # data per round 215,040 / 3 = 71,680 B; (P4) Q = 71,680 * 1e9 / 100e9 = 716.8 cycles
    # warps of a round min(16, ceil(426.67 / 32) = 14) = 14 on 4 active SMs:
    # (P5) steps 71,680 / (4 * 14 * 128) = 10, latency 10 * 500 = 5,000 cycles
    app = PramApp(blocks=20, threads_per_block=256, instructions_per_thread=10, cpi=1,
                  bytes_read=143_360, bytes_written=71_680)
    cycles = pram_cycles(app, hw)
    assert cycles.rounds == 3
    assert cycles.compute == pytest.approx(5 * 256 / 3 * 10 / 128)
    assert cycles.queue == pytest.approx(716.8)
    assert cycles.latency == pytest.approx(5_000)
    # (P6) without the launch: 3 * (33.33 + max(716.8, 5000)) = 15,100 cycles
    assert cycles.total == pytest.approx(3 * (100 / 3 + 5_000))


def test_a_launch_smaller_than_the_gpu_waits_one_latency():
    hw = PramPlatform(132, 128, 2e9, 3e12, 700, 8, 64)
    app = PramApp(blocks=2, threads_per_block=64, instructions_per_thread=4, cpi=2,
                  bytes_read=512, bytes_written=0)
    cycles = pram_cycles(app, hw)
    # one round of one block per SM: W = 64 * 4 * 2 / 128 = 4; a fraction of a memory step
    # still waits one latency: 700 cycles; the queue is 512 * 2e9 / 3e12 = 0.34 cycles
    assert (cycles.rounds, cycles.compute, cycles.latency) == (1, 4.0, 700.0)
    assert cycles.queue == pytest.approx(512 * 2e9 / 3e12)


class _Counts:
    name, priority, description = "pram-test-counts", -1, "test"

    def counts(self, kernel, config, language="cuda"):
        threads = 1056 * 256  # the rows' launch below: 20 instructions and 8 bytes a thread
        return WorkCounts(flops_fp32=0, flops_fp64=0, bytes_global_read=threads * 4,
                          bytes_global_write=threads * 4, instructions=threads * 20.0,
                          source=self.name)


def _row(**extra):
    row = {"kernel": "copy_vector", "language": "cuda", "size": "medium", "device": "h100-sxm",
           "sm_count": 132, "tunables": json.dumps({"bx": 256, "vec": 1}), "blocks": 1056,
           "threads_per_block": 256, "registers": 16, "static_shared": 0, "dynamic_shared": 0}
    return {**row, **extra}


def test_predictor_on_an_h100_row(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "pram-test-counts", _Counts())
    row = _row()
    hw = pram_platform(row)
    # 256 threads of 16 registers: 8 blocks (64 warps) per SM on an H100, the calibrated
    # DRAM latency 692.9 cycles, 128 fp32 lanes, 1980 MHz, 3350 GB/s
    assert (hw.blocks_per_sm, hw.warps_per_sm, hw.latency_cycles) == (8, 64, 692.9)
    model = GpuPram(work="pram-test-counts").fit(Dataset(times=pd.DataFrame([row])))
    [p] = model.explain(Dataset(times=pd.DataFrame([row])))
    # 1056 blocks = 132 SMs x 8: one round of 2048 threads per SM; W = 2048 * 20 / 128 = 320
    # 1056 * 256 * 8 B = 2,162,688 B: Q = 2,162,688 * 1.98e9 / 3.35e12 = 1278.3 cycles;
    # steps 2,162,688 / (132 * 64 * 128) = 2: latency 2 * 692.9 = 1385.8 cycles
    f = 1.98e9
    assert p.breakdown["compute"] == pytest.approx(320 / f)
    assert p.breakdown["memory"] == pytest.approx(2_162_688 / 3.35e12)
    assert p.breakdown["latency"] == pytest.approx(1385.8 / f)
    assert p.breakdown["launch"] == pytest.approx(3.073e-6)
    assert p.seconds == pytest.approx((320 + 1385.8) / f + 3.073e-6)
    assert p.bottleneck == "latency" and p.based_on["rounds"] == 1
    assert p.based_on["application"]["instructions_per_thread"] == pytest.approx(20)


def test_launch_overhead_can_be_left_out(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "pram-test-counts", _Counts())
    data = Dataset(times=pd.DataFrame([_row()]))
    with_launch = GpuPram(work="pram-test-counts").fit(data).predict(data)
    without = GpuPram(work="pram-test-counts", launch_overhead_s=0).fit(data).predict(data)
    assert with_launch - without == pytest.approx([3.073e-6])


def test_rows_without_cycles_per_thread_are_nan():
    data = Dataset(times=pd.DataFrame([_row(kernel="not_in_the_corpus")]))
    [p] = GpuPram().fit(data).explain(data)
    assert math.isnan(p.seconds) and "not_in_the_corpus" in p.based_on["error"]
    # the algorithmic provider counts no instructions: cycles per thread unknown
    matmul = _row(kernel="matmul_naive", tunables=json.dumps({}))
    [q] = GpuPram(work="algorithmic").fit(data).explain(Dataset(times=pd.DataFrame([matmul])))
    assert math.isnan(q.seconds) and "instructions" in q.based_on["error"]


def test_work_counts_are_remembered_per_launch(monkeypatch):
    calls = []

    class Counting(_Counts):
        name = "pram-test-counting"

        def counts(self, kernel, config, language="cuda"):
            calls.append(config.size)
            return super().counts(kernel, config, language)

    monkeypatch.setitem(_counts._PROVIDERS, "pram-test-counting", Counting())
    first = launch_work(_row(), "pram-test-counting")
    assert launch_work(_row(sm_count=8), "pram-test-counting") is first
    assert calls == ["medium"]


def test_ones_own_kernel_is_refused_with_the_model_to_use():
    from kerncast.models._base import LaunchInputs

    with pytest.raises(InputError, match="--model static"):
        GpuPram().explain_launch(None, None, LaunchInputs("h100"))


@pytest.mark.toolchain
def test_a_corpus_launch_is_predicted():
    import kerncast

    p = kerncast.predict("corpus:copy_vector", size="small", model="gpu-pram")
    assert np.isfinite(p.seconds) and p.seconds > 0 and p.based_on["configuration"]
    assert p.based_on["platform"]["blocks_per_sm"] > 0
