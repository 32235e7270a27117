"""``kerncast.what_if`` and ``kerncast.models.importance``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kerncast
from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models import importance, what_if

DATA = Path(__file__).resolve().parents[2] / "data" / "h100"


@pytest.mark.toolchain
def test_what_if_names_the_fix_that_gains_and_places_the_launch_on_the_roofline():
    result = kerncast.what_if("corpus:smem_bank_stride", size="medium", tunables={"stride": 16})
    gains = result.gains()
    assert list(gains) == ["bank-conflicts", "uncoalesced", "occupancy", "divergence"]
    assert gains["bank-conflicts"] > 4 and gains["divergence"] == pytest.approx(1.0, rel=0.05)
    roof = result.roofline
    # its buffers stay in the L2 from launch to launch: no DRAM bytes to place
    assert roof["flops"] == 0 and roof["dram_bytes"] == 0
    assert result.to_dict()["gains"] == gains


@pytest.mark.toolchain
def test_what_if_of_ones_own_kernel_and_launch():
    k = kerncast.Kernel.of("axpy", 'extern "C" __global__ void axpy(float a, const float* x,'
                           " float* y, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) y[i] = a * x[i] + y[i];\n}\n")
    launch = kerncast.Launch(4096, 256, args=(np.float32(2.0),
                                              kerncast.Array("float32", 1 << 20, "uniform(0, 1)",
                                                             intent="in"),
                                              kerncast.Array("float32", 1 << 20),
                                              np.int32(1 << 20)))
    result = what_if(k, launch, only=["uncoalesced"])
    assert list(result.fixed) == ["uncoalesced"]
    roof = result.roofline
    assert roof["flops"] == pytest.approx(2 * (1 << 20))
    # 8 MiB of buffers, cycled in more copies than the L2 holds: x moves DRAM bytes (y,
    # of no stated intent, is copied back before each launch, and read from the L2)
    assert 0 < roof["dram_bytes"] < 6 << 20  # cold, y would add 8 MiB: read, written back
    assert roof["bytes_per_s"] < roof["peak_bandwidth"]
    with pytest.raises(InputError, match="give the kerncast.Launch"):
        what_if(k)


def test_importance_of_the_learned_models_on_measured_counters():
    found = importance(Dataset.read(DATA), top=5)
    ranked = found["gpu-random-forest"]
    assert len(ranked) == 5 and ranked[0][1] >= ranked[-1][1] > 0
